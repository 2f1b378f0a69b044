package analysis

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
)

// Statistics statuses (StatsInfo.Status).
const (
	StatsReady   = "ready"     // intervals and maj@k are attached
	StatsPending = "computing" // no cache for these counts yet: the job has not run or is running
	StatsFailed  = "failed"    // the job failed on these counts (StatsInfo.Error)
	StatsSkipped = "skipped"   // not computed for this variant (VariantReviewed)
)

// statsVersion changes whenever Stats or the way it is computed changes, so
// older caches count as stale.
const statsVersion = 7 // 2: crossover = ahead and staying ahead through k_max; 3: intervals at ChartKs; 4: answer diversity; 5: diversity counts program samples; 6: one answer grouping for every model (answerclass.Partition); 7: bootstrap rows past a problem's n from the fitted prior

// DefaultSeed seeds the bootstrap when StatsOptions.Seed is 0, so every
// Reach instance gives the same intervals for the same counts.
const DefaultSeed = 20250418

// StatsInfo describes the background statistics attached to a report.
type StatsInfo struct {
	Status     string     `json:"status"`
	Error      string     `json:"error,omitempty"`
	Draws      int        `json:"draws,omitempty"`
	Seed       uint64     `json:"seed,omitempty"`
	Level      float64    `json:"level,omitempty"`
	MajGroup   string     `json:"maj_grouping,omitempty"` // how maj@k grouped extracted answers
	ComputedAt *time.Time `json:"computed_at,omitempty"`
	Seconds    float64    `json:"seconds,omitempty"` // compute time
}

// Stats is what the statistics job computes for one report variant; it is
// cached as JSON with the report's counts hash (see AttachStats).
type Stats struct {
	Version   int                   `json:"version"`
	Bootstrap passk.BootstrapResult `json:"bootstrap"`
	// Maj[m] is model m's maj@k curve, nil when the model has no extracted answers.
	Maj      []*MajCurve `json:"maj"`
	MajGroup string      `json:"maj_grouping"`
	// Diversity[m] is model m's answer diversity (nil without texts).
	Diversity []*ModelDiversity `json:"diversity"`
	Seconds   float64           `json:"seconds"`
}

// MajCurve is maj@k (fractions) at Ks.
type MajCurve struct {
	Ks     []int     `json:"ks"`
	Values []float64 `json:"values"`
}

// StatsOptions configures ComputeStats.
type StatsOptions struct {
	Draws int    // bootstrap draws; 0 means passk.DefaultDraws (2,000)
	Seed  uint64 // 0 means DefaultSeed
	// Equiv reports whether two extracted answers are the same answer (the
	// verifier's equivalence); nil groups answers by their text with
	// whitespace removed. EquivName describes it in StatsInfo.MajGroup.
	Equiv     func(a, b string) bool
	EquivName string
	// Memo, when set, keeps the per-problem answer grouping and maj@k
	// values across calls with the same answers and Equiv (the report
	// variants of one job); nil computes them afresh. Equiv must be a pure
	// function: its answers are remembered.
	Memo *StatsMemo
}

// Hash identifies the problems, counts and variant the report was computed
// from: the statistics cached under another hash are stale.
func (rep *Report) Hash() string { return rep.statsHash }

