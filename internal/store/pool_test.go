package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// The pages' pool has the size it is given, whatever pool_max_conns the
// URL gives the workers' pool, and works on the same database.
func TestOpenSized(t *testing.T) {
	_, url := testdb.New(t)
	ctx := context.Background()
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	wide, err := store.Open(ctx, url+sep+"pool_max_conns=7")
	if err != nil {
		t.Fatal(err)
	}
	defer wide.Close()
	web, err := store.OpenSized(ctx, url+sep+"pool_max_conns=7", 3)
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	if got := wide.Pool().Config().MaxConns; got != 7 {
		t.Errorf("Open with pool_max_conns=7: %d connections", got)
	}
	if got := web.Pool().Config().MaxConns; got != 3 {
		t.Errorf("OpenSized(3): %d connections", got)
	}
	if got := web.Pool().Config().MinConns; got != 3 {
		t.Errorf("OpenSized(3) keeps %d connections open, want 3", got)
	}
	var db1, db2 string
	if err := wide.Pool().QueryRow(ctx, `SELECT current_database()`).Scan(&db1); err != nil {
		t.Fatal(err)
	}
	if err := web.Pool().QueryRow(ctx, `SELECT current_database()`).Scan(&db2); err != nil {
		t.Fatal(err)
	}
	if db1 != db2 {
		t.Errorf("the two pools reach %s and %s", db1, db2)
	}
	if _, err := store.OpenSized(ctx, url, 0); err == nil {
		t.Error("a pool of 0 connections was opened")
	}
	if n := store.DefaultWebConns(); n < 4 {
		t.Errorf("DefaultWebConns() = %d, want at least 4", n)
	}
}
