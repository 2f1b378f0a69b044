package sampling

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// JudgeData is what a judge prompt template sees of one sample: the
// problem, its reference answer and the completion whose reasoning is judged.
type JudgeData struct {
	Problem    string
	Reference  string
	Completion string
	Subject    string
	Level      string
}

var judgeFields = []string{"Problem", "Reference", "Completion", "Subject", "Level"}

// MaxJudgePromptBytes bounds a rendered judge prompt: the completion is
// inside it, and long chains of thought run to 100 KB and more.
const MaxJudgePromptBytes = 1 << 20

// DefaultJudgeTemplate is the judge prompt Reach sends unless the
// comparison has its own. It asks for the CoT-pass@k criterion of Wen et
// al. 2025 (arXiv 2506.14245): the final answer is already known to match
// the reference, so only the chain of thought is in question. The reply must
// end with a VERDICT line (see ParseVerdict).
const DefaultJudgeTemplate = `You are checking the reasoning of a solution. Its final answer already matches the reference answer; decide whether the reasoning that leads to it is correct too.

Problem:
{{.Problem}}

Reference answer:
{{.Reference}}

Solution (between the markers):
<<<SOLUTION
{{.Completion}}
SOLUTION>>>

The reasoning is VALID if every step is correct and the final answer follows from the steps. It is FLAWED if it contains a wrong step, an unjustified jump to the answer, a guess, or steps that do not support the answer, even though the answer is right. Say UNSURE only if you cannot tell.

Reply with one line "REASON: <one sentence>" followed by one line "VERDICT: VALID", "VERDICT: FLAWED" or "VERDICT: UNSURE".`

// ParseJudgeTemplate checks a judge prompt template: the restricted
// language of Parse over .Problem, .Reference, .Completion, .Subject and
// .Level. It must use .Completion (a judge that never sees the sample
// judges nothing).
func ParseJudgeTemplate(t Template) error {
	if _, err := parseWith(t, judgeFields); err != nil {
		return err
	}
	if !strings.Contains(t.Text, ".Completion") {
		return fmt.Errorf("judge template %q never inserts {{.Completion}}, the sample to judge", t.Name)
	}
	return nil
}

// RenderJudge fills a judge template (see ParseJudgeTemplate). A prompt over
// MaxJudgePromptBytes is an error naming the limit.
func RenderJudge(t Template, d JudgeData) (string, error) {
	if err := ParseJudgeTemplate(t); err != nil {
		return "", err
	}
	tmpl, _ := parseWith(t, judgeFields)
	w := &budgetWriter{max: MaxJudgePromptBytes, deadline: time.Now().Add(renderBudget)}
	if err := tmpl.Execute(w, d); err != nil {
		if errors.Is(err, errPromptTooLong) {
			return "", fmt.Errorf("judge prompt over %d KiB (the completion is too long to judge)", MaxJudgePromptBytes>>10)
		}
		return "", fmt.Errorf("judge template %q: %w", t.Name, err)
	}
	return w.b.String(), nil
}

// Verdicts a judge can give (ParseVerdict).
const (
	VerdictValid  = "valid"
	VerdictFlawed = "flawed"
	VerdictUnsure = "unsure"
)

var (
	verdictLine = regexp.MustCompile(`(?im)^[\s>*_#-]*verdict[\s*_]*:[\s*_]*\**\s*([a-z]+)`)
	reasonLine  = regexp.MustCompile(`(?im)^[\s>*_#-]*reason[\s*_]*:[\s*_]*(.+)$`)
)

// verdictWords maps what judges write to Reach's three verdicts.
var verdictWords = map[string]string{
	"valid": VerdictValid, "correct": VerdictValid, "sound": VerdictValid, "yes": VerdictValid,
	"flawed": VerdictFlawed, "invalid": VerdictFlawed, "incorrect": VerdictFlawed, "wrong": VerdictFlawed, "no": VerdictFlawed,
	"unsure": VerdictUnsure, "uncertain": VerdictUnsure, "unknown": VerdictUnsure,
}

// ParseVerdict reads a judge's reply: the last line "VERDICT: X" (any case,
// Markdown emphasis allowed) with X one of valid/correct/sound,
// flawed/invalid/incorrect/wrong or unsure/uncertain, after any
// <think>…</think> block a reasoning judge writes first. The reason is the
// last "REASON:" line's text, else the reply's last 300 characters before
// the verdict. ok is false when there is no verdict line: the caller
// records the reply as an error, never as a verdict.
func ParseVerdict(reply string) (verdict, reason string, ok bool) {
	if i := strings.LastIndex(reply, "</think>"); i >= 0 {
		reply = reply[i+len("</think>"):]
	}
	ms := verdictLine.FindAllStringSubmatchIndex(reply, -1)
	if len(ms) == 0 {
		return "", "", false
	}
	last := ms[len(ms)-1]
	verdict, ok = verdictWords[strings.ToLower(reply[last[2]:last[3]])]
	if !ok {
		return "", "", false
	}
	if rs := reasonLine.FindAllStringSubmatch(reply, -1); len(rs) > 0 {
		reason = strings.TrimSpace(strings.Trim(rs[len(rs)-1][1], "*_ "))
	} else {
		reason = strings.TrimSpace(reply[:last[0]])
		if r := []rune(reason); len(r) > 300 {
			reason = "…" + string(r[len(r)-300:])
		}
	}
	return verdict, truncateRunes(reason, 2000), true
}

func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Judgment is a judge model's verdict on one sample.
type Judgment struct {
	Verdict string // VerdictValid, VerdictFlawed or VerdictUnsure
	Reason  string
	Usage   Usage
}

// Judge sends one judge prompt (rendered with RenderJudge) and reads the
// verdict. It samples greedily (temperature 0) with maxTokens for the reply.
// Errors: what Sample returns (an *Error, retried as Sample retries), or,
// when the reply has no verdict line, an *Error of KindOther quoting the
// reply's end — a judge that does not follow the format is a setup problem
// the user must see.
func (c *Client) Judge(ctx context.Context, prompt string, maxTokens int) (Judgment, error) {
	comps, u, err := c.Sample(ctx, prompt, Params{N: 1, Temperature: 0, MaxTokens: max(maxTokens, 1)})
	if err != nil {
		return Judgment{Usage: u}, err
	}
	reply := comps[0].Text
	v, reason, ok := ParseVerdict(reply)
	if !ok {
		tail := []rune(strings.TrimSpace(reply))
		if len(tail) > 200 {
			tail = append([]rune("…"), tail[len(tail)-200:]...)
		}
		return Judgment{Usage: u}, &Error{Kind: KindOther, Message: fmt.Sprintf("the judge's reply has no VERDICT line (finish reason %q): %q",
			comps[0].FinishReason, string(tail))}
	}
	return Judgment{Verdict: v, Reason: reason, Usage: u}, nil
}
