// Package verify defines how Reach decides whether one sampled completion
// solves one problem. Concrete verifiers live in sub-packages: math/ (answer
// extraction and equivalence). Verifiers are pure: no I/O beyond CPU work,
// bounded in time and input size, and safe for concurrent use.
package verify

import "context"

// Status is the outcome class of one verdict.
type Status string

const (
	// Correct: the extracted answer is equivalent to the reference answer.
	Correct Status = "correct"
	// Incorrect: an answer was extracted and parsed, and it differs.
	Incorrect Status = "incorrect"
	// Unparseable: no answer could be extracted, or it could not be read.
	// Counts as not correct in every statistic.
	Unparseable Status = "unparseable"
)

// Problem is what a verifier needs to know about the problem being graded.
type Problem struct {
	// Reference is the reference answer (e.g. "\\frac{1}{2}", "42", "B").
	Reference string
	// Kind is "math" (default when empty), "choice" or "code".
	Kind string
}

// Verdict is the verifier's judgement of one completion.
type Verdict struct {
	Status Status `json:"status"`
	// Extracted is the final answer taken from the completion ("" if none).
	Extracted string `json:"extracted"`
	// Rule names the extraction rule that fired, e.g. "boxed",
	// "final-answer-is", "gsm8k-hashes", "answer-tag", "last-number".
	Rule string `json:"rule"`
	// Reason is a short human-readable explanation shown on the problem page.
	Reason string `json:"reason"`
}

// IsCorrect reports whether the verdict counts as a solve.
func (v Verdict) IsCorrect() bool { return v.Status == Correct }

// Verifier grades one completion against one problem. Implementations never
// panic and return within a bounded amount of work; ctx is checked where
// work could be long.
type Verifier interface {
	// Name identifies the verifier and its version, stored with each verdict
	// (e.g. "reach-math/1").
	Name() string
	Verify(ctx context.Context, p Problem, completion string) Verdict
}

// FallbackRules are the extraction rules that take an answer the completion
// never marked as final: the last math span or the last number, as the
// Qwen2.5-Math evaluator does when there is no \boxed{}. Under the strict
// grading policy a verdict by one of these rules is not a solve; under the
// lenient policy (the one behind Yue et al.'s figures) it is. Verifiers that
// add a fallback rule list it here.
var FallbackRules = []string{"last-math", "last-number"}

// IsFallbackRule reports whether rule is one of FallbackRules.
func IsFallbackRule(rule string) bool {
	for _, r := range FallbackRules {
		if r == rule {
			return true
		}
	}
	return false
}

// Capabilities is what a Verifier may tell about the problem kinds it
// grades. Verifiers that do not implement it grade "math" and "choice"
// problems (and problems without a kind), inline.
type Capabilities interface {
	// Supports reports whether the verifier can grade problems of kind
	// (e.g. "code" only where a sandbox works). Re-verification is offered
	// only for comparisons whose problems it supports.
	Supports(kind string) bool
	// Inline reports whether grading kind is cheap enough (microseconds per
	// completion) to run inside an import or a sampling job; otherwise the
	// samples wait, pending, for a VerifyJob that workers scale out.
	Inline(kind string) bool
}

// Supports reports whether v can grade problems of kind.
func Supports(v Verifier, kind string) bool {
	if c, ok := v.(Capabilities); ok {
		return c.Supports(kind)
	}
	return kind == "" || kind == "math" || kind == "choice"
}

// Inline reports whether v grades problems of kind inline (see
// Capabilities).
func Inline(v Verifier, kind string) bool {
	if c, ok := v.(Capabilities); ok {
		return c.Inline(kind)
	}
	return Supports(v, kind)
}
