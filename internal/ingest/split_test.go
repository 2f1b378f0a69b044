package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// placed is a sample as an import stores it: its dataset problem and index, where it came from, and
// what it says.
type placed struct {
	Pos, Index, Line         int
	Completion, Finish, Key  string
	Correct                  string
	Extracted, Reason, Refer string
}

func placedOf(p int, s Sample) placed {
	c := "-"
	if s.Correct != nil {
		c = fmt.Sprint(*s.Correct)
	}
	return placed{p, s.SampleIndex, s.Line, s.Completion, s.FinishReason, s.ProblemKey, c, s.Extracted, s.Reason, s.Reference}
}

// checkpoint is a ReadState and the Matcher's state taken with it.
type checkpoint struct {
	read  ReadState
	match MatchState
}

// readWhole reads data as an import's first pass does: matched, with a checkpoint every `every` bytes.
func readWhole(t *testing.T, name string, data []byte, f Format, m *Mapping, ds []MatchProblem, every int64) ([]placed, []checkpoint, error) {
	t.Helper()
	mt := NewMatcher(name, ds, nil)
	var out []placed
	var cps []checkpoint
	err := Read(bytes.NewReader(data), name, f, m, Options{CheckpointEvery: every,
		OnCheckpoint: func(st ReadState) error {
			// Through JSON, as the import stores them.
			var c checkpoint
			for _, x := range []struct{ v, dst any }{{st, &c.read}, {mt.State(), &c.match}} {
				b, err := json.Marshal(x.v)
				if err != nil {
					return err
				}
				if err := json.Unmarshal(b, x.dst); err != nil {
					return err
				}
			}
			cps = append(cps, c)
			return nil
		},
		OnSample: func(s Sample) error {
			p, err := mt.Resolve(&s)
			if err != nil {
				return err
			}
			out = append(out, placedOf(p, s))
			return nil
		}})
	if err == nil {
		err = mt.Finish()
	}
	return out, cps, err
}

// readParts reads data part by part from the checkpoints (the first at byte 0), each with a fresh
// reader and Matcher resumed from its checkpoint, as the import's chunk jobs do.
func readParts(t *testing.T, name string, data []byte, f Format, m *Mapping, ds []MatchProblem, cps []checkpoint) []placed {
	t.Helper()
	var out []placed
	for i, cp := range cps {
		end := int64(len(data))
		if i+1 < len(cps) {
			end = cps[i+1].read.Offset
		}
		mt := NewMatcher(name, ds, nil)
		mt.Resume(cp.match)
		st := cp.read
		err := Read(bytes.NewReader(data[cp.read.Offset:end]), name, f, m, Options{Resume: &st, OnSample: func(s Sample) error {
			p, err := mt.Resolve(&s)
			if err != nil {
				return err
			}
			out = append(out, placedOf(p, s))
			return nil
		}})
		if err != nil {
			t.Fatalf("%s part %d (bytes %d-%d): %v", name, i, cp.read.Offset, end, err)
		}
	}
	return out
}

