package passk

import (
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
)

// cpuTime is this process's user + system CPU time so far. The benchmarks report it per
// operation (cpu-ms/op) beside the wall time: on a loaded machine the wall time includes the
// time other processes held the cores, the CPU time does not.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// benchBeyondCounts draws problems as an adaptive design leaves them: rates from a U-shaped
// population (8% never solved, 5% always, Beta(0.4, 0.3) otherwise, like MATH500's base model)
// and n from 16 to 128 in steps of 8. Seeded.
func benchBeyondCounts(problems int) []Count {
	rng := rand.New(rand.NewPCG(uint64(problems), 24))
	counts := make([]Count, problems)
	for i := range counts {
		var p float64
		switch u := rng.Float64(); {
		case u < 0.08:
		case u < 0.13:
			p = 1
		default:
			x, y := gammaDraw(rng, 0.4), gammaDraw(rng, 0.3)
			p = x / (x + y)
		}
		n := 16 + 8*rng.IntN(15)
		c := 0
		for range n {
			if rng.Float64() < p {
				c++
			}
		}
		counts[i] = Count{N: n, C: c}
	}
	return counts
}

// gammaDraw is a Gamma(a, 1) draw for a < 1 (Marsaglia & Tsang with the a+1 boost).
func gammaDraw(rng *rand.Rand, a float64) float64 {
	boost := math.Pow(rng.Float64(), 1/a)
	d := a + 1 - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if u := rng.Float64(); math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v * boost
		}
	}
}

// benchFitAndBeyond is what the report computes per model of an adaptive comparison: the prior
// fit and the curve with its intervals at k = 1…128.
func benchFitAndBeyond(b *testing.B, problems int) {
	counts := benchBeyondCounts(problems)
	ks := AllKs(128)
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		prior, err := FitPrior(counts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Beyond(counts, ks, prior); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuTime()-start)/float64(b.N), "cpu-ms/op")
}

func BenchmarkFitAndBeyond500(b *testing.B)   { benchFitAndBeyond(b, 500) }
func BenchmarkFitAndBeyond12500(b *testing.B) { benchFitAndBeyond(b, 12500) }

// benchBeyond is the curve with its intervals alone, the prior fitted once: the part the
// g-model's fit and the interval's sums add to.
func benchBeyond(b *testing.B, problems int) {
	counts := benchBeyondCounts(problems)
	ks := AllKs(128)
	prior, err := FitPrior(counts)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		if _, err := Beyond(counts, ks, prior); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuTime()-start)/float64(b.N), "cpu-ms/op")
}

func BenchmarkBeyond500(b *testing.B)   { benchBeyond(b, 500) }
func BenchmarkBeyond12500(b *testing.B) { benchBeyond(b, 12500) }
