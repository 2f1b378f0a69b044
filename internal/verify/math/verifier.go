package math

import (
	"context"
	"strings"

	"github.com/reach-lab/reach/internal/verify"
)

// Name identifies this verifier and its rules version in stored verdicts.
const Name = "reach-math/1"

// Options tunes one comparison. The zero value is Reach's default policy.
type Options struct {
	// PredIsCompletion: pred is free text (a model completion) and the
	// final answer must be extracted first. Otherwise pred is already an
	// answer (it may still carry $...$, \boxed{} or units).
	PredIsCompletion bool
	// GoldIsCompletion: gold is a full reference solution; its final
	// answer (normally the last \boxed{}) is extracted first.
	GoldIsCompletion bool
	// Choice forces multiple-choice grading (gold is an option letter).
	// Without it, a gold that reads as an option letter A-E also selects it.
	Choice bool
	// FloatRounding > 0 compares numbers after rounding to this many
	// decimals (Math-Verify's float_rounding), instead of the default
	// exact / seven-significant-digit policy.
	FloatRounding int
}

// Verifier implements verify.Verifier for math and multiple-choice
// problems. It is stateless and safe for concurrent use.
type Verifier struct{}

// New returns Reach's math answer verifier.
func New() verify.Verifier { return Verifier{} }

// Name returns "reach-math/1".
func (Verifier) Name() string { return Name }

// Verify grades a completion against p.Reference. Kind "choice" grades an
// option letter; "code" is not handled here and is reported not graded.
// A Reference holding a full solution (\boxed{}, "####") has its final
// answer extracted first.
func (Verifier) Verify(ctx context.Context, p verify.Problem, completion string) verify.Verdict {
	if err := ctx.Err(); err != nil {
		return verify.Verdict{Status: verify.Unparseable, Reason: "cancelled: " + err.Error()}
	}
	switch p.Kind {
	case "code":
		// Not a wrong answer: a code problem is graded by running its tests.
		return verify.Verdict{Status: verify.NotGraded, Reason: "not graded: code problems need the code verifier"}
	}
	opt := Options{PredIsCompletion: true, Choice: p.Kind == "choice"}
	ref := p.Reference
	if strings.Contains(ref, `\boxed`) || strings.Contains(ref, `\fbox`) || strings.Contains(ref, "####") {
		opt.GoldIsCompletion = true
	}
	return Check(p.Reference, completion, opt)
}

// VerifyAnswer grades pred against the reference answer gold. With
// predIsCompletion the final answer is extracted from pred first.
func VerifyAnswer(gold, pred string, predIsCompletion bool) verify.Verdict {
	return Check(gold, pred, Options{PredIsCompletion: predIsCompletion})
}

// Check grades pred against gold under opt. It never panics; the verdict
// is Correct, Incorrect, or Unparseable with a reason.
func Check(gold, pred string, opt Options) (v verify.Verdict) {
	defer func() {
		if r := recover(); r != nil {
			// A bug, not an input problem (the fuzz targets call check
			// directly to find these): report it rather than crash a worker.
			v = verify.Verdict{Status: verify.Unparseable, Reason: "internal error while grading"}
		}
	}()
	return check(gold, pred, opt)
}

