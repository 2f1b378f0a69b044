package analysis

import (
	"regexp"
	"strconv"
	"strings"
)

// SmallIntMax is the largest |v| of an integer reference answer tagged guessable.
const SmallIntMax = 10

// Guess says why a problem's reference answer could be hit by guessing, and roughly how often a
// single blind sample would hit it. pass@k at large k rewards guessing: a 1-in-11 guess is
// right at least once in 128 samples with probability 1 − (10/11)^128 ≈ 99.9999%, which is why
// Yue et al. 2025 (arXiv 2504.13837) also report an "unguessable" AIME subset.
type Guess struct {
	// Rule is "choice" (an option letter), "yes-no" or "small-integer".
	Rule string `json:"rule"`
	// Chance is the rough probability that one blind sample gives the answer: 1/4 for an option
	// letter A–D (1/m for a later letter, m its position), 1/2 for yes/no and true/false,
	// 1/(SmallIntMax+1) = 1/11 for an integer in −10..10 (a guess among 0..10).
	Chance float64 `json:"chance"`
}

var (
	// wrappers a reference answer may carry around the value itself.
	guessStrip = strings.NewReplacer(`\boxed{`, "", `\text{`, "", `\textbf{`, "", `\mathrm{`, "", "$", "", "{", "", "}", "",
		`\(`, "", `\)`, "", " ", "", `\,`, "", `\!`, "")
	choiceRe = regexp.MustCompile(`^\(?([A-Ja-j])\)?\.?$`)
	intRe    = regexp.MustCompile(`^[+-]?\d+(\.0+)?$`)
)

// Guessable applies Reach's guessable rule to a problem's reference answer and kind. After
// taking what follows a GSM8K-style "####" and stripping \boxed{}, \text{}, $ and spaces, the
// answer is guessable when it is
//
//   - an option letter, optionally in parentheses ("C", "(C)", MATH's "\text{(C)}"): a bare
//     upper-case A–E always, other letters A–J for kind "choice" or in parentheses; chance 1/4 for A–D, 1/m for the
//     m-th letter beyond D;
//   - yes, no, true or false (any case): chance 1/2;
//   - an integer with |v| <= SmallIntMax (e.g. "3", "-1", "10", "4.0"): chance 1/11.
//
// Everything else (fractions, expressions, larger integers such as AIME's 000–999) is not,
// and Guessable returns nil. The chances are rough priors for a blind guess, shown to explain
// the tag; no statistic uses them.
func Guessable(reference, kind string) *Guess {
	if _, after, ok := strings.Cut(reference, "####"); ok { // GSM8K: a full solution ending "#### 42"
		reference = after
	}
	s := guessStrip.Replace(strings.TrimSpace(reference))
	if m := choiceRe.FindStringSubmatch(s); m != nil {
		letter := m[1][0]
		// Outside a multiple-choice dataset a bare lower-case letter or one beyond E is more
		// likely a variable than an option.
		if kind == "choice" || strings.Contains(s, "(") || letter >= 'A' && letter <= 'E' {
			letter = strings.ToUpper(m[1])[0]
			return &Guess{Rule: "choice", Chance: 1 / float64(max(4, int(letter-'A')+1))}
		}
		return nil
	}
	switch strings.ToLower(s) {
	case "yes", "no", "true", "false":
		return &Guess{Rule: "yes-no", Chance: 0.5}
	}
	if intRe.MatchString(s) {
		digits := strings.TrimLeft(strings.SplitN(s, ".", 2)[0], "+-")
		if v, err := strconv.Atoi(digits); err == nil && v <= SmallIntMax {
			return &Guess{Rule: "small-integer", Chance: 1 / float64(SmallIntMax+1)}
		}
	}
	return nil
}
