package replay

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
)

// anchorLen is how many bytes of a normalized statement key the anchor map.
// Shorter statements are checked one by one with strings.Contains.
const anchorLen = 24

type problem struct {
	statement string // normalized
	texts     []string
	next      atomic.Uint64 // cursor: index of the next text to hand out, before wrapping
}

// take returns the next n texts in recorded order, wrapping around. Callers
// racing on one problem get disjoint, consecutive runs.
func (p *problem) take(n int) []string {
	start := p.next.Add(uint64(n)) - uint64(n)
	out := make([]string, n)
	for i := range out {
		out[i] = p.texts[(start+uint64(i))%uint64(len(p.texts))]
	}
	return out
}

// index finds which problem a prompt is about: the one whose normalized
// statement is the longest substring of the normalized prompt.
type index struct {
	exact   map[string]*problem   // normalized statement -> problem
	anchors map[string][]*problem // first anchorLen bytes of a statement -> problems
	short   []*problem            // statements shorter than anchorLen

	// Prompts repeat (one per problem and template), so answers are cached,
	// up to a bound that keeps a stream of junk prompts from growing memory.
	mu      sync.RWMutex
	cache   map[string]*problem
	maxSize int
}

func newIndex(samples map[string][]string) *index {
	ix := &index{
		exact:   map[string]*problem{},
		anchors: map[string][]*problem{},
		cache:   map[string]*problem{},
		maxSize: 8*len(samples) + 1024,
	}
	for _, st := range slices.Sorted(maps.Keys(samples)) {
		texts := samples[st]
		n := normalize(st)
		if n == "" || len(texts) == 0 {
			continue
		}
		if p, ok := ix.exact[n]; ok {
			// Statements equal up to whitespace are one problem; their texts
			// follow each other in the sorted order of the raw statements.
			p.texts = append(p.texts, texts...)
			continue
		}
		p := &problem{statement: n, texts: texts}
		ix.exact[n] = p
		if len(n) < anchorLen {
			ix.short = append(ix.short, p)
		} else {
			ix.anchors[n[:anchorLen]] = append(ix.anchors[n[:anchorLen]], p)
		}
	}
	return ix
}

// lookup returns the problem prompt is about, or nil.
func (ix *index) lookup(prompt string) *problem {
	n := normalize(prompt)
	if p, ok := ix.exact[n]; ok {
		return p
	}
	ix.mu.RLock()
	p, ok := ix.cache[n]
	ix.mu.RUnlock()
	if ok {
		return p
	}
	p = ix.scan(n)
	if p != nil {
		ix.mu.Lock()
		if len(ix.cache) < ix.maxSize {
			ix.cache[n] = p
		}
		ix.mu.Unlock()
	}
	return p
}

// scan tries every position of n as the start of a statement: one map probe
// per position, then a prefix check for the few statements sharing the anchor.
func (ix *index) scan(n string) *problem {
	var best *problem
	for i := 0; i+anchorLen <= len(n); i++ {
		for _, p := range ix.anchors[n[i:i+anchorLen]] {
			if (best == nil || len(p.statement) > len(best.statement)) && strings.HasPrefix(n[i:], p.statement) {
				best = p
			}
		}
	}
	for _, p := range ix.short {
		if (best == nil || len(p.statement) > len(best.statement)) && strings.Contains(n, p.statement) {
			best = p
		}
	}
	return best
}

// normalize collapses every run of Unicode white space to one ASCII space and
// trims both ends, so a template's line breaks or a dataset's double spaces
// (GSM8K has them) do not break matching.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
