package code

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/verify"
)

// The figures of code grading, in one run:
//
//	go test -run XXX -bench . -benchtime 1x ./internal/verify/code/
//
// BenchmarkSandboxOverhead: an empty program in the sandbox and in a bare
// python3 process, one at a time, alternating (ms per run each, and the
// difference). BenchmarkCanonicalTests: HumanEval's 164 canonical solutions
// with their tests, sandboxed and bare, one at a time (ms per sample).
// BenchmarkHumanEvalPair: the shipped pair's 3,280 model completions graded
// on all cores (samples/s and samples/s per core). Model completions run
// only in the sandbox: there is no bare figure for them.

// emptyRuns is how many empty programs each op runs per side.
const emptyRuns = 40

func BenchmarkSandboxOverhead(b *testing.B) {
	sb := testSandbox(b)
	ctx := context.Background()
	dir := b.TempDir()
	path := filepath.Join(dir, "main.py")
	if err := os.WriteFile(path, []byte("pass\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	cpu := benchCPU(b)
	var inSB, bare, cpuSB, cpuBare time.Duration
	for range b.N {
		for range emptyRuns {
			t, c := time.Now(), cpu()
			if r := sb.Run(ctx, Job{Program: []byte("pass\n")}); r.SetupErr != nil || r.ExitCode != 0 {
				b.Fatalf("sandbox: %v exit %d %s", r.SetupErr, r.ExitCode, r.Stderr)
			}
			inSB, cpuSB = inSB+time.Since(t), cpuSB+cpu()-c
			t, c = time.Now(), cpu()
			if out, ok := bareRun(sb.python, dir, bootMain, path, ""); !ok {
				b.Fatalf("bare python3: %s", out)
			}
			bare, cpuBare = bare+time.Since(t), cpuBare+cpu()-c
		}
	}
	reportPair(b, float64(b.N*emptyRuns), inSB, bare, cpuSB, cpuBare)
}

// benchCPU returns a clock of the CPU time (user + system) used by this
// process and everything it starts, which unlike wall time does not grow
// when other work shares the machine. Getrusage cannot give it (bwrap's
// outer process exits without reaping its reaper, so the sandbox's CPU is
// never added to anyone's children), so the benchmark moves itself into
// a cgroup of its own and reads its CPU accounting (cgroup v1 cpuacct or
// v2 cpu.stat; needs root). Without one, CPU figures read 0.
func benchCPU(b *testing.B) func() time.Duration {
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, c := range []struct{ root, file string }{
		{"/sys/fs/cgroup/cpuacct", "cpuacct.usage"},
		{"/sys/fs/cgroup/unified", "cpu.stat"},
		{"/sys/fs/cgroup", "cpu.stat"},
	} {
		if _, err := os.Stat(filepath.Join(c.root, c.file)); err != nil {
			continue
		}
		dir := filepath.Join(c.root, fmt.Sprintf("reach-bench-%d", os.Getpid()))
		if err := os.Mkdir(dir, 0o755); err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), pid, 0o644); err != nil {
			_ = os.Remove(dir)
			continue
		}
		b.Cleanup(func() {
			_ = os.WriteFile(filepath.Join(c.root, "cgroup.procs"), pid, 0o644)
			_ = os.Remove(dir)
		})
		path := filepath.Join(dir, c.file)
		return func() time.Duration {
			raw, err := os.ReadFile(path)
			if err != nil {
				return 0
			}
			s := strings.TrimSpace(string(raw))
			if c.file == "cpu.stat" { // "usage_usec N" first
				f := strings.Fields(s)
				if len(f) < 2 {
					return 0
				}
				us, _ := strconv.ParseInt(f[1], 10, 64)
				return time.Duration(us) * time.Microsecond
			}
			ns, _ := strconv.ParseInt(s, 10, 64)
			return time.Duration(ns)
		}
	}
	b.Log("no cgroup CPU accounting available: CPU figures are 0")
	return func() time.Duration { return 0 }
}

