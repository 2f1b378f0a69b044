package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/reach-lab/reach/internal/export"
	"github.com/reach-lab/reach/internal/store"
)

// runExport writes a comparison's samples, one record per sample with its
// verdict, as JSON lines or parquet: reach export ID [--format parquet] [-o FILE].
func runExport(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dbURL := newFlags("export", os.Stderr)
	format := fs.String("format", "jsonl", "jsonl or parquet")
	out := fs.String("o", "", "write to this file (default: standard output)")
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
	if len(pos) != 1 {
		return errors.New("usage: reach export ID [--format jsonl|parquet] [-o FILE]")
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil {
		return fmt.Errorf("comparison id %q is not a number", pos[0])
	}
	if _, ok := export.Formats[*format]; !ok {
		return fmt.Errorf("--format %q: want jsonl or parquet", *format)
	}
	st, err := openDatabase(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		return err
	}
	if c.Status != store.StatusReady {
		return fmt.Errorf("comparison %d is %s: export it once it is ready", id, c.Status)
	}
	if !c.HasTexts() {
		// An empty file with exit 0 would read as "no samples were correct".
		return fmt.Errorf("comparison %d was imported as per-problem counts: it has no samples to export (its counts are in `reach report %d --json`)", id, id)
	}
	w := stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if err := export.Comparison(ctx, w, st, id, *format); err != nil {
		return err
	}
	if f, ok := w.(*os.File); ok && *out != "" {
		if err := f.Close(); err != nil {
			return err
		}
		// Say where it went: a silent exit left people checking the file.
		if fi, err := os.Stat(*out); err == nil {
			fmt.Fprintf(os.Stderr, "comparison %d: every sample with its verdict written to %s (%s, %d bytes)\n", id, *out, *format, fi.Size())
		}
	}
	return nil
}
