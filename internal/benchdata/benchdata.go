// Package benchdata generates a comparison at paper scale for Reach's
// benchmarks: the shipped MATH500 problems (tiled for more than 500), a base
// model, RL checkpoints and an RL model whose per-problem success rates come
// from the shipped real counts (Qwen2.5-7B vs SimpleRL-Zoo, n = 128), and n
// samples per problem, as counts only or with completion texts. It writes
// straight into a store (COPY) and leaves the comparison ready; it is for
// benchmarks, never for users' data.
package benchdata

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/follow"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

// Spec sizes the generated comparison.
type Spec struct {
	Models   int    // models, >= 2: the base model, Models-2 checkpoints, the RL model
	N        int    // samples per problem and model, >= 1
	Problems int    // problems, >= 1: MATH500 tiled (ids "…#2" from the 501st on)
	Texts    bool   // store sample texts (about 1 KB each) rather than counts only
	Seed     uint64 // same seed, same data
	// ShortProblems gives that many problems (the last ones) only N/8
	// samples, to exercise the k-max-cut warning; 0 for none.
	ShortProblems int
	// Name is the comparison's name; "" for one saying its size.
	Name string
	// Training shapes the models as Reach stores a followed training run
	// (internal/follow): the base model, then Models-1 checkpoints named
	// follow.CheckpointName(RL model, step) at steps 100, 200, ..., and no
	// separate RL model.
	Training bool
	// RealTexts, with Texts, is a folder holding the real Qwen3-4B-Base
	// MATH500 completions (the repository's internal/testfiles/data): each
	// sample's text is one of its problem's (2.8 KB on average, long enough
	// for TOAST to compress) instead of a synthetic text of about 1 KB.
	RealTexts string
	// Workers is how many runs are written at once, each with one COPY on
	// its own connection; 0 for one per CPU.
	Workers int
}

// Timing says how long each step took.
type Timing struct {
	Insert, Aggregate, Quality time.Duration
	Samples                    int64
}

type problem struct {
	key, statement, solution, answer, subject, level string
}

