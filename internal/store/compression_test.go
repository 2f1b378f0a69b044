package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// TestMigrationLZ4KeepsOlderTexts: migration 00178 applied to a database
// holding texts written under the previous schema (pglz) leaves them pglz
// and readable, and texts written afterwards are lz4.
func TestMigrationLZ4KeepsOlderTexts(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	pid, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `CREATE TEMP TABLE lz4_check (x text COMPRESSION lz4); DROP TABLE lz4_check`); err != nil {
		t.Skipf("this Postgres has no lz4 (%v): the migration keeps pglz", err)
	}
	_, runs, pids := tiny(t, st, pid)
	// Back to the schema before 00178, as goose's down does (00182's first:
	// samples in one table again; the migration keeps the older texts too).
	_, down := migrationSections(t, "00182_")
	if _, err := st.Pool().Exec(ctx, down+`; DELETE FROM goose_db_version WHERE version_id = 182`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `ALTER TABLE samples ALTER COLUMN completion SET COMPRESSION pglz;
		DELETE FROM goose_db_version WHERE version_id = 178`); err != nil {
		t.Fatal(err)
	}
	// Long enough for TOAST to compress it (rows over 2 KB).
	old := strings.Repeat("Let's think step by step: 12 \\cdot 13 = 156. ", 200)
	if err := st.InsertSamples(ctx, []store.Sample{{RunID: runs[0].ID, ProblemID: pids[0], SampleIndex: 100, Completion: old, Status: store.SampleCorrect}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var col string
	if err := st.Pool().QueryRow(ctx, `SELECT attcompression::text FROM pg_attribute WHERE attrelid = 'samples'::regclass AND attname = 'completion'`).Scan(&col); err != nil {
		t.Fatal(err)
	}
	if col != "l" {
		t.Fatalf("samples.completion's compression after the migration is %q, not lz4 (l)", col)
	}
	newText := strings.Repeat("Wait, let me check: 14 \\cdot 15 = 210. ", 200)
	if err := st.InsertSamples(ctx, []store.Sample{{RunID: runs[0].ID, ProblemID: pids[0], SampleIndex: 101, Completion: newText, Status: store.SampleCorrect}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		idx          int
		text, method string
	}{{100, old, "pglz"}, {101, newText, "lz4"}} {
		var got, method string
		if err := st.Pool().QueryRow(ctx, `SELECT completion, COALESCE(pg_column_compression(completion), 'none') FROM samples
			WHERE run_id = $1 AND problem_id = $2 AND sample_index = $3`, runs[0].ID, pids[0], c.idx).Scan(&got, &method); err != nil {
			t.Fatal(err)
		}
		if got != c.text || method != c.method {
			t.Errorf("sample %d: %d bytes read back (want %d), compressed with %s (want %s)", c.idx, len(got), len(c.text), method, c.method)
		}
	}
}
