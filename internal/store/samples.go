package store

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/verify"
)

// Sample statuses; the verdict ones match verify.Status.
const (
	SamplePending     = "pending"
	SampleCorrect     = "correct"
	SampleIncorrect   = "incorrect"
	SampleUnparseable = "unparseable"
)

// Sample is one stored completion with its verdict.
type Sample struct {
	RunID       int64
	ProblemID   int64
	SampleIndex int
	// Seed is the seed the sample was requested with (jobs.SampleSeed);
	// nil when sampled without one or imported.
	Seed             *int64
	Completion       string
	FinishReason     string
	CompletionTokens int
	FileCorrect      *bool
	FileExtracted    string
	Status           string
	Extracted        string
	Rule             string
	Reason           string
	// Detail is a failing verdict's evidence (code: the failing test's
	// output, stdout and stderr; a few KiB at most).
	Detail        string
	VerdictSource string
	// Override is set when a reviewer changed the verdict (Status holds the
	// new one); SamplesForProblem fills it, InsertSamples ignores it.
	Override *Override
	// Uncounted says why a sample graded correct is not a solve under its
	// comparison's grading policy (UncountedFallback, UncountedLength); ""
	// when it counts or is not correct. SamplesForProblem fills it.
	Uncounted string
	// CompletionChars is the whole completion's length in characters when
	// SamplesForProblem cut Completion to CompletionShown characters (0 when
	// it is whole).
	CompletionChars int
	// TextHash is md5(Completion) when the caller computed it (the import
	// pipeline does, on all cores); InsertSamples computes it otherwise.
	TextHash [16]byte
}

// Counted reports whether the sample is a solve under its comparison's
// grading policy: graded correct and not Uncounted.
func (x Sample) Counted() bool { return x.Status == SampleCorrect && x.Uncounted == "" }

// CompletionShown is how many characters of a completion SamplesForProblem
// returns: a 60 MB completion must not make a 60 MB page.
// SampleCompletion gives the whole text.
const CompletionShown = 65536

// Override is a reviewer's change of a sample's verdict.
type Override struct {
	From string // the verdict before the first override
	By   string // reviewer's email
	At   time.Time
	Note string
}

var sampleColumns = []string{"run_id", "problem_id", "sample_index", "completion", "finish_reason", "completion_tokens",
	"file_correct", "file_extracted", "status", "extracted", "rule", "reason", "verdict_source", "detail", "text_hash"}

// TextHash is samples.text_hash of a completion: its MD5, as the SQL
// fallback md5(completion)::uuid computes it for samples stored without
// one. The text is read in place: copying it to a []byte first cost an
// import a copy of every text (1.3 s of 26 s of CPU for 2.9 GB).
func TextHash(completion string) [16]byte {
	return md5.Sum(unsafe.Slice(unsafe.StringData(completion), len(completion)))
}

// InsertSamples copies a batch of samples (COPY). A sample key that already
// exists fails the whole batch: callers insert into a run they cleared.
func (s *Store) InsertSamples(ctx context.Context, batch []Sample) error {
	rows := make([][]any, len(batch))
	for i, x := range batch {
		if x.TextHash == ([16]byte{}) {
			x.TextHash = TextHash(x.Completion)
		}
		rows[i] = []any{x.RunID, x.ProblemID, x.SampleIndex, x.Completion, x.FinishReason, x.CompletionTokens,
			x.FileCorrect, x.FileExtracted, x.Status, x.Extracted, x.Rule, x.Reason, x.VerdictSource, x.Detail, x.TextHash}
	}
	if _, err := s.db.CopyFrom(ctx, pgx.Identifier{"samples"}, sampleColumns, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("insert %d samples: %w", len(batch), err)
	}
	return nil
}

