package replay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/testfiles"
)

// gsmDir is the GSM8K SFT-vs-RLVR pair's folder: the real one in the
// Unlicensed tests (where the unlicensed folder is present), the carried stand-in otherwise
// (testfiles.GSM8KProbe).
func gsmDir(t testing.TB) string {
	t.Helper()
	return testfiles.GSM8KProbe(t)
}

type recorded struct {
	question string
	texts    []string // in rollout order
}

// readRecorded parses the rollouts file directly (not through ingest), so the
// test checks Load against an independent reading.
func readRecorded(t testing.TB, path string) []recorded {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []recorded
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var row struct {
			Question string `json:"question"`
			Rollouts []struct {
				Rollout int    `json:"rollout"`
				Text    string `json:"text"`
			} `json:"rollouts"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(row.Rollouts, func(a, b struct {
			Rollout int    `json:"rollout"`
			Text    string `json:"text"`
		}) int {
			return a.Rollout - b.Rollout
		})
		r := recorded{question: row.Question}
		for _, ro := range row.Rollouts {
			r.texts = append(r.texts, ro.Text)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func loadSFT(t testing.TB) (map[string][]string, []recorded) {
	t.Helper()
	dir := gsmDir(t)
	samplesPath := filepath.Join(dir, "results_1024_cuda/sft_raw.jsonl")
	samples, err := replay.Load(context.Background(), samplesPath, filepath.Join(dir, "data/gsm8k_subset.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return samples, readRecorded(t, samplesPath)
}

func prompt(t testing.TB, tmpl string, question string) string {
	t.Helper()
	tp, err := sampling.Preset(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sampling.Render(tp, sampling.PromptData{Problem: question})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func client(t testing.TB, url string, style sampling.Style, conc int) *sampling.Client {
	t.Helper()
	c, err := sampling.New(sampling.Endpoint{
		BaseURL: url + "/v1", Model: "sft", Style: style, MaxConcurrency: conc,
		Retry: sampling.RetryPolicy{MaxAttempts: 10, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoadMatchesTheFile(t *testing.T) { testLoadMatchesTheFile(t) }

// TestLoadMatchesTheFileUnlicensed is TestLoadMatchesTheFile on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestLoadMatchesTheFile runs on the stand-in.
func TestLoadMatchesTheFileUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testLoadMatchesTheFile(t)
}

func testLoadMatchesTheFile(t *testing.T) {
	samples, rec := loadSFT(t)
	if len(samples) != 30 || len(rec) != 30 {
		t.Fatalf("%d problems loaded, %d in the file; want 30", len(samples), len(rec))
	}
	for _, r := range rec {
		if got := samples[r.question]; !slices.Equal(got, r.texts) || len(got) != 8 {
			t.Fatalf("problem %.40q: loaded %d texts, differing from the file's %d", r.question, len(got), len(r.texts))
		}
	}
}

func TestSampleEveryProblemGetsItsRecordedTextsInOrder(t *testing.T) {
	testSampleEveryProblemGetsItsRecordedTextsInOrder(t)
}

// TestSampleEveryProblemGetsItsRecordedTextsInOrderUnlicensed is TestSampleEveryProblemGetsItsRecordedTextsInOrder on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestSampleEveryProblemGetsItsRecordedTextsInOrder runs on the stand-in.
func TestSampleEveryProblemGetsItsRecordedTextsInOrderUnlicensed(t *testing.T) {
	testSampleEveryProblemGetsItsRecordedTextsInOrder(t)
}

func testSampleEveryProblemGetsItsRecordedTextsInOrder(t *testing.T) {
	samples, rec := loadSFT(t)
	for _, style := range []sampling.Style{sampling.StyleCompletions, sampling.StyleChat} {
		srv := httptest.NewServer(replay.New(samples, replay.Options{ModelName: "sft"}))
		c := client(t, srv.URL, style, 8)
		tmpl := "qwen-boxed"
		if style == sampling.StyleChat {
			tmpl = "chat"
		}
		for i, r := range rec {
			got, usage, err := c.Sample(context.Background(), prompt(t, tmpl, r.question), sampling.Params{N: 8, Temperature: 1, TopP: 0.95, MaxTokens: 1024})
			if err != nil {
				t.Fatalf("%s problem %d: %v", style, i, err)
			}
			for j := range r.texts {
				if got[j].Text != r.texts[j] || got[j].FinishReason != "stop" {
					t.Fatalf("%s problem %d sample %d: got %.60q, want %.60q", style, i, j, got[j].Text, r.texts[j])
				}
			}
			if usage.CompletionTokens == 0 || usage.PromptTokens == 0 {
				t.Errorf("usage %+v", usage)
			}
		}
		srv.Close()
	}
}

func TestSampleMoreThanRecordedCycles(t *testing.T) { testSampleMoreThanRecordedCycles(t) }

// TestSampleMoreThanRecordedCyclesUnlicensed is TestSampleMoreThanRecordedCycles on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestSampleMoreThanRecordedCycles runs on the stand-in.
func TestSampleMoreThanRecordedCyclesUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testSampleMoreThanRecordedCycles(t)
}

func testSampleMoreThanRecordedCycles(t *testing.T) {
	samples, rec := loadSFT(t)
	srv := httptest.NewServer(replay.New(samples, replay.Options{ModelName: "sft"}))
	defer srv.Close()
	c := client(t, srv.URL, sampling.StyleCompletions, 4)
	r := rec[17]
	got, _, err := c.Sample(context.Background(), prompt(t, "qwen-boxed", r.question), sampling.Params{N: 12, MaxTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	more, _, err := c.Sample(context.Background(), prompt(t, "gsm8k", r.question), sampling.Params{N: 5, MaxTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, more...)
	for i, g := range got { // 17 texts: 0..7, 0..7, 0
		if want := r.texts[i%8]; g.Text != want {
			t.Fatalf("sample %d: got %.50q, want recorded text %d %.50q", i, g.Text, i%8, want)
		}
	}
}

func TestSampleThroughInjectedErrorsCompletes(t *testing.T) {
	testSampleThroughInjectedErrorsCompletes(t)
}

// TestSampleThroughInjectedErrorsCompletesUnlicensed is TestSampleThroughInjectedErrorsCompletes on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestSampleThroughInjectedErrorsCompletes runs on the stand-in.
func TestSampleThroughInjectedErrorsCompletesUnlicensed(t *testing.T) {
	testSampleThroughInjectedErrorsCompletes(t)
}

func testSampleThroughInjectedErrorsCompletes(t *testing.T) {
	samples, rec := loadSFT(t)
	srv := httptest.NewServer(replay.New(samples, replay.Options{ModelName: "sft", ErrorRate: 0.2, Seed: 11, Latency: 2 * time.Millisecond}))
	defer srv.Close()
	c := client(t, srv.URL, sampling.StyleCompletions, 8)
	var wg sync.WaitGroup
	errs := make(chan error, len(rec))
	for i, r := range rec {
		wg.Go(func() {
			got, _, err := c.Sample(context.Background(), prompt(t, "qwen-boxed", r.question), sampling.Params{N: 8, MaxTokens: 1})
			if err != nil {
				errs <- fmt.Errorf("problem %d: %w", i, err)
				return
			}
			for j := range got {
				if got[j].Text != r.texts[j] {
					errs <- fmt.Errorf("problem %d sample %d differs from the recording", i, j)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := c.Stats()
	if s.Errors[sampling.KindRateLimit] == 0 || s.Errors[sampling.KindServer] == 0 || s.Retries != s.Errors[sampling.KindRateLimit]+s.Errors[sampling.KindServer] {
		t.Errorf("stats %+v: want both kinds injected and every failure retried", s)
	}
	t.Logf("30 requests, %d attempts, errors %v", s.Attempts, s.Errors)
}

func TestLatencyIsApplied(t *testing.T) { testLatencyIsApplied(t) }

// TestLatencyIsAppliedUnlicensed is TestLatencyIsApplied on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestLatencyIsApplied runs on the stand-in.
func TestLatencyIsAppliedUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testLatencyIsApplied(t)
}

func testLatencyIsApplied(t *testing.T) {
	samples, rec := loadSFT(t)
	srv := httptest.NewServer(replay.New(samples, replay.Options{ModelName: "sft", Latency: 60 * time.Millisecond}))
	defer srv.Close()
	c := client(t, srv.URL, sampling.StyleCompletions, 1)
	start := time.Now()
	for _, r := range rec[:3] {
		if _, _, err := c.Sample(context.Background(), prompt(t, "qwen-boxed", r.question), sampling.Params{N: 1, MaxTokens: 1}); err != nil {
			t.Fatal(err)
		}
	}
	// One request in flight at a time: at least 3 × 60 ms.
	if d := time.Since(start); d < 180*time.Millisecond {
		t.Errorf("3 sequential requests took %v, under 3 × latency", d)
	}
}

func TestLoadErrors(t *testing.T) { testLoadErrors(t) }

// TestLoadErrorsUnlicensed is TestLoadErrors on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestLoadErrors runs on the stand-in.
func TestLoadErrorsUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testLoadErrors(t)
}

func testLoadErrors(t *testing.T) {
	dir := gsmDir(t)
	tmp := t.TempDir()
	lines, err := os.ReadFile(filepath.Join(dir, "data/gsm8k_subset.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rows := bytes.SplitAfter(lines, []byte("\n"))
	first10 := bytes.Join(rows[:10], nil)
	// Problem qid 1 again under a new qid: same statement.
	var row map[string]any
	if err := json.Unmarshal(rows[1], &row); err != nil {
		t.Fatal(err)
	}
	row["qid"] = 99
	extra, _ := json.Marshal(row)
	dup := append(bytes.Join(rows[:2], nil), append(extra, '\n')...)
	os.WriteFile(filepath.Join(tmp, "first10.jsonl"), first10, 0o600)
	os.WriteFile(filepath.Join(tmp, "dup.jsonl"), dup, 0o600)

	rl := filepath.Join(dir, "results_1024_cuda/rl_raw.jsonl")
	for _, tc := range []struct{ samples, dataset, want string }{
		{rl, filepath.Join(tmp, "first10.jsonl"), `sample for problem "10": no such problem in first10.jsonl`},
		{rl, filepath.Join(tmp, "dup.jsonl"), "problems 1 and 99 have the same statement"},
		{testfiles.Data(t, "generations/math500-qwen25-7b-base-vs-simplerl-counts/qwen2.5-7b-base.csv"), testfiles.Data(t, "math500/test.jsonl"), "holds counts only"},
		{filepath.Join(tmp, "missing.jsonl"), filepath.Join(dir, "data/gsm8k_subset.jsonl"), "no such file"},
	} {
		_, err := replay.Load(context.Background(), tc.samples, tc.dataset)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s, %s) = %v, want an error containing %q", filepath.Base(tc.samples), filepath.Base(tc.dataset), err, tc.want)
		}
	}
}
