// Command reach-bench measures Reach's pages at paper scale: it builds a
// comparison with internal/benchdata in a throwaway database, computes its
// statistics as the statistics job does, serves Reach on a loopback port
// and runs a bounded load of concurrent clients on each page, printing
// p50/p95/p99 latencies (client-side, over loopback, bodies read in full,
// gzip accepted like a browser).
//
//	reach-bench [-models 2] [-n 1024] [-problems 500] [-texts] [-clients 20] [-requests 400] [-max-time 60s]
//
// `reach-bench lab` builds a lab's instance of about 10 M samples with texts
// in 10 comparisons and measures it (see runLab; `make bench-lab`).
//
// `reach-bench import` measures `reach import` of a generated MATH500 pair
// with real completion texts next to a raw COPY of the same bytes (see
// runImportBench; `make bench-import`).
//
// The database (reach_bench_<random>) is created on the server of
// -database-url and dropped at the end unless -keep. Loopback only; every
// load is bounded in requests and time.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/benchdata"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "import" {
		if err := runImportBench(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "reach-bench import:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "lab" {
		if err := runLab(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "reach-bench lab:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "reach-bench:", err)
		os.Exit(1)
	}
}

type page struct {
	name, path string
	paths      []string // rotated through instead of path, when set
}

func run() error {
	var (
		adminURL = flag.String("database-url", envOr("REACH_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
			"Postgres server (admin database) to create the benchmark database on")
		models   = flag.Int("models", 2, "models (base, checkpoints, RL model)")
		n        = flag.Int("n", 1024, "samples per problem and model")
		problems = flag.Int("problems", 500, "problems (MATH500, tiled beyond 500)")
		texts    = flag.Bool("texts", false, "store completion texts (about 1 KB each) instead of counts only")
		short    = flag.Int("short", 0, "problems with only n/8 samples (exercises the k max warning)")
		clients  = flag.Int("clients", 20, "concurrent clients per page")
		requests = flag.Int("requests", 400, "requests per page (bounded also by -max-time)")
		maxTime  = flag.Duration("max-time", 60*time.Second, "longest load per page")
		only     = flag.String("only", "", "run only the pages with these names (separated by |)")
		keep     = flag.Bool("keep", false, "keep the benchmark database")
		use      = flag.String("use", "", "use this database (from an earlier -keep run) instead of generating one")
		cpuprof  = flag.String("cpuprofile", "", "write a CPU profile of the page load to this file")
		statprof = flag.String("stats-cpuprofile", "", "write a CPU profile of the statistics job to this file")
		dump     = flag.String("dump", "", "write each page's body (uncompressed) into this directory")
		trgm     = flag.Bool("search-index", true, "with -texts: build each run's trigram search index (as the search_index job does) before the pages, timed")
	)
	flag.Parse()
	if *clients < 1 || *clients > 200 || *requests < 1 || *requests > 100_000 {
		return fmt.Errorf("-clients must be in 1..200 and -requests in 1..100000")
	}
	ctx := context.Background()
	dbURL := *use
	if dbURL == "" {
		u, drop, err := createDatabase(ctx, *adminURL)
		if err != nil {
			return err
		}
		dbURL = u
		if !*keep {
			defer drop()
		} else {
			fmt.Println("database kept (reuse it with -use):", dbURL)
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
	fmt.Printf("machine: %d cores, %s\n", runtime.NumCPU(), runtime.Version())
	var id int64
	if *use != "" {
		// The comparison an earlier -keep run generated.
		if err := st.Pool().QueryRow(ctx, `SELECT id FROM comparisons WHERE status = 'ready' ORDER BY id DESC LIMIT 1`).Scan(&id); err != nil {
			return fmt.Errorf("no ready comparison in %s: %w", dbURL, err)
		}
		fmt.Printf("using comparison %d of %s\n", id, dbURL)
	} else {
		fmt.Printf("generating %d models × %d problems × n = %d (%s)…\n", *models, *problems, *n, map[bool]string{true: "with texts", false: "counts only"}[*texts])
		var tm benchdata.Timing
		id, tm, err = benchdata.Create(ctx, st, benchdata.Spec{Models: *models, N: *n, Problems: *problems, Texts: *texts, Seed: 1, ShortProblems: *short}, os.Stdout)
		if err != nil {
			return err
		}
		fmt.Printf("data: %d samples written in %.1fs", tm.Samples, tm.Insert.Seconds())
		if *texts {
			fmt.Printf(", aggregated in %.1fs, quality figures (truncated, fallback, no answer, distinct texts) in %.1fs", tm.Aggregate.Seconds(), tm.Quality.Seconds())
		}
		fmt.Println()
	}
	if _, err := st.Pool().Exec(ctx, `DELETE FROM comparison_stats WHERE comparison_id = $1`, id); err != nil {
		return err
	}
	stopProfile, err := startProfile(*statprof)
	if err != nil {
		return err
	}
	fmt.Printf("load average before the statistics job: %s\n", loadAvg())
	start := time.Now()
	err = jobs.ComputeStats(ctx, st, id, 0)
	stopProfile()
	if err != nil {
		return err
	}
	fmt.Printf("statistics job (bootstrap 2,000 draws, maj@k and answer diversity, every variant, and the report): %.2fs (load average after: %s)\n",
		time.Since(start).Seconds(), loadAvg())

	// The first page view after a change finds the report computed by the
	// statistics job; this is what computing it costs.
	start = time.Now()
	if _, err := analysis.Build(ctx, st, id); err != nil {
		return err
	}
	fmt.Printf("report computed from counts and statistics: %.0fms\n", float64(time.Since(start).Microseconds())/1000)

	if *texts && *trgm {
		if err := buildSearchIndexes(ctx, st, id); err != nil {
			return err
		}
	} else if *use != "" && !*trgm {
		if _, err := st.Pool().Exec(ctx, `DO $$ DECLARE r record; BEGIN
			FOR r IN SELECT relname FROM pg_class WHERE relkind = 'i' AND (relname LIKE 'samples\_trgm\_run\_%' OR relname LIKE 'samples\_search\_run\_%') LOOP
				EXECUTE 'DROP INDEX ' || quote_ident(r.relname); END LOOP; END $$`); err != nil {
			return fmt.Errorf("drop search indexes: %w", err)
		}
		fmt.Println("search indexes dropped: completion searches read the samples")
	}

	cookie, token, err := signIn(ctx, st)
	if err != nil {
		return err
	}
	// The pages' own pool, as reach serve has.
	_, base, stopServer, err := servePages(ctx, st, dbURL, store.DefaultWebConns())
	if err != nil {
		return err
	}
	defer stopServer()

	pages, err := pageSet(ctx, st, id, pageRequests(*clients, *requests))
	if err != nil {
		return err
	}
	stopProfile, err = startProfile(*cpuprof)
	if err != nil {
		return err
	}
	defer stopProfile()
	fmt.Printf("\none client (%d requests one after another: \"1: p50\", \"1: p95\"), then %d concurrent clients, at most %d requests or %v per page (loopback, gzip accepted)\n", aloneRequests, *clients, *requests, *maxTime)
	fmt.Printf("load average before: %s\n", loadAvg())
	printPageHeader()
	pg := func() time.Duration { return postgresCPU(ctx, st) }
	for _, p := range pages {
		if *only != "" && !slices.Contains(strings.Split(*only, "|"), p.name) {
			continue
		}
		if _, err := load(base, p, cookie, token, *clients, *requests, *maxTime, *dump, pg); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	fmt.Printf("load average after: %s\n", loadAvg())
	return nil
}

// startProfile starts a CPU profile into path ("" for none) and returns
// what stops it.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// pageRequests is the most requests load makes of one page: the lists of
// new views and new queries are that long, so that none is asked twice
// and found kept (the warm-up took 200 of 500 before, and the timed
// requests were then mostly kept views).
func pageRequests(clients, requests int) int {
	return 3 + aloneRequests + warmRequests*clients + requests
}

// warmRequests is how many requests each client makes at once, untimed,
// before the timed ones: past the 5 custom plans Postgres makes of each
// statement on each backend.
const warmRequests = 10

// aloneRequests is how many requests one client makes, one after another,
// for the "alone" p50 and p95 (after three to warm up).
const aloneRequests = 40

// pageResult is what load measured of a page: one client's p95 and the
// clients' p95 at once.
type pageResult struct {
	name          string
	aloneP95, p95 time.Duration
	coldP95       time.Duration // of the warm-up burst
}

// printPageHeader prints the column names of load's lines.
func printPageHeader() {
	fmt.Printf("%-16s %8s %8s %9s %9s %8s %8s %8s %7s %8s %8s %10s %10s\n", "page", "1: p50", "1: p95", "cold p95", "cold max", "p50", "p95", "p99", "req/s", "CPU/req", "PG/req", "bytes", "on wire")
}

// load runs the page alone (one client: warm-up, then aloneRequests for
// "alone" p50 and p95), then a warm-up burst of warmRequests per client at
// once (its p95 and slowest request printed as the cold start), then with
// clients at once until requests are done or maxTime has passed, and
// prints the figures.
func load(base string, p page, cookie, token string, clients, requests int, maxTime time.Duration, dumpDir string, pgCPU func() time.Duration) (pageResult, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	var wire atomic.Int64
	get := func(i int) (time.Duration, int, error) {
		path := p.path
		if len(p.paths) > 0 {
			path = p.paths[i%len(p.paths)]
		}
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Accept-Encoding", "gzip") // set by hand: the body is then read compressed (bytes on the wire)
		req.AddCookie(&http.Cookie{Name: "reach_session", Value: cookie})
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, 0, err
		}
		nw, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if err != nil {
			return 0, 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
		}
		wire.Store(nw)
		size := int(nw)
		if resp.Header.Get("Content-Encoding") == "gzip" {
			size = -1 // uncompressed size unknown here; measured below
		}
		return d, size, nil
	}
	var alone []time.Duration
	for i := range 3 + aloneRequests {
		d, _, err := get(i)
		if err != nil {
			return pageResult{}, err
		}
		if i >= 3 {
			alone = append(alone, d)
		}
	}
	slices.Sort(alone)
	raw, err := rawSize(base, p, cookie, token, dumpDir)
	if err != nil {
		return pageResult{}, err
	}

	// The warm-up: warmRequests per client, at once, apart from the
	// timed figures. A server under load keeps its pool's connections
	// (pgxpool: up to an hour); a burst after the pool was emptied first
	// forks a Postgres backend per client, each filling its catalog caches
	// and preparing its statements, and Postgres plans each statement 5
	// times per backend before it settles on a plan: the cold start, which
	// the timed figures must not mix with the steady state (it doubled
	// the p95 and made the p99 600-900 ms). Its p95 and slowest request
	// are printed ("cold p95", "cold max").
	warm, _, err := burst(clients, warmRequests*clients, maxTime, func(i int) (time.Duration, int, error) { return get(3 + aloneRequests + i) })
	if err != nil {
		return pageResult{}, err
	}
	cpu0, pg0 := cpuTime(), pgCPU()
	lat, elapsed, err := burst(clients, requests, maxTime, func(i int) (time.Duration, int, error) { return get(3 + aloneRequests + warmRequests*clients + i) })
	cpu, pg := cpuTime()-cpu0, pgCPU()-pg0
	if err != nil {
		return pageResult{}, err
	}
	q := func(f float64) time.Duration { return lat[min(len(lat)-1, int(f*float64(len(lat))))] }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }
	pgPer := "-"
	if pg > 0 {
		pgPer = ms(pg / time.Duration(len(lat)))
	}
	fmt.Printf("%-16s %8s %8s %9s %9s %8s %8s %8s %7.0f %8s %8s %10d %10d\n", p.name, ms(alone[len(alone)/2]), ms(alone[len(alone)*95/100]), ms(warm[len(warm)*95/100]), ms(warm[len(warm)-1]), ms(q(0.50)), ms(q(0.95)), ms(q(0.99)),
		float64(len(lat))/elapsed.Seconds(), ms(cpu/time.Duration(len(lat))), pgPer, raw, wire.Load())
	return pageResult{name: p.name, aloneP95: alone[len(alone)*95/100], p95: q(0.95), coldP95: warm[len(warm)*95/100]}, nil
}

// burst runs get with clients at once until requests are done or maxTime
// has passed (get's argument counts the requests from 0): their latencies,
// sorted, the wall time, and the first error.
func burst(clients, requests int, maxTime time.Duration, get func(i int) (time.Duration, int, error)) ([]time.Duration, time.Duration, error) {
	var (
		mu    sync.Mutex
		lat   []time.Duration
		next  atomic.Int64
		first error
	)
	deadline := time.Now().Add(maxTime)
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= requests || time.Now().After(deadline) {
					return
				}
				d, _, err := get(i)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				lat = append(lat, d)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if first != nil {
		return nil, 0, first
	}
	slices.Sort(lat)
	return lat, elapsed, nil
}

// rawSize fetches the page once without compression: its size in bytes.
// With dumpDir set the body is written there.
func rawSize(base string, p page, cookie, token, dumpDir string) (int, error) {
	path := p.path
	if len(p.paths) > 0 {
		path = p.paths[0]
	}
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	req.Header.Set("Accept-Encoding", "identity")
	req.AddCookie(&http.Cookie{Name: "reach_session", Value: cookie})
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var w io.Writer = io.Discard
	if dumpDir != "" {
		f, err := os.Create(filepath.Join(dumpDir, strings.ReplaceAll(p.name, " ", "-")))
		if err != nil {
			return 0, err
		}
		defer f.Close()
		w = f
	}
	n, err := io.Copy(w, resp.Body)
	return int(n), err
}

// signIn creates an admin with a session and an API token.
func signIn(ctx context.Context, st *store.Store) (cookie, token string, err error) {
	hash, err := auth.HashPassword("bench password not used", auth.DefaultParams)
	if err != nil {
		return "", "", err
	}
	u, err := st.UserByEmail(ctx, "bench@reach.test") // a database reused with -use has it
	if err != nil {
		if u, err = st.CreateUser(ctx, "bench@reach.test", hash, true, false); err != nil {
			return "", "", err
		}
	}
	cookie, sh, err := auth.NewToken(auth.PrefixSession)
	if err != nil {
		return "", "", err
	}
	if err := st.CreateSession(ctx, sh, u.ID, time.Now().Add(24*time.Hour)); err != nil {
		return "", "", err
	}
	token, th, err := auth.NewToken(auth.PrefixAPI)
	if err != nil {
		return "", "", err
	}
	if _, err := st.CreateAPIToken(ctx, u.ID, "bench", token[:10], th); err != nil {
		return "", "", err
	}
	return cookie, token, nil
}

// createDatabase makes reach_bench_<random> on the admin URL's server and
// returns its URL and a function that drops it.
func createDatabase(ctx context.Context, adminURL string) (string, func(), error) {
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("connect to %s: %w", adminURL, err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "reach_bench_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close(ctx)
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		c, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := admin.Exec(c, "DROP DATABASE "+name+" WITH (FORCE)")
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "drop", name+":", err)
		}
		admin.Close(c)
	}
	return u.String(), drop, nil
}

