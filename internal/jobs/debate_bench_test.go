package jobs_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
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

// benchDebateFixture stores a ready comparison of problems problems and
// two models with n samples each, every one answer-correct and with its
// own text, and returns its id.
func benchDebateFixture(b *testing.B, st *store.Store, problems, n int) int64 {
	b.Helper()
	ctx := context.Background()
	did, err := st.CreateDataset(ctx, "bench", "bench.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	var ps []store.Problem
	for i := range problems {
		ps = append(ps, store.Problem{Idx: i, Key: fmt.Sprintf("p%d", i), Statement: fmt.Sprintf("What is %d + %d?", i, i), Reference: fmt.Sprint(2 * i)})
	}
	if err := st.InsertProblems(ctx, did, ps); err != nil {
		b.Fatal(err)
	}
	if err := st.FinishDataset(ctx, did); err != nil {
		b.Fatal(err)
	}
	cid, err := st.CreateComparison(ctx, store.NewComparison{Name: "bench", DatasetID: did, Status: store.StatusReady,
		Runs: []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}})
	if err != nil {
		b.Fatal(err)
	}
	c, err := st.GetComparison(ctx, cid)
	if err != nil {
		b.Fatal(err)
	}
	if ps, err = st.Problems(ctx, did, false); err != nil {
		b.Fatal(err)
	}
	for _, run := range c.Runs {
		var batch []store.Sample
		for i, p := range ps {
			for j := range n {
				batch = append(batch, store.Sample{RunID: run.ID, ProblemID: p.ID, SampleIndex: j, Status: store.SampleCorrect, Extracted: fmt.Sprint(2 * i),
					Completion: fmt.Sprintf("Sample %d of %s: %d plus %d makes %d, so the answer is %d.", j, run.ModelName, i, i, 2*i, 2*i)})
			}
		}
		if err := st.InsertSamples(ctx, batch); err != nil {
			b.Fatal(err)
		}
		if err := st.AggregateRun(ctx, run.ID); err != nil {
			b.Fatal(err)
		}
		if err := st.SetRunImported(ctx, run.ID, "reach-jsonl", true, "file"); err != nil {
			b.Fatal(err)
		}
		if err := st.SetRunStatus(ctx, run.ID, store.StatusReady, ""); err != nil {
			b.Fatal(err)
		}
	}
	return cid
}

// benchDebate judges or scores the fixture (50 problems × 2 models × 32
// samples = 3,200 samples) end to end — River jobs on the sampling queue,
// one request per sample (scoring: plus one per problem and model for the
// prompt's length), a Postgres write per answer — against `reach
// replay-server` in a child process that answers after 50 ms, with 64
// requests in flight. It reports requests per second (as the endpoint's
// usage counts them) and the CPU of Reach's own process.
func benchDebate(b *testing.B, purpose string, serverArgs ...string) {
	bin := buildReach(b)
	dir := b.TempDir()
	labels := filepath.Join(dir, "labels.jsonl")
	if err := os.WriteFile(labels, []byte(`{"completion": "never in a prompt", "verdict": "flawed"}`+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	addr := freeAddr(b)
	args := append([]string{"replay-server", "--addr", addr, "--latency", "50ms"}, serverArgs...)
	for i, a := range args {
		if a == "LABELS" {
			args[i] = labels
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitListening(b, addr)

	st, _ := testdb.New(b)
	box, _ := secret.New(testSecret)
	const inFlight = 64
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
		ep := store.DebateEndpoint{ComparisonID: id, Purpose: purpose, Endpoint: store.Endpoint{BaseURL: "http://" + addr + "/v1",
			Model: "m", Style: "chat", MaxConcurrency: inFlight}, Template: "default", MaxTokens: 64}
		if purpose == store.PurposeScore {
			ep.Endpoint.Style, ep.Template = "completions", "qwen-boxed"
		}
		if err := st.PutDebateEndpoint(ctx, ep, false); err != nil {
			b.Fatal(err)
		}
		if _, err := jobs.TestDebateEndpoint(ctx, st, box, id, purpose); err != nil {
			b.Fatal(err)
		}
		before, _ := st.GetDebateEndpoint(ctx, id, purpose)
		b.StartTimer()
		cpu0, t0 := cpuTime(), time.Now()
		left, err := jobs.StartDebate(ctx, client, st, id, purpose)
		if err != nil || left != 3200 {
			b.Fatalf("start %s: %d samples, %v; want 3200", purpose, left, err)
		}
		for {
			n, err := jobs.ActiveDebateJobs(ctx, st, id, purpose)
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
		after, err := st.GetDebateEndpoint(ctx, id, purpose)
		if err != nil || after.Status == store.DebateFailed {
			b.Fatalf("%s: %v %s", purpose, err, after.Error)
		}
		requests := float64(after.Usage.Requests - before.Usage.Requests)
		b.ReportMetric(requests/wall.Seconds(), "req/s")
		b.ReportMetric(3200/wall.Seconds(), "samples/s")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
		fmt.Fprintf(os.Stderr, "%s: 3200 samples, %.0f requests in %v: %.0f req/s, Reach process CPU %.2f cores\n",
			purpose, requests, wall.Round(time.Millisecond), requests/wall.Seconds(), cpu.Seconds()/wall.Seconds())
		b.StartTimer()
	}
}

func waitListening(b *testing.B, addr string) {
	b.Helper()
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatalf("replay server on %s did not start", addr)
}

// BenchmarkJudgeThroughput: the judge job's throughput (see benchDebate). Run:
//
//	go test -run XXX -bench JudgeThroughput -benchtime 1x ./internal/jobs/
func BenchmarkJudgeThroughput(b *testing.B) {
	benchDebate(b, store.PurposeJudge, "--judge", "LABELS", "--judge-default", "valid")
}

// BenchmarkScoreThroughput: the scoring job's throughput (see benchDebate),
// with vLLM's prompt_logprobs. Run:
//
//	go test -run XXX -bench ScoreThroughput -benchtime 1x ./internal/jobs/
func BenchmarkScoreThroughput(b *testing.B) {
	benchDebate(b, store.PurposeScore, "--logprobs", "prompt_logprobs")
}
