package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/benchdata"
	"github.com/reach-lab/reach/internal/store"
)

// step is one measured step of a repetition.
type step struct {
	wall time.Duration
	wal  int64 // bytes of WAL written (cluster-wide LSN difference)
	rss  int64 // peak RSS of the process, bytes (0: not a child process)
	// cpu is the CPU time (user + system) of the reach process (0: not a
	// child process); pgCPU that of the Postgres backends of the
	// repetition's database (autovacuum included), 0 when Postgres runs
	// on another machine.
	cpu, pgCPU time.Duration
}

// runImportBench is `reach-bench import`: it generates a MATH500 base/RL
// pair with real completion texts (internal/benchdata.WriteFiles) and, per
// repetition in a fresh database, COPYs the same bytes raw into a text
// column and then runs `reach import --wait` on the pair (with -upload also
// `reach import --upload --wait`, the path of uploaded files, and with
// -reverify `reach import --reverify --wait`, every sample verified), printing
// wall time, speed relative to COPY, WAL written and peak RSS; medians over
// -reps.
func runImportBench(args []string) error {
	fs := flag.NewFlagSet("reach-bench import", flag.ContinueOnError)
	adminURL := fs.String("database-url", envOr("REACH_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
		"Postgres server (admin database, superuser for CHECKPOINT) to create each repetition's database on")
	n := fs.Int("n", 1024, "samples per problem of the base model")
	rlN := fs.Int("rl-n", 0, "samples per problem of the RL model (default: -n)")
	dir := fs.String("dir", "", "directory of the generated files (default /tmp/reach-bench-import-n<N>[-rl<RLN>]); reused when it holds the same spec")
	data := fs.String("data", "internal/testfiles/data", "the carried real data (the Qwen3-4B-Base MATH500 completions under generations/); the default is relative to the repository root")
	reach := fs.String("reach", "bin/reach", "the reach binary to run")
	reps := fs.Int("reps", 1, "repetitions (medians are printed)")
	upload := fs.Bool("upload", false, "also run `reach import --upload --wait` (files stored in Postgres first, as from the browser), imported in parts and whole")
	reverify := fs.Bool("reverify", false, "also run `reach import --reverify --wait` (every sample verified by Reach's math verifier)")
	genOnly := fs.Bool("generate-only", false, "only generate the files")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rlN == 0 {
		*rlN = *n
	}
	if *reps < 1 {
		return fmt.Errorf("-reps must be >= 1")
	}
	if *dir == "" {
		*dir = importDir(*n, *rlN)
	}
	start := time.Now()
	files, err := benchdata.WriteFiles(*dir, *data, benchdata.FileSpec{N: *n, RLN: *rlN, Seed: 1})
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	how := fmt.Sprintf("generated in %.1fs", time.Since(start).Seconds())
	if files.Reused {
		how = "reused"
	}
	fmt.Printf("machine: %d cores, %s; load average %s\n", runtime.NumCPU(), runtime.Version(), loadAvg())
	fmt.Printf("files in %s (%s): base.jsonl %s (%d samples), rl.jsonl %s (%d samples), input %s\n", files.Dir, how,
		mb(files.BaseSize), files.BaseSamples, mb(files.RLSize), files.RLSamples, mb(files.Input()))
	if *genOnly {
		return nil
	}
	if _, err := os.Stat(*reach); err != nil {
		return fmt.Errorf("the reach binary (-reach): %w", err)
	}
	// Interrupted, the running step stops (its child process is killed)
	// and the repetition's database is dropped.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A local file is read once and COPYed over one transaction per core
	// (REACH_IMPORT_WRITERS); "one COPY stream" is the same with one.
	names := []string{"raw COPY into a text column", "reach import --wait", "  same, one COPY stream"}
	modes := [][]string{nil, {"REACH_IMPORT_WRITERS=1"}}
	if *upload {
		names = append(names, "reach import --upload --wait", "  same, each file whole")
		modes = append(modes, []string{"--upload"}, []string{"--upload", "REACH_IMPORT_CHUNK_MB=0"})
	}
	if *reverify {
		names = append(names, "reach import --reverify --wait")
		modes = append(modes, []string{"--reverify"})
	}
	results := make([][]step, len(names))
	for rep := range *reps {
		fmt.Printf("\nrepetition %d/%d\n", rep+1, *reps)
		got, err := importRep(ctx, *adminURL, *reach, files, modes)
		if err != nil {
			return err
		}
		for i, s := range got {
			results[i] = append(results[i], s)
			fmt.Printf("  %-30s %8.1fs  WAL %s", names[i], s.wall.Seconds(), mb(s.wal))
			if s.rss > 0 {
				fmt.Printf("  peak RSS %s", mb(s.rss))
			}
			fmt.Printf("  CPU: reach %.1fs, Postgres %.1fs (%.2f of %d cores busy)", s.cpu.Seconds(), s.pgCPU.Seconds(),
				(s.cpu+s.pgCPU).Seconds()/s.wall.Seconds(), runtime.NumCPU())
			fmt.Println()
		}
	}
	fmt.Printf("\nmedians of %d repetition(s); input %s (%d + %d samples); load average %s\n", *reps, mb(files.Input()),
		files.BaseSamples, files.RLSamples, loadAvg())
	fmt.Printf("%-30s %9s %9s %11s %9s %10s %10s %10s %11s\n", "step", "wall", "vs COPY", "WAL", "WAL/input", "peak RSS",
		"reach CPU", "PG CPU", "cores busy")
	copyWall := median(results[0], func(s step) float64 { return s.wall.Seconds() })
	for i, name := range names {
		wall := median(results[i], func(s step) float64 { return s.wall.Seconds() })
		wal := median(results[i], func(s step) float64 { return float64(s.wal) })
		rss := median(results[i], func(s step) float64 { return float64(s.rss) })
		r := "-"
		if rss > 0 {
			r = mb(int64(rss))
		}
		cpu := median(results[i], func(s step) float64 { return s.cpu.Seconds() })
		pg := median(results[i], func(s step) float64 { return s.pgCPU.Seconds() })
		busy := median(results[i], func(s step) float64 { return (s.cpu + s.pgCPU).Seconds() / s.wall.Seconds() })
		fmt.Printf("%-30s %8.1fs %8.0f%% %11s %8.2fx %10s %9.1fs %9.1fs %6.2f of %d\n", name, wall, 100*copyWall/wall, mb(int64(wal)),
			wal/float64(files.Input()), r, cpu, pg, busy, runtime.NumCPU())
	}
	fmt.Println("(vs COPY = COPY's wall time / the step's: the step's speed as a share of raw COPY's; WAL is the cluster's, other sessions included;")
	fmt.Println(" CPU = user + system seconds of the reach process and of the Postgres backends of the benchmark's database, sampled every 100 ms;")
	fmt.Println(" cores busy = both CPU times over the wall time: the share of the machine the step used)")
	return nil
}

// importDir is where the generated files of n and rlN samples per problem
// are kept between runs.
func importDir(n, rlN int) string {
	dir := fmt.Sprintf("/tmp/reach-bench-import-n%d", n)
	if rlN != n {
		dir += fmt.Sprintf("-rl%d", rlN)
	}
	return dir
}

// importRep runs one repetition in a new database and drops it.
// modes are the extra flags of each `reach import` run (nil: none); those
// of the form NAME=value are set in its environment instead.
func importRep(ctx context.Context, adminURL, reach string, files benchdata.Files, modes [][]string) ([]step, error) {
	dbURL, drop, err := createDatabase(ctx, adminURL)
	if err != nil {
		return nil, err
	}
	defer drop()
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return nil, err
	}
	out, _, err := importSteps(ctx, st, dbURL, reach, files, modes)
	return out, err
}

