package main

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"sync"

	"github.com/reach-lab/reach/internal/verify"
	"github.com/reach-lab/reach/internal/verify/code"
	"github.com/reach-lab/reach/internal/verify/math"
)

var (
	sandboxOnce sync.Once
	sandbox     *code.Sandbox
)

// codeSandbox probes the code sandbox once per process and logs whether
// code can be graded here. Without a working sandbox code samples stay
// not graded: nothing runs outside it.
func codeSandbox() *code.Sandbox {
	sandboxOnce.Do(func() {
		cfg := code.Config{Python: os.Getenv("REACH_CODE_PYTHON")}
		if n, err := strconv.Atoi(os.Getenv("REACH_CODE_PARALLEL")); err == nil {
			cfg.Parallel = n
		}
		sandbox = code.NewSandbox(context.Background(), cfg)
		if err := sandbox.Err(); err != nil {
			slog.Warn("code grading is OFF: the sandbox does not work on this machine; code samples without labels stay not graded",
				"reason", err, "fix", "install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces")
			return
		}
		slog.Info("code sandbox ready", "sandbox", sandbox.Info())
	})
	return sandbox
}

// newVerifier is Reach's verifier: math and multiple-choice problems by the
// math verifier, code problems by running their tests in the sandbox.
func newVerifier() verify.Verifier {
	return verify.Dispatch{Math: math.New(), Code: code.New(codeSandbox())}
}
