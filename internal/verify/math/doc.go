// Package math is Reach's math answer verifier ("reach-math/1"): it finds
// the final answer in a model completion, parses it and the reference into
// expression trees, and decides equivalence. Pure Go, no regular
// expressions in the hot path, no symbolic algebra system, no I/O; safe for
// concurrent use. About 37,000 MATH500 completions per CPU-second on one
// core, slowest completion under 2 ms of CPU (BenchmarkVerifyMATH500).
//
// # Pipeline
//
//  1. Extraction (extract.go). The completion is cut at a hallucinated next
//     turn (<|im_start|>, "\n\nProblem:", ...); the answer part after
//     </think> is preferred. Explicit markers are: <answer> tags, the last
//     \boxed{}/\fbox{} (balanced, nested), "final answer is"/"the answer
//     is"/"Answer:" in any case and with markdown bold ("ANSWER: 5", as
//     lighteval's and Inspect's prompts ask; "**Answer:** 5") and their
//     equivalents in other languages, GSM8K "#### 42", and a last line
//     "A: 42". The marker that occurs last in the
//     text wins (a "Final Answer: 12" after an earlier \boxed{11} is 12);
//     earlier markers are fallbacks when its answer cannot be read. Without
//     a marker, the last $...$/\(...\)/\[...\] span or the last number
//     (with its short formula: "2/3", "\frac{2}{5}", "3 1/4") is taken,
//     whichever ends later; the verdict's Rule says which rule fired, and
//     those two rules are verify.FallbackRules.
//  2. Parsing (lex.go, parse.go). A hand-written lexer and recursive-descent
//     parser read the answer subset of LaTeX and plain text (numbers in the
//     formats below, \frac/\dfrac/\tfrac/\over with shorthand arguments,
//     \sqrt[n]{}, powers, factorials, \binom, |x|, floor/ceil, trig, inverse
//     trig and hyperbolic functions, logs, gcd/lcm/max/min, \bmod, π, e, i,
//     ∞, ±, % and ^\circ, tuples, intervals, \{sets\}, unions, matrices and
//     their sums, products, powers, inverses, transposes and determinants,
//     \sum/\prod, relations and chains, \text{} units and words).
//  3. Equivalence (equal.go, eval.go). Exact rational arithmetic (math/big)
//     where values are rational; complex float64 evaluation otherwise;
//     expressions with variables are evaluated at deterministic
//     pseudo-random points; collections element-wise.
//
// # Limits: no verdict past a cap
//
// Every loop and recursion is bounded (limits.go): the last 64 KiB of a
// completion are searched (the last 12 KiB first), an answer has at most
// 2048 bytes and 1024 tokens and 64 levels of nesting, a collection 128
// elements, an exact number 32768 bits, an exact power exponent 16384, a
// factorial 3000, a sum 2000 terms, ± 16 sign readings, a joined answer 16
// boxes, a comparison 400,000 evaluation steps. An answer past a cap is
// Unparseable with a reason that names the cap ("answer longer than 2048
// bytes (limit maxAnswerLen)"): never a verdict on a prefix. Before issue 16
// answers were compared on their first 2048 bytes, so a 2,049-digit N was
// "identical" to N+1. An answer identical to the reference is still correct
// at any length (a linear scan of both texts). An answer that may begin
// before the searched window (a \boxed{ or $ still open at the cut, a
// brace group the cut opened, a final-answer sentence running over it) is
// Unparseable, as is a comparison that needed a value beyond exact
// arithmetic and float64. Tests: TestNoVerdictOnTruncatedAnswers,
// FuzzLimits.
//
// # Decisions
//
// Each rule below is a documented choice, with its reason and its test.
// Where peer graders disagree, the choice is said; "MV" is Math-Verify.
//
//   - Arithmetic is evaluated. "9+1" equals 10, an unsimplified but equal
//     expression is correct, and so is a restatement of a "Simplify ..."
//     problem that has the same value. Reason: Reach sees the reference,
//     not the question; it grades values (bonsaifold's
//     no_arithmetic_evaluation is not followed). Tests: TestDecisions,
//     TestPropertyPolynomials.
//   - Exact numbers. Rational values compare exactly: 1/2004! ≠ 1/2006!
//     (MV's 6-decimal rounding calls them equal), 1/5120 ≠ 1/28800
//     (DeepSeek-Math's absolute 1e-3 calls them equal). Two decimal
//     literals compare exactly (16386.17 ≠ 16386.169). Values with
//     irrational parts compare at relative 1e-9. Test: TestDecisions.
//   - Decimals for exact values. A bare decimal stands for an exact
//     rational or irrational value when it shows at least seven significant
//     digits and agrees within a relative 5e-7: 0.0833333333 = 1/12,
//     4.1231056 = √17, but 3.14159 ≠ π, 0.3333 ≠ 1/3 and 43.5890 ≠ 10√19
//     (six digits, even though within 5e-7). Reason: a rounded answer to an
//     exact question is not the answer (MV and bonsaifold agree; Qwen's
//     rel_tol 1e-4 accepts them). Options.FloatRounding reproduces MV's
//     float_rounding on request. Tests: TestPropertyFractions,
//     TestPropertyRadicals, TestDecisions.
//   - Approximations. "√2/2 ≈ 0.707" is an exact value followed by its
//     approximation: the answer is the exact value, or the approximation it
//     states. A value marked approximate ("t ≈ 4.5", "≈ 2.23",
//     "approximately 1.732") equals the reference when it is the
//     reference's value exactly, or when it shows at least three
//     significant digits and is the reference rounded to the decimals shown
//     (7/π ≈ 2.23, √3 ≈ 1.732; t ≈ 4.5 is not 4.47). A boxed
//     approximation after an exact box ("\boxed{\sqrt3} ≈ \boxed{1.732}",
//     "\boxed{\approx 1.732}") walks back to the exact box (MathArena).
//     Reason: the ≈ sign says the digits are rounded; the rounding is then
//     checked, not trusted. Test: TestKindApproximation.
//   - Percent. The sign is optional and also a scale: "50%" equals 50 and
//     0.5 (DeepSeek-Math, NeMo, hendrycks); "0.5" without a sign never
//     equals 50 (Qwen's gold×100 leniency is not followed; bonsaifold's
//     percent_not_rescaled is not followed). A percent sign after a mixed
//     number applies to all of it. Tests: TestDecisions,
//     TestKindUnitsPercentDegrees.
//   - Degrees and units. "45^\circ" equals 45 and π/4; inside an expression
//     ("180^\circ - 2\alpha") degrees are read both as numbers of degrees
//     and as radians. Units and \text{} words after a value are dropped
//     ("5\text{ cm}" = 5, "125 miles" = 125); so are ordinals ("12^{th}").
//     Reason: references carry units inconsistently; the number is the
//     answer (simple-evals gives units the benefit of the doubt). Test:
//     TestKindUnitsPercentDegrees.
//   - Logarithms. \log without a base is log base 10 (the convention of
//     the competition problems in MATH); \ln is natural; \log_b is base b.
//     SymPy reads \log as ln, latex2sympy as log10: corpus rows that depend
//     on it were left out. Test: TestKindUnitsPercentDegrees.
//   - Variables are significant: x²+2x+1 ≠ y²+2y+1 (MV strict mode).
//     Expressions with variables are equal when they agree at up to 8
//     pseudo-random points (4 agreeing points needed; points where both
//     sides are undefined are skipped; reals in [0.3, 2.3], or integers
//     when a \sum has a symbolic bound). Positive sample points mean
//     √(x²) = x and √(1/n) = 1/√n; MV (no assumptions) differs. Tests:
//     TestDecisions, TestPropertyTwoVariables.
//   - Order of lists. A bare list "1, 2, 3" (also "1 and 2", boxes joined
//     on the last line) is the set of its values: order and repeats are
//     ignored, since MATH asks for "all solutions, separated by commas"
//     (hendrycks' order-sensitive string match is not followed). A list
//     against a tuple keeps order: "1,3" = (1,3) ≠ (3,1). Tuples are
//     ordered; intervals keep their open/closed ends: (0,1) ≠ [0,1];
//     \{sets\} are unordered; "1, 2, 3, ..." is not "1, 2, 3". ± is the set
//     of both signs: "\pm 2021" = {2021, -2021} ≠ 2021. Test: TestDecisions.
//   - Number formats, decided by context. A comma followed by exactly three
//     digits groups thousands after a first group of one to three digits
//     other than a lone 0 ("7,425,000", "1,234" = 1234); "0,125" is a
//     decimal comma. A comma followed by other digit counts ("1,5", "12,5")
//     is a decimal comma when the reference is one number and separates
//     items when the reference is a list. Dots grouping threes before a
//     final comma are European ("1.234,5" = 1234.5), so are two or more
//     dot groups ("1.234.567"); "1.234" alone is a decimal. Spaces group
//     thousands ("1 000"), and a comma after them is decimal ("1 000,5").
//     {,} and ,\! are LaTeX thousands separators. Inside the parentheses
//     of gcd, lcm, max and min commas separate arguments ("\gcd(830,450)").
//     Plain-text mixed numbers are sums: "3 1/4" = 13/4, "-4 4/9" = -40/9;
//     the fraction must be proper and on the same line, and "(11) 4/9" or
//     "11.0 4/9" are not mixed numbers (MV's tests). Tests:
//     TestKindNumberFormats, TestKindMixedNumbers, TestPropertyFractions.
//   - Equations. "x = 3" against "3" compares 3 when the left side is a
//     label: a variable, an indexed name (a_3), a function value (f(x)), a
//     product of letters (AB), a ratio or fraction of labels (AE/EC,
//     \frac{NO}{BO}), |AB|, A:B, or a tuple of names ((p,q)). Chains keep
//     their last member ("x = 5+5+1 = 11" → 11), approximation tails are
//     dropped, and text after ⇒ wins. Two labelled equations with the same
//     label compare right-hand sides; otherwise L₁-R₁ must be a constant
//     non-zero multiple of L₂-R₂ (the same line or plane written
//     differently). "7 = 11a+c" ≠ "11a+c". Tests: TestDecisions,
//     TestKindNamedLeftSides, TestPropertyTwoVariables.
//   - Inequalities and sets. A one-variable inequality, chain or "x ∈ S"
//     is the set it describes, in either direction: "0 < x < 12.5" =
//     (0, 12.5) (MV accepts this only when the inequality is the gold,
//     unless allow_set_relation_comp). The bounded quantity may be any
//     label ("-1 ≤ g(t) ≤ 2" = [-1, 2], "0 < f(x) < 1" = (0,1)); |w| of a
//     real variable describes w ("2 ≤ |w| ≤ 3" = [-3,-2] ∪ [2,3]). Prose
//     before a relation is dropped ("Therefore y > -2"). Other inequalities
//     compare as f > 0 / f ≥ 0 with f equal up to a positive factor.
//     Tests: TestKindNamedLeftSides, TestKindSolutionSets.
//   - Solution sets. Assignments list solutions: "a=1, b=3" is the tuple
//     (1,3) and "a=1,b=3; a=2,b=5" (also with "or") the set
//     {(1,3),(2,5)}; values are ordered by label (x before y, a_2 before
//     a_10), not as written. Test: TestKindSolutionSets.
//   - Several boxes. In a completion the last box is the answer, or the
//     boxes on its last line joined by punctuation and "and"/"or". A
//     reference's answer is everything it boxed when only punctuation and
//     connectives (and, or, but, thus, so, then) stand between its boxes
//     ("\boxed{1}\boxed{2}" = {1,2}); with other words between them, its
//     last box (MV). Test: TestKindSeveralBoxesInReference.
//   - Matrices compare element-wise after evaluating sums, scalar
//     multiples, quotients by a scalar, products, integer powers, inverses
//     (^{-1}), transposes (^T) and determinants (\det, vmatrix, |A|); a
//     one-row or one-column matrix equals a tuple of its entries. Test:
//     TestDecisions and the corpus kind latex_matrix.
//   - Text answers compare case-insensitively without spaces, punctuation
//     and \text{} wrappers ("Evelyn" = \text{Evelyn}); text never equals
//     mathematics. Test: TestKindUnitsPercentDegrees.
//   - Multiple choice: a reference that is an option letter (A–E, or up to
//     J when the problem kind is "choice") grades the letter: "\text{(B)}" =
//     "B", "C. x = 42" = "C"; in a completion the boxed letter, the letter
//     after a final-answer marker (in any language), or the last standalone
//     letter. Tests: TestDecisions, TestKindAnswerMarkers.
//   - Languages. Final-answer markers in Chinese, Japanese, Korean, French,
//     Spanish, Portuguese, Italian, German, Dutch, Russian, Ukrainian,
//     Polish, Czech, Turkish, Arabic, Hindi, Bengali, Thai, Vietnamese and
//     Indonesian ("答案是", "Antwort:", "Ответ:", "la respuesta es") mark an
//     answer as final exactly as "Answer:" does: rule final-answer-is, not
//     a fallback rule. A sentence after a marker gives the value after its
//     last " is ", else its first math span, else its first number: the
//     marker introduces the answer ("Réponse : Janeth aura encore 220 $ à
//     payer d'ici 12 mois" is 220). Test: TestKindAnswerMarkers.
//   - Extraction differs from MV in two deliberate ways: the last marker in
//     the text wins over an earlier \boxed{} ("Final Answer: 10,455" after
//     \boxed{255}), and inline math broken across lines is still reached by
//     the last-number fallback (MV does not extract "$ \n 9 \n $"). Test:
//     TestExtractionRules.
//   - Nothing in a model's answer is executed or evaluated as code.
//
// Agreement is measured on verifier-cases (internal/testfiles) (TestEquivalenceCases),
// on the labelled real completions (TestRealCompletionsAgreeWithLabels; the
// fixture lists every disagreement and whether the file's label is wrong),
// and on an independent corpus of graders' own tests (TestCorpusDev, and
// TestCorpusHoldout for the held-aside 30 %, which prints totals only and
// is skipped while tuning with REACH_TUNING=1).
package math
