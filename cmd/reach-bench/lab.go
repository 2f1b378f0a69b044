package main

// `reach-bench lab`: a lab's instance of about 10 M samples with texts in one
// database (issue 28), measured: how fast it is generated, what it takes on
// disk per sample, TOAST compression of the texts (pglz against lz4 on the
// same rows), whether any page reads samples sequentially, the pages at 20
// clients on the biggest comparison (a followed training run) and on a small
// one next to it (and the small one alone in an empty database), with each
// run's trigram search index built first as the search_index job does, the
// import of one 1.5 GB file next to the 10 M samples against raw COPY, a
// delete of a whole comparison (wall, WAL, locks, readers meanwhile) and
// VACUUM; then issue 28's goals against the figures, with the load average
// of each phase.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/benchdata"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web"
)

// labComparison is one comparison of the lab instance.
type labComparison struct {
	label string
	spec  benchdata.Spec
	id    int64
}

// labSpecs is the instance at scale 1: 9,968,000 samples in 10
// comparisons. scale multiplies n of the big three (a quick check of the
// command runs it at 0.01); the small ones keep theirs.
func labSpecs(scale float64, data string) []labComparison {
	n := func(v int) int { return max(1, int(float64(v)*scale)) }
	out := []labComparison{
		{label: fmt.Sprintf("training run (base + 10 checkpoints × 500 × %d)", n(1024)), spec: benchdata.Spec{Models: 11, N: n(1024), Problems: 500, Training: true,
			Name: "lab: SimpleRL-Zoo training run, 10 checkpoints"}},
		{label: fmt.Sprintf("12,500 problems (2 × 12,500 × %d)", n(128)), spec: benchdata.Spec{Models: 2, N: n(128), Problems: 12500, Name: "lab: 12,500 problems"}},
		{label: fmt.Sprintf("paper pair (2 × 500 × %d)", n(1024)), spec: benchdata.Spec{Models: 2, N: n(1024), Problems: 500, Name: "lab: paper pair"}},
	}
	for i := range 7 {
		out = append(out, labComparison{label: fmt.Sprintf("small %d (2 × 500 × 16)", i+1),
			spec: benchdata.Spec{Models: 2, N: 16, Problems: 500, Name: fmt.Sprintf("lab: small %d", i+1)}})
	}
	for i := range out {
		out[i].spec.Texts, out[i].spec.RealTexts, out[i].spec.Seed = true, data, uint64(i+1)
	}
	return out
}

