package cases

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/reach-lab/reach/internal/verify"
)

// BenchResult is what Bench measured.
type BenchResult struct {
	Samples  int           // completions in the file
	Verdicts int           // verdicts computed (Samples × passes)
	Elapsed  time.Duration // time spent verifying (reading excluded)
	Labelled int           // samples carrying the file's own verdict
	Agree    int           // of those, how many Reach's verdict matches
}

// PerSecond is verdicts per second on one goroutine.
func (b BenchResult) PerSecond() float64 {
	if b.Elapsed <= 0 {
		return 0
	}
	return float64(b.Verdicts) / b.Elapsed.Seconds()
}

// minBenchTime is how long Bench keeps re-verifying the samples so the
// rate is not dominated by timer noise on small files.
const minBenchTime = time.Second

// Bench reads a samples file (formats: see ReadSamples) from r, verifies
// every completion with v on the calling goroutine, repeating whole passes
// until at least one second has been spent, and writes a short report with
// verdicts per second (and agreement with the file's labels) to w.
func Bench(ctx context.Context, r io.Reader, w io.Writer, v verify.Verifier) (BenchResult, error) {
	var samples []Sample
	if err := ReadSamples(r, func(s Sample) error {
		samples = append(samples, s)
		return nil
	}); err != nil {
		return BenchResult{}, fmt.Errorf("bench: %w", err)
	}
	res := BenchResult{Samples: len(samples)}
	if len(samples) == 0 {
		return res, fmt.Errorf("bench: no samples with a reference in the file")
	}
	verdicts := make([]verify.Verdict, len(samples))
	start := time.Now()
	for pass := 0; pass == 0 || time.Since(start) < minBenchTime; pass++ {
		for i, s := range samples {
			if err := ctx.Err(); err != nil {
				return res, fmt.Errorf("bench: %w", err)
			}
			verdicts[i] = verifyOne(ctx, v, s)
			res.Verdicts++
		}
	}
	res.Elapsed = time.Since(start)
	for i, s := range samples {
		if s.Label != nil {
			res.Labelled++
			if *s.Label == verdicts[i].IsCorrect() {
				res.Agree++
			}
		}
	}
	fmt.Fprintf(w, "verifier:  %s\nsamples:   %d (%d labelled)\nverdicts:  %d in %s on one goroutine\nrate:      %.0f verdicts/s\n",
		v.Name(), res.Samples, res.Labelled, res.Verdicts, res.Elapsed.Round(time.Millisecond), res.PerSecond())
	if res.Labelled > 0 {
		fmt.Fprintf(w, "agreement: %d/%d with the file's labels (%.2f%%)\n", res.Agree, res.Labelled, 100*float64(res.Agree)/float64(res.Labelled))
	}
	return res, nil
}

func verifyOne(ctx context.Context, v verify.Verifier, s Sample) verify.Verdict {
	if s.ReferenceIsSolution {
		if cc, ok := v.(CaseChecker); ok {
			return cc.CheckCase(s.Reference, s.Completion, false, true, 0)
		}
	}
	return v.Verify(ctx, verify.Problem{Reference: s.Reference}, s.Completion)
}
