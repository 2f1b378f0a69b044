package jobs

import "testing"

// The derivation is pinned: changing it would change every seeded
// comparison's texts on re-sampling. The values were computed outside Go
// (Python, FNV-1a 64 written out) from the documented rule.
func TestSampleSeedValues(t *testing.T) {
	cases := []struct {
		seed  int64
		key   string
		index int
		want  int64
	}{
		{1234, "test/algebra/1.json", 0, 2051937368},
		{1234, "test/algebra/1.json", 31, 2051937399},
		{-1, "", 5, 1239449516},
		{0, "0", 0, 562136893},
	}
	for _, c := range cases {
		if got := SampleSeed(c.seed, c.key, c.index); got != c.want {
			t.Errorf("SampleSeed(%d, %q, %d) = %d; want %d", c.seed, c.key, c.index, got, c.want)
		}
	}
}

// Every index of a problem gets its own seed in [0, 2^31 − 1]; the seed
// changes with the run's seed and with the problem.
func TestSampleSeedDistinct(t *testing.T) {
	seen := map[int64]int{}
	for i := range 4096 {
		s := SampleSeed(7, "HumanEval/0", i)
		if s < 0 || s > MaxSampleSeed {
			t.Fatalf("index %d: seed %d outside [0, %d]", i, s, MaxSampleSeed)
		}
		if j, ok := seen[s]; ok {
			t.Fatalf("indices %d and %d share seed %d", j, i, s)
		}
		seen[s] = i
	}
	if SampleSeed(7, "HumanEval/0", 3) == SampleSeed(8, "HumanEval/0", 3) {
		t.Error("seeds 7 and 8 give the same sample seed")
	}
	if SampleSeed(7, "HumanEval/0", 3) == SampleSeed(7, "HumanEval/1", 3) {
		t.Error("two problems give the same sample seed")
	}
	// Key and index are not confused: "1" index 0 vs "" index 1 etc.
	if SampleSeed(7, "12", 0) == SampleSeed(7, "1", 2) {
		t.Error("key and index run together")
	}
}