// TestReadInParts: a JSONL file read in parts from checkpoints (how a large upload is imported by
// several workers) gives exactly the samples of one whole read: same problems, indices (the
// file's own, or the order of appearance), lines and texts, for every line layout and every
// spacing of the checkpoints, down to one at every line.
func TestReadInParts(t *testing.T) {
	words := readDatasetFile(t, filepath.Join(toolsDir, "dataset_words.jsonl"))
	code := readDatasetFile(t, filepath.Join(toolsDir, "dataset_code.jsonl"))
	math := readDatasetFile(t, filepath.Join(toolsDir, "dataset_math.jsonl"))
	speed := speedDataset()
	type file struct {
		name string
		data []byte
		ds   []MatchProblem
	}
	var files []file
	entries, err := os.ReadDir(toolsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "dataset_") || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		files = append(files, file{name, toolFile(t, name), nil})
	}
	// No sample index anywhere: the index is the order of appearance, carried across parts.
	var implicit bytes.Buffer
	implicit.Write(utf8BOM)
	for k := range 6 {
		for p := range 40 {
			fmt.Fprintf(&implicit, `{"problem_id": %q, "completion": "try %d of %d: \\boxed{%d}"}`+"\n", speed[p].Key, k, p, p+k%3)
			if p%7 == 0 {
				implicit.WriteString("\n   \n") // blank lines count as lines, not records
			}
		}
	}
	// Keyed by position, one record per problem with a list.
	var lists bytes.Buffer
	for p := range 50 {
		fmt.Fprintf(&lists, `{"idx": %d, "outputs": ["a \\boxed{%d}", "b \\boxed{%d}", "c"]}`+"\n", p, p, p+1)
	}
	sp := speedReach(speed)
	sp = sp[:bytes.LastIndexByte(sp[:200_000], '\n')+1]
	// A first part of blank lines only (at 97 bytes a part): no "empty file" for it.
	blank := append(bytes.Repeat([]byte("\n"), 300), lists.Bytes()...)
	files = append(files, file{"blank-start.jsonl", blank, speed}, file{"implicit.jsonl", implicit.Bytes(), speed}, file{"speed.jsonl", sp, speed},
		file{"lmeval.jsonl", speedLMEval(speed), speed}, file{"lists.jsonl", lists.Bytes(), speed})

	split := 0
	for _, fl := range files {
		format, m, err := Sniff(fl.data[:min(len(fl.data), SniffBytes)], fl.name)
		if err != nil {
			t.Fatalf("%s: %v", fl.name, err)
		}
		if !Splittable(fl.data[:min(len(fl.data), SniffBytes)], format, m) {
			t.Errorf("%s (%s) is not splittable", fl.name, format)
			continue
		}
		dss := [][]MatchProblem{fl.ds}
		if fl.ds == nil {
			dss = [][]MatchProblem{words, code, math}
		}
		var whole []placed
		var ds []MatchProblem
		for _, d := range dss {
			if whole, _, err = readWhole(t, fl.name, fl.data, format, m, d, 0); err == nil {
				ds = d
				break
			}
		}
		if ds == nil {
			t.Fatalf("%s matches no dataset: %v", fl.name, err)
		}
		for _, every := range []int64{1, 97, 1000, int64(len(fl.data)) / 3} {
			got, cps, err := readWhole(t, fl.name, fl.data, format, m, ds, every)
			if err != nil {
				t.Fatalf("%s every %d: %v", fl.name, every, err)
			}
			if len(cps) == 0 {
				continue // one line only
			}
			split++
			// The first part starts from a zero state, as the import's does.
			parts := readParts(t, fl.name, fl.data, format, m, ds, append([]checkpoint{{}}, cps...))
			if len(parts) != len(whole) {
				t.Fatalf("%s every %d (%d parts): %d samples, whole %d", fl.name, every, len(cps)+1, len(parts), len(whole))
			}
			for i := range whole {
				if parts[i] != whole[i] || got[i] != whole[i] {
					t.Fatalf("%s every %d: sample %d read in parts\n%+v\nwhole\n%+v", fl.name, every, i, parts[i], whole[i])
				}
			}
		}
	}
	if split < 10 {
		t.Fatalf("only %d files were split", split)
	}
}

// TestSplittable: only plain JSONL of a line layout is read in parts.
func TestSplittable(t *testing.T) {
	for _, tc := range []struct {
		head string
		f    Format
		want bool
	}{
		{`{"problem_id": "a", "completion": "x"}`, FormatReachSample, true},
		{"\xef\xbb\xbf\n  {\"problem_id\": 1}", FormatReachSample, true},
		{"\x1f\x8b\x08\x00", FormatReachSample, false},
		{"\x28\xb5\x2f\xfd", FormatReachSample, false},
		{`[{"problem_id": "a"}]`, FormatReachSample, false},
		{`{"details": {}}`, FormatOpenCompass, false},
		{"problem_id,n,correct\n", FormatCountsCSV, false},
		{"PAR1", FormatParquet, false},
	} {
		if got := Splittable([]byte(tc.head), tc.f, nil); got != tc.want {
			t.Errorf("Splittable(%q, %s) = %v", tc.head, tc.f, got)
		}
	}
}
