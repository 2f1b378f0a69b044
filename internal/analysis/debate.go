package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
)

// The rest of the debate after Yue et al.'s crossover (issue 15), as three
// parts of the report:
//
//   - CoT-pass@k (Wen et al. 2025, arXiv 2506.14245): pass@k counting only
//     the samples whose answer and chain of thought are both correct, from a
//     judge model's verdicts and people's labels (CoT, AttachDebate).
//   - Perplexity of completions under the base model (Yue et al. 2025,
//     arXiv 2504.13837, Fig. 6), per source model, correct and incorrect
//     apart (Perplexity, AttachDebate).
//   - Answer diversity and empirical support (Wu et al. 2025, "The Invisible
//     Leash", arXiv 2507.14843): distinct final answers and their entropy per
//     problem (Diversity, from the statistics job) and the support the other
//     model preserves, loses or adds at a threshold ε (Support, from counts).

// Statuses of the debate figures.
const (
	DebateNone        = "none"        // not set up (no judge, no scoring endpoint)
	DebatePartial     = "partial"     // some samples not judged or scored yet: read the note
	DebateComplete    = "complete"    // every sample of the window judged or scored
	DebateComputing   = "computing"   // diversity: the statistics job has not run on these counts
	DebateUnavailable = "unavailable" // no model has completion texts
)

// CoTDraws is the number of bootstrap draws of the CoT-pass@k bands.
const CoTDraws = 1000

// CoTReport is CoT-pass@k next to pass@k on the same problems and samples.
type CoTReport struct {
	Status string `json:"status"`
	// Judge is the judge model's name as its endpoint serves it.
	Judge string `json:"judge_model,omitempty"`
	// Window is how many samples per problem and model are judged (the first
	// by sample index); 0 means all.
	Window int `json:"window"`
	// Problems enter the curves when every model's answer-correct samples in
	// the window all have a verdict or a label; LeftOut counts the others.
	Problems   int      `json:"problems"`
	LeftOut    int      `json:"problems_left_out"`
	LeftOutIDs []string `json:"problems_left_out_ids"`
	// KMax is the smallest number of window samples over the entering
	// problems and models: the curves' largest k.
	KMax   int        `json:"k_max"`
	Models []CoTModel `json:"models"`
	Pairs  []CoTPair  `json:"pairs"`
	// Draws and Seed of the bootstrap bands (paired over problems).
	Draws int    `json:"bootstrap_draws,omitempty"`
	Seed  uint64 `json:"bootstrap_seed,omitempty"`
	// Agreement compares the judge with people's labels on the samples both
	// graded; nil without labels.
	Agreement *JudgeAgreement `json:"judge_human_agreement,omitempty"`
	Note      string          `json:"note,omitempty"`
}

// CoTModel is one model's CoT-pass@k. Counts are samples over the entering
// problems (Pending and Errors over all problems).
type CoTModel struct {
	Name    string `json:"name"`
	Samples int    `json:"samples"` // samples in the window
	Correct int    `json:"answer_correct"`
	Valid   int    `json:"valid"`  // answer-correct with valid reasoning (label, else judge)
	Flawed  int    `json:"flawed"` // answer-correct with flawed reasoning
	Unsure  int    `json:"unsure"` // the judge could not tell; counted as not valid
	Human   int    `json:"human_labels"`
	Pending int    `json:"pending"` // answer-correct, neither judged nor labelled (all problems)
	Errors  int    `json:"judge_errors"`
	// PassAtK is answer-only pass@k on the same problems and window;
	// CoTPassAtK counts only valid samples; CoTPassAtKCI its 95% band.
	PassAtK      []Point `json:"pass_at_k"`
	CoTPassAtK   []Point `json:"cot_pass_at_k"`
	CoTPassAtKCI []Band  `json:"cot_pass_at_k_ci,omitempty"`
}

// CoTPair is the crossover of a pair under CoT-pass@k, and under answer-only
// pass@k on the same problems and window.
type CoTPair struct {
	Base          string       `json:"base"`
	Other         string       `json:"other"`
	Crossover     Crossover    `json:"crossover"`
	CrossoverCI   *CrossoverCI `json:"crossover_ci,omitempty"`
	PassCrossover Crossover    `json:"pass_crossover"`
}