func runLab(args []string) error {
	fs := flag.NewFlagSet("reach-bench lab", flag.ContinueOnError)
	var (
		adminURL = fs.String("database-url", envOr("REACH_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
			"Postgres server (admin database) to create the benchmark databases on")
		data        = fs.String("data", "internal/testfiles/data", "the carried real completions (generations/math500-qwen3-4b-base-greedy); relative to the repository root")
		scale       = fs.Float64("scale", 1, "multiplies n of the three big comparisons (1: 9,968,000 samples; 0.01 for a quick check)")
		workers     = fs.Int("workers", 0, "runs written at once, one COPY and connection each (0: one per CPU)")
		compression = fs.String("compression", "", "set samples.completion's TOAST compression (lz4 or pglz) before generating; empty keeps the schema's")
		cmpN        = fs.Int("compare-compression", 200_000, "samples with real texts COPYed once with pglz and once with lz4 (0 skips it)")
		clients     = fs.Int("clients", 20, "concurrent clients per page")
		requests    = fs.Int("requests", 400, "requests per page (bounded also by -max-time)")
		maxTime     = fs.Duration("max-time", 20*time.Second, "longest load per page")
		only        = fs.String("only", "", "run only the pages with these names (separated by |)")
		baseline    = fs.Bool("baseline", true, "also measure the small comparison's pages alone in an empty database")
		keep        = fs.Bool("keep", false, "keep the lab database (reuse it with -use, which skips generating and the delete)")
		use         = fs.String("use", "", "use this lab database (from an earlier -keep run) instead of generating one")
		cmpOnly     = fs.Bool("compression-only", false, "only compare the compression methods, then stop")
		delName     = fs.String("delete", "", "with -use: delete the comparison of this name (and VACUUM) after the pages")
		pagesOn     = fs.Bool("pages", true, "load the pages")
		cpuprof     = fs.String("cpuprofile", "", "write a CPU profile of the pages' load (Reach's server and the clients, one process) to this file")
		searchIdx   = fs.Bool("search-index", true, "build the trigram search index of each run with texts that lacks one (as the search_index job does) before the pages, timed; false leaves the indexes as they are")
		searchOf    = fs.String("search-index-of", "all", "whose search indexes: all (every run, as the search_index job) or pages (the runs of the two comparisons whose pages are loaded)")
		importOn    = fs.Bool("import", true, "time `reach import --wait` of one large file (MATH500, -import-n samples per problem, with a small RL file) into the lab database against raw COPY of the same bytes")
		importN     = fs.Int("import-n", 0, "samples per problem of the imported base file (0: 1,024 × -scale; 1,024 is a 1.5 GB file of 512,000 samples)")
		importDir   = fs.String("import-dir", "", "directory of the generated import files (default /tmp/reach-bench-import-n<N>-rl<RLN>, shared with reach-bench import); reused when it holds the same spec")
		importReps  = fs.Int("import-reps", 1, "repetitions of the import against COPY (medians are printed)")
		reach       = fs.String("reach", "bin/reach", "the reach binary the import runs")
		webPool     = fs.Int("web-pool", store.DefaultWebConns(), "connections of the pages' own pool, as reach serve --web-db-conns (0: share the lab's pool of 24)")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *compression != "" && *compression != "lz4" && *compression != "pglz" {
		return fmt.Errorf("-compression %q: want lz4, pglz or nothing", *compression)
	}
	if *scale <= 0 || *scale > 4 {
		return fmt.Errorf("-scale %v: want a number in (0, 4]", *scale)
	}
	if *searchOf != "all" && *searchOf != "pages" {
		return fmt.Errorf("-search-index-of %q: want all or pages", *searchOf)
	}
	if *importReps < 1 {
		return fmt.Errorf("-import-reps must be >= 1")
	}
	if *importOn && !*cmpOnly {
		// Checked before the hour of generating, not after it.
		if _, err := os.Stat(*reach); err != nil {
			return fmt.Errorf("the reach binary (-reach; -import=false skips the import): %w", err)
		}
	}
	ctx := context.Background()
	fmt.Printf("reach-bench lab, %s, %d cores, load average %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), loadAvg())
	res := labResults{clients: *clients}
	phase := func(name string) func() {
		w := startPhase(name)
		return func() { res.phases = append(res.phases, w.stop()) }
	}
	dbURL := *use
	if dbURL == "" {
		u, drop, err := createDatabase(ctx, *adminURL)
		if err != nil {
			return err
		}
		dbURL = u
		if *keep {
			fmt.Println("database kept (reuse it with -use):", dbURL)
		} else {
			defer drop()
		}
	}
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	var method string
	if err := st.Pool().QueryRow(ctx, `SELECT CASE attcompression WHEN 'l' THEN 'lz4' WHEN 'p' THEN 'pglz' ELSE 'default ('||current_setting('default_toast_compression')||')' END
		FROM pg_attribute WHERE attrelid = 'samples'::regclass AND attname = 'completion'`).Scan(&method); err != nil {
		return fmt.Errorf("compression of samples.completion: %w", err)
	}
	fmt.Printf("samples.completion compression: %s\n", method)

	if *cmpN > 0 && *use == "" {
		end := phase("TOAST compression compared")
		if err := compareCompression(ctx, st, *data, *cmpN); err != nil {
			return err
		}
		end()
	}
	if *cmpOnly {
		return nil
	}
	if *compression != "" {
		if _, err := st.Pool().Exec(ctx, `ALTER TABLE samples ALTER COLUMN completion SET COMPRESSION `+*compression); err != nil {
			return fmt.Errorf("set compression %s: %w", *compression, err)
		}
		fmt.Printf("samples.completion compression set to %s for this run\n", *compression)
	}

	specs := labSpecs(*scale, *data)
	if *use == "" {
		end := phase("generate")
		if err := generateLab(ctx, st, specs, *workers); err != nil {
			return err
		}
		end()
	} else if err := findLab(ctx, st, specs); err != nil {
		return err
	}
	if _, err := printSizes(ctx, st, "after generating"); err != nil {
		return err
	}
	big, small, wide := specs[0], specs[len(specs)-1], specs[1]
	if wide.id == 0 {
		wide = specs[2]
	}
	if *searchIdx {
		end := phase("search indexes")
		var of []int64 // every run's
		if *searchOf == "pages" {
			of = []int64{big.id, small.id}
		}
		if err := buildLabSearchIndexes(ctx, st, of); err != nil {
			return err
		}
		end()
	}
	if err := explainHot(ctx, st, big.id, wide.id); err != nil {
		return err
	}
	if res.samples, err = labSamples(ctx, st); err != nil {
		return err
	}
	res.bigLabel = big.label

	cookie, token, err := signIn(ctx, st)
	if err != nil {
		return err
	}
	served, base, stop, err := servePages(ctx, st, dbURL, *webPool)
	if err != nil {
		return err
	}
	defer stop()
	lc := labLoad{served: served, webPool: *webPool, base: base, cookie: cookie, token: token, clients: *clients, requests: *requests, maxTime: *maxTime, only: *only}
	if *pagesOn {
		set, err := pageSet(ctx, st, big.id, 1)
		if err != nil {
			return err
		}
		for _, p := range set {
			res.pageSet = append(res.pageSet, p.name)
		}
		stopProfile, err := startProfile(*cpuprof)
		if err != nil {
			return err
		}
		for _, x := range []struct {
			c    labComparison
			name string
			into *[]pageResult
		}{{big, "pages: biggest comparison", &res.big}, {small, "pages: small comparison", &res.small}} {
			end := phase(x.name)
			got, err := lc.pages(ctx, st, x.c)
			if err != nil {
				return err
			}
			end()
			*x.into = got
		}
		stopProfile()
	}
	if *importOn {
		n := *importN
		if n <= 0 {
			n = max(1, int(1024**scale))
		}
		end := phase("import of one large file")
		imp, err := labImport(ctx, st, dbURL, *reach, *data, *importDir, n, *importReps, *keep || *use != "")
		if err != nil {
			return err
		}
		end()
		res.imp = &imp
	}
	if *delName != "" {
		wide.label = *delName
		if err := st.Pool().QueryRow(ctx, `SELECT id FROM comparisons WHERE name = $1`, *delName).Scan(&wide.id); err != nil {
			return fmt.Errorf("-delete %q: %w", *delName, err)
		}
	}
	if *use == "" || *delName != "" {
		end := phase("delete and VACUUM")
		if err := deleteComparison(ctx, st, lc, wide, small); err != nil {
			return err
		}
		end()
		if _, err := printSizes(ctx, st, "after the delete and VACUUM"); err != nil {
			return err
		}
	}
	stop()
	if *baseline && *pagesOn {
		end := phase("pages: small comparison alone")
		if err := smallAlone(ctx, *adminURL, small, *workers, *searchIdx, lc); err != nil {
			return err
		}
		end()
	}
	fmt.Printf("load average at the end: %s\n", loadAvg())
	printSummary(os.Stdout, res)
	return nil
}

// servePages serves Reach's pages on a loopback port from a pool of
// webPool connections of their own, as reach serve does (0: st's pool):
// the store that serves them, the base URL, and what stops both.
func servePages(ctx context.Context, st *store.Store, dbURL string, webPool int) (*store.Store, string, func(), error) {
	served := st
	if webPool > 0 {
		var err error
		if served, err = store.OpenSized(ctx, dbURL, webPool); err != nil {
			return nil, "", nil, err
		}
	}
	base, stop, err := serveLoopback(served)
	if err != nil {
		if served != st {
			served.Close()
		}
		return nil, "", nil, err
	}
	return served, base, func() {
		stop()
		if served != st {
			served.Close()
		}
	}, nil
}

// serveLoopback serves Reach on st on a loopback port: its base URL and
// what stops it.
func serveLoopback(st *store.Store) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: web.New(st, nil, web.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil))), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	var once sync.Once
	return "http://" + ln.Addr().String(), func() { once.Do(func() { srv.Close() }) }, nil
}

