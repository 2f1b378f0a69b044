package jobs

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reach-lab/reach/internal/metrics"
)

// An attempt's outcome is what River does with the job next.
func TestMetricsJobOutcome(t *testing.T) {
	first := &rivertype.JobRow{Attempt: 1, MaxAttempts: 3}
	last := &rivertype.JobRow{Attempt: 3, MaxAttempts: 3}
	for _, c := range []struct {
		job  *rivertype.JobRow
		err  error
		want string
	}{
		{first, nil, "completed"},
		{first, errors.New("transient"), "retry"},
		{last, errors.New("transient"), "discarded"},
		{last, fmt.Errorf("stopping: %w", river.JobCancel(errors.New("gone"))), "cancelled"},
		{first, river.JobSnooze(0), "snoozed"},
	} {
		if got := jobOutcome(c.job, c.err); got != c.want {
			t.Errorf("attempt %d of %d, err %v: %s, want %s", c.job.Attempt, c.job.MaxAttempts, c.err, got, c.want)
		}
	}
}

// The middleware counts every attempt, a panicking one too (River
// recovers the panic and retries the job), and labels a kind Reach does
// not register "other".
func TestMetricsJobMiddleware(t *testing.T) {
	mw := metricsMiddleware()
	before, err := metrics.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	job := &rivertype.JobRow{Kind: "import", Attempt: 1, MaxAttempts: 3}
	if err := mw.Work(context.Background(), job, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() { _ = recover() }()
		_ = mw.Work(context.Background(), job, func(context.Context) error { panic("boom") })
	}()
	_ = mw.Work(context.Background(), &rivertype.JobRow{Kind: "unregistered kind", Attempt: 1, MaxAttempts: 1},
		func(context.Context) error { return errors.New("no worker") })
	after, err := metrics.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for series, want := range map[string]float64{
		`reach_river_jobs_finished_total{kind="import",outcome="completed"}`: 1,
		`reach_river_jobs_finished_total{kind="import",outcome="retry"}`:     1,
		`reach_river_jobs_finished_total{kind="other",outcome="discarded"}`:  1,
	} {
		if got := after[series] - before[series]; got != want {
			t.Errorf("%s went up by %v, want %v", series, got, want)
		}
	}
}