// CopySamples streams samples into table (samples, or a table LIKE it)
// with one COPY, for bulk generated data: next fills the sample it is given
// and returns false when there are no more. It returns how many it wrote.
// One COPY keeps Postgres busy while next makes the following rows, which
// batches of InsertSamples do not.
func (s *Store) CopySamples(ctx context.Context, table string, next func(*Sample) (bool, error)) (int64, error) {
	var x Sample
	row := make([]any, len(sampleColumns))
	src := pgx.CopyFromFunc(func() ([]any, error) {
		x = Sample{}
		more, err := next(&x)
		if err != nil || !more {
			return nil, err
		}
		if x.TextHash == ([16]byte{}) {
			x.TextHash = TextHash(x.Completion)
		}
		row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7] = x.RunID, x.ProblemID, x.SampleIndex, x.Completion, x.FinishReason, x.CompletionTokens, x.FileCorrect, x.FileExtracted
		row[8], row[9], row[10], row[11], row[12], row[13], row[14] = x.Status, x.Extracted, x.Rule, x.Reason, x.VerdictSource, x.Detail, x.TextHash
		return row, nil
	})
	n, err := s.db.CopyFrom(ctx, pgx.Identifier{table}, sampleColumns, src)
	if err != nil {
		return n, fmt.Errorf("copy samples into %s (%d written): %w", table, n, err)
	}
	return n, nil
}

// sampleRowTables hold rows about one sample: judgments, reasoning labels,
// scores, verifier audit items, token scores. They reference the sample's
// run, not the sample (migration 00181: a key to samples cost 80 % of a
// delete in row-by-row checks), so whatever deletes or replaces samples of
// a run it keeps deletes their rows too. It does so after the samples, in
// a later statement of the same transaction: a writer of such a row locks
// its sample first (lockSampleSQL), so by then the delete has waited for
// that writer to commit and sees its row, or the writer sees the sample
// gone and writes nothing.
var sampleRowTables = []string{"sample_judgments", "sample_reasoning_labels", "sample_scores", "verifier_audit_items", "sample_token_scores"}

// lockSampleSQL selects the sample ($1, $2, $3) if it exists, holding it
// against a delete until the transaction ends (what the foreign key to
// samples did): the writers of sampleRowTables insert from it.
const lockSampleSQL = `FROM samples WHERE run_id = $1 AND problem_id = $2 AND sample_index = $3 FOR KEY SHARE`

// deleteSampleRows deletes the rows of sampleRowTables of the runs where
// (a condition on run_id, with args) selects.
func (s *Store) deleteSampleRows(ctx context.Context, where string, args ...any) error {
	for _, t := range sampleRowTables {
		if _, err := s.db.Exec(ctx, `DELETE FROM `+t+` WHERE `+where, args...); err != nil {
			return fmt.Errorf("delete %s of deleted samples: %w", t, err)
		}
	}
	return nil
}

// ClearRun deletes a run's samples, the rows about them (sampleRowTables)
// and its counts (before a re-import). Outside a transaction a run with
// its own partition has it emptied (TRUNCATE, which waits for the run's
// readers). In a transaction the rows are deleted: a TRUNCATE would hold
// the partition's ACCESS EXCLUSIVE lock until commit, and an import's
// transaction waits for its other writers into the same run.
func (s *Store) ClearRun(ctx context.Context, runID int64) error {
	if s.tx == nil {
		if err := s.deleteRunSamples(ctx, runID); err != nil {
			return err
		}
	} else if _, err := s.db.Exec(ctx, `DELETE FROM samples WHERE run_id = $1`, runID); err != nil {
		return fmt.Errorf("clear samples of run %d: %w", runID, err)
	}
	if err := s.deleteSampleRows(ctx, `run_id = $1`, runID); err != nil {
		return fmt.Errorf("clear run %d: %w", runID, err)
	}
	for _, table := range []string{"run_counts", "run_answers", "run_grading", "import_chunks"} {
		if _, err := s.db.Exec(ctx, `DELETE FROM `+table+` WHERE run_id = $1`, runID); err != nil {
			return fmt.Errorf("clear counts of run %d: %w", runID, err)
		}
	}
	return nil
}

// deleteRunSamples deletes every sample of run runID: TRUNCATE of its own
// partition, or a DELETE in samples_legacy.
func (s *Store) deleteRunSamples(ctx context.Context, runID int64) error {
	own, err := s.ownPartition(ctx, runID)
	if err != nil {
		return err
	}
	q := `DELETE FROM samples WHERE run_id = $1`
	args := []any{runID}
	if own {
		q, args = `TRUNCATE `+SamplePartition(runID), nil
	}
	if _, err := s.db.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("clear samples of run %d: %w", runID, err)
	}
	return nil
}

// PendingSample is a sample awaiting a verdict, with what the verifier needs.
type PendingSample struct {
	ProblemID   int64
	SampleIndex int
	Completion  string
	Reference   string
	Kind        string
}

