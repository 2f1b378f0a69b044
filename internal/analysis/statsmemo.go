package analysis

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/reach-lab/reach/internal/answerclass"
	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
)

// StatsMemo holds the per-problem work of ComputeStats that does not depend
// on the report variant: each run's and problem's answer classes (for
// maj@k and for answer diversity), its maj@k values, and the answer
// equivalence checks (shared by the runs on a problem). The statistics job
// passes one memo to the ComputeStats calls of its variants, so that each
// problem is grouped once. A memo belongs to one answers map and one
// StatsOptions.Equiv; it is not safe for concurrent ComputeStats calls
// (each call already uses every core).
type StatsMemo struct {
	problems map[memoKey]*problemMemo
	parts    map[int64]*answerclass.Partition // problem id -> every run's answers grouped
	equiv    map[int64]map[[2]string]bool     // problem id -> (a, b) -> Equiv(a, b)
}

// NewStatsMemo returns an empty memo.
func NewStatsMemo() *StatsMemo {
	return &StatsMemo{problems: map[memoKey]*problemMemo{}, parts: map[int64]*answerclass.Partition{}, equiv: map[int64]map[[2]string]bool{}}
}

type memoKey struct{ run, problem int64 }

// problemMemo is one run's work on one problem.
type problemMemo struct {
	as      []store.Answer         // the samples
	part    *answerclass.Partition // the problem's answer classes, every run's answers together
	grouped bool                   // groups is computed
	groups  answerGroups           // answer-diversity classes
	votes   []passk.Vote           // maj@k classes; nil until needed
	maj     map[int]float64        // k -> maj@k of this problem
	want    []int                  // ks to compute in the current fill
}

// answerGroups is answerClasses's result for one problem.
type answerGroups struct {
	sizes    []int
	noAnswer int
	capped   bool
}

func (mm *StatsMemo) problem(run, problem int64) *problemMemo {
	return mm.problems[memoKey{run, problem}]
}

// majKs returns the ks of a model's maj@k curve over rows (powers of two
// up to the smallest number of samples), or nil when it gets none: a
// problem without samples, or fewer than half of the samples with an
// extracted answer.
func majKs(rows []ProblemRow, byProblem map[int64][]store.Answer) []int {
	total, withAnswer, nmin := 0, 0, 0
	for j, row := range rows {
		as := byProblem[row.ProblemID]
		if len(as) == 0 {
			return nil
		}
		total += len(as)
		for _, a := range as {
			if a.Extracted != "" {
				withAnswer++
			}
		}
		if j == 0 || len(as) < nmin {
			nmin = len(as)
		}
	}
	if 2*withAnswer < total {
		return nil
	}
	return GroupKs(nmin)
}

// fill computes, on every core, what rep's rows need and the memo lacks:
// each run's answer classes on each problem and its maj@k values at the ks
// of the run's curve. A task is one problem with every run's samples of
// it, so the runs share the problem's equivalence checks without locks;
// the results do not depend on the order the tasks run in.
func (mm *StatsMemo) fill(rep *Report, answers map[int64]map[int64][]store.Answer, equiv func(a, b string) bool) error {
	tasks := make([][]*problemMemo, len(rep.Rows))
	eqs := make([]func(a, b string) bool, len(rep.Rows))
	parts := make([]*answerclass.Partition, len(rep.Rows))
	for j, row := range rep.Rows {
		eqs[j] = mm.equivOf(row.ProblemID, equiv)
		parts[j] = mm.parts[row.ProblemID]
		for _, mr := range rep.Models {
			byProblem, ok := answers[mr.RunID]
			if !ok {
				continue
			}
			key := memoKey{mr.RunID, row.ProblemID}
			pm := mm.problems[key]
			if pm == nil {
				pm = &problemMemo{as: byProblem[row.ProblemID], maj: map[int]float64{}}
				mm.problems[key] = pm
			}
			pm.want = pm.want[:0]
			tasks[j] = append(tasks[j], pm)
		}
	}
	for _, mr := range rep.Models {
		byProblem, ok := answers[mr.RunID]
		if !ok {
			continue
		}
		for _, k := range majKs(rep.Rows, byProblem) {
			for _, row := range rep.Rows {
				pm := mm.problem(mr.RunID, row.ProblemID)
				if _, ok := pm.maj[k]; !ok {
					pm.want = append(pm.want, k)
				}
			}
		}
	}
	errs := make([]error, len(tasks))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(tasks), runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := int(next.Add(1)) - 1
				if j >= len(tasks) {
					return
				}
				if parts[j] == nil {
					// One grouping of every run's answers on the problem,
					// as the problem page groups them.
					perRun := make([][]store.Answer, len(tasks[j]))
					for r, pm := range tasks[j] {
						perRun[r] = pm.as
					}
					parts[j] = partitionOf(perRun, eqs[j])
				}
				for _, pm := range tasks[j] {
					pm.part = parts[j]
					if errs[j] = pm.compute(); errs[j] != nil {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	for j, row := range rep.Rows {
		if parts[j] != nil {
			mm.parts[row.ProblemID] = parts[j]
		}
	}
	for j, err := range errs {
		if err != nil {
			return fmt.Errorf("maj@k on problem %s: %w", rep.Rows[j].Key, err)
		}
	}
	return nil
}

// compute fills the problem's answer-diversity classes (once) and its
// maj@k values at the ks in want.
func (pm *problemMemo) compute() error {
	if !pm.grouped {
		if len(pm.as) > 0 {
			pm.groups.sizes, pm.groups.noAnswer, pm.groups.capped = classesIn(pm.as, pm.part)
		}
		pm.grouped = true
	}
	if len(pm.want) == 0 {
		return nil
	}
	if pm.votes == nil {
		pm.votes = votesIn(pm.as, pm.part)
	}
	vals, err := passk.MajAtKs(pm.votes, pm.want)
	if err != nil {
		return err
	}
	for i, k := range pm.want {
		pm.maj[k] = vals[i]
	}
	pm.want = pm.want[:0]
	return nil
}

// equivOf is equiv remembering its answers on one problem (nil for nil):
// the runs' groupings, maj@k's and diversity's, and the variants ask many
// of the same pairs. Used by one goroutine at a time (the problem's task).
func (mm *StatsMemo) equivOf(problem int64, equiv func(a, b string) bool) func(a, b string) bool {
	if equiv == nil {
		return nil
	}
	seen := mm.equiv[problem]
	if seen == nil {
		seen = map[[2]string]bool{}
		mm.equiv[problem] = seen
	}
	return func(a, b string) bool {
		key := [2]string{a, b}
		v, ok := seen[key]
		if !ok {
			v = equiv(a, b)
			seen[key] = v
		}
		return v
	}
}
