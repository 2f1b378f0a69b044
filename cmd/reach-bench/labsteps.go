package main

// Two steps of `reach-bench lab` issue 28 names: the runs' search indexes,
// built as production builds them, and the import of one large file next
// to the lab's samples against raw COPY.

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/reach-lab/reach/internal/benchdata"
	"github.com/reach-lab/reach/internal/store"
)

// buildLabSearchIndexes does what the search_index job does
// (jobs.SearchIndexWorker: store.DropOrphanSearchIndexes, then
// store.BuildSearchIndex for each run store.RunsNeedingSearchIndex
// returns, one at a time), for the runs of comparisons only (none: every
// ready comparison's, as the job), and prints each build's time, Postgres
// CPU and size, then the search indexes of every run with texts in total.
func buildLabSearchIndexes(ctx context.Context, st *store.Store, comparisons []int64) error {
	fmt.Printf("\ntrigram search indexes, built as the search_index job builds them (CREATE INDEX CONCURRENTLY, one run at a time); load average before: %s\n", loadAvg())
	dropped, err := st.DropOrphanSearchIndexes(ctx)
	if err != nil {
		return err
	}
	if dropped > 0 {
		fmt.Printf("  dropped %d search indexes of runs that are gone\n", dropped)
	}
	if len(comparisons) == 0 {
		comparisons = []int64{0} // every ready comparison
	}
	var runs []int64
	for _, c := range comparisons {
		ids, err := st.RunsNeedingSearchIndex(ctx, c, 1<<20)
		if err != nil {
			return err
		}
		runs = append(runs, ids...)
	}
	start := time.Now()
	var (
		builtSamples, builtBytes int64
		builtCPU                 time.Duration
	)
	for _, id := range runs {
		meter := startPostgresMeter(ctx, st)
		t0 := time.Now()
		_, err := st.BuildSearchIndex(ctx, id)
		took, cpu := time.Since(t0), meter.stop()
		if err != nil {
			return err
		}
		builtCPU += cpu
		var (
			name          string
			samples, size int64
		)
		if err := st.Pool().QueryRow(ctx, `SELECT c.name || ', ' || r.model_name, COALESCE((SELECT sum(n) FROM run_counts WHERE run_id = r.id), 0), pg_relation_size($2::regclass)
			FROM runs r JOIN comparisons c ON c.id = r.comparison_id WHERE r.id = $1`, id, store.SearchIndexName(id)).Scan(&name, &samples, &size); err != nil {
			return fmt.Errorf("search index of run %d: %w", id, err)
		}
		builtSamples += samples
		builtBytes += size
		fmt.Printf("  run %d (%s), %d samples: %.1fs (%.0f samples/s), Postgres CPU %.1fs (%.0f µs/sample), %s, %.0f B/sample, load %s\n", id, name, samples,
			took.Seconds(), float64(samples)/took.Seconds(), cpu.Seconds(), float64(cpu.Microseconds())/float64(max(samples, 1)), mb(size),
			float64(size)/float64(max(samples, 1)), loadAvg())
	}
	took := time.Since(start)
	fmt.Printf("built %d search indexes in %.1fs (%d samples, %.0f samples/s), Postgres CPU %.1fs (%.0f µs/sample), %s, %.0f B/sample; load average after: %s\n",
		len(runs), took.Seconds(), builtSamples, float64(builtSamples)/max(took.Seconds(), 1e-9), builtCPU.Seconds(),
		float64(builtCPU.Microseconds())/float64(max(builtSamples, 1)), mb(builtBytes), float64(builtBytes)/float64(max(builtSamples, 1)), loadAvg())
	var indexes, size, samples int64
	if err := st.Pool().QueryRow(ctx, `SELECT count(*), COALESCE(sum(pg_relation_size(c.oid)), 0),
		(SELECT COALESCE(sum(n), 0) FROM run_counts rc JOIN runs r ON r.id = rc.run_id WHERE r.has_texts)
		FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname LIKE 'samples\_search\_run\_%' AND i.indisvalid`).Scan(&indexes, &size, &samples); err != nil {
		return fmt.Errorf("search indexes' size: %w", err)
	}
	fmt.Printf("search indexes now: %d, %s for %d samples with texts: %.0f B/sample\n", indexes, mb(size), samples, float64(size)/float64(max(samples, 1)))
	return nil
}

// labSamples is how many samples with texts the database stores.
func labSamples(ctx context.Context, st *store.Store) (int64, error) {
	var n int64
	if err := st.Pool().QueryRow(ctx, `SELECT COALESCE(sum(n), 0) FROM run_counts rc JOIN runs r ON r.id = rc.run_id WHERE r.has_texts`).Scan(&n); err != nil {
		return 0, fmt.Errorf("samples with texts: %w", err)
	}
	return n, nil
}