// PendingSamples returns up to limit unverified samples of a run after the
// given key, in key order (keyset pagination keeps each batch cheap).
//
// With all set it returns every sample (re-verification), except those a
// reviewer overrode: their verdict outlives re-verification.
func (s *Store) PendingSamples(ctx context.Context, runID, afterProblem int64, afterIndex, limit int, all bool) ([]PendingSample, error) {
	filter := `s.status = 'pending'`
	if all {
		filter = `s.override_at IS NULL`
	}
	rows, err := s.db.Query(ctx, `SELECT s.problem_id, s.sample_index, s.completion, p.reference, p.kind
		FROM samples s JOIN problems p ON p.id = s.problem_id
		WHERE s.run_id = $1 AND `+filter+` AND (s.problem_id, s.sample_index) > ($2, $3)
		ORDER BY s.problem_id, s.sample_index LIMIT $4`, runID, afterProblem, afterIndex, limit)
	if err != nil {
		return nil, fmt.Errorf("pending samples of run %d: %w", runID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (PendingSample, error) {
		var p PendingSample
		err := row.Scan(&p.ProblemID, &p.SampleIndex, &p.Completion, &p.Reference, &p.Kind)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("pending samples of run %d: %w", runID, err)
	}
	return out, nil
}

// CountSamples returns a run's sample count and how many await a verdict.
func (s *Store) CountSamples(ctx context.Context, runID int64) (total, pending int64, err error) {
	err = s.db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE status = 'pending') FROM samples WHERE run_id = $1`, runID).
		Scan(&total, &pending)
	if err != nil {
		return 0, 0, fmt.Errorf("count samples of run %d: %w", runID, err)
	}
	return total, pending, nil
}

// Verdict is a verifier's judgement to store on one sample.
type Verdict struct {
	ProblemID   int64
	SampleIndex int
	Status      string
	Extracted   string
	Rule        string
	Reason      string
	Detail      string
}

// SaveVerdicts stores verdicts on a run's samples in one statement and
// returns how many changed from correct to not correct or back (compared
// with the file's own verdict, where there was one).
func (s *Store) SaveVerdicts(ctx context.Context, runID int64, source string, vs []Verdict) (changed int64, err error) {
	pids := make([]int64, len(vs))
	idxs := make([]int32, len(vs))
	sts := make([]string, len(vs))
	exs := make([]string, len(vs))
	rules := make([]string, len(vs))
	reasons := make([]string, len(vs))
	details := make([]string, len(vs))
	for i, v := range vs {
		pids[i], idxs[i], sts[i], exs[i], rules[i], reasons[i] = v.ProblemID, int32(v.SampleIndex), v.Status, v.Extracted, v.Rule, v.Reason
		details[i] = v.Detail
	}
	err = s.db.QueryRow(ctx, `WITH v AS (
			SELECT * FROM unnest($2::bigint[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $9::text[])
				AS v(problem_id, sample_index, status, extracted, rule, reason, detail)),
		u AS (UPDATE samples s SET status = v.status, extracted = v.extracted, rule = v.rule, reason = v.reason, detail = v.detail,
				verdict_source = $8
			FROM v WHERE s.run_id = $1 AND s.problem_id = v.problem_id AND s.sample_index = v.sample_index
			RETURNING s.file_correct, s.status)
		SELECT count(*) FILTER (WHERE file_correct IS NOT NULL AND file_correct <> (status = 'correct')) FROM u`,
		runID, pids, idxs, sts, exs, rules, reasons, source, details).Scan(&changed)
	if err != nil {
		return 0, fmt.Errorf("save %d verdicts of run %d: %w", len(vs), runID, err)
	}
	return changed, nil
}

// FileLabelled reports whether any sample of the run carries the file's
// own verdict.
func (s *Store) FileLabelled(ctx context.Context, runID int64) (bool, error) {
	var ok bool
	if err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM samples WHERE run_id = $1 AND file_correct IS NOT NULL)`, runID).Scan(&ok); err != nil {
		return false, fmt.Errorf("file labels of run %d: %w", runID, err)
	}
	return ok, nil
}

// ChangedVerdicts counts a run's samples whose current verdict differs from
// the verdict the uploaded file carried.
func (s *Store) ChangedVerdicts(ctx context.Context, runID int64) (int64, error) {
	var n int64
	err := s.db.QueryRow(ctx, `SELECT count(*) FROM samples WHERE run_id = $1 AND file_correct IS NOT NULL
		AND status <> 'pending' AND file_correct <> (status = 'correct')`, runID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("changed verdicts of run %d: %w", runID, err)
	}
	return n, nil
}

// SamplesForProblem returns up to limit samples of one run on one problem,
// correct ones first, then by sample index. Completions longer than
// CompletionShown characters come cut, with CompletionChars set.
func (s *Store) SamplesForProblem(ctx context.Context, runID, problemID int64, limit int) ([]Sample, error) {
	return s.samplesFor(ctx, runID, problemID, limit, nil)
}

// SamplesWithAnswer is SamplesForProblem for the samples whose answer
// (AnswerSQL) is answer.
func (s *Store) SamplesWithAnswer(ctx context.Context, runID, problemID int64, answer string, limit int) ([]Sample, error) {
	return s.samplesFor(ctx, runID, problemID, limit, &answer)
}

func (s *Store) samplesFor(ctx context.Context, runID, problemID int64, limit int, answer *string) ([]Sample, error) {
	var out map[int64][]Sample
	err := s.Batch(ctx, s.ProblemSamplesInto([]int64{runID}, problemID, limit, answer, &out))
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", runID, err)
	}
	return out[runID], nil
}