// walLSN is the cluster's current WAL position (bytes).
func walLSN(ctx context.Context, st *store.Store) int64 {
	var n int64
	_ = st.Pool().QueryRow(ctx, `SELECT pg_current_wal_lsn() - '0/0'::pg_lsn`).Scan(&n)
	return n
}

// compareCompression COPYs the same n samples with real texts into two
// tables LIKE samples (its indexes included), one with pglz and one with
// lz4 TOAST compression, twice each in turn, and prints per method the
// median COPY wall time, Postgres CPU, WAL, the table's size with its
// TOAST and indexes, and the time to read every text back.
func compareCompression(ctx context.Context, st *store.Store, data string, n int) error {
	fmt.Printf("\nTOAST compression of completion texts: %d samples with real texts, COPYed into a table LIKE samples (indexes included), each method twice in turn\n", n)
	fmt.Printf("load average before: %s\n", loadAvg())
	type result struct{ copyT, readT, pgCPU []time.Duration }
	res := map[string]*result{"pglz": {}, "lz4": {}}
	var sizes = map[string][4]int64{}
	var wal = map[string]int64{}
	var textBytes int64
	for rep := range 2 {
		for _, m := range []string{"pglz", "lz4"} {
			t := "lab_compression_" + m
			if _, err := st.Pool().Exec(ctx, `DROP TABLE IF EXISTS `+t+`; CREATE TABLE `+t+` (LIKE samples INCLUDING DEFAULTS INCLUDING INDEXES);
				ALTER TABLE `+t+` ALTER COLUMN completion SET COMPRESSION `+m+`; CHECKPOINT`); err != nil {
				return fmt.Errorf("compression table %s: %w", t, err)
			}
			w0, c0 := walLSN(ctx, st), postgresCPU(ctx, st)
			start := time.Now()
			_, tb, err := benchdata.CopyRealTexts(ctx, st, t, data, n, 1)
			if err != nil {
				return err
			}
			textBytes = tb
			r := res[m]
			r.copyT = append(r.copyT, time.Since(start))
			r.pgCPU = append(r.pgCPU, postgresCPU(ctx, st)-c0)
			wal[m] = walLSN(ctx, st) - w0
			var heap, toast, idx, raw int64
			if err := st.Pool().QueryRow(ctx, `SELECT pg_relation_size(c.oid), COALESCE(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0), pg_indexes_size(c.oid),
				(SELECT sum(octet_length(completion)) FROM `+t+`) FROM pg_class c WHERE c.oid = $1::regclass`, t).Scan(&heap, &toast, &idx, &raw); err != nil {
				return fmt.Errorf("size of %s: %w", t, err)
			}
			sizes[m] = [4]int64{heap, toast, idx, raw}
			start = time.Now()
			var sum int64
			if err := st.Pool().QueryRow(ctx, `SELECT sum(length(completion)) FROM `+t).Scan(&sum); err != nil {
				return fmt.Errorf("read %s: %w", t, err)
			}
			r.readT = append(r.readT, time.Since(start))
			if rep == 1 {
				if _, err := st.Pool().Exec(ctx, `DROP TABLE `+t); err != nil {
					return err
				}
			}
		}
	}
	med := func(d []time.Duration) time.Duration { // of two: the mean
		var s time.Duration
		for _, x := range d {
			s += x
		}
		return s / time.Duration(len(d))
	}
	fmt.Printf("texts: %s in %d samples (%.0f bytes each on average)\n", mb(textBytes), n, float64(textBytes)/float64(n))
	fmt.Printf("%-6s %9s %9s %9s %9s %9s %9s %11s %9s\n", "method", "COPY", "samples/s", "PG CPU", "WAL", "heap", "TOAST", "bytes/text", "read all")
	for _, m := range []string{"pglz", "lz4"} {
		r, sz := res[m], sizes[m]
		fmt.Printf("%-6s %8.1fs %9.0f %8.1fs %9s %9s %9s %11.0f %8.2fs   (runs: %v, %v)\n", m, med(r.copyT).Seconds(), float64(n)/med(r.copyT).Seconds(), med(r.pgCPU).Seconds(),
			mb(wal[m]), mb(sz[0]), mb(sz[1]), float64(sz[0]+sz[1])/float64(n), med(r.readT).Seconds(), r.copyT[0].Round(100*time.Millisecond), r.copyT[1].Round(100*time.Millisecond))
	}
	fmt.Printf("load average after: %s\n", loadAvg())
	return nil
}

