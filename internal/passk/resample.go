package passk

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// multinomialFactor: a Resampler draws multinomial type counts when the problems are at
// least this many times the distinct types; below it, one index per problem.
const multinomialFactor = 4

// Resampler draws bootstrap resamples (Efron & Tibshirani 1993, ch. 6) of N problems,
// each problem having one of T types: the statistics resampled depend on a problem only
// through its type (its counts under every model), so a resample is fully described by
// how many times each type was drawn.
//
// Drawing N problem indices with replacement costs N random numbers per resample. The
// type multiplicities of such a draw follow Multinomial(N; f_1/N, …, f_T/N), where f_t
// is how many problems have type t, and a multinomial is drawn exactly as T conditional
// binomials (w_t ~ Binomial(N − Σ_{s<t} w_s, f_t / Σ_{s≥t} f_s)), in O(T). A million
// problems sampled n = 4 times by two models have at most 25 types: a resample costs 25
// binomials instead of a million draws. The two ways give the same distribution; the
// multinomial one is used when N ≥ 4T, so small comparisons keep their exact draws.
type Resampler struct {
	typeOf []int // [problem] type, 0..T-1
	freq   []int // [type] problems of that type
	multi  bool
}

// NewResampler returns a resampler over len(typeOf) problems whose types are typeOf
// (each in 0..types-1, every type used at least once is fine, unused ones get 0).
// Errors on no problems or a type out of range.
func NewResampler(typeOf []int, types int) (*Resampler, error) {
	if len(typeOf) == 0 || types < 1 {
		return nil, fmt.Errorf("%w: resampler of %d problems and %d types", ErrInput, len(typeOf), types)
	}
	freq := make([]int, types)
	for i, t := range typeOf {
		if t < 0 || t >= types {
			return nil, fmt.Errorf("%w: problem %d has type %d of %d", ErrInput, i, t, types)
		}
		freq[t]++
	}
	return &Resampler{typeOf: typeOf, freq: freq, multi: len(typeOf) >= multinomialFactor*types}, nil
}

// Problems is N, the number of problems.
func (r *Resampler) Problems() int { return len(r.typeOf) }

// Freq is each type's number of problems: the weights of the full data (shared; read only).
func (r *Resampler) Freq() []int { return r.freq }

// Draw writes one resample's multiplicity of each type into w (len T, overwritten; the
// entries sum to N), using rng.
func (r *Resampler) Draw(rng *rand.Rand, w []float64) {
	clear(w)
	n := len(r.typeOf)
	if !r.multi {
		for range n {
			w[r.typeOf[rng.IntN(n)]]++
		}
		return
	}
	left, rest := n, n // problems still to place; problems of the types not yet drawn
	for t, f := range r.freq {
		if f == 0 {
			continue
		}
		if left == 0 {
			break
		}
		if f == rest {
			w[t] = float64(left)
			break
		}
		k := distuv.Binomial{N: float64(left), P: float64(f) / float64(rest), Src: rng}.Rand()
		w[t] = k
		left -= int(k)
		rest -= f
	}
}
