// Package export writes a comparison's samples, one record per sample, as
// JSON lines or parquet, so Reach's verdicts can go back into a notebook:
// pandas.read_json(path, lines=True) or pandas.read_parquet(path).
package export

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/reach-lab/reach/internal/answerclass"
	"github.com/reach-lab/reach/internal/store"
)

// Record is one sample in the export. Verdict is correct, incorrect,
// unparseable (no answer could be read: not correct) or pending (not graded
// yet), as its grader decided. Correct is what the comparison's figures
// count: whether the sample is a solve under GradingPolicy (nil while
// pending), so summing Correct per model and problem gives the report's c.
// It differs from Verdict == "correct" only under the strict policy, for a
// verifier's correct verdict whose answer came from a fallback rule (Rule
// "last-number", "last-math") or whose math completion was cut by the
// length limit (FinishReason "length"). VerdictSource says who decided the
// verdict: "file" (the uploaded file's own verdict), the verifier's name
// and version (e.g. "reach-math/1"), or "override" (a reviewer); the policy
// changes neither of those. FileCorrect and FileExtracted are what the file
// said, kept even when Reach re-verified. CompletionTokens is the file's
// token count, nil (null) when the file had none. AnswerClass names the
// sample's answer class on its problem by the class's most frequent
// spelling, every model's answers grouped together as the problem page,
// maj@k and answer diversity group them (answerclass): samples with the
// same AnswerClass on a problem voted alike; "" for a sample without an
// answer.
type Record struct {
	Problem          string `json:"problem" parquet:"problem"`
	ProblemIndex     int64  `json:"problem_index" parquet:"problem_index"`
	Model            string `json:"model" parquet:"model"`
	Role             string `json:"role" parquet:"role"`
	Step             *int64 `json:"step" parquet:"step,optional"`
	SampleIndex      int64  `json:"sample_index" parquet:"sample_index"`
	Completion       string `json:"completion" parquet:"completion,zstd"`
	ExtractedAnswer  string `json:"extracted_answer" parquet:"extracted_answer"`
	AnswerClass      string `json:"answer_class" parquet:"answer_class"`
	Verdict          string `json:"verdict" parquet:"verdict,dict"`
	Correct          *bool  `json:"correct" parquet:"correct,optional"`
	VerdictSource    string `json:"verdict_source" parquet:"verdict_source,dict"`
	Rule             string `json:"rule" parquet:"rule,dict"`
	Reason           string `json:"reason" parquet:"reason"`
	FinishReason     string `json:"finish_reason" parquet:"finish_reason,dict"`
	CompletionTokens *int64 `json:"completion_tokens" parquet:"completion_tokens,optional"`
	FileCorrect      *bool  `json:"file_correct" parquet:"file_correct,optional"`
	FileExtracted    string `json:"file_extracted" parquet:"file_extracted"`
	GradingPolicy    string `json:"grading_policy" parquet:"grading_policy,dict"`
}

// FromStore converts a stored sample.
func FromStore(x store.ExportSample) Record {
	r := Record{Problem: x.ProblemKey, ProblemIndex: int64(x.ProblemIndex), Model: x.Model, Role: x.Role, SampleIndex: int64(x.SampleIndex),
		Completion: x.Completion, ExtractedAnswer: x.Extracted, Verdict: x.Status, VerdictSource: x.VerdictSource, Rule: x.Rule,
		Reason: x.Reason, FinishReason: x.FinishReason, FileCorrect: x.FileCorrect,
		FileExtracted: x.FileExtracted, GradingPolicy: x.Policy}
	// The store keeps 0 for a file without token counts (ingest's "0 =
	// unknown"): export that as null, not as a count of 0.
	if x.CompletionTokens > 0 {
		n := int64(x.CompletionTokens)
		r.CompletionTokens = &n
	}
	if x.Step != nil {
		s := int64(*x.Step)
		r.Step = &s
	}
	if x.Status != store.SamplePending {
		ok := x.Counted
		r.Correct = &ok
	}
	return r
}

// Comparison writes every sample of comparison id, as st.EachExportSample
// reads them, in format "jsonl" or "parquet" to w: the one path of the web
// download and of `reach export`. Callers check first that the comparison
// is ready. Errors are the store's or the writer's.
func Comparison(ctx context.Context, w io.Writer, st *store.Store, id int64, format string) error {
	classes, err := Classes(ctx, st, id)
	if err != nil {
		return err
	}
	return Write(w, format, func(fn func(Record) error) error {
		return st.EachExportSample(ctx, id, func(x store.ExportSample) error {
			r := FromStore(x)
			r.AnswerClass = classes.Of(x)
			return fn(r)
		})
	})
}

// AnswerClasses are a comparison's answer classes, problem by problem.
type AnswerClasses map[int64]*answerclass.Partition

// Classes groups every problem's answers of comparison id, from the runs'
// answer counts (store.AnswerCountsOfComparison), with the equivalence of
// the problem's kind: the grouping the problem page shows.
func Classes(ctx context.Context, st *store.Store, id int64) (AnswerClasses, error) {
	byProblem, err := st.AnswerCountsOfComparison(ctx, id)
	if err != nil {
		return nil, err
	}
	out := AnswerClasses{}
	for pid, pa := range byProblem {
		var runs []int64
		for _, ac := range pa.Counts {
			if !slices.Contains(runs, ac.RunID) {
				runs = append(runs, ac.RunID)
			}
		}
		out[pid] = answerclass.NewPartition(answerclass.FromCounts(runs, pa.Counts), len(runs), answerclass.EquivFor(pa.Kind))
	}
	return out, nil
}

// Of is a sample's answer class label ("" without an answer).
func (ac AnswerClasses) Of(x store.ExportSample) string {
	p := ac[x.ProblemID]
	if p == nil {
		return ""
	}
	c, _ := p.Of(x.ExportAnswer(), x.Status == store.SampleCorrect)
	return p.Label(c)
}

// Formats are the export formats, with their media types.
var Formats = map[string]string{"jsonl": "application/x-ndjson", "parquet": "application/vnd.apache.parquet"}

// rowsPerGroup bounds a parquet row group: rows are held until their group
// is written, so memory stays at one group however many samples there are.
const rowsPerGroup = 5000

// Write writes the samples that each yields, in format "jsonl" or
// "parquet", to w. each calls its argument once per sample and returns the
// first error; Write returns it, or the writer's.
func Write(w io.Writer, format string, each func(func(Record) error) error) error {
	switch format {
	case "jsonl":
		bw := bufio.NewWriterSize(w, 256<<10)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		if err := each(func(r Record) error { return enc.Encode(r) }); err != nil {
			return err
		}
		return bw.Flush()
	case "parquet":
		pw := parquet.NewGenericWriter[Record](w, parquet.MaxRowsPerRowGroup(rowsPerGroup),
			parquet.Compression(&parquet.Zstd), parquet.CreatedBy("reach", "", ""))
		buf := make([]Record, 0, 256)
		flush := func() error {
			if len(buf) == 0 {
				return nil
			}
			_, err := pw.Write(buf)
			clear(buf)
			buf = buf[:0]
			return err
		}
		err := each(func(r Record) error {
			buf = append(buf, r)
			if len(buf) == cap(buf) {
				return flush()
			}
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return err
		}
		return pw.Close()
	}
	return fmt.Errorf("export format %q: want jsonl or parquet", format)
}