func check(gold, pred string, opt Options) verify.Verdict {
	g, gLimit, ok := goldAnswer(gold, opt.GoldIsCompletion)
	if !ok {
		return verify.Verdict{Status: verify.Unparseable, Reason: "empty reference answer"}
	}
	maxLetter := byte('E')
	if letter, isChoice := choiceLetter(g, 'J'); isChoice && (opt.Choice || letter <= 'E') {
		if letter > maxLetter {
			maxLetter = letter
		}
		return checkChoice(letter, pred, opt, maxLetter)
	}
	var gp parsed
	var gerr error
	if gLimit != nil {
		gerr = gLimit
	}
	if gerr == nil && len(g) > maxAnswerLen {
		gerr = errRefLen
	}
	if gerr == nil {
		gp, gerr = parseAnswer(g)
	}
	if gerr != nil || gp.prose {
		// "Alina and the answer is (C) Cecile": a choice hidden in prose.
		if snip, pos := phraseAnswer(g); pos >= 0 {
			if letter, ok := choiceLetter(snip, 'E'); ok {
				return checkChoice(letter, pred, opt, 'E')
			}
		}
	}
	if opt.Choice {
		return verify.Verdict{Status: verify.Unparseable, Reason: "reference is not an option letter"}
	}
	var goldNode *node
	switch {
	case gerr != nil:
		// Unreadable reference: only an identical answer can match.
	case gp.prose:
		goldNode = &node{op: opText, name: textKey(g)}
	default:
		goldNode = gp.root
	}
	gKey := compactKey(g)

	cands, rule, exLimit := predCandidates(pred, opt.PredIsCompletion)
	if exLimit != nil {
		// The answer may have been cut by the search window: no verdict,
		// not even "identical" (a cut tail can equal the reference).
		return verify.Verdict{Status: verify.Unparseable, Extracted: shown(cleanAnswer(normalizeText(firstOr(cands)))), Rule: rule, Reason: exLimit.Error()}
	}
	if len(cands) == 0 {
		return verify.Verdict{Status: verify.Unparseable, Reason: "no final answer found"}
	}
	j := newJudge(opt.FloatRounding)
	firstErr := ""
	if goldNode != nil && goldNode.op != opText {
		// "Therefore y > -2": when the sentence is prose, the mathematics
		// after its run of prose words is tried next.
		var withStripped []string
		for _, raw := range cands {
			withStripped = append(withStripped, raw)
			if st := stripLeadingProse(cleanAnswer(normalizeText(raw))); st != "" {
				withStripped = append(withStripped, st)
			}
		}
		cands = withStripped
	}
	for i, raw := range cands {
		a := cleanAnswer(normalizeText(raw))
		if a == "" {
			continue
		}
		r := rule
		if i > 0 && opt.PredIsCompletion {
			r = rule + "+fallback"
		}
		// Identical answers match at any length (a linear scan of the
		// whole text, never a prefix).
		if compactKey(a) == gKey {
			return verify.Verdict{Status: verify.Correct, Extracted: shown(a), Rule: r, Reason: "identical to the reference"}
		}
		if len(a) > maxAnswerLen {
			return verify.Verdict{Status: verify.Unparseable, Extracted: shown(a), Rule: r, Reason: errAnswerLen.Error()}
		}
		if goldNode == nil {
			if lim, isLimit := gerr.(*limitError); isLimit {
				return verify.Verdict{Status: verify.Unparseable, Extracted: shown(a), Rule: r, Reason: lim.Error()}
			}
			if _, perr := parseAnswer(a); perr != nil {
				if lim, isLimit := perr.(*limitError); isLimit {
					return verify.Verdict{Status: verify.Unparseable, Extracted: shown(a), Rule: r, Reason: lim.Error()}
				}
			}
			if firstErr == "" {
				firstErr = "reference unreadable (" + gerr.Error() + ") and answer differs"
			}
			continue
		}
		pp, perr := parseAnswer(a)
		if perr != nil {
			if lim, isLimit := perr.(*limitError); isLimit {
				return verify.Verdict{Status: verify.Unparseable, Extracted: shown(a), Rule: r, Reason: lim.Error()}
			}
			if firstErr == "" {
				firstErr = "answer " + quote(a) + " unreadable: " + perr.Error()
			}
			continue
		}
		var predNode *node
		if pp.prose {
			if goldNode.op != opText {
				if firstErr == "" {
					firstErr = "answer " + quote(a) + " is text, reference is math"
				}
				continue
			}
			predNode = &node{op: opText, name: textKey(a)}
		} else {
			predNode = pp.root
		}
		if j.equal(goldNode, predNode, 0) {
			return verify.Verdict{Status: verify.Correct, Extracted: shown(a), Rule: r, Reason: "equivalent to the reference"}
		}
		if j.limit != nil {
			return verify.Verdict{Status: verify.Unparseable, Extracted: shown(a), Rule: r, Reason: j.limit.Error()}
		}
		return verify.Verdict{Status: verify.Incorrect, Extracted: shown(a), Rule: r, Reason: "differs from the reference"}
	}
	last := cleanAnswer(normalizeText(cands[0]))
	if firstErr == "" {
		firstErr = "no readable answer"
	}
	return verify.Verdict{Status: verify.Unparseable, Extracted: shown(last), Rule: rule, Reason: firstErr}
}

