package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

func TestRunUserRefusesBadArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reset-password", "--admin", "bob@x"}, "reset-password does not take --admin"},
		{[]string{"reset-password", "bob@x", "--admin"}, "reset-password does not take --admin"},
		{[]string{"create", "notanemail"}, `"notanemail" is not a valid email address`},
		{[]string{"create", "@x"}, "not a valid email address"},
		{[]string{"create", "bob@"}, "not a valid email address"},
		{[]string{"create"}, "usage: reach user create"},
		{[]string{"rename", "bob@x"}, "unknown user command"},
	} {
		// Every case fails before the database is opened, so the URL is never dialled.
		args := append(tc.args, "--database-url", "postgres://127.0.0.1:1/none")
		var out bytes.Buffer
		err := runUser(context.Background(), args, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("runUser(%q) = %v, want an error containing %q", tc.args, err, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("runUser(%q) printed %q", tc.args, out.String())
		}
	}
}

func TestParseFlagsBadValuePrintsOnlyTheError(t *testing.T) {
	fs := flag.NewFlagSet("reach import", flag.ContinueOnError)
	var usage bytes.Buffer
	fs.SetOutput(&usage)
	fs.String("dataset", "", "dataset JSONL file")
	fs.Func("model", "other model samples, NAME=FILE", func(string) error {
		return errors.New(`model "b": open /nope.jsonl: no such file or directory`)
	})
	err := parseFlags(fs, []string{"--model", "b=/nope.jsonl"})
	if err == nil || !strings.Contains(err.Error(), "open /nope.jsonl: no such file or directory") ||
		!strings.Contains(err.Error(), "reach import -h lists the flags") {
		t.Fatalf("err = %v", err)
	}
	if usage.Len() != 0 {
		t.Errorf("printed the usage on a bad value:\n%s", usage.String())
	}

	usage.Reset()
	if err := parseFlags(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: err = %v", err)
	}
	if !strings.Contains(usage.String(), "-dataset") {
		t.Errorf("-h printed %q, want the flag list", usage.String())
	}
}