// labImport generates (or reuses) a MATH500 pair of one large file, n
// samples per problem with real texts, and a small RL file of at most 16
// (benchdata.WriteFiles, as `reach-bench import -n 1024 -rl-n 16`), and
// times in the lab database (dbURL), next to its samples, a raw COPY of the
// files' bytes against `reach import --wait` (importSteps), reps times; it
// prints the medians. With keep it deletes the comparisons it imported, so
// that a kept database stays the lab's.
// settleLimit bounds the wait for a quiet machine before each of the
// lab's import repetitions (settle).
const settleLimit = 10 * time.Minute

func labImport(ctx context.Context, st *store.Store, dbURL, reach, data, dir string, n, reps int, keep bool) (importResult, error) {
	rlN := min(16, n)
	if dir == "" {
		dir = importDir(n, rlN)
	}
	t0 := time.Now()
	files, err := benchdata.WriteFiles(dir, data, benchdata.FileSpec{N: n, RLN: rlN, Seed: 1})
	if err != nil {
		return importResult{}, fmt.Errorf("generate the import's files: %w", err)
	}
	how := fmt.Sprintf("generated in %.1fs", time.Since(t0).Seconds())
	if files.Reused {
		how = "reused"
	}
	fmt.Printf("\nimport of one large file into the lab database, next to its samples: %s (%s): base.jsonl %s (%d samples), rl.jsonl %s (%d samples)\n",
		files.Dir, how, mb(files.BaseSize), files.BaseSamples, mb(files.RLSize), files.RLSamples)
	fmt.Printf("raw COPY of both files' bytes into a text column, then %s import --wait of the pair, each after a CHECKPOINT; load average before: %s\n", reach, loadAvg())
	var (
		copies, imports []step
		ids             []int64
	)
	for rep := range reps {
		if err := settle(ctx, st, settleLimit); err != nil {
			return importResult{}, err
		}
		got, made, err := importSteps(ctx, st, dbURL, reach, files, [][]string{nil})
		ids = append(ids, made...)
		if err != nil {
			return importResult{}, err
		}
		c, i := got[0], got[1]
		copies, imports = append(copies, c), append(imports, i)
		fmt.Printf("  repetition %d/%d: raw COPY %.1fs (Postgres CPU %.1fs, WAL %s); reach import --wait %.1fs (%.0f %% of COPY's speed; CPU reach %.1fs + Postgres %.1fs, %.2f of %d cores busy; WAL %s; peak RSS %s); load %s\n",
			rep+1, reps, c.wall.Seconds(), c.pgCPU.Seconds(), mb(c.wal), i.wall.Seconds(), 100*c.wall.Seconds()/i.wall.Seconds(), i.cpu.Seconds(), i.pgCPU.Seconds(),
			(i.cpu+i.pgCPU).Seconds()/i.wall.Seconds(), runtime.NumCPU(), mb(i.wal), mb(i.rss), loadAvg())
	}
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	r := importResult{
		fileBytes: files.BaseSize, samples: files.BaseSamples + files.RLSamples,
		copyWall: sec(median(copies, func(s step) float64 { return s.wall.Seconds() })),
		wall:     sec(median(imports, func(s step) float64 { return s.wall.Seconds() })),
		copyCPU:  sec(median(copies, func(s step) float64 { return s.pgCPU.Seconds() })),
		cpu:      sec(median(imports, func(s step) float64 { return (s.cpu + s.pgCPU).Seconds() })),
		rss:      int64(median(imports, func(s step) float64 { return float64(s.rss) })),
	}
	fmt.Printf("import against raw COPY (medians of %d): %.0f %% of COPY's speed (wall %.1fs against %.1fs, %.0f samples/s)", reps, 100*r.vsCopy(),
		r.wall.Seconds(), r.copyWall.Seconds(), float64(r.samples)/r.wall.Seconds())
	if pc := r.perCore(); pc > 0 {
		fmt.Printf("; per core %.0f %% (COPY's %.1fs of Postgres CPU against the import's %.1fs of reach and Postgres: on %d idle cores at most %.0f %%)",
			100*pc, r.copyCPU.Seconds(), r.cpu.Seconds(), runtime.NumCPU(), 100*pc*float64(runtime.NumCPU()))
	}
	fmt.Printf("; peak RSS %s; load average after: %s\n", mb(r.rss), loadAvg())
	if keep {
		t0 := time.Now()
		for _, id := range ids {
			if err := st.DeleteComparison(ctx, id); err != nil {
				return r, fmt.Errorf("delete the imported comparison %d: %w", id, err)
			}
		}
		fmt.Printf("the imported comparisons deleted again (the database is kept): %.1fs\n", time.Since(t0).Seconds())
	}
	return r, nil
}