func reportPair(b *testing.B, n float64, wallSB, wallBare, cpuSB, cpuBare time.Duration) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
	b.ReportMetric(ms(wallSB), "wall-ms/sandboxed")
	b.ReportMetric(ms(wallBare), "wall-ms/bare")
	b.ReportMetric(ms(wallSB)-ms(wallBare), "wall-ms-overhead")
	b.ReportMetric(ms(cpuSB), "cpu-ms/sandboxed")
	b.ReportMetric(ms(cpuBare), "cpu-ms/bare")
	b.ReportMetric(ms(cpuSB)-ms(cpuBare), "cpu-ms-overhead")
}

// bareRun runs a bootstrap on the program at path in a bare python3 process
// with the sandbox's interpreter flags (for the empty program and the
// human-written canonical solutions only: model code never runs bare). It
// returns what the bootstrap wrote to fd 3 and whether it exited 0.
func bareRun(python, dir, boot, path, stdin string) (string, bool) {
	r, w, err := os.Pipe()
	if err != nil {
		return err.Error(), false
	}
	defer r.Close()
	cmd := exec.Command(python, "-S", "-P", "-s", "-B", "-c", strings.ReplaceAll(boot, "/sandbox/main.py", path))
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		w.Close()
		return err.Error(), false
	}
	w.Close()
	out, _ := io.ReadAll(r)
	err = cmd.Wait()
	return string(out), err == nil
}

// bareTests runs a test program as bootTests does, without the sandbox.
func bareTests(b *testing.B, python, dir string, prog program) bool {
	path := filepath.Join(dir, "main.py")
	if err := os.WriteFile(path, []byte(prog.src), 0o600); err != nil {
		b.Fatal(err)
	}
	out, _ := bareRun(python, dir, bootTests, path, "token\n")
	return strings.Contains(out, "R token done")
}

func BenchmarkCanonicalTests(b *testing.B) {
	v := New(testSandbox(b))
	ps := humanEvalProblems(b)
	ctx := context.Background()
	dir := b.TempDir()
	cpu := benchCPU(b)
	var inSB, bare, cpuSB, cpuBare time.Duration
	for range b.N {
		for _, p := range ps {
			t, c := time.Now(), cpu()
			if vd := v.Verify(ctx, p.problem(HarnessHumanEval), p.Canonical); !vd.IsCorrect() {
				b.Fatalf("%s: %s", p.TaskID, vd.Reason)
			}
			inSB, cpuSB = inSB+time.Since(t), cpuSB+cpu()-c
			tests, _ := ParseTests(p.problem(HarnessHumanEval).Fields)
			prog, _ := assemble(tests, HarnessHumanEval, p.Canonical)
			t, c = time.Now(), cpu()
			if !bareTests(b, v.sb.python, dir, prog) {
				b.Fatalf("%s fails bare", p.TaskID)
			}
			bare, cpuBare = bare+time.Since(t), cpuBare+cpu()-c
		}
	}
	reportPair(b, float64(b.N*len(ps)), inSB, bare, cpuSB, cpuBare)
}

func BenchmarkHumanEvalPair(b *testing.B) {
	v := New(testSandbox(b))
	probs := map[string]heProblem{}
	for _, p := range humanEvalProblems(b) {
		probs[p.TaskID] = p
	}
	samples := pairSamples(b)
	start := time.Now()
	for range b.N {
		got := make([]verify.Verdict, len(samples))
		onCores(len(samples), func(i int) {
			got[i] = v.Verify(context.Background(), probs[samples[i].task].problem(HarnessStripDocstrings), samples[i].comp)
		})
		for i, vd := range got {
			if vd.Status == verify.NotGraded {
				b.Fatalf("sample %d not graded: %s", i, vd.Reason)
			}
		}
	}
	rate := float64(b.N*len(samples)) / time.Since(start).Seconds()
	b.ReportMetric(rate, "samples/s")
	b.ReportMetric(rate/float64(runtime.GOMAXPROCS(0)), "samples/s/core")
}
