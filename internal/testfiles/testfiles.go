// Package testfiles locates the real data the tests read. The data the
// repository may carry (MIT and other redistributable sets, see README.md)
// is under this package's directory, laid out like the team's ../shared
// folder (data/, cases/, verifier-cases/), so a bare clone runs every test
// on it. Files the example comparisons already embed live once, in
// internal/examples/data, and are found there. Data without a licence to
// redistribute stays outside the repository: Unlicensed reads it from
// ../shared/data where present and skips with one line elsewhere.
package testfiles

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Dir is the directory of this package, which holds the carried data. It
// is found from this source file, so it works from any test's working
// directory and from commands run in the repository (reach-bench).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// examples maps paths in the ../shared layout to the files of
// internal/examples/data that are the same bytes (copied there for
// `reach serve`'s example comparisons), so the repository holds them once.
var examples = map[string]string{
	"data/math500/test.jsonl":        "math500.jsonl",
	"data/humaneval/HumanEval.jsonl": "humaneval.jsonl",
	"data/humaneval/samples-mistral-vs-zephyr/mistral_samples.jsonl_results.jsonl": "mistral-7b-instruct.jsonl",
	"data/humaneval/samples-mistral-vs-zephyr/zephyr_samples.jsonl_results.jsonl":  "zephyr-7b-alpha.jsonl",
	// A folder mapped to "": its files have the same names in both places
	// (the counts CSVs).
	"data/generations/math500-qwen25-7b-base-vs-simplerl-counts": "",
}

// Resolve is the path of rel (in the ../shared layout, e.g.
// "data/math500/test.jsonl" or "cases/tool-formats") in the repository,
// without checking that it exists.
func Resolve(rel string) string {
	rel = filepath.ToSlash(filepath.Clean(rel))
	ex := filepath.Join(Dir(), "..", "examples", "data")
	if name, ok := examples[rel]; ok {
		return filepath.Join(ex, name)
	}
	for from, name := range examples {
		if rest, ok := strings.CutPrefix(rel, from+"/"); ok && name == "" {
			return filepath.Join(ex, filepath.FromSlash(rest))
		}
	}
	return filepath.Join(Dir(), filepath.FromSlash(rel))
}

// Path is Resolve(rel), failing the test when it does not exist: a
// carried file is always there, so its absence is a bug, not a skip.
func Path(t testing.TB, rel string) string {
	t.Helper()
	p := Resolve(rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("test data %s: %v", rel, err)
	}
	return p
}

// Data is Path(t, "data/"+rel): a file or folder of the real data sets
// (e.g. Data(t, "math500/test.jsonl")).
// A path in the unlicensed GSM8K rollouts folder goes through GSM8KProbe:
// the real file in an Unlicensed test, the stand-in's in any other.
func Data(t testing.TB, rel string) string {
	t.Helper()
	rel = filepath.ToSlash(filepath.Clean(rel))
	if rel == GSM8KFolder {
		return GSM8KProbe(t)
	}
	if rest, ok := strings.CutPrefix(rel, GSM8KFolder+"/"); ok {
		return filepath.Join(GSM8KProbe(t), filepath.FromSlash(rest))
	}
	return Path(t, "data/"+rel)
}

// GSM8KFolder is the real GSM8K SFT-vs-PPO rollouts under ../shared/data:
// no licence, so the repository may not carry it (see its SOURCE.md there).
const GSM8KFolder = "generations/gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo"

// SharedDir is the team's data folder beside the repository (../shared),
// which a clone does not have.
func SharedDir() string {
	return filepath.Join(Dir(), "..", "..", "..", "shared")
}

// Unlicensed is ../shared/data/rel, a data set the repository may not carry
// (no licence to redistribute it). Where it is absent the test skips with
// one line naming the folder; tests that call it (directly or through a
// helper) have "Unlicensed" in their name, and a sibling test checks the
// same on carried data.
func Unlicensed(t testing.TB, rel string) string {
	t.Helper()
	if !unlicensedTest(t) {
		// CI runs the tests that need this data by name where it is
		// present; one without the name would only ever be skipped there.
		t.Fatalf("%s reads unlicensed data (%s): put \"Unlicensed\" in its name", t.Name(), rel)
	}
	p := filepath.Join(SharedDir(), "data", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		folder := rel
		if parts := strings.SplitN(rel, "/", 3); len(parts) >= 2 {
			folder = parts[0] + "/" + parts[1]
		}
		t.Skipf("unlicensed data ../shared/data/%s absent (not redistributable, so not in the repository)", folder)
	}
	return p
}
