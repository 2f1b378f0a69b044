package analysis

import (
	"encoding/json"
	"fmt"
	"iter"

	"github.com/go-json-experiment/json/jsontext"
)

// ProblemCounts is one model's counts on every problem of a report, in the
// problem table's order: the JSON array `[{"problem_id", "n", "c"}, …]` of
// models[].counts. A computed or stored report reads them from its problem
// table (Report.Rows) rather than keeping a second copy: at a million
// problems that copy was 140 MB per report (issue 30). A report decoded
// from its JSON (an API client's) keeps its own.
type ProblemCounts struct {
	rows  []ProblemRow // the report's table, with this model's counts at index model
	model int
	own   []ProblemCount
}

// countsOf returns model m's counts read from rows.
func countsOf(rows []ProblemRow, m int) ProblemCounts {
	return ProblemCounts{rows: rows, model: m}
}

// CountsFrom returns counts that hold their own list (tests and clients).
func CountsFrom(cs []ProblemCount) ProblemCounts { return ProblemCounts{own: cs} }

// Len returns the number of problems.
func (p ProblemCounts) Len() int {
	if p.rows != nil {
		return len(p.rows)
	}
	return len(p.own)
}

// At returns the counts on problem i, 0 ≤ i < Len().
func (p ProblemCounts) At(i int) ProblemCount {
	if p.rows != nil {
		r := &p.rows[i]
		c := r.Counts[p.model]
		return ProblemCount{ProblemID: r.Key, N: c.N, C: c.C}
	}
	return p.own[i]
}

// All yields every problem's index and counts, in order.
func (p ProblemCounts) All() iter.Seq2[int, ProblemCount] {
	return func(yield func(int, ProblemCount) bool) {
		for i := range p.Len() {
			if !yield(i, p.At(i)) {
				return
			}
		}
	}
}

// Slice returns a copy of every problem's counts (allocates Len() entries).
func (p ProblemCounts) Slice() []ProblemCount {
	out := make([]ProblemCount, p.Len())
	for i := range out {
		out[i] = p.At(i)
	}
	return out
}

// MarshalJSONTo writes the array one problem at a time (go-json-experiment:
// the streamed report JSON never holds the list).
func (p ProblemCounts) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginArray); err != nil {
		return err
	}
	for i := range p.Len() {
		c := p.At(i)
		for _, t := range [...]jsontext.Token{jsontext.BeginObject, jsontext.String("problem_id"), jsontext.String(c.ProblemID),
			jsontext.String("n"), jsontext.Int(int64(c.N)), jsontext.String("c"), jsontext.Int(int64(c.C)), jsontext.EndObject} {
			if err := enc.WriteToken(t); err != nil {
				return err
			}
		}
	}
	return enc.WriteToken(jsontext.EndArray)
}

// MarshalJSON is for encoding/json (small reports, tests).
func (p ProblemCounts) MarshalJSON() ([]byte, error) { return json.Marshal(p.Slice()) }

// UnmarshalJSON reads the array (null reads as no problems).
func (p *ProblemCounts) UnmarshalJSON(b []byte) error {
	var cs []ProblemCount
	if err := json.Unmarshal(b, &cs); err != nil {
		return fmt.Errorf("counts: %w", err)
	}
	*p = ProblemCounts{own: cs}
	return nil
}

// linkCounts points every model's counts at the report's problem table.
func (rep *Report) linkCounts() {
	for i := range rep.Models {
		rep.Models[i].Counts = countsOf(rep.Rows, i)
	}
}
