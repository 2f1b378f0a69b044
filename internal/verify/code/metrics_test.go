package code

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/reach-lab/reach/internal/metrics"
)

// A run's outcome label is read in order: a sandbox that does not work,
// one that did not start, the limits, Reach ending the run, a signal, the
// exit status.
func TestMetricsSandboxOutcome(t *testing.T) {
	for _, c := range []struct {
		res  Result
		want string
	}{
		{Result{SetupErr: fmt.Errorf("%w: no bwrap", ErrUnavailable)}, "unavailable"},
		{Result{SetupErr: errors.New("bwrap: setting up uid map")}, "setup_error"},
		{Result{TimedOut: "cpu", Signal: syscall.SIGKILL, ExitCode: -1}, "cpu_timeout"},
		{Result{TimedOut: "wall", Signal: syscall.SIGKILL, ExitCode: -1}, "wall_timeout"},
		{Result{OutputLimit: "stdout", Signal: syscall.SIGKILL, ExitCode: -1}, "output_limit"},
		{Result{Ended: true, Signal: syscall.SIGKILL, ExitCode: -1}, "reported"},
		{Result{Signal: syscall.SIGSEGV, ExitCode: -1}, "signal"},
		{Result{}, "exit_ok"},
		{Result{ExitCode: 1}, "exit_error"},
	} {
		if got := c.res.outcome(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.res, got, c.want)
		}
	}
}

// Run counts every run, including one refused by a sandbox that does not
// work on this machine.
func TestMetricsSandboxRunCounted(t *testing.T) {
	s := &Sandbox{err: errors.New("bwrap not found")}
	before, err := metrics.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if res := s.Run(context.Background(), Job{Program: []byte("print(1)")}); !errors.Is(res.SetupErr, ErrUnavailable) {
		t.Fatalf("run on a sandbox without bwrap: %+v", res)
	}
	after, err := metrics.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	series := `reach_sandbox_runs_total{outcome="unavailable"}`
	if got := after[series] - before[series]; got != 1 {
		t.Errorf("%s went up by %v, want 1", series, got)
	}
}
