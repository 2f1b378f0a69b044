package passk

import (
	"errors"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"
)

func votes(classes []int, correctClass int) []Vote {
	out := make([]Vote, len(classes))
	for i, c := range classes {
		out[i] = Vote{Class: c, Correct: c == correctClass && c != NoAnswer}
	}
	return out
}

// bruteMaj enumerates every k-subset of the samples.
func bruteMaj(samples []Vote, k int) float64 {
	n := len(samples)
	wins, total := 0, 0
	for mask := uint32(0); mask < 1<<n; mask++ {
		if bits.OnesCount32(mask) != k {
			continue
		}
		total++
		tallies := map[int]int{}
		for i := range n {
			if mask&(1<<i) != 0 && samples[i].Class != NoAnswer {
				tallies[samples[i].Class]++
			}
		}
		best, bestClass, tie := 0, 0, false
		for c, v := range tallies {
			switch {
			case v > best:
				best, bestClass, tie = v, c, false
			case v == best:
				tie = true
			}
		}
		if best > 0 && !tie {
			for _, s := range samples {
				if s.Class == bestClass && s.Correct {
					wins++
					break
				}
			}
		}
	}
	return float64(wins) / float64(total)
}

func mustMaj(t *testing.T, s []Vote, k int) float64 {
	t.Helper()
	v, err := MajAtK(s, k)
	if err != nil {
		t.Fatalf("MajAtK(k=%d): %v", k, err)
	}
	return v
}

func TestMajAtKHandComputed(t *testing.T) {
	// Two correct A, two wrong B. k=2: {A,A} wins, {B,B} loses, 4 mixed pairs tie -> 1/6.
	// k=3: a 2-1 split always; A wins in C(2,2)*C(2,1) = 2 of 4 subsets -> 1/2.
	ab := votes([]int{7, 7, 3, 3}, 7)
	for k, want := range map[int]float64{1: 0.5, 2: 1.0 / 6, 3: 0.5, 4: 0} {
		if got := mustMaj(t, ab, k); math.Abs(got-want) > 1e-13 {
			t.Errorf("A,A,B,B maj@%d = %v, want %v", k, got, want)
		}
	}
	// One correct A and two no-answers, k=2: {A,-} twice wins (one vote beats none), {-,-} has no vote.
	na := votes([]int{0, NoAnswer, NoAnswer}, 0)
	if got := mustMaj(t, na, 2); math.Abs(got-2.0/3) > 1e-13 {
		t.Errorf("A,-,- maj@2 = %v, want 2/3", got)
	}
	// Large n: 600 correct, 400 wrong, 24 no answer.
	var big []Vote
	for i := range 1024 {
		switch {
		case i < 600:
			big = append(big, Vote{Class: 1, Correct: true})
		case i < 1000:
			big = append(big, Vote{Class: 2})
		default:
			big = append(big, Vote{Class: NoAnswer})
		}
	}
	if got := mustMaj(t, big, 1); math.Abs(got-600.0/1024) > 1e-12 {
		t.Errorf("maj@1 = %v, want 600/1024", got)
	}
	// k=2: both from A, or one A and one no-answer.
	want2 := (600.0*599/2 + 600*24) / (1024.0 * 1023 / 2)
	if got := mustMaj(t, big, 2); math.Abs(got-want2) > 1e-12 {
		t.Errorf("maj@2 = %.15g, want %.15g", got, want2)
	}
	if got := mustMaj(t, big, 1024); math.Abs(got-1) > 1e-12 {
		t.Errorf("maj@1024 = %v, want 1 (600 vs 400 votes)", got)
	}
	if got := mustMaj(t, big, 512); !(got > 0.99 && got <= 1) {
		t.Errorf("maj@512 = %v, want close to 1", got)
	}
}

func TestMajAtKMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 60 {
		n := 1 + r.IntN(12)
		classes := make([]int, n)
		nclass := 1 + r.IntN(4)
		for i := range classes {
			classes[i] = r.IntN(nclass+1) - 1 // -1 = no answer
		}
		s := votes(classes, r.IntN(nclass))
		for k := 1; k <= n; k++ {
			got, want := mustMaj(t, s, k), bruteMaj(s, k)
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("trial %d classes %v maj@%d = %.15g, enumeration %.15g", trial, classes, k, got, want)
			}
		}
	}
}

func TestMajAtKEqualsPassAt1ForK1(t *testing.T) {
	s := votes([]int{0, 0, 1, 2, 2, 2, NoAnswer, 0}, 0)
	if got := mustMaj(t, s, 1); math.Abs(got-3.0/8) > 1e-14 {
		t.Errorf("maj@1 = %v, want c/n = 3/8", got)
	}
	curve, err := MajCurve([][]Vote{s, votes([]int{1, 1, 1}, 1)}, []int{1, 3})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(curve[0]-(3.0/8+1)/2) > 1e-14 || math.Abs(curve[1]-(bruteMaj(s, 3)+1)/2) > 1e-12 {
		t.Errorf("MajCurve = %v", curve)
	}
}

