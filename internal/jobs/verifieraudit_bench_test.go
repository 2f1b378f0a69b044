package jobs_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// BenchmarkAuditThroughput: the verifier audit of the debate benchmark's
// fixture (50 problems × 2 models × 32 samples, all graded correct, so no
// deciding stratum) with m = 3,200, every sample, end to end against
// `reach replay-server --judge` answering after 50 ms, 64 requests in
// flight. Run:
//
//	go test -run XXX -bench AuditThroughput -benchtime 1x ./internal/jobs/
func BenchmarkAuditThroughput(b *testing.B) {
	bin := buildReach(b)
	labels := filepath.Join(b.TempDir(), "labels.jsonl")
	if err := os.WriteFile(labels, []byte(`{"completion": "never in a prompt", "verdict": "incorrect"}`+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	addr := freeAddr(b)
	cmd := exec.Command(bin, "replay-server", "--addr", addr, "--latency", "50ms", "--judge", labels, "--judge-default", "correct")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitListening(b, addr)

	st, _ := testdb.New(b)
	box, _ := secret.New(testSecret)
	client, err := jobs.NewClient(st, jobs.Config{Workers: 2, SamplingWorkers: 32, Verifier: vmath.New(), Secret: box,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer client.Stop(ctx) //nolint:errcheck
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := benchDebateFixture(b, st, 50, 32)
		if err := st.PutDebateEndpoint(ctx, store.DebateEndpoint{ComparisonID: id, Purpose: store.PurposeJudge,
			Endpoint: store.Endpoint{BaseURL: "http://" + addr + "/v1", Model: "m", Style: "chat", MaxConcurrency: 64},
			Template: "default", MaxTokens: 64}, false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu0, t0 := cpuTime(), time.Now()
		left, err := jobs.StartAudit(ctx, client, st, id, 3200, 1, 0, true)
		if err != nil || left != 3200 {
			b.Fatalf("start the audit: %d items, %v; want 3200", left, err)
		}
		for {
			n, err := jobs.ActiveAuditJobs(ctx, st, id)
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		wall, cpu := time.Since(t0), cpuTime()-cpu0
		b.StopTimer()
		a, err := st.GetVerifierAudit(ctx, id)
		if err != nil || a.Answered != 3200 {
			b.Fatalf("audit %+v, %v", a, err)
		}
		b.ReportMetric(float64(a.Requests)/wall.Seconds(), "req/s")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
		fmt.Fprintf(os.Stderr, "audit: 3200 samples, %d requests in %v: %.0f req/s, Reach process CPU %.2f cores\n",
			a.Requests, wall.Round(time.Millisecond), float64(a.Requests)/wall.Seconds(), cpu.Seconds()/wall.Seconds())
		b.StartTimer()
	}
}
