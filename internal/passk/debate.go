package passk

import (
	"fmt"
	"math"
	"slices"
)

// This file holds the statistics of the questions asked after Yue et al.'s crossover:
//
//   - answer diversity (Wu et al. 2025, "The Invisible Leash", arXiv 2507.14843, §4): the
//     number of distinct final answers of a problem's samples and the Shannon entropy of their
//     empirical distribution (AnswerEntropy);
//   - empirical support (the same paper, §3): which problems a model reaches with estimated
//     success probability ≥ ε, and how the RL model's support relates to the base model's
//     (Support: preservation, shrinkage, expansion);
//   - agreement of a judge model with human labels (CohenKappa; Cohen 1960);
//   - per-completion perplexity (Perplexity; Yue et al. 2025, arXiv 2504.13837, Fig. 6) and the
//     five-number summaries its box plots draw (Summarize).
//
// CoT-pass@k (Wen et al. 2025, arXiv 2506.14245) needs nothing new: it is PassAtK / CurveAll with
// c = the samples whose answer and chain of thought are both correct.

// AnswerEntropy returns the Shannon entropy, in bits, of the empirical distribution of answers
// whose class sizes are counts (one entry per distinct answer; zero entries are ignored):
// H = −Σ p_i log2 p_i with p_i = counts[i] / Σ counts. It is 0 for a single answer and log2 D for
// D equally frequent answers. Errors (wrapping ErrInput) for a negative count or no answers at
// all.
func AnswerEntropy(counts []int) (float64, error) {
	total := 0
	for i, c := range counts {
		if c < 0 {
			return 0, fmt.Errorf("answer entropy: %w: count[%d] = %d", ErrInput, i, c)
		}
		total += c
	}
	if total == 0 {
		return 0, fmt.Errorf("answer entropy: %w: no answers", ErrInput)
	}
	// H = log2 T − (1/T) Σ c log2 c: one log per class.
	var s float64
	for _, c := range counts {
		if c > 0 {
			s += float64(c) * math.Log2(float64(c))
		}
	}
	h := math.Log2(float64(total)) - s/float64(total)
	return max(h, 0), nil // rounding can leave −1e-16 for one class
}

// InSupport reports whether a problem is in a model's empirical support at threshold eps: its
// estimated success probability c/n is at least eps and at least one sample is correct (so
// eps = 0 means "solved at least once", the solved set). A tolerance of 1e-12 relative keeps
// eps = 1/n exact for c = 1 whatever the rounding of eps.
func InSupport(x Count, eps float64) bool {
	return x.C >= 1 && float64(x.C) >= eps*float64(x.N)*(1-1e-12)
}

// SupportSets classifies problems by the empirical supports of a base model and another model at
// one threshold ε (Wu et al. 2025, arXiv 2507.14843, §3): preserved (in both supports), shrunk
// (in the base model's only: the other model lost it), expanded (in the other model's only: new)
// and outside both. Index slices are ascending problem indices, never nil.
type SupportSets struct {
	Eps                                  float64
	Preserved, Shrunk, Expanded, Outside []int
	// Retention is |preserved| / |base support|, the share of the base model's support the other
	// model keeps; Discovery is |expanded| / |other support|, the share of the other model's
	// support that is new. NaN when the support it divides by is empty.
	Retention, Discovery float64
}

// Support compares two models' empirical supports problem by problem at threshold eps in [0, 1]
// (base[i] and other[i] are the same problem; see InSupport). Errors for different lengths,
// invalid counts, or eps outside [0, 1] or NaN.
func Support(base, other []Count, eps float64) (SupportSets, error) {
	if len(base) != len(other) {
		return SupportSets{}, fmt.Errorf("support: %w: %d base vs %d other problems", ErrInput, len(base), len(other))
	}
	if !(eps >= 0 && eps <= 1) {
		return SupportSets{}, fmt.Errorf("support: %w: ε = %v, need 0 <= ε <= 1", ErrInput, eps)
	}
	s := SupportSets{Eps: eps, Preserved: []int{}, Shrunk: []int{}, Expanded: []int{}, Outside: []int{}}
	for i := range base {
		if err := base[i].validate(); err != nil {
			return SupportSets{}, fmt.Errorf("support: base problem %d: %w", i, err)
		}
		if err := other[i].validate(); err != nil {
			return SupportSets{}, fmt.Errorf("support: other problem %d: %w", i, err)
		}
		b, o := InSupport(base[i], eps), InSupport(other[i], eps)
		switch {
		case b && o:
			s.Preserved = append(s.Preserved, i)
		case b:
			s.Shrunk = append(s.Shrunk, i)
		case o:
			s.Expanded = append(s.Expanded, i)
		default:
			s.Outside = append(s.Outside, i)
		}
	}
	s.Retention, s.Discovery = math.NaN(), math.NaN()
	if d := len(s.Preserved) + len(s.Shrunk); d > 0 {
		s.Retention = float64(len(s.Preserved)) / float64(d)
	}
	if d := len(s.Preserved) + len(s.Expanded); d > 0 {
		s.Discovery = float64(len(s.Expanded)) / float64(d)
	}
	return s, nil
}

