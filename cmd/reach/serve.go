package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"riverqueue.com/riverui"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/follow"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/netpolicy"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web"
)

// openStore connects and migrates; with create (serve, worker, migrate) it
// first makes a missing database. Other commands refuse one that does not
// exist: a shell without the server's DATABASE_URL must not quietly get an
// empty database of its own (and a password the server has never seen).
// It says which database it uses on stderr.
func openStore(ctx context.Context, databaseURL string, create bool) (*store.Store, error) {
	announceDatabase(databaseURL)
	if create {
		if err := store.EnsureDatabase(ctx, databaseURL); err != nil {
			return nil, err
		}
	}
	st, err := store.Open(ctx, databaseURL)
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	// The admins' endpoint network policy governs every connection to an
	// inference endpoint this process makes; a change reaches it within 30 s.
	if err := netpolicy.Apply(ctx, st); err != nil {
		st.Close()
		return nil, err
	}
	go netpolicy.Watch(ctx, st, 30*time.Second, slog.Default())
	return st, nil
}

// newJobs builds this process's River client. As a daemon (reach serve,
// reach worker) it works the queue of comparisons following server folders
// and builds the search indexes too; every client can enqueue their jobs.
func newJobs(st *store.Store, workers int, box *secret.Box, localQueue string, daemon bool) (*jobs.Client, error) {
	// Both are for tests of killed workers; the defaults suit real runs.
	timeout, _ := time.ParseDuration(os.Getenv("REACH_JOB_TIMEOUT"))
	rescue, _ := time.ParseDuration(os.Getenv("REACH_RESCUE_AFTER"))
	split, err := importChunkBytes(os.Getenv("REACH_IMPORT_CHUNK_MB"))
	if err != nil {
		return nil, err
	}
	writers, err := importWriters(os.Getenv("REACH_IMPORT_WRITERS"))
	if err != nil {
		return nil, err
	}
	downAfter, err := endpointDownAfter(os.Getenv("REACH_ENDPOINT_DOWN_AFTER"))
	if err != nil {
		return nil, err
	}
	var queues map[string]int
	if daemon {
		queues = map[string]int{follow.Queue: 2}
	}
	return jobs.NewClient(st, jobs.Config{Workers: workers, SamplingWorkers: samplingWorkers(), Verifier: newVerifier(),
		Secret: box, Logger: slog.Default(), JobTimeout: timeout, RescueAfter: rescue, Lease: leaseFromEnv(), LocalQueue: localQueue,
		ImportChunkBytes: split, ImportWriters: writers, EndpointDownAfter: downAfter, Register: follow.Register(st), Queues: queues, SkipSampling: box == nil,
		SkipSearchIndex: !daemon})
}

// endpointDownAfter reads REACH_ENDPOINT_DOWN_AFTER (v), how long a model's
// endpoint may refuse connections before sampling from it fails: a Go
// duration ("90s", "5m"); unset, sampling.DefaultDownAfter.
func endpointDownAfter(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second {
		return 0, fmt.Errorf("REACH_ENDPOINT_DOWN_AFTER=%q: want a duration of at least 1s, e.g. 90s or 5m", v)
	}
	return d, nil
}

// importChunkBytes reads REACH_IMPORT_CHUNK_MB (v), the part size in MiB
// in which a samples file is imported by several jobs: unset, the default
// (jobs.DefaultImportChunkBytes); 0, never split; else at least 1 KiB.
func importChunkBytes(v string) (int64, error) {
	if strings.TrimSpace(v) == "" {
		return 0, nil
	}
	mb, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	switch {
	case err != nil || math.IsNaN(mb) || math.IsInf(mb, 0) || mb < 0:
		return 0, fmt.Errorf("REACH_IMPORT_CHUNK_MB=%q: want a number of MiB (0: import every file whole)", v)
	case mb == 0:
		return -1, nil
	case mb*(1<<20) < 1<<10:
		return 0, fmt.Errorf("REACH_IMPORT_CHUNK_MB=%q: parts under 1 KiB; want at least 0.001 (or 0: import every file whole)", v)
	}
	return int64(mb * (1 << 20)), nil
}

// importWriters reads REACH_IMPORT_WRITERS (v), the COPY streams
// (transactions at once) of a large samples file imported whole: unset,
// one per core; 1, one stream.
func importWriters(v string) (int, error) {
	if strings.TrimSpace(v) == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > 64 {
		return 0, fmt.Errorf("REACH_IMPORT_WRITERS=%q: want a whole number of COPY streams from 1 to 64 (unset: one per core)", v)
	}
	return n, nil
}

