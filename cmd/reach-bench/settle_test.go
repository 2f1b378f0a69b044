package main

import (
	"math"
	"testing"
)

func TestParseCPUTimesAndBusyShare(t *testing.T) {
	a, err := parseCPUTimes("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\n")
	if err != nil {
		t.Fatal(err)
	}
	if a.total != 1000 || a.idle != 850 {
		t.Fatalf("got %+v, want total 1000 idle 850", a)
	}
	// 200 ticks pass, 150 of them busy (user + system), 50 idle.
	b, err := parseCPUTimes("cpu  200 0 100 840 60 0 0 0 0 0\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := busyShare(a, b); math.Abs(got-0.75) > 1e-9 {
		t.Fatalf("busy %.3f, want 0.75", got)
	}
	if got := busyShare(b, b); got != 0 {
		t.Fatalf("no time passed: busy %.3f, want 0", got)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 x 4 5"} {
		if _, err := parseCPUTimes(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