func TestMajAtKErrors(t *testing.T) {
	if _, err := MajAtK([]Vote{{Class: 1, Correct: true}, {Class: 1}}, 1); !errors.Is(err, ErrInput) {
		t.Errorf("inconsistent class: %v", err)
	}
	if _, err := MajAtK([]Vote{{Class: NoAnswer, Correct: true}}, 1); !errors.Is(err, ErrInput) {
		t.Errorf("correct no-answer: %v", err)
	}
	if _, err := MajAtK([]Vote{{Class: 1}}, 2); !errors.Is(err, ErrInput) {
		t.Errorf("k > n: %v", err)
	}
}

// bigMaj is maj@k by exact integer counting (the formula MajAtK evaluates in scaled floating
// point): for each winning tally t of the correct class, the draws in which every other class
// gets fewer than t votes, as a polynomial product in big integers.
func bigMaj(samples []Vote, k int) float64 {
	sizes := map[int]int{}
	correct, noAnswer := -2, 0
	for _, s := range samples {
		if s.Class == NoAnswer {
			noAnswer++
			continue
		}
		sizes[s.Class]++
		if s.Correct {
			correct = s.Class
		}
	}
	binom := func(n, r int) *big.Int { return new(big.Int).Binomial(int64(n), int64(r)) }
	wins := new(big.Int)
	for t := 1; t <= min(sizes[correct], k); t++ {
		poly := []*big.Int{binom(noAnswer, 0)}
		mul := func(m, capX int) {
			out := make([]*big.Int, min(len(poly)-1+capX, k-t)+1)
			for i := range out {
				out[i] = new(big.Int)
			}
			for i, a := range poly {
				for x := 0; x <= capX && i+x < len(out); x++ {
					out[i+x].Add(out[i+x], new(big.Int).Mul(a, binom(m, x)))
				}
			}
			poly = out
		}
		mul(noAnswer, noAnswer)
		for c, m := range sizes {
			if c != correct {
				mul(m, min(m, t-1))
			}
		}
		if k-t < len(poly) {
			wins.Add(wins, new(big.Int).Mul(binom(sizes[correct], t), poly[k-t]))
		}
	}
	f, _ := new(big.Rat).SetFrac(wins, binom(len(samples), k)).Float64()
	return f
}

// At a few hundred samples, with the classes of a real problem (one large correct class, a
// dozen wrong ones of all sizes), MajAtK agrees with exact counting, and MajAtKs, MajAtK and
// MajCurve agree with each other to the bit.
func TestMajAtKsExactAtLargeN(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 4 {
		n := 150 + r.IntN(150)
		classes := make([]int, n)
		for i := range classes {
			switch u := r.Float64(); {
			case u < 0.2+0.15*float64(trial):
				classes[i] = 0
			case u < 0.8:
				classes[i] = 1 + int(r.ExpFloat64()*4)
			default:
				classes[i] = NoAnswer
			}
		}
		s := votes(classes, 0)
		ks := []int{1, 2, 4, 8, 16, 32, 64, 128, n}
		all, err := MajAtKs(s, ks)
		if err != nil {
			t.Fatal(err)
		}
		curve, err := MajCurve([][]Vote{s}, ks)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range ks {
			want := bigMaj(s, k)
			if one := mustMaj(t, s, k); one != all[i] || curve[i] != all[i] {
				t.Errorf("trial %d maj@%d: MajAtKs %v, MajAtK %v, MajCurve %v", trial, k, all[i], one, curve[i])
			}
			if math.Abs(all[i]-want) > 1e-12*max(want, 1e-3) {
				t.Errorf("trial %d n %d maj@%d = %.17g, exact %.17g", trial, n, k, all[i], want)
			}
		}
	}
}

// BenchmarkMajAtKs1024 is one problem's maj@k at the statistics job's ks (powers of two to
// 1,024) with n = 1,024: 600 correct samples, 380 wrong ones over 9 answers, 44 without one.
//
//	go test -run XXX -bench MajAtKs1024 ./internal/passk/
func BenchmarkMajAtKs1024(b *testing.B) {
	classes := make([]int, 1024)
	for i := range classes {
		switch {
		case i < 600:
			classes[i] = 0
		case i < 980:
			classes[i] = 1 + i%9
		default:
			classes[i] = NoAnswer
		}
	}
	s := votes(classes, 0)
	ks := []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
	for b.Loop() {
		if _, err := MajAtKs(s, ks); err != nil {
			b.Fatal(err)
		}
	}
}
