package jobs_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/testfiles"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// startSamplingDownAfter starts a client for sampling tests with the given
// EndpointDownAfter (0: the default).
func startSamplingDownAfter(t *testing.T, downAfter time.Duration) (env, *secret.Box) {
	t.Helper()
	st, _ := testdb.New(t)
	box, _ := secret.New(testSecret)
	client, err := jobs.NewClient(st, jobs.Config{Workers: 4, SamplingWorkers: 16, Verifier: vmath.New(), Secret: box, EndpointDownAfter: downAfter,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	return env{st, client}, box
}

// replayHandler serves the GSM8K stand-in's SFT rollouts.
func replayHandler(t *testing.T) http.Handler {
	t.Helper()
	dir := testfiles.GSM8KProbe(t)
	recs, err := replay.Load(context.Background(), filepath.Join(dir, "results_1024_cuda", "sft_raw.jsonl"), filepath.Join(dir, "data/gsm8k_subset.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return replay.New(recs, replay.Options{Latency: 2 * time.Millisecond})
}

// serveOn starts h on addr (after the port was closed for a while).
func serveOn(t *testing.T, addr string, h http.Handler) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
}

func runSamples(t *testing.T, e env, id int64) map[string]store.SamplingProgress {
	t.Helper()
	c, err := e.st.GetComparison(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := e.st.SamplingProgressFor(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.SamplingProgress{}
	for _, r := range c.Runs {
		out[r.ModelName] = ps[r.ID]
	}
	return out
}

// A model whose endpoint nothing listens on fails the comparison once it
// has been unreachable for EndpointDownAfter, naming the URL and the
// cause, instead of retrying for about 19 minutes and then calling the
// comparison ready with no samples; the other model's samples are kept,
// and Retry, once a server listens there, finishes the comparison.
func TestUnreachableEndpointFailsComparison(t *testing.T) {
	const downAfter = 3 * time.Second
	e, box := startSamplingDownAfter(t, downAfter)
	ctx := context.Background()
	good := httptest.NewServer(replayHandler(t))
	t.Cleanup(good.Close)
	addr := freeAddr(t)
	spec := sampleSpec(t, "http://"+addr+"/v1", good.URL+"/v1", 4)
	start := time.Now()
	id, err := intake.CreateSampling(ctx, e.st, e.client, box, spec)
	if err != nil {
		t.Fatal(err)
	}
	c := e.wait(t, id)
	took := time.Since(start)
	if c.Status != store.StatusFailed {
		t.Fatalf("comparison %s (%q) after %s; want failed", c.Status, c.Error, took)
	}
	// Given up at the bound, not after River's retries (minutes).
	if took > downAfter+30*time.Second {
		t.Errorf("failed after %s; want about EndpointDownAfter (%s)", took, downAfter)
	}
	for _, want := range []string{`model "SFT"`, "http://" + addr + "/v1/ is unreachable", "connection refused", "Retry"} {
		if !strings.Contains(c.Error, want) {
			t.Errorf("comparison error %q lacks %q", c.Error, want)
		}
	}
	for _, r := range c.Runs {
		if r.ModelName == "SFT" && (r.Status != store.StatusFailed || !strings.Contains(r.Error, addr)) {
			t.Errorf("unreachable model's run: %s %q; want failed naming %s", r.Status, r.Error, addr)
		}
	}
	// The progress page's line for the down model says why and where.
	ps := runSamples(t, e, id)
	if sft := ps["SFT"]; sft.Samples != 0 || !strings.Contains(sft.Retrying, addr) || !strings.Contains(sft.Retrying, "connection refused") {
		t.Errorf("SFT progress %+v: want no samples and a note naming %s and the cause", sft, addr)
	}
	kept := ps["PPO"].Samples
	if kept == 0 {
		t.Fatalf("PPO progress %+v: the reachable model's samples are lost", ps["PPO"])
	}

	// Retry once the server is up: the failed model's samples are drawn,
	// the other model's are kept, and the comparison is ready.
	serveOn(t, addr, replayHandler(t))
	if err := jobs.ResumeSampling(ctx, e.client, e.st, id); err != nil {
		t.Fatal(err)
	}
	if c := e.wait(t, id); c.Status != store.StatusReady {
		t.Fatalf("after Retry: comparison %s: %s", c.Status, c.Error)
	}
	ps = runSamples(t, e, id)
	if ps["SFT"].Samples != 30*4 || ps["PPO"].Samples != 30*4 || ps["SFT"].Retrying != "" {
		t.Errorf("after Retry: SFT %+v, PPO %+v; want 120 samples each and no retry note", ps["SFT"], ps["PPO"])
	}
}

// A server that refuses connections for a few seconds (restarting) and
// then comes up is waited for: the comparison is ready with every sample,
// no chunk failed, and while it refused, the progress page said so,
// naming the URL and the cause.
func TestEndpointRefusingForAWhileStillSamples(t *testing.T) {
	e, box := startSamplingDownAfter(t, 0) // the default bound (2 minutes)
	ctx := context.Background()
	good := httptest.NewServer(replayHandler(t))
	t.Cleanup(good.Close)
	addr := freeAddr(t)
	id, err := intake.CreateSampling(ctx, e.st, e.client, box, sampleSpec(t, "http://"+addr+"/v1", good.URL+"/v1", 4))
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the progress page to show the refused connections.
	deadline := time.Now().Add(30 * time.Second)
	var note string
	for note == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no retry note on the progress page after 30 s: %+v", runSamples(t, e, id)["SFT"])
		}
		time.Sleep(50 * time.Millisecond)
		note = runSamples(t, e, id)["SFT"].Retrying
	}
	for _, want := range []string{"cannot connect to http://" + addr + "/v1/", "connection refused", "attempts failed since", "next try at", "given up at"} {
		if !strings.Contains(note, want) {
			t.Errorf("retry note %q lacks %q", note, want)
		}
	}
	time.Sleep(2 * time.Second)
	serveOn(t, addr, replayHandler(t))
	e.waitFor(t, id, 2*time.Minute)
	ps := runSamples(t, e, id)
	for _, m := range []string{"SFT", "PPO"} {
		if p := ps[m]; p.Samples != 30*4 || p.ChunksFailed != 0 || p.Retrying != "" {
			t.Errorf("%s: %+v; want 120 samples, no chunk failed, no retry note", m, p)
		}
	}
}
