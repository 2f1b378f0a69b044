package passk

import (
	"errors"
	"math"
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
