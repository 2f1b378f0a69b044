// Package testdb gives integration tests their own migrated Postgres
// database on the real server (never a mock), dropped when the test ends.
//
// The server is REACH_TEST_DATABASE_URL (default: the local Postgres,
// postgres://postgres@127.0.0.1:5432/postgres). Tests fail, not skip, when
// it is unreachable: CI starts it.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/store"
)

// ServerURL is the admin URL of the Postgres server tests use.
func ServerURL() string {
	if v := os.Getenv("REACH_TEST_DATABASE_URL"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// New creates a fresh database, applies all migrations and returns a store
// on it and its URL. The database is dropped at the end of the test.
func New(t testing.TB) (*store.Store, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatalf("connect to test Postgres %s: %v (start it, or set REACH_TEST_DATABASE_URL)", ServerURL(), err)
	}
	defer admin.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "reach_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	u, err := url.Parse(ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	dbURL := u.String()
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := pgx.Connect(ctx, ServerURL())
		if err != nil {
			t.Logf("drop test database %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	return st, dbURL
}
