// Package tokendiv computes where, token by token, an RL model and its base
// model part ways on the same completion: the per-position log-ratio
// log p_RL − log p_base, the Jensen–Shannon divergence of the two models'
// next-token distributions from their top-k alternatives, the critical
// (most divergent) positions, how sparse the divergence is, and aggregates
// over many samples.
//
// The question is the one of "Sparse but Critical" (Meng et al. 2026, arXiv
// 2603.22446): RL and base differ at few positions, and those positions carry
// the gain; the critical tokens ("Wait", "Step", …) are the ones Sinii et al.
// list; per sample, the perplexity under each model is Yue et al.'s test
// (2025, arXiv 2504.13837, Fig. 6). The package is pure: no I/O.
package tokendiv

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Alt is one of a model's top-k alternatives at a position: a token's text
// and its natural-log probability.
type Alt struct {
	Token   string
	Logprob float64
}

// Scored is one completion's tokens scored under one model: Logprobs[i] is
// the natural-log probability of Tokens[i] given everything before it; Top[i]
// (nil when the server gave none) are the model's top-k alternatives there.
type Scored struct {
	Tokens   []string
	Logprobs []float64
	Top      [][]Alt
}

// LogRatio returns log p_RL(t_i) − log p_base(t_i) per position: positive
// where the RL model prefers the completion's token. rl and base must have
// the same length (the same tokenization); the shorter length is used
// otherwise.
func LogRatio(rl, base []float64) []float64 {
	n := min(len(rl), len(base))
	out := make([]float64, n)
	for i := range n {
		out[i] = rl[i] - base[i]
	}
	return out
}

// JS returns the Jensen–Shannon divergence in bits (0…1) between the two
// models' next-token distributions at one position, known only through their
// top-k alternatives p and q (natural-log probabilities; the position's
// actual token should be in both, as vLLM always lists it).
//
// The rest mass is handled by coarsening: the categories are the tokens known
// under both models plus one "rest" bucket holding everything else (each
// model's 1 − Σ of its known probabilities over the common tokens, so tokens
// known under one model only fall into the rest). The JS divergence of a
// coarsening is never larger than that of the full distributions (data
// processing inequality), so this is a lower bound on the full-vocabulary
// JS divergence; it is exact when both lists cover all the mass on the same
// tokens. ok is false when no token is known under both.
func JS(p, q []Alt) (js float64, ok bool) {
	qm := make(map[string]float64, len(q))
	for _, a := range q {
		if v, seen := qm[a.Token]; !seen || a.Logprob > v {
			qm[a.Token] = a.Logprob
		}
	}
	var ps, qs []float64
	seen := map[string]bool{}
	for _, a := range p {
		lq, in := qm[a.Token]
		if !in || seen[a.Token] {
			continue
		}
		seen[a.Token] = true
		ps = append(ps, math.Exp(min(a.Logprob, 0)))
		qs = append(qs, math.Exp(min(lq, 0)))
	}
	if len(ps) == 0 {
		return 0, false
	}
	var sp, sq float64
	for i := range ps {
		sp, sq = sp+ps[i], sq+qs[i]
	}
	ps = append(ps, max(1-sp, 0))
	qs = append(qs, max(1-sq, 0))
	// Renormalise (rounded probabilities can sum a hair above 1).
	sp, sq = sp+ps[len(ps)-1], sq+qs[len(qs)-1]
	for i := range ps {
		ps[i], qs[i] = ps[i]/sp, qs[i]/sq
	}
	for i := range ps {
		m := (ps[i] + qs[i]) / 2
		if ps[i] > 0 {
			js += ps[i] * math.Log2(ps[i]/m) / 2
		}
		if qs[i] > 0 {
			js += qs[i] * math.Log2(qs[i]/m) / 2
		}
	}
	return min(max(js, 0), 1), true
}

// Perplexity is exp(−mean log-probability) of a completion's tokens (Yue et
// al. 2025, Fig. 6); 0 for no tokens.
func Perplexity(lps []float64) float64 {
	if len(lps) == 0 {
		return 0
	}
	var s float64
	for _, v := range lps {
		s += v
	}
	return math.Exp(-s / float64(len(lps)))
}

// Position is one token of a compared completion.
type Position struct {
	Index    int
	Token    string
	Base, RL float64 // natural-log probabilities
	Delta    float64 // RL − Base
	JS       float64 // bits; meaningful when HasJS
	HasJS    bool
}

// Compare lines up a completion scored under the base and the RL model:
// one Position per token. The two must tokenize alike (same length and
// token texts); ok is false otherwise, and nothing is compared.
func Compare(base, rl Scored) (ps []Position, ok bool) {
	if len(base.Tokens) != len(rl.Tokens) || len(base.Logprobs) != len(base.Tokens) || len(rl.Logprobs) != len(rl.Tokens) {
		return nil, false
	}
	for i := range base.Tokens {
		if base.Tokens[i] != rl.Tokens[i] {
			return nil, false
		}
	}
	ps = make([]Position, len(base.Tokens))
	for i, t := range base.Tokens {
		p := Position{Index: i, Token: t, Base: base.Logprobs[i], RL: rl.Logprobs[i], Delta: rl.Logprobs[i] - base.Logprobs[i]}
		if i < len(base.Top) && i < len(rl.Top) && base.Top[i] != nil && rl.Top[i] != nil {
			p.JS, p.HasJS = JS(rl.Top[i], base.Top[i])
		}
		ps[i] = p
	}
	return ps, true
}

