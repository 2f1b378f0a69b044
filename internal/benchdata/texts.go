package benchdata

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/reach-lab/reach/internal/store"
)

// CopyRealTexts streams n samples with real completion texts into table (a
// table LIKE samples, for storage experiments: its rows need no run or
// problem), with one COPY: run 1, the 500 MATH500 problems as problem ids
// 1..500 in turn, each sample one of its problem's real Qwen3-4B-Base
// completions under data (see WriteFiles), about half of them correct.
// The same seed gives the same rows. It returns the rows and the bytes of
// text written.
func CopyRealTexts(ctx context.Context, st *store.Store, table, data string, n int, seed uint64) (rows, textBytes int64, err error) {
	if n < 1 {
		return 0, 0, fmt.Errorf("benchdata: %d samples; want at least 1", n)
	}
	base, err := loadMATH500()
	if err != nil {
		return 0, 0, err
	}
	real, err := readGenerations(data)
	if err != nil {
		return 0, 0, err
	}
	r := rand.New(rand.NewPCG(seed, 0x51ed270b27e8a35b))
	k := 0
	rows, err = st.CopySamples(ctx, table, func(s *store.Sample) (bool, error) {
		if k == n {
			return false, nil
		}
		i := k % len(base)
		fillSample(r, s, base[i], real, i, r.IntN(2) == 0)
		s.RunID, s.ProblemID, s.SampleIndex = 1, int64(i+1), k/len(base)
		textBytes += int64(len(s.Completion))
		k++
		return true, nil
	})
	return rows, textBytes, err
}
