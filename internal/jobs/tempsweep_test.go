package jobs_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reach-lab/reach/internal/intake"
)

// One RL model imported at two temperatures (two Inspect logs of the same model with different
// temperature settings) is a temperature sweep: per-temperature pass@k and solved sets, the
// union across temperatures and k* per temperature, figures worked out by hand (issue 25.4);
// the comparability check calls it a sweep, not a mismatch.
func TestTemperatureSweepImport(t *testing.T) {
	dir := toolFormats(t)
	base, rl := pairFiles(t, dir, "c_inspect_*.json")
	tmp := t.TempDir()
	edit := func(src, name, model string, temp float64) string {
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		var log map[string]any
		if err := json.Unmarshal(raw, &log); err != nil {
			t.Fatal(err)
		}
		ev := log["eval"].(map[string]any)
		ev["model_generate_config"] = map[string]any{"temperature": temp}
		if model != "" {
			ev["model"] = model
		}
		out, _ := json.Marshal(log)
		p := filepath.Join(tmp, name+".json")
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const rlModel = "vllm/Qwen/Qwen2.5-7B-SimpleRL-Zoo"
	// Counts per problem, n = 4: base (2, 1, 3) at 0.6; RL (4, 0, 4) at 0.6; the base log
	// relabelled as the RL model at 1.0 gives the RL model (2, 1, 3) there.
	e := start(t)
	rep := e.importReady(t, intake.Spec{Name: "sweep", Dataset: intake.LocalFile(filepath.Join(dir, "ds_gsm8k_3.jsonl")),
		Models: []intake.Model{
			{Name: "base", File: intake.LocalFile(edit(base, "b", "", 0.6))},
			{Name: "rl@T=0.6", File: intake.LocalFile(edit(rl, "r06", "", 0.6))},
			{Name: "rl@T=1.0", File: intake.LocalFile(edit(base, "r10", rlModel, 1.0))},
		}})
	sw := rep.TemperatureSweep
	if sw == nil || len(sw.Models) != 1 {
		t.Fatalf("temperature sweep %+v; want one swept model", sw)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	m := sw.Models[0]
	if m.Model != "rl" || m.Role != "rl" || len(m.Temperatures) != 2 || !slices.Equal(sw.Ks, []int{1, 2, 4}) {
		t.Fatalf("swept model %+v, ks %v", m, sw.Ks)
	}
	lo, hi := m.Temperatures[0], m.Temperatures[1]
	if lo.Temperature != 0.6 || lo.Run != "rl@T=0.6" || hi.Temperature != 1 || hi.Run != "rl@T=1.0" {
		t.Fatalf("temperatures %+v, %+v", lo, hi)
	}
	near("pass@1 at 0.6", lo.PassAtK[0].Value, 8.0/12)
	near("pass@1 at 1.0", hi.PassAtK[0].Value, 6.0/12)
	near("pass@2 at 1.0", hi.PassAtK[1].Value, (5.0/6+0.5+1)/3)
	if lo.Solved != 2 || hi.Solved != 3 || len(lo.OnlyHere) != 0 || len(hi.OnlyHere) != 1 {
		t.Errorf("solved sets: %d %v, %d %v; want 2 [], 3 [one problem]", lo.Solved, lo.OnlyHere, hi.Solved, hi.OnlyHere)
	}
	u := m.Union
	if u.Solved != 3 || u.BestSolved != 3 || u.BestTemperature != 1 {
		t.Errorf("union %+v", u)
	}
	near("coverage", u.Coverage, 1)
	near("gain", u.Gain, 0)
	// Union@1 = mean of 1 − (1 − 1)(1 − 1/2), 1 − (1 − 0)(1 − 1/4), 1 = 2.25/3.
	near("union@1", u.AtK[0].Union, 0.75)
	// Union@2 = mean of 1, 1 − (1 − 0)(1 − 1/2), 1 = 2.5/3; the best single T's pass@2 is 7/9 (T = 1).
	near("union@2", u.AtK[1].Union, 2.5/3)
	if p := u.AtK[0]; p.Matched == nil || p.MatchedK != 2 {
		t.Fatalf("matched budget at k = 1: %+v", p)
	}
	near("best single at 2 samples", *u.AtK[0].Matched, 7.0/9)
	// k*: rl@T=0.6 against the base model at 0.6 (behind by 1/6 at k = 1, ahead by 1/9 at
	// k = 2: 2^(3/5) on the log2 axis, the headline pair's k*); rl@T=1.0 against the base
	// model too (no base run at 1.0), with the same counts: no crossover.
	if len(sw.Crossovers) != 2 {
		t.Fatalf("crossovers %+v", sw.Crossovers)
	}
	c0, c1 := sw.Crossovers[0], sw.Crossovers[1]
	if c0.Base != "base" || c0.Other != "rl@T=0.6" || !c0.Found || c1.Other != "rl@T=1.0" || c1.Temperature != 1 || c1.Found {
		t.Errorf("crossovers %+v", sw.Crossovers)
	}
	near("k* at 0.6", c0.K, math.Pow(2, 0.6))
	if hk := rep.Pairs[0].Crossover; !hk.Found || math.Abs(hk.K-c0.K) > 1e-9 {
		t.Errorf("headline k* %+v, sweep %v", hk, c0.K)
	}
	if c0.FoundShare <= 0 || !c0.Lo.Found || c0.Lo.K > c0.K {
		t.Errorf("k* interval %+v", c0)
	}
	cp := rep.Comparability
	if cp == nil || !cp.TemperatureSweep {
		t.Fatalf("comparability %+v; want a temperature sweep", cp)
	}
	var codes []string
	for _, w := range rep.Warnings {
		codes = append(codes, w.Code)
	}
	if !slices.Contains(codes, "temperature-sweep") || slices.Contains(codes, "settings-differ") {
		t.Errorf("warnings %v; want temperature-sweep and no settings-differ", codes)
	}
	// G-Pass@k intervals come with the report: pass^4 of rl@T=0.6 is 2/3, its interval
	// within [0, 1] around it.
	g := rep.Models[1].GPass
	last := g[len(g)-1]
	if last.K != 4 || math.Abs(last.Values[3]-2.0/3) > 1e-9 || last.Lo[3] > last.Values[3] || last.Hi[3] < last.Values[3] || last.Hi[3] > 1 {
		t.Errorf("G-Pass@4 of rl@T=0.6: %+v", last)
	}
}

// Plain counts files record no temperature: runs named rl@T=0.6 and rl@T=1.0 take theirs from
// the names and are one model's sweep. Counts n = 4 on p1..p3: rl@T=0.6 (4, 0, 0), rl@T=1.0
// (0, 2, 0): the union solves 2 of 3 where each temperature solves 1 (gain 1/3), union@1 =
// (1 + 1/2 + 0)/3.
func TestTemperatureSweepFromNames(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ds := write("ds.jsonl", `{"id":"p1","problem":"1+1?","answer":"2"}
{"id":"p2","problem":"1+2?","answer":"3"}
{"id":"p3","problem":"1+3?","answer":"4"}
`)
	csv := func(name string, c ...int) string {
		text := "problem_id,n,correct\n"
		for i, x := range c {
			text += fmt.Sprintf("p%d,4,%d\n", i+1, x)
		}
		return write(name, text)
	}
	e := start(t)
	rep := e.importReady(t, intake.Spec{Name: "named sweep", Dataset: intake.LocalFile(ds), Models: []intake.Model{
		{Name: "base", File: intake.LocalFile(csv("base.csv", 1, 1, 0))},
		{Name: "rl@T=0.6", File: intake.LocalFile(csv("rl06.csv", 4, 0, 0))},
		{Name: "rl@T=1.0", File: intake.LocalFile(csv("rl10.csv", 0, 2, 0))},
	}})
	sw := rep.TemperatureSweep
	if sw == nil || len(sw.Models) != 1 || len(sw.Models[0].Temperatures) != 2 {
		t.Fatalf("sweep %+v", sw)
	}
	u := sw.Models[0].Union
	if u.Solved != 2 || u.BestSolved != 1 || math.Abs(u.Gain-1.0/3) > 1e-12 || math.Abs(u.AtK[0].Union-0.5) > 1e-12 {
		t.Errorf("union %+v", u)
	}
}
