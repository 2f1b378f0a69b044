package math

// Hard caps that bound the work of one verdict. Every loop and recursion in
// this package is bounded by one of these, so a verdict never hangs and never
// exhausts the stack, whatever the input.
const (
	// maxCompletionTail is how many bytes at the end of a completion are
	// searched for an answer. Final answers sit at the end; a runaway
	// generation is not searched in full.
	maxCompletionTail = 64 << 10
	// quickWindow is the tail searched first; the full maxCompletionTail is
	// searched only when it holds no explicit answer of its own.
	quickWindow = 12 << 10
	// maxAnswerLen caps an extracted or reference answer, in bytes.
	maxAnswerLen = 2048
	// maxTokens caps the token count of one answer.
	maxTokens = 1024
	// maxDepth caps parser recursion (nesting of brackets and operators).
	maxDepth = 64
	// maxRatBits caps the size of an exact rational (numerator or
	// denominator) produced by arithmetic; beyond it evaluation falls back
	// to floating point.
	maxRatBits = 1 << 15
	// maxExactExponent caps |n| in an exactly evaluated power b^n.
	maxExactExponent = 1 << 14
	// maxFactorial caps n in an exactly evaluated n!.
	maxFactorial = 3000
	// maxSumTerms caps the number of terms a \sum or \prod is expanded to.
	maxSumTerms = 2000
	// maxElems caps the elements of a list, set, tuple or matrix compared
	// element-wise (matching is quadratic).
	maxElems = 128
	// maxVariants caps the sign expansions of \pm and the percent/degree
	// readings tried per answer.
	maxVariants = 16
	// maxBoxes caps how many \boxed{} are joined into one list answer.
	maxBoxes = 16
)

// limitError says that an answer, or the work to compare it, went past one
// of the caps above. The verdict is then Unparseable with this message,
// which names the cap: Reach never grades a truncated or partly read
// answer. (An answer identical to the reference is still correct at any
// length: that comparison is a linear scan of the whole text.)
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

var (
	errAnswerLen    = &limitError{"answer longer than 2048 bytes (limit maxAnswerLen)"}
	errRefLen       = &limitError{"reference longer than 2048 bytes (limit maxAnswerLen)"}
	errTooLong      = &limitError{"answer has more than 1024 tokens (limit maxTokens)"}
	errTooDeep      = &limitError{"answer nested deeper than 64 levels (limit maxDepth)"}
	errTooMany      = &limitError{"more than 128 elements, terms or factors in one place (limit maxElems)"}
	errNumTooBig    = &limitError{"number with more than 32768 bits (limit maxRatBits)"}
	errWindow       = &limitError{"answer may begin before the last 65536 bytes of the completion, the part searched (limit maxCompletionTail)"}
	errBoxes        = &limitError{"more than 16 boxed parts in one answer (limit maxBoxes)"}
	errVariants     = &limitError{"more than 16 sign readings of ± (limit maxVariants)"}
	errValueTooBig  = &limitError{"value too large to evaluate: beyond exact arithmetic (limits maxExactExponent, maxRatBits, maxFactorial) and float64"}
	errSumTooLong   = &limitError{"sum or product with more than 2000 terms (limit maxSumTerms)"}
	errWorkBudget   = &limitError{"comparison needed more than 400000 evaluation steps (limit evalBudget)"}
	errCompareDepth = &limitError{"collections nested deeper than 12 levels (limit maxCompareDepth)"}
)

// maxCompareDepth caps the nesting of collections compared element-wise.
const maxCompareDepth = 12