func loadMATH500() ([]problem, error) {
	f, err := examples.Open("math500.jsonl")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []problem
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var r struct {
			Problem  string `json:"problem"`
			Solution string `json:"solution"`
			Answer   string `json:"answer"`
			Subject  string `json:"subject"`
			Level    int    `json:"level"`
			UniqueID string `json:"unique_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("math500.jsonl line %d: %w", len(out)+1, err)
		}
		out = append(out, problem{key: r.UniqueID, statement: r.Problem, solution: r.Solution, answer: r.Answer,
			subject: r.Subject, level: strconv.Itoa(r.Level)})
	}
	return out, sc.Err()
}

// realCounts reads one of the shipped counts files: problem id -> (n, c).
func realCounts(name string) (map[string][2]int, error) {
	f, err := examples.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := map[string][2]int{}
	for _, r := range rows[1:] {
		n, _ := strconv.Atoi(r[1])
		c, _ := strconv.Atoi(r[2])
		out[r[0]] = [2]int{n, c}
	}
	return out, nil
}

// beta draws from Beta(a, b) (a, b > 0) as X/(X+Y) of two gamma draws.
func beta(r *rand.Rand, a, b float64) float64 {
	x, y := gamma(r, a), gamma(r, b)
	return x / (x + y)
}

// gamma draws from Gamma(a, 1) (Marsaglia & Tsang 2000; a < 1 boosted).
func gamma(r *rand.Rand, a float64) float64 {
	if a < 1 {
		return gamma(r, a+1) * math.Pow(r.Float64(), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// binomial draws the number of successes in n trials with probability p.
func binomial(r *rand.Rand, n int, p float64) int {
	switch {
	case p <= 0:
		return 0
	case p >= 1:
		return n
	}
	if n > 200 {
		// Normal approximation, clamped; exact enough for a benchmark's counts.
		m, s := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
		return max(0, min(n, int(math.Round(m+s*r.NormFloat64()))))
	}
	c := 0
	for range n {
		if r.Float64() < p {
			c++
		}
	}
	return c
}

var openers = []string{
	"Let's think step by step.", "We solve the problem carefully.", "First, let us restate what is asked.",
	"Let me work through this.", "To begin, note the given information.", "We proceed as follows.",
}

// fillSample sets s's text and verdict fields: with real texts (real
// non-nil) one of problem i's real completions with that verdict (or one
// with a boxed line added when it has none, as writeSamples does),
// otherwise a synthetic completion.
func fillSample(r *rand.Rand, s *store.Sample, p problem, real [][]realText, i int, correct bool) {
	correctP := new(bool)
	*correctP = correct
	s.FileCorrect, s.FinishReason, s.VerdictSource, s.Status = correctP, "stop", "file", store.SampleIncorrect
	if correct {
		s.Status = store.SampleCorrect
	}
	if real == nil {
		trunc := !correct && r.IntN(50) == 0
		// The answer as the verifier extracts it, so maj@k and answer
		// diversity (the statistics job's answer grouping) have work to do.
		s.Completion, s.Extracted = completion(r, p, correct, trunc)
		s.CompletionTokens = 300 + r.IntN(700)
		if trunc {
			s.FinishReason = "length"
		}
		return
	}
	ts := real[i%len(real)]
	var pick []realText
	for _, t := range ts {
		if t.correct == correct {
			pick = append(pick, t)
		}
	}
	s.Extracted = p.answer
	if !correct {
		s.Extracted = fmt.Sprintf("%s + %d", p.answer, 1+r.IntN(3))
	}
	if len(pick) == 0 {
		s.Completion = ts[0].text + "\n\nThe final answer is $\\boxed{" + s.Extracted + "}$."
	} else {
		t := pick[r.IntN(len(pick))]
		s.Completion, s.FinishReason = t.text, t.finish
	}
	s.CompletionTokens = len(s.Completion) / 4
}

// completion writes sample j of a problem: an opener, the reference
// solution with one sentence left out and a check line, and a boxed answer
// (the reference one when correct), and returns the text with that answer
// ("" when truncated: a truncated sample stops mid-way, before its answer).
func completion(r *rand.Rand, p problem, correct, truncated bool) (text, answer string) {
	var b strings.Builder
	b.WriteString(openers[r.IntN(len(openers))])
	b.WriteString("\n\n")
	sentences := strings.SplitAfter(p.solution, ". ")
	skip := r.IntN(len(sentences) + 1)
	for i, s := range sentences {
		if i != skip {
			b.WriteString(s)
		}
	}
	x, y := 2+r.IntN(97), 2+r.IntN(97)
	fmt.Fprintf(&b, "\n\nCheck: %d \\cdot %d = %d.", x, y, x*y)
	if truncated {
		s := b.String()
		return s[:len(s)*2/3], ""
	}
	ans := p.answer
	if !correct {
		ans = fmt.Sprintf("%s + %d", p.answer, 1+r.IntN(9))
	}
	fmt.Fprintf(&b, "\n\nThe final answer is $\\boxed{%s}$.", ans)
	return b.String(), ans
}

// Create builds the comparison in st (in the default project) and returns
// its id and how long the steps took. Samples are inserted in batches of
// 5,000 with COPY; counts come from Reach's own aggregation of them (or are
// inserted directly, counts only).
func Create(ctx context.Context, st *store.Store, spec Spec, log io.Writer) (int64, Timing, error) {
	var tm Timing
	if spec.Models < 2 || spec.N < 1 || spec.Problems < 1 || spec.ShortProblems >= spec.Problems {
		return 0, tm, fmt.Errorf("benchdata: %d models, n = %d, %d problems (%d short): need >= 2 models, n >= 1, more problems than short ones",
			spec.Models, spec.N, spec.Problems, spec.ShortProblems)
	}
	base, err := loadMATH500()
	if err != nil {
		return 0, tm, err
	}
	cb, err := realCounts("qwen2.5-7b-base.csv")
	if err != nil {
		return 0, tm, err
	}
	cr, err := realCounts("qwen2.5-7b-simplerl-zoo.csv")
	if err != nil {
		return 0, tm, err
	}
	r := rand.New(rand.NewPCG(spec.Seed, 0x9e3779b97f4a7c15))

	did, err := st.CreateDataset(ctx, fmt.Sprintf("MATH500 ×%d (benchmark)", (spec.Problems+499)/500), "benchdata")
	if err != nil {
		return 0, tm, err
	}
	ps := make([]store.Problem, spec.Problems)
	src := make([]problem, spec.Problems)
	for i := range ps {
		p := base[i%len(base)]
		if i >= len(base) {
			p.key = fmt.Sprintf("%s#%d", p.key, i/len(base)+1)
		}
		src[i] = p
		ps[i] = store.Problem{Idx: i, Key: p.key, Statement: p.statement, Reference: p.answer, Subject: p.subject, Level: p.level, Kind: "math"}
	}
	for i := 0; i < len(ps); i += 5000 {
		if err := st.InsertProblems(ctx, did, ps[i:min(i+5000, len(ps))]); err != nil {
			return 0, tm, err
		}
	}
	if err := st.FinishDataset(ctx, did); err != nil {
		return 0, tm, err
	}
	stored, err := st.Problems(ctx, did, false)
	if err != nil {
		return 0, tm, err
	}

	var runs []store.NewRun
	for m := range spec.Models {
		nr := store.NewRun{ModelName: fmt.Sprintf("checkpoint-%d", m), Role: "checkpoint", SourceFile: "benchdata"}
		switch {
		case m == 0:
			nr.ModelName, nr.Role = "Qwen2.5-7B (sim)", "base"
		case spec.Training:
			step := 100 * m
			nr.ModelName, nr.Step = follow.CheckpointName("SimpleRL-Zoo (sim)", step), &step
		case m == spec.Models-1:
			nr.ModelName, nr.Role = "SimpleRL-Zoo (sim)", "rl"
		default:
			step := 100 * m
			nr.Step = &step
		}
		runs = append(runs, nr)
	}
	name := spec.Name
	if name == "" {
		name = fmt.Sprintf("benchmark: %d models × %d problems × n = %d", spec.Models, spec.Problems, spec.N)
	}
	cid, err := st.CreateComparison(ctx, store.NewComparison{Name: name,
		DatasetID: did, Status: store.StatusImporting, SourceNote: "generated by internal/benchdata from the shipped MATH500 data", Runs: runs})
	if err != nil {
		return 0, tm, err
	}
	c, err := st.GetComparison(ctx, cid)
	if err != nil {
		return 0, tm, err
	}
	var real [][]realText
	if spec.Texts && spec.RealTexts != "" {
		if real, err = readGenerations(spec.RealTexts); err != nil {
			return 0, tm, err
		}
	}

	// Per problem: the base and RL success rates drawn around the real counts.
	pb, pr := make([]float64, len(ps)), make([]float64, len(ps))
	for i, p := range src {
		b, rl := cb[base[i%len(base)].key], cr[base[i%len(base)].key]
		if b[0] == 0 || rl[0] == 0 {
			return 0, tm, fmt.Errorf("benchdata: problem %s has no real counts", p.key)
		}
		pb[i] = beta(r, float64(b[1])+0.5, float64(b[0]-b[1])+0.5)
		pr[i] = beta(r, float64(rl[1])+0.5, float64(rl[0]-rl[1])+0.5)
	}
	workers := spec.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	start := time.Now()
	var (
		mu      sync.Mutex
		written int
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for m, run := range c.Runs {
		g.Go(func() error {
			// Each run has its own generator, so runs written at once give
			// the same data whatever the order.
			rr := rand.New(rand.NewPCG(spec.Seed, uint64(m)+1))
			t := float64(m) / float64(spec.Models-1)
			nOf := func(i int) int {
				if i >= len(stored)-spec.ShortProblems {
					return max(1, spec.N/8)
				}
				return spec.N
			}
			if !spec.Texts {
				var counts []store.Count
				for i, p := range stored {
					n := nOf(i)
					counts = append(counts, store.Count{RunID: run.ID, ProblemID: p.ID, N: n, C: binomial(rr, n, (1-t)*pb[i]+t*pr[i])})
				}
				if err := st.InsertCounts(gctx, counts); err != nil {
					return err
				}
			} else {
				i, j, n, cnt := -1, 0, 0, 0
				k, err := st.CopySamples(gctx, "samples", func(s *store.Sample) (bool, error) {
					for j >= n {
						if i++; i >= len(stored) {
							return false, nil
						}
						j, n = 0, nOf(i)
						cnt = binomial(rr, n, (1-t)*pb[i]+t*pr[i])
					}
					fillSample(rr, s, src[i], real, i, j < cnt) // which samples are right does not matter to any figure
					s.RunID, s.ProblemID, s.SampleIndex = run.ID, stored[i].ID, j
					j++
					return true, nil
				})
				mu.Lock()
				tm.Samples += k
				mu.Unlock()
				if err != nil {
					return err
				}
			}
			if err := st.SetRunImported(gctx, run.ID, "benchdata", spec.Texts, "file"); err != nil {
				return err
			}
			if log != nil {
				mu.Lock()
				written++
				fmt.Fprintf(log, "  model %d/%d written (%.1fs)\n", written, spec.Models, time.Since(start).Seconds())
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, tm, err
	}
	tm.Insert = time.Since(start)
	if spec.Texts {
		// Per run, as many at once as runs were written.
		each := func(f func(ctx context.Context, runID int64) error) error {
			g, gctx := errgroup.WithContext(ctx)
			g.SetLimit(workers)
			for _, run := range c.Runs {
				g.Go(func() error { return f(gctx, run.ID) })
			}
			return g.Wait()
		}
		start = time.Now()
		if err := each(st.AggregateRun); err != nil {
			return 0, tm, err
		}
		tm.Aggregate = time.Since(start)
		start = time.Now()
		if err := each(func(ctx context.Context, id int64) error { return st.RefreshRunQuality(ctx, id, verify.FallbackRules) }); err != nil {
			return 0, tm, err
		}
		tm.Quality = time.Since(start)
	}
	// As an import job does at the end, so pages are planned from fresh statistics.
	ids := make([]int64, len(c.Runs))
	for i, r := range c.Runs {
		ids[i] = r.ID
	}
	if err := st.AnalyzeSamples(ctx, ids...); err != nil {
		return 0, tm, err
	}
	if err := st.AnalyzeProblems(ctx); err != nil {
		return 0, tm, err
	}
	for _, run := range c.Runs {
		if err := st.SetRunStatus(ctx, run.ID, "ready", ""); err != nil {
			return 0, tm, err
		}
	}
	return cid, tm, st.SetComparisonStatus(ctx, cid, store.StatusReady, "")
}
