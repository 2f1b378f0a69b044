package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"

	"github.com/reach-lab/reach/internal/verify/cases"
	"github.com/reach-lab/reach/internal/verify/math"
)

func runVerify(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	// No database: the verifier is pure. Output is always JSON lines.
	fs := flag.NewFlagSet("reach verify", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	casesFile := fs.String("cases", "", "JSONL of {id, gold, pred, input}: print one JSON verdict line per case ('-' = stdin). pred is a whole completion "+
		"(its final answer extracted as for a sample: \\boxed{}, answer lines, else the last number) unless input is \"answer\" "+
		"(pred is the final answer itself); gold_input \"completion\" when gold is a full reference solution")
	bench := fs.String("bench", "", "samples file: verify every completion and print verdicts/second")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	open := func(path string) (io.ReadCloser, error) {
		if path == "-" {
			return io.NopCloser(stdin), nil
		}
		return os.Open(path)
	}
	v := math.New()
	switch {
	case *casesFile != "":
		f, err := open(*casesFile)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = cases.RunCases(ctx, f, stdout, v)
		return err
	case *bench != "":
		f, err := open(*bench)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = cases.Bench(ctx, f, stdout, v)
		return err
	}
	fs.Usage()
	return errors.New("need --cases FILE or --bench FILE")
}