func firstOr(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// shown is the extracted answer as stored with a verdict: at most
// maxAnswerLen bytes, marked when shortened (the verdict itself is never
// based on a shortened answer).
func shown(a string) string {
	if len(a) <= maxAnswerLen {
		return a
	}
	cut := maxAnswerLen
	for cut > 0 && a[cut]&0xC0 == 0x80 {
		cut--
	}
	return a[:cut] + "…"
}

func quote(s string) string {
	if len(s) > 60 {
		cut := 57
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "..."
	}
	return `"` + s + `"`
}

// goldAnswer returns the cleaned reference answer, and a limit error when
// the reference solution's answer may be cut by the search window.
func goldAnswer(gold string, isCompletion bool) (string, *limitError, bool) {
	if strings.TrimSpace(gold) == "" {
		return "", nil, false
	}
	g := gold
	var lim *limitError
	if isCompletion {
		if ex, ok := extractFromCompletion(gold); ok {
			g = ex.answer
			lim = ex.limit
			if ex.rule == RuleBoxed || ex.rule == RuleBoxedJoined {
				if all, ok := allBoxes(normalizeText(gold)); ok && lim == nil {
					g = all
				}
			}
		}
	} else {
		g = normalizeText(g)
		if a, ok := allBoxes(g); ok {
			g = a
		} else if a, ok := unwrapBoxes(g); ok {
			g = a
		}
	}
	g = cleanAnswer(normalizeText(g))
	return g, lim, g != ""
}

// predCandidates lists the answers to try for pred, best first, the
// extraction rule, and a limit error when the answer may be cut.
func predCandidates(pred string, isCompletion bool) ([]string, string, *limitError) {
	if strings.TrimSpace(pred) == "" {
		return nil, "", nil
	}
	if isCompletion {
		ex, ok := extractFromCompletion(pred)
		if !ok {
			return nil, "", nil
		}
		return append([]string{ex.answer}, ex.fallbacks...), ex.rule, ex.limit
	}
	a := normalizeText(pred)
	rule := RuleAnswer
	if b, ok := unwrapBoxes(a); ok {
		a = b
		rule = RuleBoxed
	}
	out := []string{a}
	// An "answer" that turns out to be a sentence: extract from it.
	if len(pred) <= maxCompletionTail {
		if ex, ok := extractFromCompletion(pred); ok && ex.limit == nil {
			out = append(out, ex.answer)
			out = append(out, ex.fallbacks...)
		}
	}
	return out, rule, nil
}

func checkChoice(letter byte, pred string, opt Options, maxLetter byte) verify.Verdict {
	var got byte
	var rule string
	var ok bool
	if opt.PredIsCompletion {
		var lim *limitError
		got, rule, lim, ok = extractChoiceAt(pred, maxLetter)
		if ok && lim != nil {
			return verify.Verdict{Status: verify.Unparseable, Extracted: string(got), Rule: rule, Reason: lim.Error()}
		}
	} else {
		a := cleanAnswer(normalizeText(pred))
		if b, boxed := unwrapBoxes(a); boxed {
			a = b
		}
		if len(a) > maxAnswerLen {
			return verify.Verdict{Status: verify.Unparseable, Extracted: shown(a), Rule: RuleAnswer, Reason: errAnswerLen.Error()}
		}
		got, ok = choiceLetter(a, maxLetter)
		rule = RuleAnswer
		if !ok {
			return verify.Verdict{Status: verify.Incorrect, Extracted: a, Rule: rule, Reason: "answer is not option " + string(letter)}
		}
	}
	if !ok {
		return verify.Verdict{Status: verify.Unparseable, Reason: "no option letter found"}
	}
	if got == letter {
		return verify.Verdict{Status: verify.Correct, Extracted: string(got), Rule: rule, Reason: "same option letter"}
	}
	return verify.Verdict{Status: verify.Incorrect, Extracted: string(got), Rule: rule, Reason: "chose option " + string(got) + ", reference is " + string(letter)}
}

// CheckCase grades one verifier-cases line (see package cases): pred may be
// an answer or a completion, gold an answer or a full solution, and
// floatRounding > 0 selects Math-Verify's rounding comparison.
func (Verifier) CheckCase(gold, pred string, predIsAnswer, goldIsSolution bool, floatRounding int) verify.Verdict {
	return Check(gold, pred, Options{PredIsCompletion: !predIsAnswer, GoldIsCompletion: goldIsSolution, FloatRounding: floatRounding})
}