// generateLab writes every comparison, then runs the statistics job on each.
func generateLab(ctx context.Context, st *store.Store, specs []labComparison, workers int) error {
	var total int64
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	fmt.Printf("\ngenerating %d comparisons with real completion texts (%d runs written at once, one COPY each)\n", len(specs), workers)
	start, w0 := time.Now(), walLSN(ctx, st)
	for i := range specs {
		c := &specs[i]
		c.spec.Workers = workers
		t0, wal0 := time.Now(), walLSN(ctx, st)
		id, tm, err := benchdata.Create(ctx, st, c.spec, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", c.label, err)
		}
		c.id = id
		total += tm.Samples
		fmt.Printf("  %-52s comparison %d: %9d samples, COPY %6.1fs (%6.0f samples/s), counts %5.1fs, quality %5.1fs, all %6.1fs, WAL %s, load %s\n",
			c.label, id, tm.Samples, tm.Insert.Seconds(), float64(tm.Samples)/tm.Insert.Seconds(), tm.Aggregate.Seconds(), tm.Quality.Seconds(),
			time.Since(t0).Seconds(), mb(walLSN(ctx, st)-wal0), loadAvg())
	}
	took := time.Since(start)
	fmt.Printf("generated %d samples in %.1fs (%.0f samples/s), WAL %s, load average %s\n", total, took.Seconds(), float64(total)/took.Seconds(),
		mb(walLSN(ctx, st)-w0), loadAvg())
	start = time.Now()
	for _, c := range specs {
		t0 := time.Now()
		if err := jobs.ComputeStats(ctx, st, c.id, 0); err != nil {
			return fmt.Errorf("statistics of %s: %w", c.label, err)
		}
		if c.spec.Models > 2 || c.spec.Problems > 500 || c.spec.N > 16 {
			fmt.Printf("  statistics job, %-40s %.1fs\n", c.label+":", time.Since(t0).Seconds())
		}
	}
	fmt.Printf("statistics jobs of all %d comparisons: %.1fs (load average %s)\n", len(specs), time.Since(start).Seconds(), loadAvg())
	return nil
}