// JudgeAgreement is the judge's verdicts against people's labels on the
// samples with both. Table[judge][human]: judge valid/flawed/unsure by
// human valid/flawed. Kappa is Cohen's kappa over the samples the judge
// called valid or flawed (nil when it is undefined).
type JudgeAgreement struct {
	Samples int       `json:"samples"`
	Agree   int       `json:"agree"`
	Table   [3][2]int `json:"table"`
	Kappa   *float64  `json:"cohen_kappa"`
}

// PerplexityReport is the perplexity under the base model (the scoring
// endpoint's model) of each model's completions.
type PerplexityReport struct {
	Status     string            `json:"status"`
	Scorer     string            `json:"scorer_model,omitempty"`
	Method     string            `json:"method,omitempty"` // echo | prompt_logprobs
	MethodNote string            `json:"method_note,omitempty"`
	Window     int               `json:"window"`
	Models     []PerplexityModel `json:"models"`
	Note       string            `json:"note,omitempty"`
}

// anyScored reports whether some model has a scored sample (a figure).
func (p *PerplexityReport) anyScored() bool {
	for _, m := range p.Models {
		if m.Correct != nil || m.Incorrect != nil {
			return true
		}
	}
	return false
}

// PerplexityModel is one model's completions' perplexities, correct and
// incorrect apart (nil when there are none), over the report's problems.
type PerplexityModel struct {
	Name      string           `json:"name"`
	Role      string           `json:"role"`
	Correct   *PerplexityStats `json:"correct"`
	Incorrect *PerplexityStats `json:"incorrect"`
	Failed    int              `json:"failed"` // samples whose scoring failed
}

