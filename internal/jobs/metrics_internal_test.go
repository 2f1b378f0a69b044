package jobs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
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