// findLab finds the comparisons of an earlier -keep run by name.
func findLab(ctx context.Context, st *store.Store, specs []labComparison) error {
	for i := range specs {
		err := st.Pool().QueryRow(ctx, `SELECT id FROM comparisons WHERE name = $1 AND status = 'ready'`, specs[i].spec.Name).Scan(&specs[i].id)
		switch {
		case errors.Is(err, pgx.ErrNoRows) && i > 0 && i < len(specs)-1: // deleted by the earlier run
			fmt.Printf("comparison %q is not in the -use database (an earlier run deleted it)\n", specs[i].spec.Name)
		case err != nil:
			return fmt.Errorf("comparison %q in the -use database: %w", specs[i].spec.Name, err)
		}
	}
	return nil
}

// printSizes prints the samples table's heap, TOAST and each index, each
// summed over the partitions (the runs' search indexes together), the database, and bytes per sample; it
// returns the samples with texts.
func printSizes(ctx context.Context, st *store.Store, when string) (int64, error) {
	var samples, heap, toast, total, db int64
	if err := st.Pool().QueryRow(ctx, `SELECT (SELECT COALESCE(sum(n), 0) FROM run_counts rc JOIN runs r ON r.id = rc.run_id WHERE r.has_texts),
		COALESCE(sum(pg_relation_size(c.oid)), 0)::bigint, COALESCE(sum(pg_total_relation_size(NULLIF(c.reltoastrelid, 0))), 0)::bigint,
		COALESCE(sum(pg_total_relation_size(c.oid)), 0)::bigint, pg_database_size(current_database())
		FROM pg_partition_tree('samples') t JOIN pg_class c ON c.oid = t.relid WHERE t.isleaf`).Scan(&samples, &heap, &toast, &total, &db); err != nil {
		return 0, fmt.Errorf("sizes: %w", err)
	}
	per := func(n int64) string { return fmt.Sprintf("%6.0f B/sample", float64(n)/float64(max(samples, 1))) }
	fmt.Printf("\nstorage %s: %d samples with texts (load average %s)\n", when, samples, loadAvg())
	fmt.Printf("  %-34s %9s %s\n", "samples heap", mb(heap), per(heap))
	fmt.Printf("  %-34s %9s %s\n", "samples TOAST (compressed texts)", mb(toast), per(toast))
	rows, err := st.Pool().Query(ctx, `SELECT name || CASE WHEN count(*) > 1 THEN ' (' || count(*) || ')' ELSE '' END, sum(size)::bigint
		FROM (SELECT CASE WHEN c.relname LIKE 'samples\_search\_run\_%' THEN 'samples_search_run_*'
		                  ELSE COALESCE((SELECT p.relname FROM pg_inherits h JOIN pg_class p ON p.oid = h.inhparent WHERE h.inhrelid = c.oid), c.relname) END AS name,
		             pg_relation_size(c.oid) AS size
		      FROM pg_partition_tree('samples') t JOIN pg_index i ON i.indrelid = t.relid JOIN pg_class c ON c.oid = i.indexrelid WHERE t.isleaf) x
		GROUP BY name ORDER BY 2 DESC`)
	if err != nil {
		return 0, fmt.Errorf("index sizes: %w", err)
	}
	type ix struct {
		Name string
		Size int64
	}
	idx, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ix])
	if err != nil {
		return 0, fmt.Errorf("index sizes: %w", err)
	}
	for _, x := range idx {
		fmt.Printf("  %-34s %9s %s\n", "index "+x.Name, mb(x.Size), per(x.Size))
	}
	fmt.Printf("  %-34s %9s %s\n", "samples with TOAST and indexes", mb(total), per(total))
	fmt.Printf("  %-34s %9s %s\n", "whole database", mb(db), per(db))
	return samples, nil
}

