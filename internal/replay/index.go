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
	finish    []string      // finish_reason of texts[i] as recorded; "" (or a short slice) means "stop"
	next      atomic.Uint64 // cursor: index of the next text to hand out, before wrapping
}

// take returns the next n recorded indexes in order, wrapping around.
// Callers racing on one problem get disjoint, consecutive runs.
func (p *problem) take(n int) []int {
	start := p.next.Add(uint64(n)) - uint64(n)
	out := make([]int, n)
	for i := range out {
		out[i] = int((start + uint64(i)) % uint64(len(p.texts)))
	}
	return out
}

// takeSeeded returns n recorded indexes picked by SeededPick for a request
// with seed: choice j is SeededPick(seed, j, len(texts)). The cursor does
// not move, so the same seed always gets the same texts, as from a seeded
// model server.
func (p *problem) takeSeeded(seed int64, n int) []int {
	out := make([]int, n)
	for j := range out {
		out[j] = SeededPick(seed, j, len(p.texts))
	}
	return out
}

// finishReason is the recorded finish_reason of text i: "stop" when none
// was recorded.
func (p *problem) finishReason(i int) string {
	if i < len(p.finish) && p.finish[i] != "" {
		return p.finish[i]
	}
	return "stop"
}

// SeededPick is which of pool recorded completions the replay server hands
// out as choice j of a request with seed: splitmix64(seed + j) mod pool.
// It mirrors vLLM, where choice j of a seeded request is sampled with seed
// seed + j: the same seed gives the same text, different seeds give
// independent picks (so two seeds can, by chance, pick the same text, as
// two seeds of a real model can give the same text). pool must be >= 1.
func SeededPick(seed int64, j, pool int) int {
	z := uint64(seed) + uint64(j) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return int(z % uint64(pool))
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

// newIndex indexes samples (statement -> texts); finish, which may be nil,
// gives the texts' recorded finish reasons under the same statements.
func newIndex(samples, finish map[string][]string) *index {
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
		fin := make([]string, len(texts))
		copy(fin, finish[st])
		if p, ok := ix.exact[n]; ok {
			// Statements equal up to whitespace are one problem; their texts
			// follow each other in the sorted order of the raw statements.
			p.texts = append(p.texts, texts...)
			p.finish = append(p.finish, fin...)
			continue
		}
		p := &problem{statement: n, texts: texts, finish: fin}
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