// leaseFromEnv reads REACH_LEASE_DELAY, REACH_LEASE_RENEW, REACH_LEASE_TTL,
// REACH_REAP_EVERY and REACH_STUCK_AFTER (Go durations) for tests of killed workers; unset,
// the defaults resume a dead worker's jobs within about a minute.
func leaseFromEnv() jobs.LeaseConfig {
	d := func(k string) time.Duration { v, _ := time.ParseDuration(os.Getenv(k)); return v }
	return jobs.LeaseConfig{Delay: d("REACH_LEASE_DELAY"), Renew: d("REACH_LEASE_RENEW"), TTL: d("REACH_LEASE_TTL"), ReapEvery: d("REACH_REAP_EVERY"),
		StuckAfter: d("REACH_STUCK_AFTER")}
}

// cliJobs returns a River client for a CLI command: with wait it works the
// jobs in this process (stop it with the returned func), otherwise it only
// enqueues them for a running serve or worker. With localQueue set it works
// that queue in any case (the imports of this machine's files).
func cliJobs(ctx context.Context, st *store.Store, box *secret.Box, wait bool, localQueue string) (*jobs.Client, func(), error) {
	workers := 0
	if wait {
		workers = defaultWorkers()
	}
	client, err := newJobs(st, workers, box, localQueue, false)
	if err != nil {
		return nil, nil, err
	}
	if !wait && localQueue == "" {
		return client, func() {}, nil
	}
	if err := client.Start(ctx); err != nil {
		return nil, nil, fmt.Errorf("start workers: %w", err)
	}
	return client, func() { stopJobs(client) }, nil
}

func samplingWorkers() int {
	if n, err := strconv.Atoi(os.Getenv("REACH_SAMPLING_WORKERS")); err == nil {
		return n
	}
	return 32
}

func defaultWorkers() int {
	if n, err := strconv.Atoi(os.Getenv("REACH_WORKERS")); err == nil {
		return n
	}
	return 4
}

