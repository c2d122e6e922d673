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

// Package guide runs a guide of docs/ as written, command by command, for
// the suites that follow one: the end-to-end suite on the dev cluster and
// test/node on a real node. Each suite says, in a table of Commands, what it
// does with every command the guide has: run it and find a string in what
// it prints, or skip it for a reason. A command the table does not know
// fails the run, so a guide cannot gain an untested line.
package guide

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// Block is one fenced block of a guide, with the step it is under.
type Block struct {
	Step, Lang string
	Lines      []string // continuation lines joined, comments and blank lines dropped
	Text       string   // the block as written
}

// Blocks reads the fenced blocks of the guide at path in order.
func Blocks(path string) []Block {
	ginkgo.GinkgoHelper()
	f, err := os.Open(path)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = f.Close() }()
	var (
		blocks  []Block
		step    string
		current *Block
		pending string
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case current == nil && strings.HasPrefix(line, "#"):
			step = strings.TrimSpace(strings.TrimLeft(line, "#"))
		case current == nil && strings.HasPrefix(line, "```"):
			current = &Block{Step: step, Lang: strings.TrimPrefix(line, "```")}
		case current != nil && line == "```":
			blocks = append(blocks, *current)
			current = nil
		case current != nil:
			current.Text += line + "\n"
			if strings.HasSuffix(line, `\`) {
				pending += strings.TrimSuffix(line, `\`)
				continue
			}
			full := strings.TrimSpace(pending + line)
			pending = ""
			if full != "" && !strings.HasPrefix(full, "#") {
				current.Lines = append(current.Lines, full)
			}
		}
	}
	gomega.Expect(sc.Err()).NotTo(gomega.HaveOccurred())
	gomega.Expect(current).To(gomega.BeNil(), "%s ends inside a fenced block", path)
	return blocks
}

// Command says what a run does with a command of the guide that begins with
// Prefix: run it (with the runner's replacements) and find Want in what it
// prints, or skip it for the reason given.
type Command struct {
	Prefix string
	Skip   string
	Want   string
	// Eventually: run it until Want shows (a state the operator reaches).
	Eventually bool
	// Follow: a command that runs until interrupted; stopped after a while.
	Follow bool
	// Background: a command that runs until interrupted and that later
	// commands need (a port-forward): started, awaited until Want shows,
	// and stopped when the run ends.
	Background bool
}

// Runner runs a guide's shell commands with a table of Commands.
type Runner struct {
	// Guide is the guide's path.
	Guide string
	// Dir is the working directory; Env the commands' environment.
	Dir string
	Env []string
	// Commands is the table: every command of the guide must begin with
	// one of the prefixes.
	Commands []Command
	// Replace rewrites what the guide names that the suite has elsewhere,
	// in commands and in the files written from YAML blocks.
	Replace *strings.Replacer
	// Rewrite, if set, rewrites a command after Replace (a run's name the
	// guide shows as an example).
	Rewrite func(line string) string
	// Check, if set, checks more of what a command printed.
	Check func(line, out string)
	// Files names the file each kind of YAML block is written to: the
	// first YAML block of a kind is the file the guide's commands apply.
	Files map[string]string
}

func (r Runner) command(line string) (Command, bool) {
	for _, c := range r.Commands {
		if strings.HasPrefix(line, c.Prefix) {
			return c, true
		}
	}
	return Command{}, false
}

// shell runs line as the guide's reader would, stopped after timeout; a
// command that follows is stopped with the processes it started, as Ctrl-C
// stops them.
func (r Runner) shell(ctx context.Context, line string, timeout time.Duration) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := r.cmd(cctx, line)
	out, err := cmd.CombinedOutput()
	ginkgo.GinkgoWriter.Printf("$ %s\n%s", line, out)
	if cctx.Err() != nil {
		return string(out), cctx.Err()
	}
	return string(out), err
}

func (r Runner) cmd(ctx context.Context, line string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	cmd.Dir, cmd.Env = r.Dir, r.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// background starts line, waits until its output shows want, and stops it
// when the spec ends.
func (r Runner) background(ctx context.Context, line, want string) {
	ginkgo.GinkgoHelper()
	out, err := os.Create(filepath.Join(r.Dir, fmt.Sprintf("background-%d.log", time.Now().UnixNano())))
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	bctx, cancel := context.WithCancel(context.Background())
	cmd := r.cmd(bctx, line)
	cmd.Stdout, cmd.Stderr = out, out
	gomega.Expect(cmd.Start()).To(gomega.Succeed())
	ginkgo.DeferCleanup(func() {
		cancel()
		_ = cmd.Wait()
		_ = out.Close()
	})
	gomega.Eventually(func() string {
		b, _ := os.ReadFile(out.Name())
		return string(b)
	}).WithContext(ctx).WithTimeout(time.Minute).Should(gomega.ContainSubstring(want), "%s", line)
	ginkgo.GinkgoWriter.Printf("$ %s &\n", line)
}

// Run follows the guide and returns how many of its commands it ran.
func (r Runner) Run(ctx context.Context) int {
	ginkgo.GinkgoHelper()
	ran := 0
	for _, b := range Blocks(r.Guide) {
		switch b.Lang {
		case "yaml":
			name := r.Files[KindOf(b.Text)]
			gomega.Expect(name).NotTo(gomega.BeEmpty(), "a YAML of %q the spec does not know", b.Step)
			if _, err := os.Stat(filepath.Join(r.Dir, name)); err == nil {
				continue
			}
			gomega.Expect(os.WriteFile(filepath.Join(r.Dir, name), []byte(r.Replace.Replace(b.Text)), 0o600)).To(gomega.Succeed())
		case "console":
			// Output shown to the reader, not commands.
		case "sh":
			for _, line := range b.Lines {
				c, ok := r.command(line)
				gomega.Expect(ok).To(gomega.BeTrue(), "%s (%q) has a command this spec does not know; add it to its table: %s", r.Guide, b.Step, line)
				if c.Skip != "" {
					ginkgo.GinkgoWriter.Printf("skipped (%s): %s\n", c.Skip, line)
					continue
				}
				line = r.Replace.Replace(line)
				if r.Rewrite != nil {
					line = r.Rewrite(line)
				}
				ginkgo.By(b.Step + ": " + line)
				ran++
				switch {
				case c.Background:
					r.background(ctx, line, c.Want)
				case c.Follow:
					out, err := r.shell(ctx, line, 5*time.Second)
					gomega.Expect(err).To(gomega.MatchError(context.DeadlineExceeded), out)
					gomega.Expect(out).To(gomega.ContainSubstring(c.Want))
				case c.Eventually:
					gomega.Eventually(func(g gomega.Gomega) {
						out, err := r.shell(ctx, line, time.Minute)
						g.Expect(err).NotTo(gomega.HaveOccurred(), out)
						g.Expect(out).To(gomega.ContainSubstring(c.Want))
					}).WithTimeout(time.Minute).WithPolling(time.Second).Should(gomega.Succeed())
				default:
					out, err := r.shell(ctx, line, 5*time.Minute)
					gomega.Expect(err).NotTo(gomega.HaveOccurred(), out)
					gomega.Expect(out).To(gomega.ContainSubstring(c.Want))
					if r.Check != nil {
						r.Check(line, out)
					}
				}
			}
		default:
			ginkgo.Fail(fmt.Sprintf("%s (%q) has a %q block this spec does not read; fence commands as sh", r.Guide, b.Step, b.Lang))
		}
	}
	return ran
}

// KindOf is the kind a YAML document declares.
func KindOf(doc string) string {
	for _, line := range strings.Split(doc, "\n") {
		if k, ok := strings.CutPrefix(line, "kind: "); ok {
			return strings.TrimSpace(k)
		}
	}
	return ""
}