// cpuTime is the CPU time (user + system) this process has used: the
// server's and the clients' (reading responses; small next to serving them).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// postgresCPU is the CPU time (user + system) the Postgres backends
// connected to st's database have used, read from /proc: 0 when Postgres
// runs on another machine (its pids are not here). Backends that ended are
// not counted; the server's pool keeps its connections during a load.
func postgresCPU(ctx context.Context, st *store.Store) time.Duration {
	rows, err := st.Pool().Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		return 0
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return 0
	}
	var ticks int64
	for _, pid := range pids {
		if t, ok := postgresTicks(pid); ok {
			ticks += t
		}
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ, 100 on Linux
}

// postgresTicks is the CPU time (user + system, in USER_HZ ticks) of
// Postgres process pid so far, read from /proc; false when pid is not a
// Postgres process on this machine.
func postgresTicks(pid int32) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil || !strings.Contains(string(b), "(postgres)") {
		return 0, false
	}
	// Fields after the command's closing parenthesis: state is the 3rd
	// field of stat, utime and stime the 14th and 15th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s, true
}

// loadAvg is the machine's load average (other processes compete for the
// cores: latencies under load depend on it, CPU per request does not).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// buildSearchIndexes builds the trigram index of each run of comparison id
// with texts (store.BuildSearchIndex) and prints its build time and size
// next to the size of the texts it indexes.
func buildSearchIndexes(ctx context.Context, st *store.Store, id int64) error {
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		return err
	}
	for _, r := range c.Runs {
		if !r.HasTexts {
			continue
		}
		fmt.Printf("load average before the search index of run %d: %s\n", r.ID, loadAvg())
		start := time.Now()
		built, err := st.BuildSearchIndex(ctx, r.ID)
		if err != nil {
			return err
		}
		took := time.Since(start)
		var samples, index, texts int64
		if err := st.Pool().QueryRow(ctx, `SELECT count(*), pg_relation_size($2::regclass), sum(pg_column_size(completion))
			FROM samples WHERE run_id = $1`, r.ID, store.SearchIndexName(r.ID)).Scan(&samples, &index, &texts); err != nil {
			return fmt.Errorf("search index size: %w", err)
		}
		fmt.Printf("search index of run %d (built now: %v): %.1fs, %d MB for %d samples (%d bytes per sample; the texts take %d MB as stored)\n",
			r.ID, built, took.Seconds(), index>>20, samples, index/max(samples, 1), texts>>20)
	}
	return nil
}

