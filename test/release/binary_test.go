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

package release

import (
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// checkBinary checks a released Go binary: built from package main of the
// module's path mainPath for platform p (os/arch) with CGO_ENABLED=0 and
// -trimpath; where the format says so (ELF), linked statically: no
// interpreter, no shared library; and where the host can run it and
// versionArgs are given (a binary with a version), that it says it is version
// when run with them. (With -trimpath, Go records no
// -ldflags in the binary, so the version is seen only by running it; every
// platform's binary is built by the same command.)
func checkBinary(t *testing.T, file, p, version, mainPath string, versionArgs ...string) {
	t.Helper()
	info, err := buildinfo.ReadFile(file)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if info.Path != mainPath {
		t.Errorf("%s: the binary is %s, want %s", p, info.Path, mainPath)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	goos, goarch, _ := strings.Cut(p, "/")
	for key, want := range map[string]string{"GOOS": goos, "GOARCH": goarch, "CGO_ENABLED": "0", "-trimpath": "true"} {
		if settings[key] != want {
			t.Errorf("%s: built with %s=%q, want %q", p, key, settings[key], want)
		}
	}
	if len(versionArgs) > 0 && p == runtime.GOOS+"/"+runtime.GOARCH {
		out, err := exec.CommandContext(t.Context(), file, versionArgs...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), " "+version) {
			t.Errorf("%s %s: %v %q, want version %s", p, strings.Join(versionArgs, " "), err, out, version)
		}
	}

	machine := map[string]any{
		"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64,
		"darwin/amd64": macho.CpuAmd64, "darwin/arm64": macho.CpuArm64,
		"windows/amd64": uint16(pe.IMAGE_FILE_MACHINE_AMD64),
	}[p]
	switch goos {
	case "linux":
		f, err := elf.Open(file)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		defer func() { _ = f.Close() }()
		if f.Machine != machine {
			t.Errorf("%s: an ELF binary for %v", p, f.Machine)
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
				t.Errorf("%s: the binary is dynamically linked (%v)", p, prog.Type)
			}
		}
	case "darwin":
		f, err := macho.Open(file)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		defer func() { _ = f.Close() }()
		if f.Cpu != machine {
			t.Errorf("%s: a Mach-O binary for %v", p, f.Cpu)
		}
	case "windows":
		f, err := pe.Open(file)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		defer func() { _ = f.Close() }()
		if f.Machine != machine {
			t.Errorf("%s: a PE binary for machine %#x", p, f.Machine)
		}
	default:
		t.Errorf("%s: no check for this platform", p)
	}
}