// CohenKappa returns Cohen's (1960) kappa of a square agreement table: table[i][j] counts the
// items rater A put in category i and rater B in category j. κ = (p_o − p_e) / (1 − p_e) with
// p_o the share on the diagonal and p_e = Σ_i (row_i / N)(col_i / N) the agreement expected by
// chance. 1 is perfect agreement, 0 chance level, negative worse than chance. Errors (wrapping
// ErrInput) for a table that is not square, a negative cell, no items, or p_e = 1 (both raters
// used one and the same category for everything: κ is undefined).
func CohenKappa(table [][]int) (float64, error) {
	k := len(table)
	if k == 0 {
		return 0, fmt.Errorf("cohen's kappa: %w: empty table", ErrInput)
	}
	rows, cols := make([]float64, k), make([]float64, k)
	var n, diag float64
	for i, row := range table {
		if len(row) != k {
			return 0, fmt.Errorf("cohen's kappa: %w: row %d has %d cells, want %d", ErrInput, i, len(row), k)
		}
		for j, x := range row {
			if x < 0 {
				return 0, fmt.Errorf("cohen's kappa: %w: cell [%d][%d] = %d", ErrInput, i, j, x)
			}
			rows[i] += float64(x)
			cols[j] += float64(x)
			n += float64(x)
			if i == j {
				diag += float64(x)
			}
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("cohen's kappa: %w: no items", ErrInput)
	}
	var pe float64
	for i := range rows {
		pe += rows[i] / n * cols[i] / n
	}
	if pe >= 1-1e-15 {
		return 0, fmt.Errorf("cohen's kappa: %w: undefined, both raters used a single category", ErrInput)
	}
	return (diag/n - pe) / (1 - pe), nil
}

// Perplexity returns exp(−sumLogprob / tokens), the perplexity of a completion of `tokens` tokens
// whose natural-log token probabilities sum to sumLogprob (≤ 0): exp of the mean negative
// log-probability per token, as Yue et al. 2025 (arXiv 2504.13837, Fig. 6) compute it under the
// base model. The result is ≥ 1 for valid input. Errors for tokens < 1, a positive or NaN sum.
func Perplexity(sumLogprob float64, tokens int) (float64, error) {
	if tokens < 1 {
		return 0, fmt.Errorf("perplexity: %w: %d tokens", ErrInput, tokens)
	}
	if !(sumLogprob <= 1e-9) {
		return 0, fmt.Errorf("perplexity: %w: log-probability sum %v, need <= 0", ErrInput, sumLogprob)
	}
	return math.Exp(-min(sumLogprob, 0) / float64(tokens)), nil
}

// Summary is the five-number summary of a sample plus its size and mean, as a box plot draws it.
// Quartiles are R's type-7 quantiles (R's quantile default).
type Summary struct {
	N                        int
	Min, Q1, Median, Q3, Max float64
	Mean                     float64
}

// Summarize returns xs's Summary without changing xs. Errors for an empty xs or a NaN or
// infinite value.
func Summarize(xs []float64) (Summary, error) {
	if len(xs) == 0 {
		return Summary{}, fmt.Errorf("summary: %w: no values", ErrInput)
	}
	s := slices.Clone(xs)
	var sum float64
	for i, x := range s {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Summary{}, fmt.Errorf("summary: %w: value %d is %v", ErrInput, i, x)
		}
		sum += x
	}
	slices.Sort(s)
	return Summary{N: len(s), Min: s[0], Q1: quantile(s, 0.25), Median: quantile(s, 0.5), Q3: quantile(s, 0.75),
		Max: s[len(s)-1], Mean: sum / float64(len(s))}, nil
}
