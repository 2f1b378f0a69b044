package jobs_test

import (
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/metrics"
)

func metricsSnapshot(t *testing.T) map[string]float64 {
	t.Helper()
	m, err := metrics.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitMetric waits up to 5 s for series to have gone up by want since
// before (a job counts its work a moment after committing it), and fails
// the test if it went up by anything else.
func waitMetric(t *testing.T, before map[string]float64, series string, want float64) {
	t.Helper()
	var got float64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got = metricsSnapshot(t)[series] - before[series]
		if got >= want || time.Now().After(deadline) {
			break
		}
	}
	if got != want {
		t.Errorf("%s went up by %v, want %v", series, got, want)
	}
}
