package replay

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// JudgeLabel is what the replay server, as a judge model, says about one
// completion: Verdict "valid", "flawed" or "unsure" (the reasoning, for
// CoT-pass@k), or "correct" or "incorrect" (the final answer, for the
// verifier audit), and a short reason. The reply is "VERDICT: " and the
// verdict in capitals; sampling.ParseVerdict reads correct as valid and
// incorrect as flawed, so either kind answers either prompt.
type JudgeLabel struct {
	Completion string `json:"completion"`
	Verdict    string `json:"verdict"`
	Reason     string `json:"reason"`
}

// JudgeNoVerdict as Options.JudgeDefault makes the judge answer a prompt
// without a labelled completion in free text without a VERDICT line, as a
// judge model that ignores the format does.
const JudgeNoVerdict = "none"

var judgeVerdicts = map[string]bool{"valid": true, "flawed": true, "unsure": true, "correct": true, "incorrect": true}

// LoadJudgeLabels reads a judge labels file: JSON Lines of
// {"completion": text, "verdict": "valid"|"flawed"|"unsure"|"correct"|"incorrect", "reason": text}.
// Errors name the file and line: bad JSON, an unknown verdict, an empty
// completion, or the same completion labelled twice with different verdicts.
// A line may be up to 64 MiB.
func LoadJudgeLabels(path string) ([]JudgeLabel, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	name := filepath.Base(path)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var out []JudgeLabel
	seen := map[string]string{}
	for line := 1; sc.Scan(); line++ {
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		var l JudgeLabel
		if err := json.Unmarshal([]byte(b), &l); err != nil {
			return nil, fmt.Errorf("replay: %s:%d: %v", name, line, err)
		}
		switch {
		case !judgeVerdicts[l.Verdict]:
			return nil, fmt.Errorf("replay: %s:%d: field verdict: %q, want valid, flawed, unsure, correct or incorrect", name, line, l.Verdict)
		case normalize(l.Completion) == "":
			return nil, fmt.Errorf("replay: %s:%d: field completion is empty", name, line)
		}
		if v, ok := seen[normalize(l.Completion)]; ok && v != l.Verdict {
			return nil, fmt.Errorf("replay: %s:%d: this completion is labelled %s on an earlier line and %s here", name, line, v, l.Verdict)
		}
		seen[normalize(l.Completion)] = l.Verdict
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("replay: %s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("replay: %s holds no labels", name)
	}
	return out, nil
}

// judge is the judge mode's index: labelled completion -> reply.
type judge struct {
	ix  *index
	def string
}

func newJudge(labels []JudgeLabel, def string) *judge {
	replies := map[string][]string{}
	for _, l := range labels {
		if _, ok := replies[l.Completion]; !ok {
			replies[l.Completion] = []string{judgeReply(l.Verdict, l.Reason)}
		}
	}
	if def == "" {
		def = "unsure"
	}
	return &judge{ix: newIndex(replies, nil), def: def}
}

func judgeReply(verdict, reason string) string {
	if reason == "" {
		reason = "as labelled"
	}
	return "REASON: " + strings.ReplaceAll(reason, "\n", " ") + "\nVERDICT: " + strings.ToUpper(verdict)
}

// reply answers a judge prompt: the label of the longest labelled completion
// the prompt contains, else the default verdict.
func (j *judge) reply(prompt string) string {
	if p := j.ix.lookup(prompt); p != nil {
		return p.texts[0]
	}
	if j.def == JudgeNoVerdict {
		return "The solution looks reasonable to me."
	}
	return judgeReply(j.def, "no label for this completion")
}

// judgeAnswer answers a judge request (completions or chat).
func (s *server) judgeAnswer(w http.ResponseWriter, r *http.Request, req request, prompt string, chat bool) {
	if !s.gate(w, r) {
		return
	}
	text := s.judge.reply(prompt)
	u := usage{PromptTokens: words(prompt), CompletionTokens: words(text)}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	id := s.ids.Add(1)
	if chat {
		writeJSON(w, http.StatusOK, chatResponse{ID: fmt.Sprintf("chatcmpl-replay-%d", id), Object: "chat.completion",
			Created: time.Now().Unix(), Model: req.Model, Usage: u,
			Choices: []chatChoice{{Index: 0, Message: chatMessage{Role: "assistant", Content: text}, FinishReason: "stop"}}})
		return
	}
	writeJSON(w, http.StatusOK, completionResponse{ID: fmt.Sprintf("cmpl-replay-%d", id), Object: "text_completion",
		Created: time.Now().Unix(), Model: req.Model, Usage: u,
		Choices: []completionChoice{{Index: 0, Text: text, FinishReason: "stop"}}})
}

// errNoSamples answers a sampling request to a server started without
// recorded samples (a judge or scoring server only).
var errNoSamples = errors.New("replay: this server has no recorded samples (started without --samples): it answers only judge and scoring requests")
