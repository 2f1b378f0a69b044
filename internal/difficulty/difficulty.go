// Package difficulty writes a comparison's per-problem difficulty for
// curating training data: for every problem and model (checkpoints
// included) its c/n, a pass-rate band and, along a training run, how the
// problem moved at that checkpoint. One record per problem and model
// (long format: pandas.read_csv / read_json(lines=True) / read_parquet,
// then pivot by model).
package difficulty

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/csvcell"
)

// Record is one problem under one model.
type Record struct {
	Problem      string  `json:"problem" parquet:"problem"`
	ProblemIndex int64   `json:"problem_index" parquet:"problem_index"`
	Model        string  `json:"model" parquet:"model,dict"`
	Role         string  `json:"role" parquet:"role,dict"`
	Step         *int64  `json:"step" parquet:"step,optional"`
	N            int64   `json:"n" parquet:"n"`
	C            int64   `json:"c" parquet:"c"`
	PassRate     float64 `json:"pass_rate" parquet:"pass_rate"` // c/n
	// Band is the pass rate's band: never (c = 0), hard (≤ 0.2), medium
	// (≤ 0.8), easy (< 1), always (c = n).
	Band string `json:"band" parquet:"band,dict"`
	// Flow is how the problem moved at this point of the training run (the
	// report's trajectory) against the point before: gained, regained,
	// lost, kept-solved or kept-unsolved; "start" at the series' first
	// point; "" for a model outside the run.
	Flow string `json:"flow" parquet:"flow,dict"`
}

// Band names a pass rate's band (see Record.Band).
func Band(c, n int) string {
	switch {
	case c == 0:
		return "never"
	case c == n:
		return "always"
	case float64(c) <= 0.2*float64(n):
		return "hard"
	case float64(c) <= 0.8*float64(n):
		return "medium"
	}
	return "easy"
}

// Records gives the report's records, problem by problem in the report's
// row order, models in report order. The report must carry its rows (as
// analysis.Build and the report cache give it).
func Records(rep *analysis.Report, each func(Record) error) error {
	flows := map[string]map[string]string{} // model -> problem -> flow
	for i, tp := range rep.Trajectory {
		m := map[string]string{}
		for _, k := range tp.Lost {
			m[k] = "lost"
		}
		for _, k := range tp.Gained {
			m[k] = "gained"
		}
		for _, k := range tp.Regained {
			m[k] = "regained"
		}
		if i == 0 {
			m = nil // the start has no point before it
		}
		flows[tp.Model] = m
	}
	prev := map[string]string{} // model -> the trajectory point before it
	for i := 1; i < len(rep.Trajectory); i++ {
		prev[rep.Trajectory[i].Model] = rep.Trajectory[i-1].Model
	}
	col := map[string]int{}
	for m, mr := range rep.Models {
		col[mr.Name] = m
	}
	for _, row := range rep.Rows {
		for m, mr := range rep.Models {
			if m >= len(row.Counts) {
				return fmt.Errorf("problem %s: counts of %d models, want %d", row.Key, len(row.Counts), len(rep.Models))
			}
			x := row.Counts[m]
			r := Record{Problem: row.Key, ProblemIndex: int64(row.Idx), Model: mr.Name, Role: mr.Role, N: int64(x.N), C: int64(x.C), Band: Band(x.C, x.N)}
			if x.N > 0 {
				r.PassRate = float64(x.C) / float64(x.N)
			}
			if mr.Step != nil {
				s := int64(*mr.Step)
				r.Step = &s
			}
			if f, ok := flows[mr.Name]; ok {
				switch {
				case f == nil:
					r.Flow = "start"
				case f[row.Key] != "":
					r.Flow = f[row.Key]
				case x.C > 0:
					r.Flow = "kept-solved"
				default:
					r.Flow = "kept-unsolved"
				}
			}
			if err := each(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// Formats are the export formats with their media types.
var Formats = map[string]string{"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson", "parquet": "application/vnd.apache.parquet"}

// Write writes rep's records to w as csv, jsonl or parquet. Errors: an
// unknown format, or the writer's.
func Write(w io.Writer, format string, rep *analysis.Report) error {
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write([]string{"problem", "problem_index", "model", "role", "step", "n", "c", "pass_rate", "band", "flow"}); err != nil {
			return err
		}
		err := Records(rep, func(r Record) error {
			step := ""
			if r.Step != nil {
				step = strconv.FormatInt(*r.Step, 10)
			}
			// Problem ids and model names come from uploaded files.
			return cw.Write([]string{csvcell.Safe(r.Problem), strconv.FormatInt(r.ProblemIndex, 10), csvcell.Safe(r.Model), r.Role, step,
				strconv.FormatInt(r.N, 10), strconv.FormatInt(r.C, 10), strconv.FormatFloat(r.PassRate, 'g', -1, 64), r.Band, r.Flow})
		})
		if err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	case "jsonl":
		bw := bufio.NewWriterSize(w, 256<<10)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		if err := Records(rep, func(r Record) error { return enc.Encode(r) }); err != nil {
			return err
		}
		return bw.Flush()
	case "parquet":
		pw := parquet.NewGenericWriter[Record](w, parquet.Compression(&parquet.Zstd), parquet.CreatedBy("reach", "", ""))
		buf := make([]Record, 0, 1024)
		flush := func() error {
			if len(buf) == 0 {
				return nil
			}
			_, err := pw.Write(buf)
			buf = buf[:0]
			return err
		}
		err := Records(rep, func(r Record) error {
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
	return fmt.Errorf("difficulty export format %q: want csv, jsonl or parquet", format)
}
