package jobs

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

// batch is a slice of rows on their way from the parser to COPY.
type batch struct {
	samples []store.Sample
	lines   []int // file line of each sample
	counts  []store.Count
	bytes   int
}

// samplePipeline turns a samples file into stored rows with the database
// kept busy: one goroutine parses, every core grades the samples that carry
// no verdict, and the caller's goroutine (which owns the transaction)
// copies graded batches into Postgres as they come. At most a few batches
// (each ≤ batchRows rows, ≤ batchBytes of text) are in memory at once.
type samplePipeline struct {
	v        verify.Verifier // nil: leave ungraded samples pending
	ix       problemIndex
	mt       *ingest.Matcher // finds each sample's problem and checks the file against the dataset
	reverify bool            // grade every sample, keeping the file's label aside
	runID    int64
	file     string
	// route, when set, gives each sample its run and that run's matcher
	// (one file split by its records' training step) instead of runID
	// and mt.
	route func(s *ingest.Sample) (runID int64, mt *ingest.Matcher, err error)
}

// pipelineStats counts what went through the pipeline.
type pipelineStats struct {
	samples, counts int64
	verified        int64 // graded inline
	pending         int64 // left for a VerifyJob
	changed         int64 // graded inline and different from the file's label
	fileLabel       bool  // some sample carried the file's own verdict
	chunks          int   // chunks planned, or imported, by a split import's job
	writers         int   // transactions that COPYed a file imported whole (importWriters)
	runDone         bool  // the run's import is complete (its last part, or the whole file)
	// stored and graded are what this job's own transaction wrote and
	// graded inline (the counts above become the run's totals after its
	// last part): what metrics count once it commits.
	stored, graded int64
}

