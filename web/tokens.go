package web

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/tokendiv"
	"github.com/reach-lab/reach/web/views"
)

// Token-level divergence (issue 26): a completion's token view, its
// per-token data for the hover script, a problem's start button and the
// comparison page's aggregates. Scoring itself is jobs.TokenWorker's.

// criticalShown is how many critical positions a token view lists.
const criticalShown = 20

// contextChars is how much text the critical list shows either side.
const contextChars = 60

// tokenView serves GET …/runs/{rid}/problems/{pid}/samples/{idx}/tokens.
func (s *Server) tokenView(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	p, rid, idx, err := s.sampleOf(r, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	pair, err := s.st.TokenPair(r.Context(), rid, p.ID, idx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if pair.Base == nil && pair.RL == nil {
		if err := s.st.SampleExists(r.Context(), rid, p.ID, idx); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	v := buildTokenView(c, p, rid, idx, pair)
	if pair.Base == nil && pair.RL == nil {
		v.Note = "This sample is not scored token by token yet: score the problem's samples from the problem page, or start token scoring in the comparison's Debate section."
	}
	s.render(w, r, http.StatusOK, views.TokenPage(v))
}

// buildTokenView lines up a sample's two token scores (tokendiv.Compare)
// and shapes the view: shaded chunks, critical positions, perplexities.
func buildTokenView(c store.Comparison, p store.Problem, rid int64, idx int, pair store.TokenPair) views.TokenView {
	v := views.TokenView{C: c, P: p, SampleIndex: idx, Threshold: tokendiv.DefaultThreshold,
		ProblemURL: fmt.Sprintf("/comparisons/%d/problems/%d", c.ID, p.ID),
		DataURL:    fmt.Sprintf("/comparisons/%d/runs/%d/problems/%d/samples/%d/tokens.json", c.ID, rid, p.ID, idx)}
	for _, run := range c.Runs {
		if run.ID == rid {
			v.Run = run
		}
	}
	base, rl, note := scoredPair(pair)
	// The scorers' served model names; before scoring, the models' names.
	if len(c.Runs) >= 2 {
		v.BaseModel, v.RLModel = c.Runs[0].ModelName, jobs.TokenRLRun(c).ModelName
	}
	if pair.Base != nil {
		v.BaseModel = pair.Base.Model
	}
	if pair.RL != nil {
		v.RLModel = pair.RL.Model
	}
	v.Note = note
	if note != "" {
		return v
	}
	ps, ok := tokendiv.Compare(base, rl)
	if !ok {
		v.Note = "The two servers split this completion into different tokens: it cannot be compared position by position."
		return v
	}
	v.Compared, v.Tokens = true, len(ps)
	v.PplBase, v.PplRL = tokendiv.Perplexity(base.Logprobs), tokendiv.Perplexity(rl.Logprobs)
	v.Share = tokendiv.Share(ps, v.Threshold)
	v.Chunks = make([]views.TokenChunkView, 0, len(ps)/views.TokenChunk+1)
	for i := 0; i < len(ps); i += views.TokenChunk {
		end := min(i+views.TokenChunk, len(ps))
		chunk := views.TokenChunkView{From: i, Lazy: len(v.Chunks) >= views.EagerChunks}
		var text strings.Builder
		for j := i; j < end; j++ {
			if chunk.Lazy {
				text.WriteString(ps[j].Token)
			} else {
				chunk.Cells = append(chunk.Cells, views.TokenCell{Text: ps[j].Token, Class: views.ShadeClass(ps[j].Delta)})
			}
			if ps[j].HasJS {
				v.HasJS = true
				v.MaxJS = max(v.MaxJS, ps[j].JS)
			}
		}
		chunk.Text = text.String()
		v.Chunks = append(v.Chunks, chunk)
	}
	for _, x := range tokendiv.Critical(ps, criticalShown) {
		if math.Abs(x.Delta) < 1e-6 {
			break // most divergent first: the rest do not diverge at all
		}
		row := views.CriticalRow{Index: x.Index, Token: x.Token, Base: x.Base, RL: x.RL, Diff: x.Delta, JS: "—",
			Before: contextOf(ps, x.Index, -1), After: contextOf(ps, x.Index, 1)}
		if x.HasJS {
			row.JS = fmt.Sprintf("%.3f", x.JS)
		}
		v.Critical = append(v.Critical, row)
	}
	return v
}

// contextOf returns up to contextChars characters of the tokens before
// (dir −1) or after (dir 1) position i.
func contextOf(ps []tokendiv.Position, i, dir int) string {
	var parts []string
	n := 0
	for j := i + dir; j >= 0 && j < len(ps) && n < contextChars; j += dir {
		parts = append(parts, ps[j].Token)
		n += len([]rune(ps[j].Token))
	}
	if dir < 0 {
		for a, b := 0, len(parts)-1; a < b; a, b = a+1, b-1 {
			parts[a], parts[b] = parts[b], parts[a]
		}
	}
	s := []rune(strings.Join(parts, ""))
	if len(s) > contextChars {
		if dir < 0 {
			s = append([]rune("…"), s[len(s)-contextChars:]...)
		} else {
			s = append(s[:contextChars], []rune("…")...)
		}
	}
	return string(s)
}

// scoredPair turns a sample's stored scores into tokendiv's form, or says
// why it cannot be compared.
func scoredPair(pair store.TokenPair) (base, rl tokendiv.Scored, note string) {
	switch {
	case pair.Base != nil && pair.Base.Error != "":
		return base, rl, "Scoring under the base model failed: " + pair.Base.Error
	case pair.RL != nil && pair.RL.Error != "":
		return base, rl, "Scoring under the RL model failed: " + pair.RL.Error
	case pair.Base == nil:
		return base, rl, "Not scored under the base model yet."
	case pair.RL == nil:
		return base, rl, "Not scored under the RL model yet."
	}
	x, y := pair.Base, pair.RL
	return tokendiv.FromArrays(x.Tokens, x.Logprobs, x.TopK, x.TopTokens, x.TopLogprobs),
		tokendiv.FromArrays(y.Tokens, y.Logprobs, y.TopK, y.TopTokens, y.TopLogprobs), ""
}

// tokenDataModel is one model's part of the token JSON: per position its
// log-probability and its top alternatives (texts and log-probabilities,
// most likely first). float32, as stored: shorter JSON.
type tokenDataModel struct {
	Model       string      `json:"model"`
	Logprobs    []float32   `json:"logprobs"`
	TopTokens   [][]string  `json:"top_tokens"`
	TopLogprobs [][]float32 `json:"top_logprobs"`
}

// tokenData is what the hover script reads: per position the token, both
// models' log-probabilities and alternatives, Δ and the JS divergence (null
// without alternatives under both).
type tokenData struct {
	Tokens []string       `json:"tokens"`
	Base   tokenDataModel `json:"base"`
	RL     tokenDataModel `json:"rl"`
	Delta  []float32      `json:"delta"`
	JS     []*float32     `json:"js"`
	Note   string         `json:"note,omitempty"` // why there is nothing to show
}

// tokenJSON serves GET …/samples/{idx}/tokens.json.
func (s *Server) tokenJSON(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	p, rid, idx, err := s.sampleOf(r, c)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	pair, err := s.st.TokenPair(r.Context(), rid, p.ID, idx)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	base, rl, note := scoredPair(pair)
	ps, ok := tokendiv.Compare(base, rl)
	if note == "" && !ok {
		note = "the two servers split this completion into different tokens"
	}
	if note != "" {
		writeJSON(w, http.StatusOK, tokenData{Note: note, Tokens: []string{}})
		return
	}
	d := tokenData{Tokens: base.Tokens, Base: modelData(pair.Base.Model, base), RL: modelData(pair.RL.Model, rl),
		Delta: make([]float32, len(ps)), JS: make([]*float32, len(ps))}
	for i, x := range ps {
		d.Delta[i] = float32(x.Delta)
		if x.HasJS {
			js := float32(x.JS)
			d.JS[i] = &js
		}
	}
	// Compact, not writeJSON's indented form: a 32k-token completion's
	// data is megabytes.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "private, max-age=60")
	if err := json.NewEncoder(w).Encode(d); err != nil {
		slog.Debug("write token data", "err", err)
	}
}

func modelData(model string, s tokendiv.Scored) tokenDataModel {
	m := tokenDataModel{Model: model, Logprobs: make([]float32, len(s.Logprobs)),
		TopTokens: make([][]string, len(s.Tokens)), TopLogprobs: make([][]float32, len(s.Tokens))}
	for i, v := range s.Logprobs {
		m.Logprobs[i] = float32(v)
	}
	for i := range s.Tokens {
		m.TopTokens[i], m.TopLogprobs[i] = []string{}, []float32{}
		if i < len(s.Top) {
			for _, a := range s.Top[i] {
				if !math.IsInf(a.Logprob, 0) && !math.IsNaN(a.Logprob) {
					m.TopTokens[i] = append(m.TopTokens[i], a.Token)
					m.TopLogprobs[i] = append(m.TopLogprobs[i], float32(a.Logprob))
				}
			}
		}
	}
	return m
}

// problemTokens serves POST /comparisons/{id}/problems/{pid}/tokens: score
// this problem's samples token by token (both models' first max_per_problem).
func (s *Server) problemTokens(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	p, err := s.problemOf(r, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	_, err = jobs.StartTokens(r.Context(), s.jobs, s.st, c.ID, p.ID)
	if errors.Is(err, jobs.ErrWrongState) || errors.Is(err, store.ErrNotFound) {
		msg := err.Error()
		if errors.Is(err, store.ErrNotFound) {
			msg = "Set up the RL model's scoring endpoint in the comparison's Debate section first."
		}
		s.render(w, r, http.StatusConflict, views.ErrorPage(409, "Cannot score this problem's tokens", msg))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/comparisons/%d/problems/%d#tokens", c.ID, p.ID), http.StatusSeeOther)
}

// maxAggregateSamples caps the samples the comparison page's aggregates read.
const maxAggregateSamples = views.MaxAggregateSamples

// tokenAggregates serves GET /comparisons/{id}/tokens: the comparison
// page's token-divergence section (loaded after the page).
func (s *Server) tokenAggregates(w http.ResponseWriter, r *http.Request) {
	c, ok := s.comparisonParam(w, r)
	if !ok {
		return
	}
	pairs, err := s.st.TokenPairs(r.Context(), c.ID, 0, false, maxAggregateSamples)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.TokenAggregates(aggregateView(c, pairs)))
}

// aggregateView sums up the compared samples (tokendiv.Summarize): the
// most divergent 5 positions of each sample feed the critical-token counts.
func aggregateView(c store.Comparison, pairs []store.TokenPair) views.TokenAggregateView {
	v := views.TokenAggregateView{C: c, Capped: len(pairs) >= maxAggregateSamples}
	if len(c.Runs) >= 2 {
		v.BaseModel, v.RLModel = c.Runs[0].ModelName, jobs.TokenRLRun(c).ModelName
	}
	var samples []tokendiv.Sample
	for _, p := range pairs {
		base, rl, note := scoredPair(p)
		if note != "" {
			v.Skipped++
			continue
		}
		ps, ok := tokendiv.Compare(base, rl)
		if !ok {
			v.Skipped++
			continue
		}
		samples = append(samples, tokendiv.Sample{Correct: p.Correct, Positions: ps})
	}
	v.A = tokendiv.Summarize(samples, tokendiv.DefaultThreshold, 5, 20)
	return v
}

// tokensCSV serves /comparisons/{id}/data/tokens.csv: one row per token
// position of every sample scored under both models (the first
// maxAggregateSamples samples): model, problem, sample, whether it is
// correct, position, token, both log-probabilities, Δ and the JS
// divergence (empty without alternatives). Token texts that a spreadsheet
// would run as formulas are quoted (csvCell).
func (s *Server) tokensCSV(w http.ResponseWriter, r *http.Request, id int64) error {
	ctx := r.Context()
	c, err := s.st.GetComparison(ctx, id)
	if err != nil {
		return err
	}
	pairs, err := s.st.TokenPairs(ctx, id, 0, true, maxAggregateSamples)
	if err != nil {
		return err
	}
	if len(pairs) == 0 {
		return fmt.Errorf("no sample of comparison %d is scored token by token: %w", id, store.ErrNotFound)
	}
	keys := map[int64]string{}
	if c.DatasetID != nil {
		ps, err := s.st.Problems(ctx, *c.DatasetID, false)
		if err != nil {
			return err
		}
		for _, p := range ps {
			keys[p.ID] = p.Key
		}
	}
	names := map[int64]string{}
	for _, run := range c.Runs {
		names[run.ID] = run.ModelName
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="tokens-%d.csv"`, id))
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"model", "problem", "sample_index", "correct", "position", "token", "logprob_base", "logprob_rl", "delta", "js_bits"})
	for _, p := range pairs {
		base, rl, note := scoredPair(p)
		if note != "" {
			continue
		}
		ps, ok := tokendiv.Compare(base, rl)
		if !ok {
			continue
		}
		for _, x := range ps {
			js := ""
			if x.HasJS {
				js = strconv.FormatFloat(x.JS, 'g', 6, 64)
			}
			if err := cw.Write([]string{csvCell(names[p.RunID]), csvCell(keys[p.ProblemID]), strconv.Itoa(p.SampleIndex),
				strconv.FormatBool(p.Correct), strconv.Itoa(x.Index), csvCell(x.Token), strconv.FormatFloat(x.Base, 'g', 6, 64),
				strconv.FormatFloat(x.RL, 'g', 6, 64), strconv.FormatFloat(x.Delta, 'g', 6, 64), js}); err != nil {
				return nil // the client went away: nothing to answer
			}
		}
	}
	cw.Flush()
	return nil
}