// importSteps times, in st's database (dbURL), the raw COPY of the files
// and then `reach import --wait` once per mode, checking every mode gives
// the same figures: a step per COPY and mode, and the comparisons the
// imports made.
func importSteps(ctx context.Context, st *store.Store, dbURL, reach string, files benchdata.Files, modes [][]string) ([]step, []int64, error) {
	if _, err := st.Pool().Exec(ctx, `DROP TABLE IF EXISTS bench_raw; CREATE TABLE bench_raw (line text)`); err != nil {
		return nil, nil, err
	}
	var (
		out []step
		ids []int64
	)

	// Raw COPY: the files' bytes, one row per line, over one connection.
	// CSV with delimiter and quote bytes that never occur in JSON text
	// stores each line unchanged (text format would unescape backslashes).
	s, err := measure(ctx, st, func() (int64, time.Duration, error) {
		conn, err := st.Pool().Acquire(ctx)
		if err != nil {
			return 0, 0, err
		}
		defer conn.Release()
		for _, path := range []string{files.Base, files.RL} {
			f, err := os.Open(path)
			if err != nil {
				return 0, 0, err
			}
			_, err = conn.Conn().PgConn().CopyFrom(ctx, f, `COPY bench_raw (line) FROM STDIN WITH (FORMAT csv, DELIMITER E'\x01', QUOTE E'\x02')`)
			f.Close()
			if err != nil {
				return 0, 0, fmt.Errorf("COPY %s: %w", path, err)
			}
		}
		return 0, 0, nil
	})
	if err != nil {
		return nil, nil, err
	}
	var rows int64
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM bench_raw`).Scan(&rows); err != nil {
		return nil, nil, err
	}
	if rows != files.BaseSamples+files.RLSamples {
		return nil, nil, fmt.Errorf("raw COPY stored %d rows, want %d", rows, files.BaseSamples+files.RLSamples)
	}
	if _, err := st.Pool().Exec(ctx, `DROP TABLE bench_raw`); err != nil {
		return nil, nil, err
	}
	out = append(out, s)

	var figures []string
	for _, extra := range modes {
		var id int64
		before, err := storedBytes(ctx, st)
		if err != nil {
			return nil, nil, err
		}
		s, err := measure(ctx, st, func() (int64, time.Duration, error) {
			args := []string{"import", "--database-url", dbURL, "--wait", "--name", "benchmark " + strings.Join(extra, " "),
				"--dataset", files.Dataset, "--base", "base=" + files.Base, "--model", "rl=" + files.RL}
			env := os.Environ()
			for _, x := range extra {
				if strings.HasPrefix(x, "REACH_") {
					env = append(env, x)
				} else {
					args = append(args, x)
				}
			}
			cmd := exec.CommandContext(ctx, reach, args...)
			cmd.Env = env
			var stdout bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
			if err := cmd.Start(); err != nil {
				return 0, 0, fmt.Errorf("%s %s: %w", reach, strings.Join(args, " "), err)
			}
			peak := watchPeakRSS(cmd.Process.Pid)
			err := cmd.Wait()
			hwm := peak()
			if err != nil {
				return 0, 0, fmt.Errorf("%s %s: %w", reach, strings.Join(args, " "), err)
			}
			if id, err = strconv.ParseInt(strings.TrimSpace(stdout.String()), 10, 64); err != nil {
				return 0, 0, fmt.Errorf("reach import printed %q, not a comparison id", stdout.String())
			}
			ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			if ru == nil {
				return hwm, 0, nil
			}
			if hwm == 0 { // no /proc: the rusage figure, which can hold this process's own peak (see watchPeakRSS)
				hwm = ru.Maxrss << 10 // kB on Linux
			}
			return hwm, time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
		})
		if err != nil {
			return nil, nil, err
		}
		out, ids = append(out, s), append(ids, id)
		rep, err := analysis.Build(ctx, st, id)
		if err != nil {
			return nil, nil, err
		}
		var f []string
		for _, m := range rep.Models {
			f = append(f, fmt.Sprintf("%s pass@1 %.4f%% pass@%d %.4f%%", m.Name, 100*m.Pass1, rep.KMax, 100*m.PassAtK[rep.KMax-1].Value))
		}
		fig := strings.Join(f, ", ")
		fmt.Printf("  comparison %d (reach import %s): %d problems; %s\n", id, strings.Join(extra, " "), rep.Problems, fig)
		after, err := storedBytes(ctx, st)
		if err != nil {
			return nil, nil, err
		}
		samples := files.BaseSamples + files.RLSamples
		fmt.Printf("  stored: database +%s, %.0f bytes per sample (input %.0f bytes per sample)\n",
			mb(after-before), float64(after-before)/float64(samples), float64(files.Input())/float64(samples))
		figures = append(figures, fig)
	}
	for i := range modes {
		if figures[i] != figures[0] {
			return nil, nil, fmt.Errorf("the import paths disagree: %q vs %q", figures[0], figures[i])
		}
	}
	return out, ids, nil
}

// storedBytes is the database's size on disk (tables, TOAST and indexes;
// the figure a lab sizes Postgres by).
func storedBytes(ctx context.Context, st *store.Store) (int64, error) {
	var n int64
	if err := st.Pool().QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&n); err != nil {
		return 0, fmt.Errorf("database size: %w", err)
	}
	return n, nil
}

// measure runs f after a CHECKPOINT (so each step starts from the same WAL
// state) and returns its wall time, the WAL written meanwhile and the peak
// RSS f reports.
func measure(ctx context.Context, st *store.Store, f func() (rss int64, cpu time.Duration, err error)) (step, error) {
	var s step
	if _, err := st.Pool().Exec(ctx, `CHECKPOINT`); err != nil {
		return s, fmt.Errorf("CHECKPOINT (the benchmark needs a superuser): %w", err)
	}
	lsn := func() (string, error) {
		var l string
		err := st.Pool().QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&l)
		return l, err
	}
	l0, err := lsn()
	if err != nil {
		return s, err
	}
	meter := startPostgresMeter(ctx, st)
	start := time.Now()
	rss, cpu, err := f()
	s.wall = time.Since(start)
	s.pgCPU = meter.stop()
	if err != nil {
		return s, err
	}
	s.cpu = cpu
	l1, err := lsn()
	if err != nil {
		return s, err
	}
	if err := st.Pool().QueryRow(ctx, `SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint`, l1, l0).Scan(&s.wal); err != nil {
		return s, err
	}
	s.rss = rss
	return s, nil
}

// postgresMeter adds up the CPU time of the Postgres backends of a
// database while a step runs: it looks for them every 100 ms and keeps
// each one's last reading, so that backends which end (the pool of a
// reach process that exits) are counted up to their last 100 ms.
type postgresMeter struct {
	quit chan struct{}
	done chan time.Duration
}

func startPostgresMeter(ctx context.Context, st *store.Store) *postgresMeter {
	m := &postgresMeter{quit: make(chan struct{}), done: make(chan time.Duration, 1)}
	first, last := map[int32]int64{}, map[int32]int64{}
	read := func(initial bool) {
		rows, err := st.Pool().Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
		if err != nil {
			return
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return
		}
		for _, pid := range pids {
			t, ok := postgresTicks(pid)
			if !ok {
				continue
			}
			if _, seen := first[pid]; !seen {
				first[pid] = 0 // a backend that started during the step
				if initial {
					first[pid] = t
				}
			}
			last[pid] = t
		}
	}
	read(true)
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.quit:
				read(false)
				var ticks int64
				for pid, t := range last {
					ticks += t - first[pid]
				}
				m.done <- time.Duration(ticks) * time.Second / 100 // USER_HZ
				return
			case <-t.C:
				read(false)
			}
		}
	}()
	return m
}

// stop ends the meter and returns the CPU time counted.
func (m *postgresMeter) stop() time.Duration {
	close(m.quit)
	return <-m.done
}

func median[T any](xs []T, f func(T) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

// watchPeakRSS polls process pid's peak resident set (VmHWM of
// /proc/pid/status, bytes) every 20 ms until the returned function is
// called, which returns the largest seen (0 without /proc). The rusage of
// a child is no measure of it: Go starts a child with vfork, and Linux
// records the shared memory's peak when the child execs, so its ru_maxrss
// is at least this benchmark's own peak (783 MB after generating 10 M
// samples, for an import whose peak was 185 MB).
func watchPeakRSS(pid int) func() int64 {
	var peak atomic.Int64
	read := func() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err == nil && kb<<10 > peak.Load() {
					peak.Store(kb << 10)
				}
			}
		}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-stopped
		return peak.Load()
	}
}