// run parses with read (which calls onSample/onCount per record and
// returns the parser's error) and hands each graded batch to write.
func (p *samplePipeline) run(ctx context.Context,
	read func(onSample func(ingest.Sample) error, onCount func(ingest.Count) error) error,
	write func(*batch) error) (pipelineStats, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var st pipelineStats
	var verified, changed atomic.Int64
	parsed := make(chan *batch, 2)
	graded := make(chan *batch, 2)

	send := func(ch chan<- *batch, b *batch) error {
		select {
		case ch <- b:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	var parseErr error
	var parser sync.WaitGroup
	parser.Go(func() {
		defer close(parsed)
		cur := &batch{}
		flushIfFull := func() error {
			if len(cur.samples) >= batchRows || cur.bytes >= batchBytes || len(cur.counts) >= batchRows {
				b := cur
				cur = &batch{}
				return send(parsed, b)
			}
			return nil
		}
		onSample := func(s ingest.Sample) error {
			runID, mt := p.runID, p.mt
			if p.route != nil {
				var err error
				if runID, mt, err = p.route(&s); err != nil {
					return err
				}
			}
			pos, err := mt.Resolve(&s)
			if err != nil {
				return err
			}
			pid := p.ix.ids[pos]
			row := store.Sample{RunID: runID, ProblemID: pid, SampleIndex: s.SampleIndex, Completion: s.Completion,
				FinishReason: s.FinishReason, CompletionTokens: s.CompletionTokens, FileCorrect: s.Correct,
				FileExtracted: s.Extracted, Status: store.SamplePending}
			if s.Correct != nil {
				st.fileLabel = true
				if !p.reverify {
					row.Status, row.Extracted, row.Reason, row.VerdictSource = store.SampleIncorrect, s.Extracted, s.Reason, "file"
					if *s.Correct {
						row.Status = store.SampleCorrect
					}
				}
			}
			if row.Status == store.SamplePending {
				if err := p.noReference(pid, s.Line); err != nil {
					return err
				}
			}
			st.samples++
			cur.samples = append(cur.samples, row)
			cur.lines = append(cur.lines, s.Line)
			cur.bytes += len(s.Completion)
			return flushIfFull()
		}
		onCount := func(k ingest.Count) error {
			pid, ok := p.ix.lookup(k.ProblemKey)
			if !ok {
				return p.unknown(k.Line, k.ProblemKey)
			}
			st.counts++
			cur.counts = append(cur.counts, store.Count{RunID: p.runID, ProblemID: pid, N: k.N, C: k.C})
			return flushIfFull()
		}
		if err := read(onSample, onCount); err != nil {
			parseErr = err
			cancel(err)
			return
		}
		if len(cur.samples) > 0 || len(cur.counts) > 0 {
			_ = send(parsed, cur)
		}
	})

	var graders sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		graders.Go(func() {
			for b := range parsed {
				if ctx.Err() != nil {
					continue // drain
				}
				n, ch := p.grade(ctx, b.samples)
				verified.Add(n)
				changed.Add(ch)
				if send(graded, b) != nil {
					continue
				}
			}
		})
	}
	go func() {
		graders.Wait()
		close(graded)
	}()

	var writeErr error
	for b := range graded {
		if writeErr != nil || ctx.Err() != nil {
			continue // drain so the graders can finish
		}
		if err := write(b); err != nil {
			writeErr = p.explain(err, b)
			cancel(writeErr)
			continue
		}
		for i := range b.samples {
			if b.samples[i].Status == store.SamplePending {
				st.pending++
			}
		}
	}
	parser.Wait()
	st.verified, st.changed = verified.Load(), changed.Load()
	switch {
	case parseErr != nil:
		return st, parseErr
	case writeErr != nil:
		return st, writeErr
	case ctx.Err() != nil:
		return st, context.Cause(ctx)
	}
	st.stored, st.graded = st.samples, st.verified
	return st, nil
}

// grade verifies the batch's samples that have no verdict yet and that the
// verifier grades inline; the others stay pending. It returns how many it
// graded and how many of those differ from the file's label.
func (p *samplePipeline) grade(ctx context.Context, rows []store.Sample) (graded, changed int64) {
	// The texts' hashes (for the distinct-texts figure) are computed here,
	// on all cores, rather than in the writer's goroutine or by Postgres.
	for i := range rows {
		rows[i].TextHash = store.TextHash(rows[i].Completion)
	}
	if p.v == nil {
		return 0, 0
	}
	for i := range rows {
		x := &rows[i]
		if x.Status != store.SamplePending {
			continue
		}
		prob := p.ix.byID[x.ProblemID]
		if !verify.Inline(p.v, prob.Kind) {
			continue
		}
		vd := p.v.Verify(ctx, prob, x.Completion)
		if vd.Status == verify.NotGraded {
			continue // stays pending: the VerifyJob grades it or says why not
		}
		x.Status, x.Extracted, x.Rule, x.Reason, x.Detail = string(vd.Status), vd.Extracted, vd.Rule, vd.Reason, vd.Detail
		x.VerdictSource = verify.SourceName(p.v, prob)
		graded++
		if x.FileCorrect != nil && *x.FileCorrect != (x.Status == store.SampleCorrect) {
			changed++
		}
	}
	return graded, changed
}

// noReference refuses a sample Reach would have to grade whose problem has
// no reference answer: graded "unparseable", its samples would count as the
// models' failures (README "Refused, never silently counted"). The error
// names the dataset's line and field, as a bad dataset line would.
func (p *samplePipeline) noReference(pid int64, line int) error {
	idx, ok := p.ix.noRef[pid]
	if !ok {
		return nil
	}
	return &ingest.Error{File: p.ix.dataset, Line: idx + 1, Field: "answer",
		Msg: fmt.Sprintf("problem %q has no reference answer (answer, gold, gt or ground_truth), so Reach cannot grade its samples (%s:%d carries no verdict of its own); add the answer, or leave the problem out of the dataset",
			p.ix.keyOf[pid], p.file, line)}
}

func (p *samplePipeline) unknown(line int, key string) error {
	return &ingest.Error{File: p.file, Line: line, Field: "problem id",
		Msg: fmt.Sprintf("problem %q is not in the dataset (%d problems; matched by id, then by 0-based line)", key, len(p.ix.byKey))}
}

var dupKey = regexp.MustCompile(`\(run_id, problem_id, sample_index\)=\((\d+), (\d+), (\d+)\)`)

// explain turns a COPY that failed on a repeated sample into an error that
// names the file, the line and the problem.
func (p *samplePipeline) explain(err error, b *batch) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		return err
	}
	m := dupKey.FindStringSubmatch(pgErr.Detail)
	if m == nil {
		return &ingest.Error{File: p.file, Field: "sample_index", Msg: "a sample of a problem appears twice: " + pgErr.Detail}
	}
	pid, _ := strconv.ParseInt(m[2], 10, 64)
	idx, _ := strconv.Atoi(m[3])
	line := 0
	for i := len(b.samples) - 1; i >= 0; i-- {
		if b.samples[i].ProblemID == pid && b.samples[i].SampleIndex == idx {
			line = b.lines[i]
			break
		}
	}
	return &ingest.Error{File: p.file, Line: line, Field: "sample_index",
		Msg: fmt.Sprintf("problem %q has sample %d twice (a repeated line, or a repeated sample index)", p.ix.keyOf[pid], idx)}
}