// PerplexityStats is a five-number summary (type-7 quartiles) and mean.
type PerplexityStats struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Q1     float64 `json:"q1"`
	Median float64 `json:"median"`
	Q3     float64 `json:"q3"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
}

// SupportReport compares the base model's empirical support with each other
// model's at threshold ε (problem level: a problem is in a model's support
// when c/n ≥ ε and c ≥ 1).
type SupportReport struct {
	Eps   float64       `json:"epsilon"`
	Pairs []SupportPair `json:"pairs"`
}

// SupportPair is one base/other comparison of supports. Retention =
// preserved / base support, Discovery = expanded / other support (null when
// the support is empty). Each shrunk and expanded problem gets Fisher's exact
// test of the two models' counts (with Holm's adjustment over the list): a
// base solve with c = 1 of 128 against 0 of 128 is no evidence of shrinkage.
type SupportPair struct {
	Base                    string        `json:"base"`
	Other                   string        `json:"other"`
	Preserved               int           `json:"preserved"`
	Shrunk                  int           `json:"shrunk"`
	Expanded                int           `json:"expanded"`
	Outside                 int           `json:"outside"`
	Retention               *float64      `json:"retention"`
	Discovery               *float64      `json:"discovery"`
	ShrunkTests             []ProblemTest `json:"shrunk_tests"`
	ExpandedTests           []ProblemTest `json:"expanded_tests"`
	ShrunkSignificant       int           `json:"shrunk_significant"`
	ShrunkSignificantHolm   int           `json:"shrunk_significant_holm"`
	ExpandedSignificant     int           `json:"expanded_significant"`
	ExpandedSignificantHolm int           `json:"expanded_significant_holm"`
}

// DiversityReport is the answer diversity per problem and model, computed
// by the statistics job from the samples' answers.
type DiversityReport struct {
	Status string `json:"status"`
	// Grouping says how answers were grouped into distinct answers.
	Grouping string            `json:"grouping,omitempty"`
	Models   []*ModelDiversity `json:"models"`
	Pairs    []DiversityPair   `json:"pairs"`
	Note     string            `json:"note,omitempty"`
}

// ModelDiversity is one model's answer diversity; nil in DiversityReport.Models
// for a model without texts.
type ModelDiversity struct {
	Name string `json:"model"`
	// Problems with at least one answer, over which the means are taken.
	Problems      int     `json:"problems"`
	MeanDistinct  float64 `json:"mean_distinct_answers"`
	MeanEntropy   float64 `json:"mean_entropy_bits"`
	MedianEntropy float64 `json:"median_entropy_bits"`
	Samples       int     `json:"samples"`
	NoAnswer      int     `json:"no_answer_samples"`
	// Capped counts the problems where the answer grouping ran out of
	// equivalence checks (answerclass.MaxChecks): the rarer texts were
	// grouped by text only.
	Capped int `json:"problems_over_equivalence_cap"`
	// Programs counts the samples grouped by program text (code
	// completions), which Grouping must then name.
	Programs   int                `json:"program_samples,omitempty"`
	PerProblem []ProblemDiversity `json:"per_problem"`
}

// ProblemDiversity is one model's answers on one problem: Distinct answers
// (after grouping) among Answered samples, and the Shannon entropy of their
// frequencies in bits (0 when all agree; log2 Distinct at most).
type ProblemDiversity struct {
	ProblemID string  `json:"problem_id"`
	Samples   int     `json:"samples"`
	Answered  int     `json:"answered"`
	Distinct  int     `json:"distinct_answers"`
	Entropy   float64 `json:"entropy_bits"`
}

// DiversityPair compares the other model's answer entropy with the base
// model's on the problems both answered: on how many it is lower, equal
// (within 1e-9) or higher, and the mean difference (other − base, bits).
type DiversityPair struct {
	Base     string  `json:"base"`
	Other    string  `json:"other"`
	Problems int     `json:"problems"`
	Lower    int     `json:"lower"`
	Equal    int     `json:"equal"`
	Higher   int     `json:"higher"`
	MeanDiff float64 `json:"mean_entropy_difference_bits"`
}

// supportReport computes the support figures of every pair from the counts.
func supportReport(rep *Report, models [][]passk.Count, kept []store.Problem, guesses []*Guess, eps float64) (*SupportReport, error) {
	out := &SupportReport{Eps: eps, Pairs: []SupportPair{}}
	for i := 1; i < len(models); i++ {
		s, err := passk.Support(models[0], models[i], eps)
		if err != nil {
			return nil, err
		}
		sp := SupportPair{Base: rep.Models[0].Name, Other: rep.Models[i].Name, Preserved: len(s.Preserved), Shrunk: len(s.Shrunk),
			Expanded: len(s.Expanded), Outside: len(s.Outside), Retention: finite(s.Retention), Discovery: finite(s.Discovery)}
		if sp.ShrunkTests, sp.ShrunkSignificant, sp.ShrunkSignificantHolm, err = fisherTests(models[0], models[i], kept, guesses, s.Shrunk); err != nil {
			return nil, err
		}
		if sp.ExpandedTests, sp.ExpandedSignificant, sp.ExpandedSignificantHolm, err = fisherTests(models[0], models[i], kept, guesses, s.Expanded); err != nil {
			return nil, err
		}
		out.Pairs = append(out.Pairs, sp)
	}
	return out, nil
}

// SupportAt computes the support figures at threshold eps in [0, 1] from the
// report's per-problem counts (Report.Support holds them at ε = 0). The
// report is not changed: it may be shared.
func (rep *Report) SupportAt(eps float64) (*SupportReport, error) {
	models := make([][]passk.Count, len(rep.Models))
	kept := make([]store.Problem, len(rep.Rows))
	guesses := make([]*Guess, len(rep.Rows))
	for j, row := range rep.Rows {
		kept[j], guesses[j] = store.Problem{ID: row.ProblemID, Key: row.Key}, row.Guess
		for m := range models {
			models[m] = append(models[m], row.Counts[m])
		}
	}
	return supportReport(rep, models, kept, guesses, eps)
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// AttachDebate adds CoT-pass@k (from the judge's verdicts and people's
// labels) and the perplexities (from the scores) to a report built from c's
// counts. Without a judge or scoring endpoint the parts say so (status
// "none").
func (rep *Report) AttachDebate(ctx context.Context, st *store.Store, c store.Comparison) error {
	defer rep.checkWarnings()
	judge, err := st.GetDebateEndpoint(ctx, c.ID, store.PurposeJudge)
	hasJudge := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	agree, err := st.JudgeHumanAgreement(ctx, c.ID)
	if err != nil {
		return err
	}
	rep.CoT = &CoTReport{Status: DebateNone, Models: []CoTModel{}, Pairs: []CoTPair{}, LeftOutIDs: []string{}}
	if hasJudge || agreementSamples(agree) > 0 || hasLabels(ctx, st, c.ID) {
		counts, err := st.CoTCounts(ctx, c.ID, judge.MaxPerProblem)
		if err != nil {
			return err
		}
		if rep.CoT, err = cotReport(rep, c.Runs, counts, judge.MaxPerProblem); err != nil {
			return err
		}
		if hasJudge {
			rep.CoT.Judge = judge.Endpoint.Model
		}
		rep.CoT.Agreement = agreement(agree)
	}

	scorer, err := st.GetDebateEndpoint(ctx, c.ID, store.PurposeScore)
	if errors.Is(err, store.ErrNotFound) {
		rep.Perplexity = &PerplexityReport{Status: DebateNone, Models: []PerplexityModel{}}
		return nil
	}
	if err != nil {
		return err
	}
	ids := make([]int64, len(rep.Rows))
	for i, r := range rep.Rows {
		ids[i] = r.ProblemID
	}
	groups, err := st.PerplexityGroups(ctx, c.ID, ids)
	if err != nil {
		return err
	}
	open, err := st.OpenScoreWork(ctx, c.ID, scorer.MaxPerProblem)
	if err != nil {
		return err
	}
	rep.Perplexity = perplexityReport(rep, c.Runs, groups, open, scorer)
	return nil
}

// hasLabels: people may label reasoning before any judge is set up.
func hasLabels(ctx context.Context, st *store.Store, id int64) bool {
	ok, err := st.HasSolveLabels(ctx, id)
	return err == nil && ok
}

func agreementSamples(a store.Agreement) int {
	n := 0
	for _, row := range a.Table {
		n += row[0] + row[1]
	}
	return n
}

func agreement(a store.Agreement) *JudgeAgreement {
	n := agreementSamples(a)
	if n == 0 {
		return nil
	}
	out := &JudgeAgreement{Samples: n, Agree: a.Table[0][0] + a.Table[1][1], Table: a.Table}
	k, err := passk.CohenKappa([][]int{{a.Table[0][0], a.Table[0][1]}, {a.Table[1][0], a.Table[1][1]}})
	if err == nil {
		out.Kappa = &k
	}
	return out
}

// cotReport builds CoT-pass@k from per-run, per-problem reasoning counts
// (store.CoTCounts) over the report's problems (rep.Rows) and the models
// with texts (the base model must have them for pairs). Pure.
func cotReport(rep *Report, runs []store.Run, counts map[int64][]store.CoTCount, window int) (*CoTReport, error) {
	out := &CoTReport{Status: DebateComplete, Window: window, Models: []CoTModel{}, Pairs: []CoTPair{}, LeftOutIDs: []string{}}
	type col struct {
		m    int // index into rep.Models
		byID map[int64]store.CoTCount
	}
	var cols []col
	for i, r := range runs {
		if !r.HasTexts || i >= len(rep.Models) {
			continue
		}
		m := map[int64]store.CoTCount{}
		for _, x := range counts[r.ID] {
			m[x.ProblemID] = x
		}
		cols = append(cols, col{i, m})
	}
	if len(cols) == 0 {
		out.Status, out.Note = DebateUnavailable, "no model has completion texts to judge"
		return out, nil
	}
	out.Models = make([]CoTModel, len(cols))
	for j, cl := range cols {
		out.Models[j].Name = rep.Models[cl.m].Name
		for _, x := range cl.byID {
			out.Models[j].Pending += x.Pending
			out.Models[j].Errors += x.Errors
		}
	}
	var entering []int // indices into rep.Rows
	for ri, row := range rep.Rows {
		ok := true
		for _, cl := range cols {
			x, has := cl.byID[row.ProblemID]
			if !has || x.N == 0 || x.Pending > 0 {
				ok = false
				break
			}
		}
		if ok {
			entering = append(entering, ri)
		} else {
			out.LeftOutIDs = append(out.LeftOutIDs, row.Key)
		}
	}
	out.LeftOut, out.Problems = len(out.LeftOutIDs), len(entering)
	if out.LeftOut > 0 {
		out.Status = DebatePartial
	}
	// With no answer-correct sample judged or labelled anywhere, only the
	// problems nothing solved "enter" (trivially): curves over them say
	// nothing about reasoning, so none are drawn.
	judged := false
	for _, cl := range cols {
		for _, x := range cl.byID {
			judged = judged || x.Valid+x.Flawed+x.Unsure+x.Human > 0
		}
	}
	if !judged && out.LeftOut > 0 {
		entering, out.Problems = nil, 0
	}
	if len(entering) == 0 {
		out.Status = DebatePartial
		out.Note = "no problem has every answer-correct sample judged or labelled yet"
		return out, nil
	}
	cot := make([][]passk.Count, len(cols))
	ans := make([][]passk.Count, len(cols))
	kmax := math.MaxInt
	for j, cl := range cols {
		cm := &out.Models[j]
		for _, ri := range entering {
			x := cl.byID[rep.Rows[ri].ProblemID]
			cot[j] = append(cot[j], passk.Count{N: x.N, C: x.Valid})
			ans[j] = append(ans[j], passk.Count{N: x.N, C: x.Correct})
			cm.Samples += x.N
			cm.Correct += x.Correct
			cm.Valid += x.Valid
			cm.Flawed += x.Flawed
			cm.Unsure += x.Unsure
			cm.Human += x.Human
			kmax = min(kmax, x.N)
		}
	}
	out.KMax = kmax
	for j := range cols {
		cv, err := passk.CurveAll(cot[j])
		if err != nil {
			return nil, err
		}
		av, err := passk.CurveAll(ans[j])
		if err != nil {
			return nil, err
		}
		for k := 1; k <= kmax; k++ {
			out.Models[j].CoTPassAtK = append(out.Models[j].CoTPassAtK, Point{K: k, Value: cv[k-1]})
			out.Models[j].PassAtK = append(out.Models[j].PassAtK, Point{K: k, Value: av[k-1]})
		}
	}
	b, err := passk.Bootstrap(cot, passk.BootstrapOptions{Draws: CoTDraws, Seed: DefaultSeed})
	if err != nil {
		return nil, err
	}
	out.Draws, out.Seed = b.Draws, b.Seed
	for j := range cols {
		for i, k := range b.Ks {
			out.Models[j].CoTPassAtKCI = append(out.Models[j].CoTPassAtKCI, Band{K: k, Lo: b.Models[j].Curve[i].Lo, Hi: b.Models[j].Curve[i].Hi})
		}
	}
	if cols[0].m != 0 {
		out.Note = "the base model has no completion texts: no crossover under CoT-pass@k"
		return out, nil
	}
	ks := passk.AllKs(kmax)
	for j := 1; j < len(cols); j++ {
		noun := RoleNoun(rep.Models[cols[j].m].Role)
		bv, ov := values(out.Models[0].CoTPassAtK), values(out.Models[j].CoTPassAtK)
		cr, err := crossoverOf(ks, bv, ov, kmax, noun)
		if err != nil {
			return nil, err
		}
		pc, err := crossoverOf(ks, values(out.Models[0].PassAtK), values(out.Models[j].PassAtK), kmax, noun)
		if err != nil {
			return nil, err
		}
		pair := CoTPair{Base: out.Models[0].Name, Other: out.Models[j].Name, Crossover: cr, PassCrossover: pc}
		for _, pb := range b.Pairs {
			if pb.Other == j {
				pair.CrossoverCI = &CrossoverCI{
					Lo:         CrossoverBound{Found: pb.Crossover.Lo.Found, K: pb.Crossover.Lo.K},
					Hi:         CrossoverBound{Found: pb.Crossover.Hi.Found, K: pb.Crossover.Hi.K},
					FoundShare: pb.Crossover.FoundShare,
				}
			}
		}
		out.Pairs = append(out.Pairs, pair)
	}
	return out, nil
}

func values(ps []Point) []float64 {
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = p.Value
	}
	return out
}

// perplexityReport turns the store's summaries into the report's part.
func perplexityReport(rep *Report, runs []store.Run, groups []store.PerplexityGroup, open []store.OpenWork, e store.DebateEndpoint) *PerplexityReport {
	out := &PerplexityReport{Status: DebateComplete, Scorer: e.Endpoint.Model, Method: e.Method, MethodNote: e.MethodNote,
		Window: e.MaxPerProblem, Models: []PerplexityModel{}}
	left := int64(0)
	for _, w := range open {
		left += w.Samples
	}
	for i, r := range runs {
		if !r.HasTexts || i >= len(rep.Models) {
			continue
		}
		pm := PerplexityModel{Name: rep.Models[i].Name, Role: rep.Models[i].Role}
		for _, g := range groups {
			if g.RunID != r.ID {
				continue
			}
			pm.Failed += g.Failed
			if g.N == 0 {
				continue
			}
			ps := &PerplexityStats{N: g.N, Min: g.Min, Q1: g.Q1, Median: g.Median, Q3: g.Q3, Max: g.Max, Mean: g.Mean}
			if g.Correct {
				pm.Correct = ps
			} else {
				pm.Incorrect = ps
			}
		}
		out.Models = append(out.Models, pm)
	}
	if left > 0 {
		out.Status = DebatePartial
		out.Note = fmt.Sprintf("%d samples of the window are not scored yet: the figures cover the scored ones only", left)
	}
	if e.Status == store.DebateFailed {
		out.Note = joinNote(out.Note, "scoring stopped: "+e.Error)
	}
	return out
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// diversityOf computes one model's answer diversity over rows, its answers
// alone grouped on each problem (the statistics job groups every model's
// together: ComputeStats). Math and multiple-choice answers are grouped as
// maj@k and the problem page group them (answerclass.Group: the correct
// class, then equivalence within answerclass.MaxChecks); code completions,
// which have no final answer, by program text without white space
// (store.Answer.Program), so two programs that behave alike but are written
// differently count twice.
func diversityOf(name string, rows []ProblemRow, byProblem map[int64][]store.Answer, equiv func(a, b string) bool) (*ModelDiversity, error) {
	return diversityFrom(name, rows, byProblem, func(row ProblemRow) answerGroups {
		var g answerGroups
		g.sizes, g.noAnswer, g.capped = answerClasses(byProblem[row.ProblemID], equiv)
		return g
	})
}

// diversityFrom is diversityOf with each problem's answer classes from
// groups (called for the rows with samples only).
func diversityFrom(name string, rows []ProblemRow, byProblem map[int64][]store.Answer, groups func(ProblemRow) answerGroups) (*ModelDiversity, error) {
	md := &ModelDiversity{Name: name, PerProblem: []ProblemDiversity{}}
	var entropies []float64
	for _, row := range rows {
		as := byProblem[row.ProblemID]
		if len(as) == 0 {
			continue
		}
		g := groups(row)
		sizes, noAnswer, capped := g.sizes, g.noAnswer, g.capped
		md.Samples += len(as)
		md.NoAnswer += noAnswer
		for _, a := range as {
			if a.Program != "" {
				md.Programs++
			}
		}
		if capped {
			md.Capped++
		}
		pd := ProblemDiversity{ProblemID: row.Key, Samples: len(as), Answered: len(as) - noAnswer, Distinct: len(sizes)}
		if pd.Answered > 0 {
			h, err := passk.AnswerEntropy(sizes)
			if err != nil {
				return nil, fmt.Errorf("problem %s: %w", row.Key, err)
			}
			pd.Entropy = h
			entropies = append(entropies, h)
			md.MeanDistinct += float64(pd.Distinct)
		}
		md.PerProblem = append(md.PerProblem, pd)
	}
	md.Problems = len(entropies)
	if md.Problems == 0 {
		return md, nil
	}
	md.MeanDistinct /= float64(md.Problems)
	s, err := passk.Summarize(entropies)
	if err != nil {
		return nil, err
	}
	md.MeanEntropy, md.MedianEntropy = s.Mean, s.Median
	return md, nil
}

// diversityPairs compares each other model's per-problem entropy with the
// base model's.
func diversityPairs(ms []*ModelDiversity) []DiversityPair {
	out := []DiversityPair{}
	if len(ms) == 0 || ms[0] == nil {
		return out
	}
	base := map[string]ProblemDiversity{}
	for _, p := range ms[0].PerProblem {
		if p.Answered > 0 {
			base[p.ProblemID] = p
		}
	}
	for _, m := range ms[1:] {
		if m == nil {
			continue
		}
		dp := DiversityPair{Base: ms[0].Name, Other: m.Name}
		var sum float64
		for _, p := range m.PerProblem {
			b, ok := base[p.ProblemID]
			if !ok || p.Answered == 0 {
				continue
			}
			d := p.Entropy - b.Entropy
			dp.Problems++
			sum += d
			switch {
			case d < -1e-9:
				dp.Lower++
			case d > 1e-9:
				dp.Higher++
			default:
				dp.Equal++
			}
		}
		if dp.Problems > 0 {
			dp.MeanDiff = sum / float64(dp.Problems)
		}
		out = append(out, dp)
	}
	return out
}

// diversityGrouping says how diversityOf grouped ms's answers: answers by
// answerGrouping (how maj@k groups them), code completions by program text,
// or both when a comparison has both.
func diversityGrouping(ms []*ModelDiversity, answerGrouping string) string {
	programs, answers := 0, 0
	for _, m := range ms {
		if m != nil {
			programs += m.Programs
			answers += m.Samples - m.Programs
		}
	}
	const byProgram = "code by program text without white space"
	switch {
	case programs == 0:
		return answerGrouping
	case answers == 0:
		return byProgram
	case answerGrouping == "":
		return "final answers by the verifier's equivalence, " + byProgram
	default:
		return "final answers by " + answerGrouping + ", " + byProgram
	}
}

// attachDiversity fills rep.Diversity from the statistics job's results.
func (rep *Report) attachDiversity(ms []*ModelDiversity, grouping string) {
	if len(ms) != len(rep.Models) {
		return
	}
	d := &DiversityReport{Status: DebateComplete, Grouping: diversityGrouping(ms, grouping), Models: ms, Pairs: diversityPairs(ms)}
	any, texts := false, false
	var countsOnly []string
	withTexts := 0
	for i, m := range ms {
		any = any || (m != nil && m.Problems > 0)
		texts = texts || m != nil
		if m == nil {
			countsOnly = append(countsOnly, rep.Models[i].Name)
		} else {
			withTexts++
		}
	}
	switch {
	case !texts:
		d.Status, d.Note = DebateUnavailable, "only counts were imported: answers need completion texts"
	case withTexts < 2:
		// The chart and the pairs compare two models' answers: with one
		// model's texts the card was empty and said nothing.
		d.Status, d.Note = DebateUnavailable, "only counts were imported for "+strings.Join(countsOnly, ", ")+
			": answer diversity compares two models' answers, and needs completion texts of both"
	case !any:
		d.Status, d.Note = DebateUnavailable, "no model's samples carry answers to group"
	case len(countsOnly) > 0:
		d.Note = "left out (only counts were imported): " + strings.Join(countsOnly, ", ")
	}
	rep.Diversity = d
}

// debateDefaults gives a freshly computed report its debate parts before
// the store's data arrive: diversity waits for the statistics job.
func (rep *Report) debateDefaults(runs []store.Run) {
	texts := false
	for _, r := range runs {
		texts = texts || r.HasTexts
	}
	rep.Diversity = &DiversityReport{Status: DebateComputing, Models: []*ModelDiversity{}, Pairs: []DiversityPair{}}
	if !texts {
		rep.Diversity.Status, rep.Diversity.Note = DebateUnavailable, "only counts were imported: answers need completion texts"
	}
	rep.CoT = &CoTReport{Status: DebateNone, Models: []CoTModel{}, Pairs: []CoTPair{}, LeftOutIDs: []string{}}
	rep.Perplexity = &PerplexityReport{Status: DebateNone, Models: []PerplexityModel{}}
}
