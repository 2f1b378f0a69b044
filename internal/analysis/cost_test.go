package analysis

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// costFixture: three problems; a base model with every token count (n = 2),
// an RL model with some counts missing and n = 4 on p0, and a model
// imported as counts (no samples, so no token counts).
func costFixture() (store.Comparison, []store.Problem, map[int64][]store.Count, map[int64][]store.TokenSum) {
	c := store.Comparison{ID: 9, Name: "cost", Status: store.StatusReady, Runs: []store.Run{
		{ID: 1, ModelName: "base", Role: "base", SourceFile: "base.jsonl"},
		{ID: 2, ModelName: "rl", Role: "rl", SourceFile: "rl.jsonl"},
		{ID: 3, ModelName: "old", Role: "rl", SourceFile: "old.csv", Format: "counts-csv"},
	}}
	ps := []store.Problem{{ID: 10, Key: "p0", Reference: "x^2"}, {ID: 11, Key: "p1", Reference: "y^2"}, {ID: 12, Key: "p2", Reference: "z^2"}}
	counts := map[int64][]store.Count{
		1: {{RunID: 1, ProblemID: 10, N: 2, C: 2}, {RunID: 1, ProblemID: 11, N: 2, C: 1}, {RunID: 1, ProblemID: 12, N: 2, C: 0}},
		2: {{RunID: 2, ProblemID: 10, N: 4, C: 1}, {RunID: 2, ProblemID: 11, N: 2, C: 0}, {RunID: 2, ProblemID: 12, N: 2, C: 2}},
		3: {{RunID: 3, ProblemID: 10, N: 2, C: 0}, {RunID: 3, ProblemID: 11, N: 2, C: 0}, {RunID: 3, ProblemID: 12, N: 2, C: 0}},
	}
	sums := map[int64][]store.TokenSum{
		// p0: 100 + 300; p1: 10 + 30; p2: 1000 + 1000.
		1: {{RunID: 1, ProblemID: 10, Samples: 2, TokenSamples: 2, Tokens: 400}, {RunID: 1, ProblemID: 11, Samples: 2, TokenSamples: 2, Tokens: 40},
			{RunID: 1, ProblemID: 12, Samples: 2, TokenSamples: 2, Tokens: 2000}},
		// p0: 100, none, 200, 300; p1: none, none; p2: 500 + 900.
		2: {{RunID: 2, ProblemID: 10, Samples: 4, TokenSamples: 3, Tokens: 600}, {RunID: 2, ProblemID: 11, Samples: 2},
			{RunID: 2, ProblemID: 12, Samples: 2, TokenSamples: 2, Tokens: 1400}},
		// the counts file's rows carry no sums
		3: {{RunID: 3, ProblemID: 10, Samples: 2}, {RunID: 3, ProblemID: 11, Samples: 2}, {RunID: 3, ProblemID: 12, Samples: 2}},
	}
	return c, ps, counts, sums
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCostFigures(t *testing.T) {
	c, ps, counts, sums := costFixture()
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	rep.attachCost(c.Runs, sums)

	// Base: every sample counted. Mean per problem (400/2 + 40/2 + 2000/2) / 3
	// = 1220/3; spent 2440 exactly; solved p0, p1: 1220 per solved problem.
	b := rep.Models[0].Cost
	if b == nil || b.NoTokens != "" || b.MeanTokens == nil || b.TokensSpent == nil || b.TokensPerSolved == nil {
		t.Fatalf("base cost %+v", b)
	}
	if b.Samples != 6 || b.TokenSamples != 6 || b.TokenShare != 1 || b.TokenProblems != 3 || b.Estimated {
		t.Errorf("base samples %d, with tokens %d (%v) on %d problems, estimated %v", b.Samples, b.TokenSamples, b.TokenShare, b.TokenProblems, b.Estimated)
	}
	if !near(*b.MeanTokens, 1220.0/3) || !near(*b.TokensSpent, 2440) || !near(*b.TokensPerSolved, 1220) {
		t.Errorf("base mean %v spent %v per solved %v; want 406.67, 2440, 1220", *b.MeanTokens, *b.TokensSpent, *b.TokensPerSolved)
	}
	// pass@1 = (1 + 1/2 + 0)/3 at 1220/3 tokens, pass@2 = 2/3 at 2440/3.
	if len(b.PassAtTokens) != 2 || b.PassAtTokens[0].K != 1 || !near(b.PassAtTokens[0].Tokens, 1220.0/3) || !near(b.PassAtTokens[0].Value, 0.5) ||
		b.PassAtTokens[1].K != 2 || !near(b.PassAtTokens[1].Tokens, 2440.0/3) || !near(b.PassAtTokens[1].Value, 2.0/3) {
		t.Errorf("base pass@tokens %+v", b.PassAtTokens)
	}

	// RL: 5 of 8 samples counted, on p0 and p2. Per problem: 600/3 = 200 and
	// 1400/2 = 700, mean 450 (total over samples would say 2000/5 = 400,
	// weighing p0's three counted samples over p2's two). Spent: p0 600 + 1
	// sample at 200, p1 two samples at 450, p2 1400: 3100, estimated;
	// solved p0, p2: 1550 per solved problem.
	r := rep.Models[1].Cost
	if r == nil || r.NoTokens != "" || r.MeanTokens == nil || r.TokensSpent == nil || r.TokensPerSolved == nil {
		t.Fatalf("RL cost %+v", r)
	}
	if r.Samples != 8 || r.TokenSamples != 5 || !near(r.TokenShare, 0.625) || r.TokenProblems != 2 || !r.Estimated {
		t.Errorf("RL samples %d, with tokens %d (%v) on %d problems, estimated %v", r.Samples, r.TokenSamples, r.TokenShare, r.TokenProblems, r.Estimated)
	}
	if !near(*r.MeanTokens, 450) || !near(*r.TokensSpent, 3100) || !near(*r.TokensPerSolved, 1550) {
		t.Errorf("RL mean %v spent %v per solved %v; want 450, 3100, 1550", *r.MeanTokens, *r.TokensSpent, *r.TokensPerSolved)
	}
	// pass@1 = (1/4 + 0 + 1)/3 = 5/12 at 450; pass@2 = (1/2 + 0 + 1)/3 at 900.
	if len(r.PassAtTokens) != 2 || !near(r.PassAtTokens[0].Tokens, 450) || !near(r.PassAtTokens[0].Value, 5.0/12) ||
		!near(r.PassAtTokens[1].Tokens, 900) || !near(r.PassAtTokens[1].Value, 0.5) {
		t.Errorf("RL pass@tokens %+v", r.PassAtTokens)
	}

	// Counts only: no figure, and why.
	o := rep.Models[2].Cost
	if o == nil || o.MeanTokens != nil || o.TokensSpent != nil || o.TokensPerSolved != nil || o.PassAtTokens != nil || o.TokenSamples != 0 || o.Samples != 6 {
		t.Fatalf("counts-only cost %+v", o)
	}
	if !strings.HasPrefix(o.NoTokens, "no token counts in old.csv") || !strings.Contains(o.NoTokens, "counts file") {
		t.Errorf("counts-only: %q", o.NoTokens)
	}

	// In the report JSON under models[].cost, absent figures left out.
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Models []struct {
			Cost map[string]any `json:"cost"`
		} `json:"models"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if v := doc.Models[1].Cost["tokens_per_solved_problem"]; v != 1550.0 {
		t.Errorf("models[1].cost.tokens_per_solved_problem = %v", v)
	}
	if _, ok := doc.Models[2].Cost["mean_tokens_per_sample"]; ok || doc.Models[2].Cost["no_tokens"] == nil {
		t.Errorf("models[2].cost = %v", doc.Models[2].Cost)
	}
	// A stored report keeps it.
	data, err := encodeReport(rep)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeReport(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Models[1].Cost == nil || *back.Models[1].Cost.TokensSpent != 3100 {
		t.Errorf("decoded cost %+v", back.Models[1].Cost)
	}
}

// Only the report's problems count: with p2 left out, the base model spent
// 400 + 40 tokens on two problems it solved both of.
func TestCostFollowsTheVariant(t *testing.T) {
	c, ps, counts, sums := costFixture()
	rep, err := ComputeWith(c, ps, counts, Options{ExcludeProblems: map[int64]bool{12: true}})
	if err != nil {
		t.Fatal(err)
	}
	rep.attachCost(c.Runs, sums)
	b := rep.Models[0].Cost
	if b.Samples != 4 || !near(*b.MeanTokens, 110) || !near(*b.TokensSpent, 440) || !near(*b.TokensPerSolved, 220) {
		t.Errorf("base without p2: samples %d mean %v spent %v per solved %v; want 4, 110, 440, 220", b.Samples, *b.MeanTokens, *b.TokensSpent, *b.TokensPerSolved)
	}
}

// Nothing solved: no tokens per solved problem. An endpoint is named by its
// served model, never its address.
func TestCostEdges(t *testing.T) {
	m := ModelReport{Solved: 0, PassAtK: []Point{{K: 1, Value: 0}}}
	run := store.Run{Endpoint: store.Endpoint{BaseURL: "http://10.0.0.7:8000/v1", Model: "qwen-7b"}}
	c := costFigures(m, run, []store.TokenSum{{Samples: 1, TokenSamples: 1, Tokens: 70}})
	if c.TokensPerSolved != nil || c.TokensSpent == nil || *c.TokensSpent != 70 {
		t.Errorf("solved none: %+v", c)
	}
	c = costFigures(m, run, []store.TokenSum{{Samples: 1}})
	if c.NoTokens != "no token counts in the replies of the endpoint serving qwen-7b" || strings.Contains(c.NoTokens, "10.0.0.7") {
		t.Errorf("endpoint without usage: %q", c.NoTokens)
	}
	if c.TokenShare != 0 || c.MeanTokens != nil {
		t.Errorf("endpoint without usage: %+v", c)
	}
}