// pageSet is bench-pages' set of pages of comparison id: the comparison
// page, table views and searches, 50 problem pages spread over its
// problems, the report JSON and the chart data.
func pageSet(ctx context.Context, st *store.Store, id int64, n int) ([]page, error) {
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		return nil, err
	}
	ps, err := st.Problems(ctx, *c.DatasetID, false)
	if err != nil {
		return nil, err
	}
	var problemPaths []string
	for i := 0; i < len(ps) && len(problemPaths) < 50; i += max(1, len(ps)/50) {
		problemPaths = append(problemPaths, fmt.Sprintf("/comparisons/%d/problems/%d", id, ps[i].ID))
	}
	cp := fmt.Sprintf("/comparisons/%d", id)
	freshViews, freshSearches, wholeSearches, commonSearches := freshPaths(cp, n)
	pages := []page{
		{name: "comparison page", path: cp},
		{name: "table sorted", path: cp + "?sort=diff&page=40"},
		{name: "table, new views", paths: freshViews},
		{name: "table search", path: cp + "?q=triangle+area&sort=p"},
		{name: "table in texts", path: cp + "?q=triangle&in=completions&region=base-only"},
		{name: "texts, new queries", paths: freshSearches},
		{name: "texts, whole table", paths: wholeSearches},
		{name: "texts, common words", paths: commonSearches},
		{name: "problem page", paths: problemPaths},
		{name: "report JSON", path: fmt.Sprintf("/api/v1/comparisons/%d/report", id)},
		{name: "crossover.csv", path: cp + "/data/crossover.csv"},
		{name: "crossover.json", path: cp + "/data/crossover.json"},
		{name: "histogram.json", path: cp + "/data/histogram.json"},
		{name: "venn-1.csv", path: cp + "/data/venn-1.csv"},
		{name: "diff.csv", path: cp + "/data/diff.csv"},
		{name: "cover.json", path: cp + "/data/cover.json"},
	}
	return pages, nil
}

