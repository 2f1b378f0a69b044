package cases

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Sample is one completion to verify, read from a samples file.
type Sample struct {
	// ID names the sample inside its file, e.g. "12/3" (problem 12,
	// completion 3) or "12/175b_verification".
	ID string
	// Reference is the reference answer, or a full reference solution when
	// ReferenceIsSolution is set (GSM8K "ground_truth" ending in "A: 18").
	Reference           string
	ReferenceIsSolution bool
	// Completion is the model's text.
	Completion string
	// Label is the file's own verdict, nil when the file has none.
	Label *bool
}

// maxLine caps one JSONL line (a problem with many long completions).
const maxLine = 64 << 20

// ReadSamples streams a samples file and calls fn for every completion in
// it. It accepts, line by line:
//   - the Qwen2.5-Math / limit-of-RLVR evaluation JSONL: "answer" (or "gt")
//     and "code" (list of completions), labels in "score" (list of bool);
//   - GSM8K rollouts JSONL: "gold" and "rollouts" ([{text, correct}]);
//   - the GSM8K GPT-3 example solutions: "ground_truth" (a full solution)
//     and per system {"is_correct", "solution"};
//   - Reach JSONL: "completion" or "completions", with the reference in
//     "reference", "answer" or "gold" and an optional "correct".
//
// Lines without a reference are skipped. A malformed line is an error that
// names the line number.
func ReadSamples(r io.Reader, fn func(Sample) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), maxLine)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if err := emitLine(m, line, fn); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading samples: %w", err)
	}
	return nil
}

func str(m map[string]json.RawMessage, key string) (string, bool) {
	raw, ok := m[key]
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	// Numbers (an AMC "answer": 27.0) are read as their JSON text.
	var f json.Number
	if err := json.Unmarshal(raw, &f); err == nil {
		return f.String(), true
	}
	return "", false
}

func lineID(m map[string]json.RawMessage, line int) string {
	for _, k := range []string{"idx", "qid", "problem_id", "id", "unique_id"} {
		if s, ok := str(m, k); ok {
			return s
		}
	}
	return strconv.Itoa(line)
}

func emitLine(m map[string]json.RawMessage, line int, fn func(Sample) error) error {
	id := lineID(m, line)
	switch {
	case m["code"] != nil && m["gt"] != nil: // Qwen eval format
		// "answer" keeps the dataset's reference as written; "gt" is the
		// evaluator's normalised copy, which can be mangled ("15\mbox{ cm}^2"
		// became "15^2", "\text{east}" became "").
		gt, _ := str(m, "answer")
		if gt == "" {
			gt, _ = str(m, "gt")
		}
		var code []string
		if err := json.Unmarshal(m["code"], &code); err != nil {
			return fmt.Errorf("field code: %w", err)
		}
		var score []bool
		if raw := m["score"]; raw != nil {
			if err := json.Unmarshal(raw, &score); err != nil {
				return fmt.Errorf("field score: %w", err)
			}
		}
		for i, c := range code {
			s := Sample{ID: id + "/" + strconv.Itoa(i), Reference: gt, Completion: c}
			if i < len(score) {
				s.Label = &score[i]
			}
			if err := fn(s); err != nil {
				return err
			}
		}
	case m["rollouts"] != nil: // GSM8K rollouts
		gold, _ := str(m, "gold")
		var rs []struct {
			Rollout *int   `json:"rollout"`
			Text    string `json:"text"`
			Correct *bool  `json:"correct"`
		}
		if err := json.Unmarshal(m["rollouts"], &rs); err != nil {
			return fmt.Errorf("field rollouts: %w", err)
		}
		for i, r := range rs {
			k := i
			if r.Rollout != nil {
				k = *r.Rollout
			}
			if err := fn(Sample{ID: id + "/" + strconv.Itoa(k), Reference: gold, Completion: r.Text, Label: r.Correct}); err != nil {
				return err
			}
		}
	case m["ground_truth"] != nil: // GSM8K GPT-3 example solutions
		gt, _ := str(m, "ground_truth")
		for _, sys := range []string{"6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"} {
			raw := m[sys]
			if raw == nil {
				continue
			}
			var s struct {
				IsCorrect *bool  `json:"is_correct"`
				Solution  string `json:"solution"`
			}
			if err := json.Unmarshal(raw, &s); err != nil {
				return fmt.Errorf("field %s: %w", sys, err)
			}
			if err := fn(Sample{ID: strconv.Itoa(line) + "/" + sys, Reference: gt, ReferenceIsSolution: true, Completion: s.Solution, Label: s.IsCorrect}); err != nil {
				return err
			}
		}
	default: // Reach JSONL
		ref := ""
		for _, k := range []string{"reference", "answer", "gold"} {
			if s, ok := str(m, k); ok {
				ref = s
				break
			}
		}
		if ref == "" {
			return nil
		}
		var label *bool
		if raw := m["correct"]; raw != nil {
			var b bool
			if err := json.Unmarshal(raw, &b); err == nil {
				label = &b
			}
		}
		if c, ok := str(m, "completion"); ok {
			si := ""
			if s, ok := str(m, "sample_index"); ok {
				si = "/" + s
			}
			return fn(Sample{ID: id + si, Reference: ref, Completion: c, Label: label})
		}
		if raw := m["completions"]; raw != nil {
			var cs []string
			if err := json.Unmarshal(raw, &cs); err != nil {
				return fmt.Errorf("field completions: %w", err)
			}
			for i, c := range cs {
				if err := fn(Sample{ID: id + "/" + strconv.Itoa(i), Reference: ref, Completion: c}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
