// Command reach is Reach's single binary: the web server with in-process
// River workers, stand-alone workers, migrations, command-line import and
// reports, the verifier's case runner and the replay endpoint.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/store"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `reach — capability-boundary analysis of reasoning models (pass@k, base vs RL)

Usage:
  reach serve          web dashboard + in-process workers (creates the database, migrates, loads the example)
  reach worker         River workers only, for more machines on the same Postgres
  reach migrate        apply database migrations and exit
  reach import         create a comparison from files: --dataset FILE --base NAME=FILE --model NAME=FILE ... --name NAME
                       [--project NAME] [--wait] [--upload]
  reach sample         create a comparison sampled from OpenAI-compatible endpoints:
                       --dataset FILE --base NAME=URL#MODEL --model NAME=URL#MODEL ... --n N --name NAME [--wait]
  reach replay-server  an OpenAI-compatible server that replays a samples file (tests and demos)
  reach report ID      print a comparison's report (--json for the API's JSON; --exclude-guessable, --biased, --min-n N: the page's views)
  reach export ID      every sample with its verdict, as JSON lines or parquet: [--format jsonl|parquet] [-o FILE]
  reach bundle ID -o DIR  an offline folder of one comparison (pages, charts, problems, data; opens from file://):
                       [--max-samples-per-problem N] [--counts-only] [--collection: ID is a collection]
  reach user create [--admin] EMAIL     create an account; prints a one-time password
  reach user reset-password EMAIL       a new one-time password for an account
  reach token create --user EMAIL       print a new API token (Authorization: Bearer TOKEN)
  reach verify         run the math verifier (no database): --cases FILE | --bench FILE
  reach healthcheck    exit 0 when the server's /healthz answers ok (for container health checks)
  reach version        print the version

Every command but verify takes --database-url (default $DATABASE_URL, else the local server's "reach"
database) and prints the database it uses; only serve, worker and migrate create a missing one.
Run "reach COMMAND -h" for a command's flags.
`

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel()})))
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cmd, args := os.Args[1], os.Args[2:]
	if err := ingestLimits(); err != nil {
		fmt.Fprintf(os.Stderr, "reach: %v\n", err)
		os.Exit(2)
	}
	stopProfile, err := cpuProfile(os.Getenv("REACH_CPU_PROFILE"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "reach: %v\n", err)
		os.Exit(2)
	}
	switch cmd {
	case "serve":
		err = runServe(ctx, args)
	case "worker":
		err = runWorker(ctx, args)
	case "migrate":
		err = runMigrate(ctx, args)
	case "import":
		err = runImport(ctx, args, os.Stdout)
	case "sample":
		err = runSample(ctx, args, os.Stdout)
	case "replay-server":
		err = runReplayServer(ctx, args)
	case "report":
		err = runReport(ctx, args, os.Stdout)
	case "export":
		err = runExport(ctx, args, os.Stdout)
	case "bundle":
		err = runBundle(ctx, args, os.Stdout)
	case "user":
		err = runUser(ctx, args, os.Stdout)
	case "token":
		err = runToken(ctx, args, os.Stdout)
	case "verify":
		err = runVerify(ctx, args, os.Stdin, os.Stdout)
	case "healthcheck":
		err = runHealthcheck(ctx, args)
	case "version", "--version", "-v":
		fmt.Println("reach", version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "reach: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	stopProfile()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "reach %s: %v\n", cmd, err)
		os.Exit(1)
	}
}

// cpuProfile starts a CPU profile of the whole command into path
// (REACH_CPU_PROFILE; empty: none), for `go tool pprof`; the returned
// function writes it out.
func cpuProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("REACH_CPU_PROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("REACH_CPU_PROFILE: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// ingestLimits reads the import limits from the environment:
// REACH_MAX_LINE_BYTES, the longest line (or record) an import accepts
// (default 64 MiB; also bounds an import's memory, about 3x it);
// REACH_MAX_INFLATE_RATIO, how many times its compressed size a compressed
// file may inflate to (default 200, checked past 64 MiB); and
// REACH_MAX_INFLATED_BYTES, the most any compressed file may inflate to
// (default 64 GiB).
func ingestLimits() error {
	for _, v := range []struct {
		name   string
		lo, hi int64
		set    func(int64)
	}{
		{"REACH_MAX_LINE_BYTES", 1 << 10, 1 << 31, func(n int64) { ingest.DefaultLimits.MaxRecordBytes = int(n) }},
		{"REACH_MAX_INFLATE_RATIO", 2, 1 << 20, func(n int64) { ingest.DefaultLimits.MaxInflateRatio = n }},
		{"REACH_MAX_INFLATED_BYTES", 1 << 20, 1 << 50, func(n int64) { ingest.DefaultLimits.MaxInflatedBytes = n }},
	} {
		s := os.Getenv(v.name)
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < v.lo || n > v.hi {
			return fmt.Errorf("%s=%q: want a whole number from %d to %d", v.name, s, v.lo, v.hi)
		}
		v.set(n)
	}
	return nil
}

func logLevel() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(os.Getenv("REACH_LOG_LEVEL"))); err != nil {
		return slog.LevelInfo
	}
	return l
}

// defaultDatabaseURL is the local Postgres of a developer machine.
const defaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/reach?sslmode=disable"

// envInt64 is the integer in environment variable key, or def when it is
// unset or not an integer.
func envInt64(key string, def int64) int64 {
	if n, err := strconv.ParseInt(os.Getenv(key), 10, 64); err == nil {
		return n
	}
	return def
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func newFlags(name string, out io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("reach "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	db := fs.String("database-url", envOr("DATABASE_URL", defaultDatabaseURL), "Postgres URL (env DATABASE_URL)")
	return fs, db
}

// runHealthcheck asks a running server's /healthz; distroless images have
// no curl, so the container health check uses the binary itself.
func runHealthcheck(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("reach healthcheck", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1"+envOr("REACH_ADDR", ":8080")+"/healthz", "health URL")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", *url, resp.Status)
	}
	return nil
}

// announceDatabase says on stderr which database a command uses (password
// hidden), so that a command run with another DATABASE_URL than the
// server's is noticed at once.
func announceDatabase(databaseURL string) {
	fmt.Fprintf(os.Stderr, "reach: database %s\n", store.Redact(databaseURL))
}

// openDatabase connects without migrating or creating (report, export).
func openDatabase(ctx context.Context, databaseURL string) (*store.Store, error) {
	announceDatabase(databaseURL)
	return store.Open(ctx, databaseURL)
}

// parseFlags parses args into fs. On -h/--help it prints fs's usage as
// usual; on a bad flag or value it prints nothing and returns the flag
// package's message with a one-line hint, because the whole flag list after
// an error (a missing --model file, say) buries the error itself.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	defer fs.SetOutput(out)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		_, _ = out.Write(buf.Bytes())
		return err
	}
	if err != nil {
		return fmt.Errorf("%w (%s -h lists the flags)", err, fs.Name())
	}
	return nil
}