// Critical returns the n positions with the largest |Delta| (ties: the
// earlier first), most divergent first.
func Critical(ps []Position, n int) []Position {
	c := slices.Clone(ps)
	slices.SortStableFunc(c, func(a, b Position) int { return cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)) })
	return c[:min(n, len(c))]
}

// Share returns the share of positions with |Delta| > threshold: how sparse
// the divergence is (Meng et al. 2026 find few positions differ); 0 for none.
func Share(ps []Position, threshold float64) float64 {
	if len(ps) == 0 {
		return 0
	}
	n := 0
	for _, p := range ps {
		if math.Abs(p.Delta) > threshold {
			n++
		}
	}
	return float64(n) / float64(len(ps))
}

// DefaultThreshold is the |log p_RL − log p_base| above which a position
// counts as divergent: ln 2, one model giving the token at least twice the
// other's probability.
const DefaultThreshold = math.Ln2

// Sample is one compared completion for the aggregates.
type Sample struct {
	Correct   bool
	Positions []Position
}

// Bin is one bar of the divergence histogram: positions with From ≤ |Delta|
// < To (the last bin is open above).
type Bin struct {
	From, To float64
	Count    int
}

// TokenCount is a critical token's text and how many samples' critical
// lists it is in.
type TokenCount struct {
	Token string
	Count int
}

// Group sums up the samples of one kind (correct or incorrect).
type Group struct {
	Samples, Positions int
	MeanAbsDelta       float64 // mean |Delta| over all positions
	Share              float64 // share of positions above the threshold
}

// Aggregate is the comparison page's summary over compared samples.
type Aggregate struct {
	Threshold          float64
	Samples, Positions int
	Share              float64 // positions above the threshold, all samples
	Hist               []Bin
	Frequent           []TokenCount // most frequent critical tokens, most first
	Correct, Incorrect Group
}

// HistEdges are the |Delta| bin edges of Aggregate.Hist, in nats.
var HistEdges = []float64{0, 0.01, 0.1, 0.25, 0.5, 1, 2, 4}

// Summarize aggregates samples: the |Delta| histogram, the share of
// positions above threshold (all, correct, incorrect), and the topN most
// frequent critical tokens: those at a sample's perSample most divergent
// positions whose |Delta| is above threshold (white space trimmed; a token
// of white space only is skipped), each sample counting a token once.
func Summarize(samples []Sample, threshold float64, perSample, topN int) Aggregate {
	a := Aggregate{Threshold: threshold}
	for i := range HistEdges {
		b := Bin{From: HistEdges[i], To: math.Inf(1)}
		if i+1 < len(HistEdges) {
			b.To = HistEdges[i+1]
		}
		a.Hist = append(a.Hist, b)
	}
	counts := map[string]int{}
	var above int
	var sum [2]float64
	var abv [2]int
	for _, s := range samples {
		g := &a.Incorrect
		gi := 0
		if s.Correct {
			g, gi = &a.Correct, 1
		}
		g.Samples++
		a.Samples++
		for _, p := range s.Positions {
			d := math.Abs(p.Delta)
			a.Positions++
			g.Positions++
			sum[gi] += d
			if d > threshold {
				above++
				abv[gi]++
			}
			j, _ := slices.BinarySearch(HistEdges, d)
			if j == len(HistEdges) || HistEdges[j] != d {
				j--
			}
			a.Hist[max(j, 0)].Count++
		}
		seen := map[string]bool{}
		for _, p := range Critical(s.Positions, perSample) {
			if math.Abs(p.Delta) <= threshold {
				break // most divergent first: the rest are not above either
			}
			t := strings.TrimSpace(p.Token)
			if t == "" || seen[t] {
				continue
			}
			seen[t] = true
			counts[t]++
		}
	}
	if a.Positions > 0 {
		a.Share = float64(above) / float64(a.Positions)
	}
	for gi, g := range []*Group{&a.Incorrect, &a.Correct} {
		if g.Positions > 0 {
			g.MeanAbsDelta = sum[gi] / float64(g.Positions)
			g.Share = float64(abv[gi]) / float64(g.Positions)
		}
	}
	for t, c := range counts {
		a.Frequent = append(a.Frequent, TokenCount{t, c})
	}
	slices.SortFunc(a.Frequent, func(x, y TokenCount) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Token, y.Token))
	})
	a.Frequent = a.Frequent[:min(topN, len(a.Frequent))]
	return a
}

// FromArrays builds a Scored from stored arrays: tokens, their
// log-probabilities, and k alternatives per position flattened (position i
// at i*k …) whose empty-token or −Inf entries are padding.
func FromArrays(tokens []string, logprobs []float32, k int, topTokens []string, topLogprobs []float32) Scored {
	s := Scored{Tokens: tokens, Logprobs: make([]float64, len(logprobs))}
	for i, v := range logprobs {
		s.Logprobs[i] = float64(v)
	}
	if k > 0 && len(topTokens) == len(tokens)*k && len(topLogprobs) == len(topTokens) {
		s.Top = make([][]Alt, len(tokens))
		for i := range tokens {
			for j := i * k; j < (i+1)*k; j++ {
				if topTokens[j] == "" || math.IsInf(float64(topLogprobs[j]), -1) {
					continue
				}
				s.Top[i] = append(s.Top[i], Alt{topTokens[j], float64(topLogprobs[j])})
			}
		}
	}
	return s
}