// freshPaths are n paths each of four pages of comparison path cp that no
// request asked for before, so that none is found kept: table views,
// searches of the texts in a solved set, searches of every problem's texts
// for a rare phrase, and for words every completion has.
func freshPaths(cp string, n int) (freshViews, freshSearches, wholeSearches, commonSearches []string) {
	// Table views no request asked for before (the page keeps each view's
	// rendered table): sorted by a column, one way or the other, on a page
	// of the table, in a solved set.
	for pg := 1; len(freshViews) < n; pg++ {
		for _, region := range []string{"", "both", "base-only", "other-only", "neither"} {
			for _, col := range []string{"problem", "subject", "level", "c0", "c1", "diff", "p"} {
				for _, dir := range []string{"asc", "desc"} {
					freshViews = append(freshViews, fmt.Sprintf("%s?sort=%s&dir=%s&page=%d&region=%s", cp, col, dir, pg, region))
				}
			}
		}
	}
	// Searches of the completion texts no request made before (each scans
	// the texts; a repeated one is a kept table view).
	for i := range n {
		freshSearches = append(freshSearches, fmt.Sprintf("%s?q=answer+%d&in=completions&region=base-only", cp, i))
	}
	// Searches of every problem's texts for a line of one completion (a
	// check "x \cdot y = xy" the generator wrote): with the search index
	// every problem is searched, without it the first 50,000 samples.
	for i := range n {
		x, y := 11+i%80, 13+i/80 // each check asked once
		wholeSearches = append(wholeSearches, fmt.Sprintf("%s?q=%s&in=completions", cp, url.QueryEscape(fmt.Sprintf(`\cdot %d = %d`, y, x*y))))
	}
	// Searches of every problem's texts for words every completion has,
	// each query new (its letters' case varies: the search ignores case,
	// the kept results do not): each problem's first samples confirm it.
	for i := range n {
		q, bit := []rune("the final answer is"), 0
		for j := range q {
			if q[j] != ' ' && bit < 16 { // 16 letters: 65,536 distinct casings
				if i>>bit&1 == 1 {
					q[j] = unicode.ToUpper(q[j])
				}
				bit++
			}
		}
		commonSearches = append(commonSearches, fmt.Sprintf("%s?q=%s&in=completions&sort=p", cp, url.QueryEscape(string(q))))
	}
	return freshViews, freshSearches, wholeSearches, commonSearches
}