// RunIDs are the ids of c's runs, in position order.
func RunIDs(c Comparison) []int64 {
	ids := make([]int64, len(c.Runs))
	for i, r := range c.Runs {
		ids[i] = r.ID
	}
	return ids
}

// ProblemRunsShown are the ids of c's runs with completion texts at the
// places (in position order, 0 the first, as Comparison.Runs) that places
// names (nil: all of them): the runs whose samples a problem page shows.
func ProblemRunsShown(c Comparison, places []int64) []int64 {
	var ids []int64
	for i, r := range c.Runs {
		if r.HasTexts && (places == nil || slices.Contains(places, int64(i))) {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// ProblemSamplesInto queues one query for what SamplesForProblem (answer
// nil) or SamplesWithAnswer returns, for each of runs (ids, of one
// comparison; ProblemRunsShown): out maps a run's id to its samples (runs
// without any absent). Runs left out cost nothing: their texts are not
// read. No runs, no query.
func (s *Store) ProblemSamplesInto(runs []int64, problemID int64, limit int, answer *string, out *map[int64][]Sample) Queued {
	// Each run's part names it literally: Postgres plans that run's
	// partition only, with its own statistics. Joined to runs, every
	// partition was planned (3 scans each, a 20-70 ms plan at 29 runs) and
	// the first plans of a connection, made for the problem's id, read
	// the problem's samples in every partition before the run's.
	args := []any{runs, verify.FallbackRules, problemID, limit, CompletionShown}
	only := ""
	if answer != nil { // its own statement: a generic plan for both misjudged how many samples match
		only = ` AND ` + AnswerSQL + ` = $6`
		args = append(args, *answer)
	}
	// Counted solves first, then the other correct verdicts, then the rest,
	// each by sample index. Each group is read in the primary key's order
	// and stops at limit, and the groups are appended in that order under
	// one limit (Postgres runs a UNION ALL's parts one after another): a
	// problem with 16 counted solves reads about 16 samples per run, not
	// all n of them to sort them (5 ms of Postgres CPU at n = 1,024 for two
	// runs, then 1 ms). The problem's kind and the comparison's policy
	// (uncountedSQL's p and cmp) are read once per run, not looked up per
	// sample. The picked samples' rows are then fetched one by one by
	// primary key (a LATERAL with LIMIT, so the planner cannot turn it into
	// a join): as a join it hashed every sample of the problem (140 ms for
	// 2 of 11 runs at 10 M samples).
	parts := make([]string, len(runs))
	for i, id := range runs {
		run := strconv.FormatInt(id, 10)
		// The two groups of correct verdicts are told apart by solveSQL
		// (uncounted is '' exactly when it is not false), a condition on
		// columns whose share the planner can estimate: filtered on
		// uncounted (an opaque CASE, "3 rows") it read all the problem's
		// samples by samples_problem and sorted them, 20-40 ms a view.
		correct := func(solve string) string {
			return `SELECT s.sample_index, true AS ok, ` + uncountedSQL + ` AS uncounted
				FROM samples s WHERE s.run_id = ` + run + ` AND s.problem_id = $3 AND s.status = 'correct' AND (` + solveSQL + `) ` + solve + only + `
				ORDER BY s.sample_index LIMIT $4`
		}
		parts[i] = `SELECT s.run_id, s.problem_id, s.sample_index, s.completion, s.finish_reason, s.completion_tokens,
				s.file_correct, s.file_extracted, s.status, s.extracted, s.rule, s.reason, s.verdict_source, s.detail,
				s.override_from, COALESCE(u.email, '') AS email, s.override_at, s.override_note, s.chars, s.seed, x.uncounted,
				` + strconv.Itoa(i) + ` AS ord, x.ok, x.uncounted = '' AS counted
			FROM (SELECT grading_policy FROM policies WHERE id = ` + run + `) cmp CROSS JOIN p
			CROSS JOIN LATERAL (SELECT * FROM (
					(` + correct("IS NOT FALSE") + `)
					UNION ALL
					(` + correct("IS FALSE") + `)
					UNION ALL
					(SELECT s.sample_index, false, '' FROM samples s
						WHERE s.run_id = ` + run + ` AND s.problem_id = $3 AND s.status <> 'correct'` + only + ` ORDER BY s.sample_index LIMIT $4)
				) z LIMIT $4) x
			CROSS JOIN LATERAL (
				SELECT s.run_id, s.problem_id, s.sample_index, left(s.completion, $5) AS completion, s.finish_reason, s.completion_tokens,
					s.file_correct, s.file_extracted, s.status, s.extracted, s.rule, s.reason, s.verdict_source, s.detail,
					s.override_from, s.override_by, s.override_at, s.override_note, s.seed,
					CASE WHEN octet_length(s.completion) > $5 THEN char_length(s.completion) ELSE 0 END AS chars
				FROM samples s WHERE s.run_id = ` + run + ` AND s.problem_id = $3 AND s.sample_index = x.sample_index
				LIMIT 1) s
			LEFT JOIN users u ON u.id = s.override_by`
	}
	sql := `WITH p AS MATERIALIZED (SELECT kind FROM problems WHERE id = $3),
		policies AS MATERIALIZED (SELECT r.id, c.grading_policy FROM runs r JOIN comparisons c ON c.id = r.comparison_id WHERE r.id = ANY($1::bigint[]))
		SELECT run_id, problem_id, sample_index, completion, finish_reason, completion_tokens, file_correct, file_extracted,
			status, extracted, rule, reason, verdict_source, detail, override_from, email, override_at, override_note, chars, seed, uncounted
		FROM (` + strings.Join(parts, "\nUNION ALL\n") + `) picked
		ORDER BY ord, ok DESC, counted DESC, sample_index`
	return func(b *pgx.Batch) {
		*out = map[int64][]Sample{}
		if len(runs) == 0 {
			return
		}
		b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var x Sample
				var from *string
				var o Override
				var at *time.Time
				err := rows.Scan(&x.RunID, &x.ProblemID, &x.SampleIndex, &x.Completion, &x.FinishReason, &x.CompletionTokens,
					&x.FileCorrect, &x.FileExtracted, &x.Status, &x.Extracted, &x.Rule, &x.Reason, &x.VerdictSource, &x.Detail,
					&from, &o.By, &at, &o.Note, &x.CompletionChars, &x.Seed, &x.Uncounted)
				if err != nil {
					return fmt.Errorf("samples on problem %d: %w", problemID, err)
				}
				if x.CompletionChars <= CompletionShown {
					x.CompletionChars = 0 // many bytes, few characters: whole
				}
				if from != nil && at != nil {
					o.From, o.At = *from, *at
					x.Override = &o
				}
				(*out)[x.RunID] = append((*out)[x.RunID], x)
			}
			if err := rows.Err(); err != nil {
				return fmt.Errorf("samples on problem %d: %w", problemID, err)
			}
			return nil
		})
	}
}