// reach import without its required flags names the missing ones (and no
// flag list that buries them); it fails before opening the database.
func TestRunImportNamesMissingFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "missing --dataset FILE, --name NAME, --base NAME=FILE, --model NAME=FILE"},
		{[]string{"--dataset", "d.jsonl", "--name", "x"}, "missing --base NAME=FILE, --model NAME=FILE"},
		{[]string{"--name", "x", "--base", "b=args_test.go"}, "missing --dataset FILE, --model NAME=FILE"},
		{[]string{"--dataset", "d.jsonl", "--model", "r=args_test.go"}, "missing --name NAME, --base NAME=FILE"},
	} {
		args := append(tc.args, "--database-url", "postgres://127.0.0.1:1/none")
		var out bytes.Buffer
		err := runImport(context.Background(), args, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want+" (") {
			t.Errorf("runImport(%q) = %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// reach report on a comparison without a report says what happened and
// what to do, once each.
func TestReportNotReadyMessage(t *testing.T) {
	var out bytes.Buffer
	err := reportNotReady(&out, store.Comparison{ID: 8, Name: "pair", Status: store.StatusFailed, Error: "broken.jsonl:43: truncated JSON."}, false)
	want := "no report yet: comparison 8 (pair) failed: broken.jsonl:43: truncated JSON. Fix the file and import it again."
	if err == nil || err.Error() != want || !errors.Is(err, errNotReady) {
		t.Errorf("failed comparison: %v\nwant %s", err, want)
	}
	err = reportNotReady(&out, store.Comparison{ID: 9, Name: "pair", Status: store.StatusVerifying}, false)
	if err == nil || !strings.HasPrefix(err.Error(), "no report yet: comparison 9 (pair) is verifying. Its jobs run in") {
		t.Errorf("running comparison: %v", err)
	}
}

// REACH_IMPORT_CHUNK_MB: unset is the default, 0 never splits, anything not
// a size of at least 1 KiB is refused at start rather than read as the
// default (a trial's "64MB" was silently 128 MiB).
func TestImportChunkBytes(t *testing.T) {
	for v, want := range map[string]int64{"": 0, " ": 0, "0": -1, "128": 128 << 20, "0.5": 512 << 10, "0.001": 1048} {
		if got, err := importChunkBytes(v); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"64MB", "-1", "NaN", "Inf", "0.0000001"} {
		if _, err := importChunkBytes(v); err == nil || !strings.Contains(err.Error(), "REACH_IMPORT_CHUNK_MB") {
			t.Errorf("%q: %v; want an error naming the variable", v, err)
		}
	}
}

func TestImportWriters(t *testing.T) {
	for v, want := range map[string]int{"": 0, " ": 0, "1": 1, "3": 3, " 64 ": 64} {
		if got, err := importWriters(v); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"0", "-2", "65", "2.5", "two"} {
		if _, err := importWriters(v); err == nil || !strings.Contains(err.Error(), "REACH_IMPORT_WRITERS") {
			t.Errorf("%q: %v; want an error naming the variable", v, err)
		}
	}
}

// --model NAME=DIR and NAME='PATTERN' give the model its files in sorted order, pooled at import;
// a pattern that matches nothing is refused naming it.
func TestModelFlagSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"output-rs1.jsonl", "output-rs0.jsonl", ".hidden.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var mf modelFlags
	if err := mf.add("base")("base=" + dir); err != nil {
		t.Fatal(err)
	}
	if err := mf.add("rl")("rl=" + filepath.Join(dir, "output-rs*.jsonl")); err != nil {
		t.Fatal(err)
	}
	for _, m := range mf.models {
		if m.File.Name != "output-rs0.jsonl" || len(m.More) != 1 || m.More[0].Name != "output-rs1.jsonl" {
			t.Errorf("%s: %s + %+v", m.Name, m.File.Name, m.More)
		}
	}
	err := mf.add("rl")("rl2=" + filepath.Join(dir, "*.parquet"))
	if err == nil || !strings.Contains(err.Error(), `model "rl2"`) || !strings.Contains(err.Error(), "matches no file") {
		t.Errorf("empty pattern: %v", err)
	}
}

// --map applies to every model its --base or --model gave: each checkpoint
// of a training run's folder (and the steps --follow adds), and the base
// model when --base came after the --model flags (a trial's `--model
// ppo=trajectory/ --map …` was refused as unmapped at step 100).
func TestMapAppliesToTheFlagsModels(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "trajectory")
	for _, n := range []string{"base.jsonl", "single.jsonl", "trajectory/step_100.jsonl", "trajectory/step_200.jsonl", "trajectory/step_300.jsonl"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var mf modelFlags
	steps := []func() error{
		func() error { return mf.add("rl")("ppo=" + run) },
		func() error { return mf.mapping("problem_id=qid,completion=text,correct=ok") },
		func() error { return mf.add("rl")("one=" + filepath.Join(dir, "single.jsonl")) },
		func() error { return mf.add("base")("sft=" + filepath.Join(dir, "base.jsonl")) },
		func() error { return mf.mapping("problem_id=id,completion=out,correct=c") },
	}
	for i, f := range steps {
		if err := f(); err != nil {
			t.Fatalf("flag %d: %v", i, err)
		}
	}
	if len(mf.models) != 5 {
		t.Fatalf("%d models, want the base, 3 checkpoints and one", len(mf.models))
	}
	for _, m := range mf.models {
		var want string
		switch {
		case m.Role == "base":
			want = "id"
		case m.Step != nil:
			want = "qid"
		}
		got := ""
		if m.Mapping != nil {
			got = m.Mapping.ProblemID
		}
		if got != want {
			t.Errorf("%s: mapping's problem_id %q, want %q", m.Name, got, want)
		}
	}
	if mf.run == nil || mf.run.mapping == nil || mf.run.mapping.ProblemID != "qid" {
		t.Errorf("the followed run's mapping: %+v", mf.run)
	} else if m := mf.models[mf.run.first]; m.Step == nil || *m.Step != 100 {
		t.Errorf("the followed run's first model is %s after --base was put first", m.Name)
	}
}