func runServe(ctx context.Context, args []string) error {
	fs, dbURL := newFlags("serve", os.Stderr)
	addr := fs.String("addr", envOr("REACH_ADDR", ":8080"), "listen address (env REACH_ADDR)")
	workers := fs.Int("workers", defaultWorkers(), "River workers in this process; 0 leaves jobs to 'reach worker' (env REACH_WORKERS)")
	example := fs.Bool("example", true, "load the example comparisons into an empty database")
	maxMiB := fs.Int64("max-upload-mib", 2048, "largest accepted file per upload, MiB")
	baseURL := fs.String("base-url", os.Getenv("REACH_BASE_URL"), "public address for share and invitation links, e.g. https://reach.example.org (env REACH_BASE_URL; default: the request's host)")
	trustProxy := fs.Bool("trust-proxy", os.Getenv("REACH_TRUST_PROXY") == "1", "take client addresses from X-Forwarded-For/X-Real-IP (only behind a reverse proxy; env REACH_TRUST_PROXY=1)")
	cacheMiB := fs.Int64("report-cache-mib", envInt64("REACH_REPORT_CACHE_MIB", analysis.DefaultCacheBytes>>20),
		"memory for reports kept decoded, MiB (env REACH_REPORT_CACHE_MIB); the most recent report stays whatever its size")
	webConns := fs.Int("web-db-conns", int(envInt64("REACH_WEB_DB_CONNS", int64(store.DefaultWebConns()))),
		"Postgres connections that serve the pages, apart from the workers' (env REACH_WEB_DB_CONNS; default 2 per core, at least 4)")
	metricsAddr := metricsAddrFlag(fs)
	ssoF := addSSOFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if v := os.Getenv("REACH_WEB_DB_CONNS"); v != "" {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("REACH_WEB_DB_CONNS=%q: want a whole number of connections from 1 to 1000", v)
		}
	}
	if *webConns < 1 || *webConns > 1000 {
		return fmt.Errorf("--web-db-conns %d: want 1 to 1000 (Postgres connections serving the pages; REACH_WEB_DB_CONNS)", *webConns)
	}
	if v := os.Getenv("REACH_REPORT_CACHE_MIB"); v != "" {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("REACH_REPORT_CACHE_MIB=%q: want a whole number of MiB from 1 to 1048576", v)
		}
	}
	if *cacheMiB < 1 || *cacheMiB > 1<<20 {
		return fmt.Errorf("--report-cache-mib %d: want 1 to 1048576 (MiB of reports kept decoded; REACH_REPORT_CACHE_MIB)", *cacheMiB)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// What grows past the reports kept decoded and the requests' work
		// is garbage (a stored report read back), which the collector lets
		// reach twice the live heap: a soft limit makes it collect sooner
		// (a million problems, four views read in a row: 585 MB without it).
		debug.SetMemoryLimit(serveMemoryLimit(*cacheMiB))
	}
	st, err := openStore(ctx, *dbURL, true)
	if err != nil {
		return err
	}
	defer st.Close()
	box, err := secret.Load()
	if err != nil {
		return err
	}
	ssoClient, err := ssoF.client(*baseURL, box)
	if err != nil {
		return err
	}
	client, err := newJobs(st, *workers, box, "", true)
	if err != nil {
		return err
	}
	// The server also counts every process's unfinished River jobs, from
	// Postgres; workers serve only their own counters.
	stopMetrics, err := serveMetrics(*metricsAddr, jobs.QueueMetrics(st, slog.Default()))
	if err != nil {
		return err
	}
	defer stopMetrics()
	if *workers > 0 {
		if err := client.Start(ctx); err != nil {
			if ctx.Err() != nil {
				return nil // stopped while starting (a signal): a shutdown, not a failure
			}
			return fmt.Errorf("start workers: %w", err)
		}
		defer stopJobs(client)
	}
	ui, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(client, nil), Logger: slog.Default(), Prefix: "/riverui",
	})
	if err != nil {
		return fmt.Errorf("river UI: %w", err)
	}
	if err := ui.Start(ctx); err != nil {
		return fmt.Errorf("river UI: %w", err)
	}
	if *example {
		ids, err := examples.SeedIfEmpty(ctx, st, client)
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			slog.Info("loading example comparisons", "ids", ids)
		}
	}
	// The pages get a pool of their own (store.OpenSized says why).
	webSt, err := store.OpenSized(ctx, *dbURL, *webConns)
	if err != nil {
		return err
	}
	defer webSt.Close()
	srv := &http.Server{
		Addr: *addr,
		Handler: web.New(webSt, client, web.Config{MaxUploadBytes: *maxMiB << 20, JobsUI: ui, Secret: box, BaseURL: *baseURL, Verifier: newVerifier(),
			TrustProxyHeaders: *trustProxy, CodeGrading: codeSandbox().Err(), SSO: ssoClient, ReportCacheBytes: *cacheMiB << 20}, slog.Default()),
		ReadHeaderTimeout: 10 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	slog.Info("Reach is up", "url", "http://"+displayAddr(*addr), "workers", *workers)
	if err := signInHelp(ctx, st, os.Stdout, "http://"+displayAddr(*addr), *dbURL); err != nil {
		return err
	}
	select {
	case err := <-errc:
		return fmt.Errorf("listen on %s: %w", *addr, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}

func displayAddr(addr string) string {
	if len(addr) > 0 && addr[0] == ':' {
		return "localhost" + addr
	}
	return addr
}

func stopJobs(client *jobs.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Stop(ctx); err != nil {
		slog.Warn("stop workers", "err", err)
	}
}

func runWorker(ctx context.Context, args []string) error {
	fs, dbURL := newFlags("worker", os.Stderr)
	workers := fs.Int("workers", defaultWorkers(), "jobs worked at once (env REACH_WORKERS)")
	metricsAddr := metricsAddrFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *workers < 1 {
		return errors.New("--workers must be at least 1")
	}
	st, err := openStore(ctx, *dbURL, true)
	if err != nil {
		return err
	}
	defer st.Close()
	box, err := secret.Load()
	if err != nil {
		return err
	}
	client, err := newJobs(st, *workers, box, "", true)
	if err != nil {
		return err
	}
	stopMetrics, err := serveMetrics(*metricsAddr)
	if err != nil {
		return err
	}
	defer stopMetrics()
	if err := client.Start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting (a signal): a shutdown, not a failure
		}
		return fmt.Errorf("start workers: %w", err)
	}
	slog.Info("worker started", "workers", *workers)
	<-ctx.Done()
	stopJobs(client)
	return nil
}

func runMigrate(ctx context.Context, args []string) error {
	fs, dbURL := newFlags("migrate", os.Stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	st, err := openStore(ctx, *dbURL, true)
	if err != nil {
		return err
	}
	st.Close()
	fmt.Println("migrations applied")
	return nil
}

// serveMemoryLimit is reach serve's soft memory limit (GOMEMLIMIT
// overrides it) for a report cache of cacheMiB: the cache plus 128 MiB for
// the report being read and the requests. A target for the collector, not
// a cap: a worker's statistics job on a large comparison goes past it.
func serveMemoryLimit(cacheMiB int64) int64 { return (cacheMiB + 128) << 20 }
