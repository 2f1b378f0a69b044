package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testfiles"
)

// Sampling with temperatures 0.6 and 1.0 makes one run per model and temperature (SFT@T=0.6,
// SFT@T=1.0, PPO@T=0.6, PPO@T=1.0), each asking its endpoint at its own temperature; the
// report has both models' sweeps and k* at each temperature against the base model at the
// same temperature (issue 25.4).
func TestTemperatureSweepSampled(t *testing.T) {
	e, box := startSampling(t)
	ctx := context.Background()
	dir := testfiles.GSM8KProbe(t)
	var mu sync.Mutex
	temps := map[string][]float64{} // served model -> temperatures asked for
	var urls []string
	for _, f := range []string{"sft_raw.jsonl", "rl_raw.jsonl"} {
		recs, err := replay.Load(ctx, filepath.Join(dir, "results_1024_cuda", f), filepath.Join(dir, "data/gsm8k_subset.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		h := replay.New(recs, replay.Options{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var req struct {
				Model       string   `json:"model"`
				Temperature *float64 `json:"temperature"`
			}
			if json.Unmarshal(body, &req) == nil && req.Temperature != nil {
				mu.Lock()
				if !slices.Contains(temps[req.Model], *req.Temperature) {
					temps[req.Model] = append(temps[req.Model], *req.Temperature)
				}
				mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL+"/v1")
	}
	spec := sampleSpec(t, urls[0], urls[1], 4)
	spec.Temperatures = []float64{0.6, 1.0}
	id, err := intake.CreateSampling(ctx, e.st, e.client, box, spec)
	if err != nil {
		t.Fatal(err)
	}
	if c := e.wait(t, id); c.Status != store.StatusReady {
		t.Fatalf("sampled comparison %s: %s", c.Status, c.Error)
	}
	c, _ := e.st.GetComparison(ctx, id)
	var names, roles []string
	for _, r := range c.Runs {
		names, roles = append(names, r.ModelName), append(roles, r.Role)
	}
	// Temperature by temperature: the headline pair is base and RL at the first temperature.
	if !slices.Equal(names, []string{"SFT@T=0.6", "PPO@T=0.6", "SFT@T=1.0", "PPO@T=1.0"}) || !slices.Equal(roles, []string{"base", "rl", "base", "rl"}) || rep0Other(c) != "PPO@T=0.6" {
		t.Fatalf("runs %v, roles %v", names, roles)
	}
	mu.Lock()
	for _, m := range []string{"sft", "ppo"} {
		got := slices.Sorted(slices.Values(temps[m]))
		if !slices.Equal(got, []float64{0.6, 1}) {
			t.Errorf("%s asked at temperatures %v; want 0.6 and 1", m, got)
		}
	}
	mu.Unlock()
	rep, err := analysis.Build(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	sw := rep.TemperatureSweep
	if sw == nil || len(sw.Models) != 2 || sw.Models[0].Model != "SFT" || sw.Models[1].Model != "PPO" {
		t.Fatalf("sweep %+v", sw)
	}
	for _, m := range sw.Models {
		for i, p := range m.Union.AtK {
			for _, tp := range m.Temperatures {
				if p.Union < tp.PassAtK[i].Value-1e-12 {
					t.Errorf("%s: union@%d %v below pass@%d at T=%v (%v)", m.Model, p.K, p.Union, p.K, tp.Temperature, tp.PassAtK[i].Value)
				}
			}
		}
	}
	if len(sw.Crossovers) != 2 {
		t.Fatalf("crossovers %+v", sw.Crossovers)
	}
	for i, want := range [][2]string{{"SFT@T=0.6", "PPO@T=0.6"}, {"SFT@T=1.0", "PPO@T=1.0"}} {
		x := sw.Crossovers[i]
		if x.Base != want[0] || x.Other != want[1] || x.BaseTemperature != x.OtherTemperature || x.BaseSwept {
			t.Errorf("crossover %d: %+v; want %s vs %s", i, x, want[0], want[1])
		}
	}
	if rep.Comparability == nil || !rep.Comparability.TemperatureSweep {
		t.Errorf("comparability %+v; want a temperature sweep", rep.Comparability)
	}
}

// rep0Other is the model token scoring compares with the base model.
func rep0Other(c store.Comparison) string { return jobs.TokenRLRun(c).ModelName }
