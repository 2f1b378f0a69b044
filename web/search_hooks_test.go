package web

// SetCompletionSearchBudget sets the samples a search in completions reads
// without the search index, until the returned function restores it.
func SetCompletionSearchBudget(n int) (restore func()) {
	old := completionSearchBudget
	completionSearchBudget = n
	return func() { completionSearchBudget = old }
}

// SetMaxIndexCandidates sets the most candidates a search may hand the
// search index, until the returned function restores it.
func SetMaxIndexCandidates(n int) (restore func()) {
	old := maxIndexCandidates
	maxIndexCandidates = n
	return func() { maxIndexCandidates = old }
}
