package math

// Hard caps that bound the work of one verdict. Every loop and recursion in
// this package is bounded by one of these, so a verdict never hangs and never
// exhausts the stack, whatever the input.
const (
	// maxCompletionTail is how many bytes at the end of a completion are
	// searched for an answer. Final answers sit at the end; a runaway
	// generation is not searched in full.
	maxCompletionTail = 12 << 10
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