// SampleCompletion returns one sample's whole completion, or ErrNotFound.
func (s *Store) SampleCompletion(ctx context.Context, runID, problemID int64, index int) (string, error) {
	var text string
	err := s.db.QueryRow(ctx, `SELECT completion FROM samples WHERE run_id = $1 AND problem_id = $2 AND sample_index = $3`,
		runID, problemID, index).Scan(&text)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("sample %d of run %d on problem %d: %w", index, runID, problemID, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("sample %d of run %d on problem %d: %w", index, runID, problemID, err)
	}
	return text, nil
}

// SampleExists returns nil when sample index of run runID on problem
// problemID is stored, else an error wrapping ErrNotFound.
func (s *Store) SampleExists(ctx context.Context, runID, problemID int64, index int) error {
	var ok bool
	err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM samples WHERE run_id = $1 AND problem_id = $2 AND sample_index = $3)`,
		runID, problemID, index).Scan(&ok)
	if err != nil {
		return fmt.Errorf("sample %d of run %d on problem %d: %w", index, runID, problemID, err)
	}
	if !ok {
		return fmt.Errorf("sample %d of run %d on problem %d: %w", index, runID, problemID, ErrNotFound)
	}
	return nil
}

// RestoreFileVerdicts gives a run's samples that carried a verdict in their
// file that verdict back (and its extracted answer), undoing a
// re-verification. Reviewer overrides stay. It returns how many samples
// changed.
func (s *Store) RestoreFileVerdicts(ctx context.Context, runID int64) (int64, error) {
	tag, err := s.db.Exec(ctx, `UPDATE samples SET status = CASE WHEN file_correct THEN 'correct' ELSE 'incorrect' END,
			extracted = file_extracted, rule = '', reason = '', verdict_source = 'file'
		WHERE run_id = $1 AND file_correct IS NOT NULL AND override_at IS NULL AND verdict_source <> 'file'`, runID)
	if err != nil {
		return 0, fmt.Errorf("restore file verdicts of run %d: %w", runID, err)
	}
	if _, err := s.db.Exec(ctx, `UPDATE runs SET verdicts_changed = NULL,
			verdict_source = CASE WHEN EXISTS (SELECT 1 FROM samples WHERE run_id = $1 AND file_correct IS NULL) THEN 'file+verifier' ELSE 'file' END
		WHERE id = $1`, runID); err != nil {
		return 0, fmt.Errorf("restore file verdicts of run %d: %w", runID, err)
	}
	return tag.RowsAffected(), nil
}

// Gradability is how many of a run's samples a verifier could not read,
// with one example.
type Gradability struct {
	Total, Unparseable int64
	Example            string // reason of one unparseable sample
}

// RunGradability counts a run's samples and those graded unparseable by a
// verifier (file verdicts and reviewer overrides are never unparseable).
func (s *Store) RunGradability(ctx context.Context, runID int64) (Gradability, error) {
	var g Gradability
	err := s.db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE status = 'unparseable'),
			COALESCE(min(reason) FILTER (WHERE status = 'unparseable'), '')
		FROM samples WHERE run_id = $1`, runID).Scan(&g.Total, &g.Unparseable, &g.Example)
	if err != nil {
		return g, fmt.Errorf("gradability of run %d: %w", runID, err)
	}
	return g, nil
}

