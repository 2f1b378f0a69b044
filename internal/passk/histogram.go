package passk

import (
	"fmt"
	"strconv"
)

// Bin is one bar of a per-problem accuracy (c/n) histogram.
type Bin struct {
	Label  string  // "0", "(0, 0.1)", "[0.1, 0.2)", …, "[0.9, 1)", "1"
	Lo, Hi float64 // bounds of c/n; Lo = Hi for the exact-0 and exact-1 bars
	Count  int     // problems whose c/n falls in the bar
}

// Histogram bins per-problem accuracy c/n into bins+2 bars: exact 0 (c = 0), then the open
// interval (0, 1) split into `bins` equal intervals, then exact 1 (c = n). Interior intervals
// are half-open [i/bins, (i+1)/bins), except that the first is open at 0 and the last open at 1
// (those endpoints have their own bars). Membership uses integer arithmetic (bar =
// floor(c*bins/n)), so c/n exactly on a boundary always lands in the upper interval. Errors for
// bins < 1 or invalid counts; an empty counts gives bars with zero counts.
func Histogram(counts []Count, bins int) ([]Bin, error) {
	if bins < 1 {
		return nil, fmt.Errorf("histogram: %w: bins = %d, need >= 1", ErrInput, bins)
	}
	out := make([]Bin, bins+2)
	out[0] = Bin{Label: "0", Lo: 0, Hi: 0}
	out[bins+1] = Bin{Label: "1", Lo: 1, Hi: 1}
	for i := range bins {
		lo, hi := float64(i)/float64(bins), float64(i+1)/float64(bins)
		open, end := "[", ")"
		if i == 0 {
			open = "("
		}
		out[i+1] = Bin{Label: open + fmtBound(lo) + ", " + fmtBound(hi) + end, Lo: lo, Hi: hi}
	}
	for i, x := range counts {
		if err := x.validate(); err != nil {
			return nil, fmt.Errorf("histogram: problem %d: %w", i, err)
		}
		switch {
		case x.C == 0:
			out[0].Count++
		case x.C == x.N:
			out[bins+1].Count++
		default:
			out[1+x.C*bins/x.N].Count++
		}
	}
	return out, nil
}

func fmtBound(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// CoverAt returns Cover@τ: the fraction of problems whose accuracy c/n is at least tau, compared
// as float64(c)/float64(n) >= tau (so tau = 0.3 includes 3/10). tau must be in [0, 1]; counts
// must be non-empty. Cover@0 = 1; Cover@1 is the fraction with c = n.
func CoverAt(counts []Count, tau float64) (float64, error) {
	if !(tau >= 0 && tau <= 1) {
		return 0, fmt.Errorf("cover@%g: %w: need 0 <= tau <= 1", tau, ErrInput)
	}
	if len(counts) == 0 {
		return 0, fmt.Errorf("cover@%g: %w: no problems", tau, ErrInput)
	}
	hit := 0
	for i, x := range counts {
		if err := x.validate(); err != nil {
			return 0, fmt.Errorf("cover@%g: problem %d: %w", tau, i, err)
		}
		if float64(x.C)/float64(x.N) >= tau {
			hit++
		}
	}
	return float64(hit) / float64(len(counts)), nil
}

// CoverCurve returns CoverAt for each tau in taus (same order).
func CoverCurve(counts []Count, taus []float64) ([]float64, error) {
	out := make([]float64, len(taus))
	for i, tau := range taus {
		v, err := CoverAt(counts, tau)
		if err != nil {
			return nil, fmt.Errorf("cover curve: %w", err)
		}
		out[i] = v
	}
	return out, nil
}