// explainHot prints EXPLAIN ANALYZE of the queries on samples the pages
// and jobs run most, on the biggest comparison (and the widest one), and
// fails on a sequential scan of samples.
func explainHot(ctx context.Context, st *store.Store, big, wide int64) error {
	var run, rl, problem, wideRun int64
	if err := st.Pool().QueryRow(ctx, `SELECT min(r.id), max(r.id), (SELECT min(problem_id) FROM run_counts WHERE run_id = min(r.id))
		FROM runs r WHERE r.comparison_id = $1`, big).Scan(&run, &rl, &problem); err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	var wideProblem int64
	if err := st.Pool().QueryRow(ctx, `SELECT r.id, (SELECT max(problem_id) FROM run_counts WHERE run_id = r.id) FROM runs r WHERE r.comparison_id = $1 ORDER BY r.id LIMIT 1`,
		wide).Scan(&wideRun, &wideProblem); err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	qs := []struct{ what, sql string }{
		{"problem page: a problem's samples of a run by verdict (store.samplesInto)",
			fmt.Sprintf(`SELECT s.sample_index FROM samples s WHERE s.run_id = %d AND s.problem_id = %d AND s.status = 'correct' ORDER BY s.sample_index LIMIT 16`, rl, problem)},
		{"problem page: the samples picked, with texts",
			fmt.Sprintf(`SELECT left(completion, 2000), status FROM samples WHERE run_id = %d AND problem_id = %d AND sample_index < 16`, rl, problem)},
		{"search in texts of some problems (store.SearchCompletions)",
			fmt.Sprintf(`SELECT DISTINCT problem_id FROM samples WHERE run_id = ANY('{%d,%d}') AND problem_id = ANY(ARRAY(SELECT problem_id FROM run_counts WHERE run_id = %d ORDER BY problem_id LIMIT 20)) AND completion ILIKE '%%answer 17%%'`, run, rl, run)},
		{"a sample's text (store.SampleText)",
			fmt.Sprintf(`SELECT completion FROM samples WHERE run_id = %d AND problem_id = %d AND sample_index = 7`, wideRun, wideProblem)},
		{"verification: pending samples (store.PendingSamples)",
			fmt.Sprintf(`SELECT s.problem_id, s.sample_index FROM samples s WHERE s.run_id = %d AND s.status = 'pending' ORDER BY s.problem_id, s.sample_index LIMIT 500`, rl)},
	}
	fmt.Printf("\nEXPLAIN ANALYZE of the hot queries on samples (load average %s)\n", loadAvg())
	seq := 0
	for _, q := range qs {
		rows, err := st.Pool().Query(ctx, `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) `+q.sql)
		if err != nil {
			return fmt.Errorf("explain %s: %w", q.what, err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("explain %s: %w", q.what, err)
		}
		fmt.Printf("-- %s\n", q.what)
		for _, l := range lines {
			if strings.Contains(l, "Seq Scan on samples") && !strings.Contains(l, "(never executed)") {
				seq++
			}
			if strings.Contains(l, "Scan") || strings.Contains(l, "Execution Time") || strings.Contains(l, "Buffers") && !strings.HasPrefix(strings.TrimSpace(l), "Buffers: shared hit=") {
				fmt.Printf("   %s\n", l)
			}
		}
	}
	if seq > 0 {
		return fmt.Errorf("%d sequential scans of samples in the plans above", seq)
	}
	return nil
}

// labLoad is the page load's settings.
type labLoad struct {
	served              *store.Store // the pages' store
	webPool             int          // its connections (0: the lab's pool)
	base, cookie, token string
	clients, requests   int
	maxTime             time.Duration
	only                string
}

// samplesScans is how many sequential and index scans samples has had
// (pg_stat_user_tables). Backends report their counts when they end, so
// the pools (st's and the pages', served) are emptied first.
func samplesScans(ctx context.Context, st, served *store.Store) (seq, idx int64) {
	st.Pool().Reset()
	if served != nil {
		served.Pool().Reset()
	}
	time.Sleep(300 * time.Millisecond)
	_ = st.Pool().QueryRow(ctx, `SELECT COALESCE(sum(seq_scan), 0)::bigint, COALESCE(sum(idx_scan), 0)::bigint FROM pg_stat_user_tables
		WHERE relid IN (SELECT relid FROM pg_partition_tree('samples') WHERE isleaf)`).Scan(&seq, &idx)
	return seq, idx
}

// pages runs bench-pages' page set on comparison c, checking that none of
// them scans samples sequentially.
func (lc labLoad) pages(ctx context.Context, st *store.Store, c labComparison) ([]pageResult, error) {
	pages, err := pageSet(ctx, st, c.id, pageRequests(lc.clients, lc.requests))
	if err != nil {
		return nil, err
	}
	fmt.Printf("\npages of %s (comparison %d): one client (%d requests), then %d clients, at most %d requests or %v per page\n",
		c.label, c.id, aloneRequests, lc.clients, lc.requests, lc.maxTime)
	fmt.Printf("load average before: %s\n", loadAvg())
	// The first view after the report changes computes what the page keeps
	// with the report (e.g. the grading policy's scope, one read of the
	// comparison's samples); the loads below start after it.
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/comparisons/%d", lc.base, c.id), nil)
	req.AddCookie(&http.Cookie{Name: "reach_session", Value: lc.cookie})
	t0 := time.Now()
	resp, err := (&http.Client{Timeout: 10 * time.Minute}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("first view: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("first view: HTTP %d", resp.StatusCode)
	}
	fmt.Printf("first view of the comparison page (nothing kept yet for its report): %.2fs\n", time.Since(t0).Seconds())
	printPageHeader()
	pg := func() time.Duration { return postgresCPU(ctx, st) }
	var (
		bad []string
		out []pageResult
	)
	for _, p := range pages {
		if lc.only != "" && !slices.Contains(strings.Split(lc.only, "|"), p.name) {
			continue
		}
		s0, _ := samplesScans(ctx, st, lc.served)
		r, err := load(lc.base, p, lc.cookie, lc.token, lc.clients, lc.requests, lc.maxTime, "", pg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		out = append(out, r)
		if s1, _ := samplesScans(ctx, st, lc.served); s1 > s0 {
			bad = append(bad, fmt.Sprintf("%s (%d)", p.name, s1-s0))
		}
	}
	fmt.Printf("load average after: %s\n", loadAvg())
	if len(bad) > 0 {
		fmt.Printf("sequential scans of samples: %s (a bug at scale; in a database of a few thousand samples the planner reads the table instead of an index)\n", strings.Join(bad, ", "))
	} else {
		fmt.Println("no page scanned samples sequentially (pg_stat_user_tables.seq_scan unchanged)")
	}
	return out, nil
}

// deleteComparison deletes comparison c as the delete button does
// (store.DeleteComparison), timing it with the WAL it writes, listing the
// locks its backends hold (its batches of samples and its last
// transaction, polled every 100 ms), and meanwhile loading
// the small comparison's problem pages with one client: their latencies
// say whether readers wait for a delete. Then VACUUM of samples.
func deleteComparison(ctx context.Context, st *store.Store, lc labLoad, c, small labComparison) error {
	var samples int64
	if err := st.Pool().QueryRow(ctx, `SELECT COALESCE(sum(n), 0) FROM run_counts rc JOIN runs r ON r.id = rc.run_id WHERE r.comparison_id = $1`, c.id).Scan(&samples); err != nil {
		return err
	}
	pages, err := pageSet(ctx, st, small.id, 1)
	if err != nil {
		return err
	}
	var probe page
	for _, p := range pages {
		if p.name == "problem page" {
			probe = p
		}
	}
	if err := explainDelete(ctx, st, small.id); err != nil {
		return err
	}
	fmt.Printf("\ndelete of %s (comparison %d, %d samples), as the delete button does; load average before: %s\n", c.label, c.id, samples, loadAvg())
	_, _ = st.Pool().Exec(ctx, `CHECKPOINT`)
	done := make(chan struct{})
	var (
		mu     sync.Mutex
		locks  = map[string]bool{}
		waits  int
		lat    []time.Duration
		probeE error
		wg     sync.WaitGroup
	)
	wg.Add(2)
	go func() { // the deleting backend's locks, and sessions waiting on a lock
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			rows, err := st.Pool().Query(ctx, `SELECT l.mode || ' on ' || CASE WHEN l.locktype = 'relation' THEN c.relname ELSE l.locktype END
				FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid LEFT JOIN pg_class c ON c.oid = l.relation
				WHERE a.datname = current_database() AND (a.query LIKE 'DELETE FROM comparisons%' OR a.query LIKE 'WITH d AS MATERIALIZED%'
					OR a.query LIKE 'DELETE FROM sample\_%' OR a.query LIKE 'DELETE FROM verifier\_audit\_items%')
				  AND a.state <> 'idle' AND l.granted
				  AND (l.locktype <> 'relation' OR c.relkind = 'r' AND c.relname NOT LIKE 'pg\_%') AND l.locktype NOT IN ('virtualxid')`)
			if err != nil {
				continue
			}
			got, _ := pgx.CollectRows(rows, pgx.RowTo[string])
			var w int
			_ = st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&w)
			mu.Lock()
			for _, g := range got {
				locks[g] = true
			}
			waits = max(waits, w)
			mu.Unlock()
		}
	}()
	go func() { // a reader of another comparison meanwhile
		defer wg.Done()
		client := &http.Client{Timeout: 120 * time.Second}
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			req, _ := http.NewRequest(http.MethodGet, lc.base+probe.paths[i%len(probe.paths)], nil)
			req.AddCookie(&http.Cookie{Name: "reach_session", Value: lc.cookie})
			t0 := time.Now()
			resp, err := client.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("HTTP %d", resp.StatusCode)
				}
			}
			mu.Lock()
			if err != nil && probeE == nil {
				probeE = err
			}
			lat = append(lat, time.Since(t0))
			mu.Unlock()
		}
	}()
	w0 := walLSN(ctx, st)
	start := time.Now()
	err = st.DeleteComparison(ctx, c.id)
	took := time.Since(start)
	close(done)
	wg.Wait()
	if err != nil {
		return err
	}
	wal := walLSN(ctx, st) - w0
	fmt.Printf("delete: %.1fs (%.0f samples/s), WAL %s (%.0f B/sample), load average after: %s\n", took.Seconds(), float64(samples)/took.Seconds(), mb(wal),
		float64(wal)/float64(max(samples, 1)), loadAvg())
	ls := make([]string, 0, len(locks))
	for l := range locks {
		ls = append(ls, l)
	}
	sort.Strings(ls)
	byMode := map[string][]string{}
	for _, l := range ls {
		m, rel, _ := strings.Cut(l, " on ")
		byMode[m] = append(byMode[m], rel)
	}
	for _, m := range slices.Sorted(maps.Keys(byMode)) {
		fmt.Printf("locks the deleting transaction held (seen), %s: %d: %s\n", m, len(byMode[m]), strings.Join(byMode[m], ", "))
	}
	fmt.Printf("most sessions waiting on a lock at once meanwhile: %d\n", waits)
	if probeE != nil {
		fmt.Printf("a problem page of %s failed during the delete: %v\n", small.label, probeE)
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		fmt.Printf("problem pages of %s during the delete (one client): %d requests, p50 %.1fms, p95 %.1fms, max %.1fms\n", small.label, len(lat),
			float64(lat[len(lat)/2].Microseconds())/1000, float64(lat[len(lat)*95/100].Microseconds())/1000, float64(lat[len(lat)-1].Microseconds())/1000)
	}

	// The delete enqueues the search_index job, which drops the emptied
	// partitions (their indexes with them) and the indexes of the runs that
	// are gone first.
	start = time.Now()
	parts, err := st.DropOrphanSamplePartitions(ctx)
	if err != nil {
		return err
	}
	dropped, err := st.DropOrphanSearchIndexes(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("partitions and search indexes of the deleted runs dropped (as the search_index job does after a delete): %d and %d in %.1fs\n",
		parts, dropped, time.Since(start).Seconds())

	w0, start = walLSN(ctx, st), time.Now()
	if _, err := st.Pool().Exec(ctx, `VACUUM samples`); err != nil {
		return fmt.Errorf("vacuum samples: %w", err)
	}
	fmt.Printf("VACUUM samples (its TOAST and indexes): %.1fs, WAL %s, load average after: %s\n", time.Since(start).Seconds(), mb(walLSN(ctx, st)-w0), loadAvg())
	return nil
}

