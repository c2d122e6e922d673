/*
Copyright 2026 The hookrun Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// platform is a GOOS/GOARCH pair the plugin is released for.
type platform struct{ os, arch string }

func (p platform) String() string { return p.os + "/" + p.arch }

// archiveName is the name of the platform's release archive, the last
// element of its URL in krew.yaml.
func (p platform) archiveName() string {
	return fmt.Sprintf("kubectl-hookrun_%s_%s.tar.gz", p.os, p.arch)
}

// binName is the plugin binary's name in the archive.
func (p platform) binName() string {
	if p.os == "windows" {
		return "kubectl-hookrun.exe"
	}
	return "kubectl-hookrun"
}

// Paths in the repository.
const (
	pluginPackage  = "./hack/kubectl-hookrun"
	completionPath = "hack/kubectl-hookrun/kubectl_complete-hookrun"
	licensePath    = "LICENSE"
	templatePath   = "hack/kubectl-hookrun/krew.yaml"
)

// buildArchive builds the plugin for p with CGO_ENABLED=0, without symbol
// table and DWARF (-s -w: a smaller archive, a shorter link), stamped with
// version, from the repository at root, and writes its release archive into
// dir: the binary, the repository's LICENSE and, but on Windows, the
// kubectl_complete-hookrun script (kubectl runs it to complete a plugin's
// arguments). It returns the archive's path and sha256.
func buildArchive(ctx context.Context, root, version, dir string, p platform) (path, sum string, err error) {
	tmp, err := os.MkdirTemp("", "kubectl-hookrun-release-")
	if err != nil {
		return "", "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	bin := filepath.Join(tmp, p.binName())
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath",
		"-ldflags", "-s -w -X main.version="+version, "-o", bin, pluginPackage)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.os, "GOARCH="+p.arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build for %s: %w\n%s", p, err, out)
	}

	return packArchive(root, bin, dir, p, gzip.DefaultCompression)
}

// packArchive writes p's release archive of the plugin binary bin into dir
// (see buildArchive) and returns its path and sha256.
func packArchive(root, bin, dir string, p platform, level int) (path, sum string, err error) {
	archive, err := tarGz(archiveFiles(root, bin, p), level)
	if err != nil {
		return "", "", fmt.Errorf("archive for %s: %w", p, err)
	}
	path = filepath.Join(dir, p.archiveName())
	if err := writeFile(path, archive); err != nil {
		return "", "", err
	}
	digest := sha256.Sum256(archive)
	return path, hex.EncodeToString(digest[:]), nil
}

// archiveFiles lists what p's archive holds: the plugin binary bin, the
// completion script but on Windows, and the LICENSE of the repository at root.
func archiveFiles(root, bin string, p platform) []archiveFile {
	files := []archiveFile{{bin, 0o755}}
	if p.os != "windows" {
		files = append(files, archiveFile{filepath.Join(root, completionPath), 0o755})
	}
	return append(files, archiveFile{filepath.Join(root, licensePath), 0o644})
}

// archiveFile is a file to archive and its mode in the archive.
type archiveFile struct {
	path string
	mode int64
}

// tarGz archives files at the archive's top level, compressed at gzip's
// level. The archive depends only on the files' names, modes and contents
// (no times, owners or gzip name), so the same build gives the same sha256.
func tarGz(files []archiveFile, level int) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, level)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			return nil, err
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     filepath.Base(f.path),
			Mode:     f.mode,
			Size:     int64(len(data)),
			ModTime:  time.Unix(0, 0),
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeFile writes data to path through a temporary file in its directory,
// so that an interrupted run leaves no half-written archive or manifest.
func writeFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
