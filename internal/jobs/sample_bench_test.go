package jobs_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/testfiles"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func freeAddr(b testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// BenchmarkSamplingThroughput samples the GSM8K pair end to end (River
// SampleJobs, one request each, inline verification, Postgres writes)
// from two replay servers in child processes that answer after 50 ms, and
// reports requests per second and the CPU Reach's own process used
// (cores = CPU seconds / wall seconds). Run:
//
//	go test -run XXX -bench SamplingThroughput -benchtime 1x ./internal/jobs/
func BenchmarkSamplingThroughput(b *testing.B) {
	bin := buildReach(b)
	dir := testfiles.GSM8KProbe(b) // the carried stand-in: a benchmark of Reach, not of the data
	var urls []string
	for _, f := range []string{"sft_raw.jsonl", "rl_raw.jsonl"} {
		addr := freeAddr(b)
		cmd := exec.Command(bin, "replay-server", "--samples", filepath.Join(dir, "results_1024_cuda", f),
			"--dataset", filepath.Join(dir, "data/gsm8k_subset.jsonl"), "--addr", addr, "--latency", "50ms")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		urls = append(urls, "http://"+addr+"/v1")
		for i := 0; i < 100; i++ {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	st, _ := testdb.New(b)
	box, _ := secret.New(testSecret)
	const perModel = 64 // in flight per endpoint
	client, err := jobs.NewClient(st, jobs.Config{Workers: 2, SamplingWorkers: 2 * perModel, Verifier: vmath.New(), Secret: box,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer client.Stop(ctx) //nolint:errcheck
	for i := 0; i < b.N; i++ {
		cfg := jobs.DefaultSamplingConfig()
		cfg.N, cfg.PerRequest, cfg.Template = 64, 1, "gsm8k"
		spec := intake.SampleSpec{Name: "bench", Dataset: intake.LocalFile(filepath.Join(dir, "data/gsm8k_subset.jsonl")), Config: cfg,
			AutoStart: true, Models: []intake.EndpointModel{
				{Name: "SFT", BaseURL: urls[0], Model: "sft", MaxConcurrency: perModel},
				{Name: "PPO", BaseURL: urls[1], Model: "ppo", MaxConcurrency: perModel}}}
		cpu0, t0 := cpuTime(), time.Now()
		id, err := intake.CreateSampling(ctx, st, client, box, spec)
		if err != nil {
			b.Fatal(err)
		}
		for {
			c, err := st.GetComparison(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			if c.Status == store.StatusReady || c.Status == store.StatusFailed {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		wall, cpu := time.Since(t0), cpuTime()-cpu0
		requests := float64(2 * 30 * cfg.N)
		b.ReportMetric(requests/wall.Seconds(), "req/s")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
		b.ReportMetric(float64(cpu.Microseconds())/requests, "cpu-µs/req")
		fmt.Fprintf(os.Stderr, "%.0f requests in %v: %.0f req/s, Reach process CPU %.2f cores\n",
			requests, wall.Round(time.Millisecond), requests/wall.Seconds(), cpu.Seconds()/wall.Seconds())
	}
}