// explainDelete prints where a delete of one run's samples spends its
// time (EXPLAIN ANALYZE, rolled back): the delete and each foreign key's
// trigger, then the deletes of the rows about those samples that
// store.DeleteComparison runs after it (the tables that referenced samples
// before migration 00181).
func explainDelete(ctx context.Context, st *store.Store, comparison int64) error {
	tx, err := st.Pool().Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var run, n int64
	if err := tx.QueryRow(ctx, `SELECT min(id) FROM runs WHERE comparison_id = $1`, comparison).Scan(&run); err != nil {
		return fmt.Errorf("explain delete: %w", err)
	}
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM samples WHERE run_id = $1`, run).Scan(&n); err != nil {
		return fmt.Errorf("explain delete: %w", err)
	}
	rows, err := tx.Query(ctx, fmt.Sprintf(`EXPLAIN (ANALYZE, COSTS OFF) DELETE FROM samples WHERE run_id = %d`, run))
	if err != nil {
		return fmt.Errorf("explain delete: %w", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("explain delete: %w", err)
	}
	fmt.Printf("\nEXPLAIN ANALYZE DELETE FROM samples WHERE run_id = %d (%d samples; rolled back):\n", run, n)
	for _, l := range lines {
		fmt.Printf("   %s\n", l)
	}
	for _, t := range []string{"sample_judgments", "sample_reasoning_labels", "sample_scores", "verifier_audit_items", "sample_token_scores"} {
		rows, err := tx.Query(ctx, fmt.Sprintf(`EXPLAIN (ANALYZE, COSTS OFF) DELETE FROM %s WHERE run_id = %d`, t, run))
		if err != nil {
			return fmt.Errorf("explain delete: %w", err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("explain delete: %w", err)
		}
		fmt.Printf("then DELETE FROM %s WHERE run_id = %d: %s\n", t, run, strings.Join(lines, "; "))
	}
	return nil
}

// smallAlone generates the small comparison alone in a new database (with
// its search indexes, unless searchIdx is false) and runs the same pages on
// it: what a small comparison's pages cost without 10 M samples next to it.
func smallAlone(ctx context.Context, adminURL string, small labComparison, workers int, searchIdx bool, lc labLoad) error {
	u, drop, err := createDatabase(ctx, adminURL)
	if err != nil {
		return err
	}
	defer drop()
	st, err := store.Open(ctx, u)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	small.spec.Workers = workers
	if small.id, _, err = benchdata.Create(ctx, st, small.spec, nil); err != nil {
		return err
	}
	if err := jobs.ComputeStats(ctx, st, small.id, 0); err != nil {
		return err
	}
	if searchIdx {
		if err := buildLabSearchIndexes(ctx, st, nil); err != nil {
			return err
		}
	}
	if lc.cookie, lc.token, err = signIn(ctx, st); err != nil {
		return err
	}
	served, base, stop, err := servePages(ctx, st, u, lc.webPool)
	if err != nil {
		return err
	}
	defer stop()
	lc.base, lc.served = base, served
	small.label += ", alone in an empty database"
	_, err = lc.pages(ctx, st, small)
	return err
}