func statsHash(variant string, runs []store.Run, kept []store.Problem, models [][]passk.Count) string {
	h := sha256.New()
	fmt.Fprintf(h, "reach-stats/%d/%s/%d/%d\n", statsVersion, variant, len(runs), len(kept))
	var buf [8]byte
	put := func(v int64) {
		binary.LittleEndian.PutUint64(buf[:], uint64(v))
		h.Write(buf[:])
	}
	for m, r := range runs {
		put(r.ID)
		for j, p := range kept {
			put(p.ID)
			put(int64(models[m][j].N))
			put(int64(models[m][j].C))
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// ComputeStats computes the bootstrap intervals (paired over problems, at
// the ks of ChartKs(KMax), ΔSE at the report's ΔSE k) and, for every model in
// answers, maj@k at powers of two. answers maps a run id to its samples'
// extracted answers by problem id (store.AnswersForRun); runs without texts
// are simply absent. A model gets no maj@k when fewer than half of its
// samples carry an extracted answer, or a problem has no samples.
//
// maj@k follows passk.MajAtK: correct samples form one class (they all
// match the reference), incorrect ones are grouped by opt.Equiv, samples
// without an answer do not vote, and a tie is not a majority.
func ComputeStats(rep *Report, answers map[int64]map[int64][]store.Answer, opt StatsOptions) (Stats, error) {
	start := time.Now()
	if opt.Seed == 0 {
		opt.Seed = DefaultSeed
	}
	models := make([][]passk.Count, len(rep.Models))
	for m, mr := range rep.Models {
		models[m] = make([]passk.Count, mr.Counts.Len())
		for j := range models[m] {
			x := mr.Counts.At(j)
			models[m][j] = passk.Count{N: x.N, C: x.C}
		}
	}
	gapK := rep.KMax
	if len(rep.Pairs) > 0 {
		gapK = rep.Pairs[0].DeltaSEK
	}
	// Intervals at the ks the charts draw (every k up to 64, then 8 per
	// doubling): the same figure at a tenth of the cost for n = 1,024.
	b, err := passk.Bootstrap(models, passk.BootstrapOptions{Draws: opt.Draws, Seed: opt.Seed, GapK: gapK, Ks: ChartKs(rep.KMax),
		Priors: rep.extendedPriors(), MaxK: rep.KMax})
	if err != nil {
		return Stats{}, fmt.Errorf("comparison %d: %w", rep.ComparisonID, err)
	}
	st := Stats{Version: statsVersion, Bootstrap: b, Maj: make([]*MajCurve, len(rep.Models)), MajGroup: "answer text without whitespace"}
	if opt.Equiv != nil && opt.EquivName != "" {
		st.MajGroup = opt.EquivName
	}
	memo := opt.Memo
	if memo == nil {
		memo = NewStatsMemo()
	}
	if err := memo.fill(rep, answers, opt.Equiv); err != nil {
		return Stats{}, err
	}
	st.Diversity = make([]*ModelDiversity, len(rep.Models))
	for m, mr := range rep.Models {
		byProblem, ok := answers[mr.RunID]
		if !ok {
			continue
		}
		if ks := majKs(rep.Rows, byProblem); ks != nil {
			st.Maj[m] = &MajCurve{Ks: ks, Values: make([]float64, len(ks))}
			// The mean in row order, as passk.MajCurve takes it: the same figures to the bit.
			for i, k := range ks {
				for _, row := range rep.Rows {
					st.Maj[m].Values[i] += memo.problem(mr.RunID, row.ProblemID).maj[k]
				}
				st.Maj[m].Values[i] /= float64(len(rep.Rows))
			}
		}
		groups := func(row ProblemRow) answerGroups { return memo.problem(mr.RunID, row.ProblemID).groups }
		if st.Diversity[m], err = diversityFrom(mr.Name, rep.Rows, byProblem, groups); err != nil {
			return Stats{}, fmt.Errorf("answer diversity of %q: %w", mr.Name, err)
		}
	}
	st.Seconds = time.Since(start).Seconds()
	return st, nil
}

// AttachStats fills the report's intervals and maj@k from a cached row
// when the row was computed from the same counts (same Hash) and the same
// statistics version; otherwise it marks the statistics as computing.
func (rep *Report) AttachStats(row store.Stats) {
	defer rep.checkWarnings()
	rep.Stats = StatsInfo{Status: StatsPending}
	if row.Hash != rep.statsHash {
		return
	}
	if row.Status == StatsFailed {
		rep.Stats = StatsInfo{Status: StatsFailed, Error: row.Error}
		return
	}
	var s Stats
	if err := json.Unmarshal(row.Data, &s); err != nil || s.Version != statsVersion {
		return
	}
	b := s.Bootstrap
	if len(b.Models) != len(rep.Models) || len(b.Pairs) != len(rep.Pairs) || b.NMin != rep.KMax || !slices.Equal(b.Ks, ChartKs(rep.KMax)) {
		return
	}
	at := row.ComputedAt
	rep.attachDiversity(s.Diversity, s.MajGroup)
	rep.Stats = StatsInfo{Status: StatsReady, Draws: b.Draws, Seed: b.Seed, Level: b.Level, MajGroup: s.MajGroup,
		ComputedAt: &at, Seconds: s.Seconds}
	iv := func(e passk.Estimate) *Interval { return &Interval{Lo: e.Lo, Hi: e.Hi} }
	for m := range rep.Models {
		mb, mr := b.Models[m], &rep.Models[m]
		mr.Pass1CI, mr.PassKMaxCI = iv(mb.Pass1), iv(mb.PassN)
		mr.PassAtKCI = make([]Band, len(b.Ks))
		for i, k := range b.Ks {
			mr.PassAtKCI[i] = Band{K: k, Lo: mb.Curve[i].Lo, Hi: mb.Curve[i].Hi}
		}
		if m < len(s.Maj) && s.Maj[m] != nil {
			mr.MajAtK = nil
			for i, k := range s.Maj[m].Ks {
				mr.MajAtK = append(mr.MajAtK, Point{K: k, Value: s.Maj[m].Values[i]})
			}
		}
	}
	for i := range rep.Pairs {
		pb, pr := b.Pairs[i], &rep.Pairs[i]
		pr.DeltaSECI = iv(pb.Gap)
		pr.CrossoverCI = CrossoverCIOf(pb.Crossover)
		pr.BaseAheadFrom, pr.Significant = pb.BelowZeroFrom, nil
		for _, r := range pb.Significant {
			pr.Significant = append(pr.Significant, SignificantRange{Ahead: leadName(r.Lead), FromK: r.From, ToK: r.To, ThroughKMax: r.Through})
		}
		for j, k := range b.Ks {
			pr.Diff[k-1].CI = iv(pb.Diff[j])
		}
	}
	byName := map[string]int{}
	for m, mr := range rep.Models {
		byName[mr.Name] = m
	}
	for i, tp := range rep.Trajectory {
		m := byName[tp.Model]
		rep.Trajectory[i].Pass1CI, rep.Trajectory[i].PassNCI = rep.Models[m].Pass1CI, rep.Models[m].PassKMaxCI
		band := map[int]Band{}
		for _, b := range rep.Models[m].PassAtKCI {
			band[b.K] = b
		}
		for j, x := range tp.AtK {
			if b, ok := band[x.K]; ok {
				rep.Trajectory[i].AtK[j].CI = &Interval{Lo: b.Lo, Hi: b.Hi}
			}
		}
	}
	rep.readDynamics()
}

// CrossoverCIOf is a bootstrap's k* interval as the report writes it.
func CrossoverCIOf(b passk.CrossoverBand) *CrossoverCI {
	return &CrossoverCI{
		Lo:         CrossoverBound{Found: b.Lo.Found, K: b.Lo.K},
		Hi:         CrossoverBound{Found: b.Hi.Found, K: b.Hi.K},
		FoundShare: b.FoundShare,
	}
}