// CodeProbe is one code sample of a run to try the code harnesses on: its
// key, text and the file's label (nil without one).
type CodeProbe struct {
	ProblemID   int64
	SampleIndex int
	Completion  string
	FileCorrect *bool
}

// CodeProbes returns up to n code samples of a run, one per problem, from
// problems spread over the dataset and samples spread over the indices (by
// a hash of the ids, so the same run gives the same probes). One pass over
// the run's sample keys; only the chosen completions are read.
func (s *Store) CodeProbes(ctx context.Context, runID int64, n int) ([]CodeProbe, error) {
	rows, err := s.db.Query(ctx, `WITH pick AS (
			SELECT DISTINCT ON (s.problem_id) s.problem_id, s.sample_index
			FROM samples s JOIN problems p ON p.id = s.problem_id AND p.kind = 'code'
			WHERE s.run_id = $1
			ORDER BY s.problem_id, md5(s.problem_id || ':' || s.sample_index))
		SELECT s.problem_id, s.sample_index, s.completion, s.file_correct
		FROM (SELECT * FROM pick ORDER BY md5(problem_id::text) LIMIT $2) k
		JOIN samples s ON s.run_id = $1 AND s.problem_id = k.problem_id AND s.sample_index = k.sample_index
		ORDER BY s.problem_id`, runID, n)
	if err != nil {
		return nil, fmt.Errorf("code probes of run %d: %w", runID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (CodeProbe, error) {
		var p CodeProbe
		err := row.Scan(&p.ProblemID, &p.SampleIndex, &p.Completion, &p.FileCorrect)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("code probes of run %d: %w", runID, err)
	}
	return out, nil
}
