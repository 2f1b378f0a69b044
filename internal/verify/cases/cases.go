// Package cases implements `reach verify --cases FILE` and
// `reach verify --bench FILE` as functions over an io.Reader and io.Writer,
// so the CLI only wires flags to them.
package cases

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/reach-lab/reach/internal/verify"
)

// Case is one line of a verifier-cases JSONL file
// (e.g. internal/testfiles/verifier-cases/math_equivalence.jsonl).
type Case struct {
	ID   string `json:"id"`
	Gold string `json:"gold"`
	Pred string `json:"pred"`
	// Input is "answer" (Pred is already a final answer) or "completion".
	Input string `json:"input"`
	// GoldInput is "completion" when Gold is a full reference solution.
	GoldInput string `json:"gold_input"`
	// Equal is the expected verdict, when the file has one.
	Equal   *bool  `json:"equal"`
	Kind    string `json:"kind"`
	Options struct {
		FloatRounding int `json:"float_rounding"`
	} `json:"options"`
}

// Result is the JSON line printed for one case.
type Result struct {
	ID        string        `json:"id"`
	Correct   bool          `json:"correct"`
	Status    verify.Status `json:"status"`
	Extracted string        `json:"extracted"`
	Rule      string        `json:"rule,omitempty"`
	Reason    string        `json:"reason"`
}

// KindTally counts agreement with the expected verdicts of one kind.
type KindTally struct {
	Cases int `json:"cases"`
	Agree int `json:"agree"`
}

// Summary totals a cases run. Agreement counts only cases with "equal".
type Summary struct {
	Cases    int                  `json:"cases"`
	Expected int                  `json:"expected"`
	Agree    int                  `json:"agree"`
	ByKind   map[string]KindTally `json:"by_kind"`
}

// Rate is Agree/Expected (0 when nothing was expected).
func (s Summary) Rate() float64 {
	if s.Expected == 0 {
		return 0
	}
	return float64(s.Agree) / float64(s.Expected)
}

// Table renders the per-kind agreement table, kinds sorted by name.
func (s Summary) Table() string {
	kinds := make([]string, 0, len(s.ByKind))
	for k := range s.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	out := fmt.Sprintf("%-24s %5s %5s %7s\n", "kind", "cases", "agree", "rate")
	for _, k := range kinds {
		t := s.ByKind[k]
		out += fmt.Sprintf("%-24s %5d %5d %6.1f%%\n", k, t.Cases, t.Agree, 100*float64(t.Agree)/float64(t.Cases))
	}
	out += fmt.Sprintf("%-24s %5d %5d %6.1f%%\n", "TOTAL", s.Expected, s.Agree, 100*s.Rate())
	return out
}

// CaseChecker is implemented by verifiers that can grade a case's richer
// inputs: an already-extracted answer (predIsAnswer), a full reference
// solution (goldIsSolution), and Math-Verify's float_rounding option
// (floatRounding > 0). math.Verifier implements it. Other verifiers are
// called through Verify with the case's gold as the reference.
type CaseChecker interface {
	CheckCase(gold, pred string, predIsAnswer, goldIsSolution bool, floatRounding int) verify.Verdict
}

// Check grades one case with v.
func Check(ctx context.Context, v verify.Verifier, c Case) verify.Verdict {
	if cc, ok := v.(CaseChecker); ok {
		return cc.CheckCase(c.Gold, c.Pred, c.Input == "answer", c.GoldInput == "completion", c.Options.FloatRounding)
	}
	return v.Verify(ctx, verify.Problem{Reference: c.Gold}, c.Pred)
}

// RunCases reads cases JSONL from r, grades each with v, and writes one
// Result JSON line per case to w. It returns the agreement summary. A
// malformed line is skipped, so every valid line still gets its verdict;
// the run then ends with an error naming the malformed lines' numbers (the
// first few with their parse errors). ctx cancellation stops it between
// cases. Verdicts written before any error are flushed to w.
func RunCases(ctx context.Context, r io.Reader, w io.Writer, v verify.Verifier) (Summary, error) {
	sum := Summary{ByKind: map[string]KindTally{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), maxLine)
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	var bad []string // "line N: parse error", the first maxBadLines of them
	nbad := 0
	for line := 1; sc.Scan(); line++ {
		if err := ctx.Err(); err != nil {
			return sum, errors.Join(fmt.Errorf("cases: %w", err), bw.Flush())
		}
		if len(sc.Bytes()) == 0 {
			continue
		}
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			if nbad++; len(bad) < maxBadLines {
				bad = append(bad, fmt.Sprintf("line %d: %v", line, err))
			}
			continue
		}
		verdict := Check(ctx, v, c)
		res := Result{ID: c.ID, Correct: verdict.IsCorrect(), Status: verdict.Status,
			Extracted: verdict.Extracted, Rule: verdict.Rule, Reason: verdict.Reason}
		if err := enc.Encode(res); err != nil {
			return sum, fmt.Errorf("cases: write: %w", err)
		}
		sum.Cases++
		if c.Equal != nil {
			k := sum.ByKind[c.Kind]
			k.Cases++
			sum.Expected++
			if *c.Equal == res.Correct {
				k.Agree++
				sum.Agree++
			}
			sum.ByKind[c.Kind] = k
		}
	}
	if err := bw.Flush(); err != nil {
		return sum, fmt.Errorf("cases: write: %w", err)
	}
	if err := sc.Err(); err != nil {
		return sum, fmt.Errorf("cases: read: %w", err)
	}
	if nbad > 0 {
		more := ""
		if nbad > len(bad) {
			more = fmt.Sprintf("; %d more", nbad-len(bad))
		}
		return sum, fmt.Errorf("cases: %d malformed line(s) skipped, %d verdicts printed: %s%s", nbad, sum.Cases, strings.Join(bad, "; "), more)
	}
	return sum, nil
}

// maxBadLines is how many malformed lines RunCases's error names with their
// parse errors; the rest are counted.
const maxBadLines = 5
