package replay

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/reach-lab/reach/internal/ingest"
)

// Load builds New's samples map from a samples file in any format ingest
// sniffs (Qwen evaluator JSONL, Reach JSONL, GSM8K-style per-problem rollouts,
// ...) and the dataset file that gives each problem's statement. A sample's
// problem key is matched to a dataset problem's Key, failing that to its Index
// in decimal (ingest's rule). Each problem's texts are ordered by sample index.
//
// Errors: unreadable files, parse errors (ingest's, naming file and line), a
// counts-only file (nothing to replay), a sample whose problem is not in the
// dataset, two problems with the same statement (their recordings could not be
// told apart), or no samples at all.
func Load(ctx context.Context, samplesPath, datasetPath string) (map[string][]string, error) {
	texts, _, err := LoadRecordings(ctx, samplesPath, datasetPath)
	return texts, err
}

// LoadRecordings is Load that also returns each text's recorded
// finish_reason under the same statement and index ("" when the file has
// none), for Options.FinishReasons. Errors are Load's.
func LoadRecordings(ctx context.Context, samplesPath, datasetPath string) (texts, finish map[string][]string, err error) {
	statements, err := loadStatements(ctx, datasetPath)
	if err != nil {
		return nil, nil, err
	}

	f, err := os.Open(samplesPath)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	name := filepath.Base(samplesPath)
	head := make([]byte, ingest.SniffBytes)
	nh, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("replay: read %s: %w", samplesPath, err)
	}
	head = head[:nh]
	format, mapping, err := ingest.Sniff(head, name)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: %w", err)
	}
	if format == ingest.FormatCountsCSV {
		return nil, nil, fmt.Errorf("replay: %s holds counts only, no completion texts to replay", name)
	}
	if format == ingest.FormatMapped && (mapping == nil || mapping.Completion == "") {
		return nil, nil, fmt.Errorf("replay: %s: cannot tell which field holds the completion text", name)
	}

	type rec struct {
		index        int
		text, finish string
	}
	byStatement := map[string][]rec{}
	onSample := func(s ingest.Sample) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, ok := statements.byKey[s.ProblemKey]
		if !ok {
			st, ok = statements.byIndex[s.ProblemKey]
		}
		if !ok {
			return fmt.Errorf("sample for problem %q: no such problem in %s", s.ProblemKey, filepath.Base(datasetPath))
		}
		byStatement[st] = append(byStatement[st], rec{s.SampleIndex, s.Completion, s.FinishReason})
		return nil
	}
	r := io.MultiReader(bytes.NewReader(head), f)
	if err := ingest.ReadSamples(r, name, format, mapping, onSample, nil); err != nil {
		return nil, nil, fmt.Errorf("replay: %w", err)
	}
	if len(byStatement) == 0 {
		return nil, nil, fmt.Errorf("replay: %s has no samples", name)
	}
	texts, finish = make(map[string][]string, len(byStatement)), make(map[string][]string, len(byStatement))
	for st, recs := range byStatement {
		slices.SortStableFunc(recs, func(a, b rec) int { return cmp.Compare(a.index, b.index) })
		t, f := make([]string, len(recs)), make([]string, len(recs))
		for i, r := range recs {
			t[i], f[i] = r.text, r.finish
		}
		texts[st], finish[st] = t, f
	}
	return texts, finish, nil
}

type statementIndex struct {
	byKey, byIndex map[string]string // problem key / decimal index -> statement
}

func loadStatements(ctx context.Context, path string) (statementIndex, error) {
	ix := statementIndex{byKey: map[string]string{}, byIndex: map[string]string{}}
	f, err := os.Open(path)
	if err != nil {
		return ix, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	owner := map[string]string{} // normalized statement -> problem label, to catch duplicates
	err = ingest.ReadDataset(f, filepath.Base(path), func(p ingest.Problem) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		label := p.Key
		if label == "" {
			label = "#" + strconv.Itoa(p.Index)
		}
		n := normalize(p.Statement)
		if other, dup := owner[n]; dup {
			return fmt.Errorf("problems %s and %s have the same statement: their recordings cannot be told apart", other, label)
		}
		owner[n] = label
		if p.Key != "" {
			ix.byKey[p.Key] = p.Statement
		}
		ix.byIndex[strconv.Itoa(p.Index)] = p.Statement
		return nil
	})
	if err != nil {
		return ix, fmt.Errorf("replay: %w", err)
	}
	return ix, nil
}
