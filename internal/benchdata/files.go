package benchdata

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/reach-lab/reach/internal/examples"
)

// FileSpec sizes the samples files WriteFiles generates.
type FileSpec struct {
	N    int    // samples per problem of the base model, >= 1
	RLN  int    // samples per problem of the RL model, >= 1 (smaller for a test of one large file)
	Seed uint64 // same seed, same bytes
}

// Files are what WriteFiles wrote: a dataset and a base/RL pair of Reach
// JSONL samples files, with their sizes in bytes.
type Files struct {
	Dir                    string
	Dataset, Base, RL      string // paths
	DatasetSize, BaseSize  int64
	RLSize                 int64
	BaseSamples, RLSamples int64
	Reused                 bool // found in Dir from an earlier run with the same spec
}

// Input is the bytes of the two samples files.
func (f Files) Input() int64 { return f.BaseSize + f.RLSize }

// realText is one real completion of a MATH500 problem.
type realText struct {
	text, finish string
	correct      bool
}

// readGenerations reads the real Qwen3-4B-Base MATH500 completions under
// data/generations/math500-qwen3-4b-base-greedy (four prompt formats, one
// greedy completion per problem each, with the harness's verdict): per
// problem index, its texts.
func readGenerations(data string) ([][]realText, error) {
	files, err := filepath.Glob(filepath.Join(data, "generations", "math500-qwen3-4b-base-greedy", "*_t0.0_s0_e-1.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no real completions under %s/generations/math500-qwen3-4b-base-greedy", data)
	}
	out := make([][]realText, 500)
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		line := 0
		for sc.Scan() {
			line++
			var r struct {
				Idx    int      `json:"idx"`
				Code   []string `json:"code"`
				Finish []string `json:"finish_reason"`
				Score  []bool   `json:"score"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s line %d: %w", name, line, err)
			}
			if r.Idx < 0 || r.Idx >= len(out) || len(r.Code) == 0 || len(r.Score) != len(r.Code) {
				f.Close()
				return nil, fmt.Errorf("%s line %d: idx %d with %d texts and %d scores", name, line, r.Idx, len(r.Code), len(r.Score))
			}
			for i, t := range r.Code {
				fin := "stop"
				if i < len(r.Finish) && r.Finish[i] != "" {
					fin = r.Finish[i]
				}
				out[r.Idx] = append(out[r.Idx], realText{text: t, finish: fin, correct: r.Score[i]})
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	for i, ts := range out {
		if len(ts) == 0 {
			return nil, fmt.Errorf("problem %d has no real completion", i)
		}
	}
	return out, nil
}

// WriteFiles generates, in dir, the MATH500 dataset (dataset.jsonl, a copy
// of the embedded internal/examples/data/math500.jsonl) and a base/RL pair of samples files in Reach's
// JSONL layout (base.jsonl, rl.jsonl: one line per sample with problem_id,
// sample_index, completion, finish_reason, completion_tokens, correct),
// reading the real completions under data (the repository's
// internal/testfiles/data, which has generations/math500-qwen3-4b-base-greedy).
//
// Each problem's success rates are drawn around the real per-problem counts
// of Qwen2.5-7B and SimpleRL-Zoo (n = 128); each sample's text is one of the
// four real Qwen3-4B-Base completions of that problem whose verdict is the
// one drawn, or, when none has it, one of them with a final boxed line
// added (the reference answer, or a wrong one), so that every label agrees
// with Reach's verifier. The bytes depend only on spec. A directory that
// already holds files of the same spec (spec.json, written last) is reused.
func WriteFiles(dir, data string, spec FileSpec) (Files, error) {
	f := Files{Dir: dir, Dataset: filepath.Join(dir, "dataset.jsonl"), Base: filepath.Join(dir, "base.jsonl"), RL: filepath.Join(dir, "rl.jsonl")}
	if spec.N < 1 || spec.RLN < 1 {
		return f, fmt.Errorf("benchdata: n = %d, RL n = %d: need >= 1", spec.N, spec.RLN)
	}
	want, _ := json.Marshal(struct {
		FileSpec
		Layout int // bumped when the generator's output changes
	}{spec, 2})
	marker := filepath.Join(dir, "spec.json")
	if got, err := os.ReadFile(marker); err == nil && string(got) == string(want) {
		if err := f.stat(); err == nil {
			f.Reused = true
			f.BaseSamples, f.RLSamples = int64(spec.N)*500, int64(spec.RLN)*500
			return f, nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return f, err
	}
	_ = os.Remove(marker)
	// The dataset is the copy the example comparison embeds (the same bytes
	// as data/math500/test.jsonl), so data needs only the generations.
	ds, err := examples.Open("math500.jsonl")
	if err != nil {
		return f, fmt.Errorf("the shipped MATH500 dataset: %w", err)
	}
	err = writeFrom(f.Dataset, ds)
	ds.Close()
	if err != nil {
		return f, err
	}
	base, err := loadMATH500()
	if err != nil {
		return f, err
	}
	texts, err := readGenerations(data)
	if err != nil {
		return f, err
	}
	cb, err := realCounts("qwen2.5-7b-base.csv")
	if err != nil {
		return f, err
	}
	cr, err := realCounts("qwen2.5-7b-simplerl-zoo.csv")
	if err != nil {
		return f, err
	}
	r := rand.New(rand.NewPCG(spec.Seed, 0x2545f4914f6cdd1d))
	pb, pr := make([]float64, len(base)), make([]float64, len(base))
	for i, p := range base {
		b, rl := cb[p.key], cr[p.key]
		if b[0] == 0 || rl[0] == 0 {
			return f, fmt.Errorf("benchdata: problem %s has no real counts", p.key)
		}
		pb[i] = beta(r, float64(b[1])+0.5, float64(b[0]-b[1])+0.5)
		pr[i] = beta(r, float64(rl[1])+0.5, float64(rl[0]-rl[1])+0.5)
	}
	if f.BaseSamples, err = writeSamples(f.Base, base, texts, pb, spec.N, r); err != nil {
		return f, err
	}
	if f.RLSamples, err = writeSamples(f.RL, base, texts, pr, spec.RLN, r); err != nil {
		return f, err
	}
	if err := f.stat(); err != nil {
		return f, err
	}
	return f, os.WriteFile(marker, want, 0o644)
}

func (f *Files) stat() error {
	for _, x := range []struct {
		path string
		size *int64
	}{{f.Dataset, &f.DatasetSize}, {f.Base, &f.BaseSize}, {f.RL, &f.RLSize}} {
		fi, err := os.Stat(x.path)
		if err != nil {
			return err
		}
		*x.size = fi.Size()
	}
	return nil
}

// writeSamples writes one model's file: n samples of each problem, c of
// them correct with c ~ Binomial(n, rate), the correct ones at random
// indices. Lines go round the problems (sample 0 of every problem, then
// sample 1, ...), so that any stretch of the file holds many problems'
// texts, as a file written in sampling rounds does: the few real texts of
// one problem never sit side by side, where a compressor would find them
// repeated and make storing the file look cheaper than with real samples.
// It returns the number of samples written.
func writeSamples(path string, ps []problem, texts [][]realText, rate []float64, n int, r *rand.Rand) (int64, error) {
	out, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	q := func(s string) []byte { b, _ := json.Marshal(s); return b }
	// Each problem's candidate lines, JSON-encoded once: its real texts by
	// verdict, and an added-line variant when a verdict has none.
	type cand struct {
		text, finish []byte
		tokens       int
	}
	type state struct {
		key       []byte
		good, bad []cand
		left      int // correct samples still to place
	}
	st := make([]state, len(ps))
	for i, p := range ps {
		s := &st[i]
		s.key = q(p.key)
		add := func(text, finish string, correct bool) {
			c := cand{q(text), q(finish), len(text) / 4}
			if correct {
				s.good = append(s.good, c)
			} else {
				s.bad = append(s.bad, c)
			}
		}
		for _, t := range texts[i] {
			add(t.text, t.finish, t.correct)
		}
		if len(s.good) == 0 {
			add(texts[i][0].text+"\n\nThe final answer is $\\boxed{"+p.answer+"}$.", "stop", true)
		}
		if len(s.bad) == 0 {
			add(texts[i][0].text+"\n\nThe final answer is $\\boxed{"+p.answer+" + 1}$.", "stop", false)
		}
		s.left = binomial(r, n, rate[i])
	}
	var written int64
	for j := range n {
		for i := range st {
			s := &st[i]
			if r.IntN(n-j) < s.left {
				s.left--
				c := s.good[r.IntN(len(s.good))]
				writeLine(w, s.key, j, c.text, c.finish, c.tokens, true)
			} else {
				c := s.bad[r.IntN(len(s.bad))]
				writeLine(w, s.key, j, c.text, c.finish, c.tokens, false)
			}
			written++
		}
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return 0, err
	}
	return written, out.Close()
}

func writeLine(w *bufio.Writer, key []byte, j int, text, finish []byte, tokens int, correct bool) {
	w.WriteString(`{"problem_id":`)
	w.Write(key)
	w.WriteString(`,"sample_index":`)
	w.WriteString(strconv.Itoa(j))
	w.WriteString(`,"completion":`)
	w.Write(text)
	w.WriteString(`,"finish_reason":`)
	w.Write(finish)
	w.WriteString(`,"completion_tokens":`)
	w.WriteString(strconv.Itoa(tokens))
	w.WriteString(`,"correct":`)
	w.WriteString(strconv.FormatBool(correct))
	w.WriteString("}\n")
}

// writeFrom copies r into a new file at path.
func writeFrom(path string, r io.Reader) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return out.Close()
}
