package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// TextHash must equal the SQL fallback md5(completion)::uuid, or a run
// holding samples hashed both ways would count one text as two.
func TestTextHashMatchesSQL(t *testing.T) {
	st, _ := testdb.New(t)
	for _, text := range []string{"", "The answer is \\boxed{17}.", "重新计算：x² ≤ 2\n\tÄB <script>", strings.Repeat("long text ", 7_000)} {
		var sql [16]byte
		if err := st.Pool().QueryRow(context.Background(), `SELECT md5($1::text)::uuid`, text).Scan(&sql); err != nil {
			t.Fatal(err)
		}
		if got := store.TextHash(text); got != sql {
			t.Errorf("TextHash(%.20q) = %x; SQL md5 %x", text, got, sql)
		}
	}
}
