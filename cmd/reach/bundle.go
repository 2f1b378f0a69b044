package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"

	"github.com/reach-lab/reach/internal/bundle"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web"
)

// runBundle writes an offline folder of one comparison, or of a
// collection's page with --collection:
// reach bundle ID -o DIR [--max-samples-per-problem N] [--counts-only] [--collection].
func runBundle(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dbURL := newFlags("bundle", os.Stderr)
	out := fs.String("o", "", "the folder to write (must not exist, or be empty)")
	maxSamples := fs.Int("max-samples-per-problem", 16, "completions per model on each problem page")
	countsOnly := fs.Bool("counts-only", false, "no problem statements or completions: figures, charts and counts only")
	collection := fs.Bool("collection", false, "ID is a collection: its page (every model's pass@k, the figures table), not its comparisons")
	var pos []string
	for len(args) > 0 {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	if len(pos) != 1 || *out == "" {
		return errors.New("usage: reach bundle ID -o DIR [--max-samples-per-problem N] [--counts-only] [--collection]")
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil {
		return fmt.Errorf("comparison id %q is not a number", pos[0])
	}
	if *maxSamples < 1 {
		return fmt.Errorf("--max-samples-per-problem %d: want 1 or more (--counts-only for none)", *maxSamples)
	}
	// Into an empty folder only: files of an older bundle left beside the
	// new one would be served with it.
	if entries, err := os.ReadDir(*out); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty: bundle into a new folder", *out)
	}
	st, err := openDatabase(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if *collection {
		k, err := st.GetCollection(ctx, id)
		if err != nil {
			return err
		}
		stats, err := bundle.Write(ctx, web.BundleCollectionHandler(st, web.Config{}, slog.Default(), k.ID), web.BundleToken, bundle.Dir(*out))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "collection %d bundled in %s: %d pages, %d files, %s; open %s/index.html\n", id, *out, stats.Pages, stats.Files,
			bundle.Size(stats.Bytes), *out)
		return nil
	}
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		return err
	}
	if c.Status != store.StatusReady {
		return fmt.Errorf("comparison %d is %s: bundle it once it is ready", id, c.Status)
	}
	h := web.BundleHandler(st, web.Config{}, slog.Default(), id, web.BundleOptions{CountsOnly: *countsOnly, MaxSamples: *maxSamples})
	stats, err := bundle.Write(ctx, h, web.BundleToken, bundle.Dir(*out))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "comparison %d bundled in %s: %d pages, %d files, %s; open %s/index.html\n", id, *out, stats.Pages, stats.Files,
		bundle.Size(stats.Bytes), *out)
	if stats.Unlinked > 0 {
		fmt.Fprintf(stdout, "%d links in completions to this server's pages lead nowhere in the bundle\n", stats.Unlinked)
	}
	return nil
}
