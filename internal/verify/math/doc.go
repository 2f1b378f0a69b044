// Package math is Reach's math answer verifier ("reach-math/1"): it finds
// the final answer in a model completion, parses it and the reference into
// expression trees, and decides equivalence. Pure Go, no regular
// expressions in the hot path, no symbolic algebra system: about 80,000
// verdicts per second on one core on the real completions in
// shared/data/generations (BenchmarkVerifyRealCompletions).
//
// # Pipeline
//
//  1. Extraction (extract.go). The completion is cut at a hallucinated next
//     turn (<|im_start|>, "\n\nProblem:", ...), the answer part after
//     </think> is preferred, and only the last 12 KiB are searched. Explicit
//     markers are: <answer> tags, the last \boxed{}/\fbox{} (balanced,
//     nested), "final answer is"/"the answer is"/"Answer:"/"答案", GSM8K
//     "#### 42", and a last line "A: 42". The marker that occurs last in the
//     text wins (a "Final Answer: 12" after an earlier \boxed{11} is 12);
//     earlier markers are fallbacks when its answer cannot be read. Without
//     a marker, the last $...$/\(...\)/\[...\] span or the last number
//     (with its short formula: "2/3", "\frac{2}{5}") is taken, whichever
//     ends later; the verdict's Rule says which rule fired.
//  2. Parsing (lex.go, parse.go). A hand-written lexer and recursive-descent
//     parser read the answer subset of LaTeX and plain text: numbers
//     (thousands separators ",", "{,}", ",\!", thin spaces; decimal commas;
//     scientific notation; repeating decimals 0.\overline{3}; mixed numbers
//     2\frac12), \frac/\dfrac/\tfrac with shorthand arguments (\frac12,
//     \sqrt2), \sqrt[n]{}, powers, factorials, \binom, |x|, floor/ceil, trig
//     and log functions, π, e, i, ∞, ±, % and ^\circ, tuples, intervals with
//     their ends, \{sets\}, unions, matrices (pmatrix, bmatrix, array),
//     \sum/\prod, relations and chains, \text{} units and words.
//  3. Equivalence (equal.go, eval.go). Exact rational arithmetic (math/big)
//     where values are rational; complex float64 evaluation otherwise;
//     expressions with variables are evaluated at deterministic
//     pseudo-random points; collections element-wise.
//
// # Limits
//
// Input is capped (12 KiB of completion, 2 KiB of answer, 1024 tokens,
// nesting depth 64), exact numbers at 32768 bits, exponents at 16384,
// factorials at 3000, sums at 2000 terms, and a comparison at 400,000
// node evaluations. When a cap is hit the verdict is Unparseable (or the
// exact path falls back to floating point) with a reason; nothing hangs.
//
// # Decisions
//
// Each rule below is a documented choice. Where peer graders disagree (the
// "policy" cases of shared/verifier-cases), the choice and the reason are
// given; "MV" is Math-Verify.
//
//   - Numbers. Rational values compare exactly: 1/2004! ≠ 1/2006! (MV's
//     6-decimal rounding calls them equal), 1/5120 ≠ 1/28800 (DeepSeek-Math's
//     absolute 1e-3 calls them equal). A decimal literal against an exact
//     or irrational value is equal within a relative 5e-7 (about seven
//     significant digits): 0.0833333333 = 1/12 and 4.1231056256 = √17, but
//     3.14159 ≠ π and 0.3333 ≠ 1/3 — a rounded answer to an exact question
//     is not accepted (MV, bonsaifold agree; Qwen's rel_tol 1e-4 accepts
//     them). Two decimal literals compare exactly. Options.FloatRounding
//     reproduces MV's float_rounding when a caller asks for it. Values
//     with irrational parts compare at relative 1e-9.
//   - Arithmetic is evaluated: "9+1" equals 10 and an unsimplified but equal
//     expression is correct (bonsaifold's no_arithmetic_evaluation is not
//     followed). Reach grades the value; it cannot know whether the
//     question demanded a simplified form.
//   - Variables are significant: x²+2x+1 ≠ y²+2y+1 (MV strict mode).
//     Expressions with variables are equal when they agree at up to 8
//     pseudo-random points (4 agreeing points needed; points where both
//     sides are undefined are skipped; reals in [0.3, 2.3], or integers
//     when a \sum has a symbolic bound). This is probabilistic identity
//     testing: no false negatives for true identities on positive reals,
//     false positives only for expressions that coincide at all sampled
//     points. Positive sample points mean √(x²) = x; MV (no assumptions)
//     would differ.
//   - Percent: the sign is optional and also a scale. "50%" equals 50 and
//     0.5 (DeepSeek-Math, NeMo, hendrycks); "0.5" without a sign never
//     equals 50 (Qwen's gold×100 leniency is not followed). bonsaifold's
//     percent_not_rescaled (50% ≠ 0.5) is deliberately not followed.
//   - Degrees: "45^\circ" equals 45 and π/4. Units and \text{} words after
//     a value are dropped ("5\text{ cm}" = 5, "17\text{ any text}" = 17);
//     so are ordinals ("12^{\mathrm{th}} grade" = 12).
//   - Lists. A bare list "1, 2, 3" (also "1 and 2", boxes joined on the last
//     line) is the set of its values: order and repeats are ignored, since
//     MATH asks for "all solutions, separated by commas" (hendrycks'
//     order_sensitive_list is not followed). A list against a tuple keeps
//     order: "1,3" = (1,3) ≠ (3,1). Tuples are ordered; intervals keep
//     their open/closed ends: (0,1) ≠ [0,1]; \{sets\} are unordered.
//     "1,22" against a single number reads as the decimal 1.22.
//   - ± is the set of both signs: "\pm 2021" = {2021, -2021} ≠ 2021.
//   - Equations. "x = 3" against "3" compares 3 when the left side is a
//     label: a variable, an indexed name (a_3), a function value (f(x)),
//     a product of letters (AB), |AB|, A:B, or a tuple of names ((p,q)).
//     Chains keep their last member ("x = 5+5+1 = 11" → 11), approximation
//     tails are dropped ("= 1/3 ≈ 0.33"), and text after ⇒ wins. Two
//     labelled equations with the same label compare right-hand sides;
//     otherwise L₁-R₁ must be a constant non-zero multiple of L₂-R₂ (the
//     same line/plane written differently). "7 = 11a+c" ≠ "11a+c". Lists of
//     equations with distinct labels match label by label, in any order.
//   - Inequalities: one-variable inequalities, chains and "x \in S" are the
//     set they describe, so "0 < x < 12.5" = (0, 12.5) in either direction
//     (MV accepts this only when the inequality is the gold, unless
//     allow_set_relation_comp; Reach treats both directions alike). Others
//     compare as f > 0 / f ≥ 0 with f equal up to a positive factor.
//   - Matrices compare element-wise after evaluating sums, scalar
//     multiples and products of matrices; a one-row or one-column matrix
//     equals a tuple of its entries.
//   - Text answers compare case-insensitively without spaces, punctuation
//     and \text{} wrappers ("Evelyn" = \text{Evelyn}); text never equals
//     mathematics, and an answer that is text while the reference is math
//     falls back to the numbers in it only through the extraction rules.
//   - Multiple choice: a reference that is an option letter (A–E, or up
//     to J when the problem kind is "choice") grades the letter:
//     "\text{(B)}" = "B", "C. x = 42" = "C".
//   - Extraction differs from MV in two deliberate ways: the last marker in
//     the text wins over an earlier \boxed{} ("Final Answer: 10,455" after
//     \boxed{255}), and inline math broken across lines is still reached by
//     the last-number fallback (MV does not extract "$ \n 9 \n $").
//   - Nothing in a model's answer is executed or evaluated as code.
package math
