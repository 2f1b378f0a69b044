package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/reach-lab/reach/internal/store"
)

// settleBusy is the share of the machine's CPU time (0..1) below which it
// counts as quiet for a timed import: on 2 cores, 15 % is the benchmark's
// own idle processes and Postgres's background writers.
const settleBusy = 0.15

// settle waits, at most limit, until no autovacuum worker runs in the
// cluster and the machine's CPUs were less than settleBusy busy over the
// last 3 seconds, and says how long it waited and for what. The import
// goal compares Reach with raw COPY on the 2-core machine: the lab's
// import came right after 20 clients' page loads, with autovacuum still
// working through freshly written partitions, and COPY (one core) loses
// less to a busy machine than the import (both cores), so its ratio
// measured the leftovers (86 % then, 109 % on the same database quiet).
// When limit passes it goes on, saying the machine was not quiet.
func settle(ctx context.Context, st *store.Store, limit time.Duration) error {
	start := time.Now()
	prev, err := readCPUTimes()
	if err != nil {
		return err
	}
	var busy float64
	var vacuums int
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(3 * time.Second):
		}
		cur, err := readCPUTimes()
		if err != nil {
			return err
		}
		busy, prev = busyShare(prev, cur), cur
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`).Scan(&vacuums); err != nil {
			return fmt.Errorf("autovacuum workers: %w", err)
		}
		waited := time.Since(start).Round(time.Second)
		if vacuums == 0 && busy < settleBusy {
			fmt.Printf("waited %s for a quiet machine (CPUs %.0f %% busy over 3 s, no autovacuum worker; load average %s)\n", waited, 100*busy, loadAvg())
			return nil
		}
		if waited >= limit {
			fmt.Printf("NOT QUIET after %s: CPUs %.0f %% busy over 3 s, %d autovacuum workers (load average %s); timing anyway\n", waited, 100*busy, vacuums, loadAvg())
			return nil
		}
	}
}

// cpuTimes are the machine's CPU times from /proc/stat's first line, in
// clock ticks: the total and the idle part (idle and iowait).
type cpuTimes struct{ total, idle uint64 }

func readCPUTimes() (cpuTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, fmt.Errorf("CPU times: %w", err)
	}
	return parseCPUTimes(string(b))
}

// parseCPUTimes reads /proc/stat's aggregate "cpu" line: user nice system
// idle iowait irq softirq steal (guest time is counted in user already).
func parseCPUTimes(stat string) (cpuTimes, error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return cpuTimes{}, fmt.Errorf("CPU times: /proc/stat starts %q, want the aggregate cpu line", line)
	}
	var t cpuTimes
	for i, s := range f[1:min(len(f), 9)] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("CPU times: field %d of %q: %w", i+1, line, err)
		}
		t.total += v
		if i == 3 || i == 4 { // idle, iowait
			t.idle += v
		}
	}
	return t, nil
}

// busyShare is the share (0..1) of CPU time between a and b that was not
// idle; 0 when no time passed.
func busyShare(a, b cpuTimes) float64 {
	if b.total <= a.total {
		return 0
	}
	return 1 - float64(b.idle-a.idle)/float64(b.total-a.total)
}
