package analysis

import (
	"context"
	"fmt"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/store"
)

// Cost is what one model's samples cost in completion tokens on the
// report's problems (issue 25.5): pass@k against the tokens k samples per
// problem take, and the tokens spent per problem solved. Tokens are the
// completion-token counts the file or the endpoint reported, in the model's
// own tokenizer (two models with different tokenizers count the same text
// differently). A sample without a count is unknown, never 0 tokens.
type Cost struct {
	// Source is where the samples came from: the file name(s), or the
	// endpoint ("the endpoint serving <model>").
	Source string `json:"source"`
	// NoTokens says why the token figures are absent ("no token counts in
	// base.jsonl"); empty when they are present.
	NoTokens string `json:"no_tokens,omitempty"`
	// Samples counts the model's samples on the report's problems, and
	// TokenSamples those of them with a token count; TokenShare is
	// TokenSamples / Samples, in [0, 1].
	Samples      int64   `json:"samples"`
	TokenSamples int64   `json:"samples_with_tokens"`
	TokenShare   float64 `json:"share_with_tokens"`
	// TokenProblems counts the problems with at least one sample with a
	// token count (of Report.Problems).
	TokenProblems int `json:"problems_with_tokens"`
	// MeanTokens is completion tokens per sample: each problem's mean over
	// its samples with a count, averaged over the TokenProblems problems
	// (see meanTokens for why per problem). Nil without token counts.
	MeanTokens *float64 `json:"mean_tokens_per_sample,omitempty"`
	// TokensSpent is the completion tokens of all Samples: the counted
	// ones, plus each sample without a count at its problem's mean (at
	// MeanTokens on a problem with none). Estimated says some were filled
	// in so (TokenSamples < Samples); else it is the exact sum.
	TokensSpent *float64 `json:"tokens_spent,omitempty"`
	Estimated   bool     `json:"tokens_estimated,omitempty"`
	// TokensPerSolved is TokensSpent divided by the problems the model
	// solved (c ≥ 1, ModelReport.Solved): completion tokens per solved
	// problem. Nil without token counts or when it solved none.
	TokensPerSolved *float64 `json:"tokens_per_solved_problem,omitempty"`
	// PassAtTokens is pass@k (ModelReport.PassAtK) against the completion
	// tokens of k samples per problem, k × MeanTokens, at the ks of
	// ChartKs(len(pass_at_k)). Nil without token counts.
	PassAtTokens []TokenPoint `json:"pass_at_tokens,omitempty"`
}

// TokenPoint is pass@k at one k with what k samples per problem cost.
type TokenPoint struct {
	K int `json:"k"`
	// Tokens is k × Cost.MeanTokens: completion tokens per problem.
	Tokens float64 `json:"tokens"`
	// Value is pass@k in [0, 1].
	Value float64 `json:"value"`
	// Extrapolated marks a pass@k past the model's smallest n (Point).
	Extrapolated bool `json:"extrapolated,omitempty"`
}

// AttachCost fills each model's Cost from the comparison's token sums: one
// query of the store (store.TokenSums, per run and problem), the rest pure
// (costFigures). Only the report's problems (Rows) count.
func (rep *Report) AttachCost(ctx context.Context, st *store.Store, c store.Comparison) error {
	sums, err := st.TokenSums(ctx, c.ID)
	if err != nil {
		return err
	}
	rep.attachCost(c.Runs, sums)
	return nil
}

// attachCost is AttachCost on loaded sums (run id → per-problem sums).
func (rep *Report) attachCost(runs []store.Run, sums map[int64][]store.TokenSum) {
	for i, r := range runs {
		if i >= len(rep.Models) {
			break
		}
		byProblem := make(map[int64]store.TokenSum, len(sums[r.ID]))
		for _, x := range sums[r.ID] {
			byProblem[x.ProblemID] = x
		}
		kept := make([]store.TokenSum, len(rep.Rows))
		for j, row := range rep.Rows {
			x, ok := byProblem[row.ProblemID]
			if !ok {
				// Counts without a stored sum (a run imported as counts).
				x = store.TokenSum{RunID: r.ID, ProblemID: row.ProblemID, Samples: row.Counts[i].N}
			}
			kept[j] = x
		}
		rep.Models[i].Cost = costFigures(rep.Models[i], r, kept)
	}
}

// costFigures computes one model's Cost from its token sums on the
// report's problems (one per problem, in any order): pure.
func costFigures(m ModelReport, r store.Run, sums []store.TokenSum) *Cost {
	c := &Cost{Source: costSource(r)}
	for _, x := range sums {
		c.Samples += int64(x.Samples)
		c.TokenSamples += int64(x.TokenSamples)
		if x.TokenSamples > 0 {
			c.TokenProblems++
		}
	}
	if c.Samples > 0 {
		c.TokenShare = float64(c.TokenSamples) / float64(c.Samples)
	}
	if c.TokenSamples == 0 {
		c.NoTokens = "no token counts in " + c.Source
		if r.Format == string(ingest.FormatCountsCSV) {
			c.NoTokens += " (a counts file: Reach has no samples of this model)"
		}
		return c
	}
	mean := meanTokens(sums)
	spent := 0.0
	for _, x := range sums {
		fill := mean
		if x.TokenSamples > 0 {
			fill = float64(x.Tokens) / float64(x.TokenSamples)
		}
		spent += float64(x.Tokens) + float64(x.Samples-x.TokenSamples)*fill
	}
	c.MeanTokens, c.TokensSpent, c.Estimated = &mean, &spent, c.TokenSamples < c.Samples
	if m.Solved > 0 {
		per := spent / float64(m.Solved)
		c.TokensPerSolved = &per
	}
	if len(m.PassAtK) > 0 {
		for _, k := range ChartKs(len(m.PassAtK)) {
			p := m.PassAtK[k-1]
			c.PassAtTokens = append(c.PassAtTokens, TokenPoint{K: p.K, Tokens: float64(p.K) * mean, Value: p.Value, Extrapolated: p.Extrapolated})
		}
	}
	return c
}

// meanTokens is the mean over problems of each problem's mean tokens per
// sample (problems without a counted sample left out). Per problem, not
// total tokens over total samples: pass@k weighs every problem the same, so
// the tokens k samples cost must too (k × this is the expected tokens of k
// samples of a problem drawn as pass@k draws it). The two agree when every
// problem has as many counted samples; they part when n differs (an
// adaptive design gives the hard problems, whose completions run long, the
// most samples) or counts are missing on some problems, and problems differ
// many-fold in length (a one-line answer against a long chain of thought),
// so the pooled mean would follow whichever problems have more samples.
func meanTokens(sums []store.TokenSum) float64 {
	total, problems := 0.0, 0
	for _, x := range sums {
		if x.TokenSamples > 0 {
			total += float64(x.Tokens) / float64(x.TokenSamples)
			problems++
		}
	}
	if problems == 0 {
		return 0
	}
	return total / float64(problems)
}

// costSource names where a run's samples came from, for "no token counts
// in …": its file(s), or its endpoint by served model (never its address).
func costSource(r store.Run) string {
	switch {
	case r.Endpoint.BaseURL != "" && r.Endpoint.Model != "":
		return fmt.Sprintf("the replies of the endpoint serving %s", r.Endpoint.Model)
	case r.Endpoint.BaseURL != "":
		return "the endpoint's replies"
	case r.SourceFile != "":
		return r.SourceFile
	}
	return "its samples"
}
