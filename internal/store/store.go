// Package store is Reach's Postgres access layer (pgx). All SQL lives here;
// callers get plain Go values back.
package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DBTX is what both a pool and a transaction offer; a Store works on either.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Store runs Reach's queries against a pool or, inside WithTx, a transaction.
type Store struct {
	pool *pgxpool.Pool
	db   DBTX
	tx   pgx.Tx
}

// ErrNotFound is returned when a requested row does not exist.
var ErrNotFound = errors.New("not found")

// Open connects to databaseURL and checks the connection: a pool of 24
// connections, or pool_max_conns of the URL.
func Open(ctx context.Context, databaseURL string) (*Store, error) {
	return open(ctx, databaseURL, 0)
}

// DefaultWebConns is the size of the pool that serves the pages (reach
// serve --web-db-conns): 2 per core, at least 4.
func DefaultWebConns() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// OpenSized is Open with a pool of at most maxConns (> 0) connections,
// whatever the URL says: the pages' own pool. A page's queries are short,
// and Postgres runs no faster with more backends than cores at work; each
// new backend, though, fills its catalog caches and plans each statement
// 5 times before it keeps a plan. Sharing the workers' pool of 24, a
// burst of 20 clients on 2 cores forked 20 backends at once: the burst's
// p95 was 460-860 ms; with 4, 58-132 ms (reach-bench lab -web-pool, at
// 6.77 M samples), and the steady p95 no worse.
func OpenSized(ctx context.Context, databaseURL string, maxConns int) (*Store, error) {
	if maxConns < 1 {
		return nil, fmt.Errorf("pool of %d connections: want at least 1", maxConns)
	}
	return open(ctx, databaseURL, int32(min(maxConns, 10_000)))
}

func open(ctx context.Context, databaseURL string, maxConns int32) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	switch {
	case maxConns > 0:
		// Kept open, idle or not (pgxpool closes idle ones after 30
		// minutes otherwise): a page after a quiet hour does not wait for
		// a backend to start. pgxpool opens them in the background.
		cfg.MaxConns, cfg.MinConns = maxConns, maxConns
	case !strings.Contains(databaseURL, "pool_max_conns"):
		// River's sampling workers and their queries need more than pgx's
		// default of max(4, CPUs); pool_max_conns in the URL overrides this.
		cfg.MaxConns = 24
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "3D000" { // invalid_catalog_name
			return nil, fmt.Errorf("database %s does not exist: %w (reach serve, worker and migrate create it; "+
				"other commands use the server's database: set DATABASE_URL or --database-url to the URL `reach serve` was started with)",
				redact(databaseURL), ErrNoDatabase)
		}
		return nil, fmt.Errorf("connect to database %s: %w", redact(databaseURL), err)
	}
	return &Store{pool: pool, db: pool}, nil
}

// Pool is the underlying connection pool (River shares it).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Tx is the transaction this Store is bound to, or nil outside WithTx.
func (s *Store) Tx() pgx.Tx { return s.tx }

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// WithTx runs fn on a Store bound to one transaction, committing when fn
// returns nil and rolling back otherwise. fn must not wait on the pool
// (the Store it was called on) while it holds row locks: with every pooled
// connection blocked on those locks, that would deadlock.
func (s *Store) WithTx(ctx context.Context, fn func(tx *Store) error) error {
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after commit
	if err := fn(&Store{pool: s.pool, db: tx, tx: tx}); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Begin opens a transaction on a connection of its own and returns a Store
// bound to it, for work that runs beside another transaction (an import's
// further COPY streams); the caller ends it with Commit, or Rollback (a
// no-op after Commit). WithTx is the usual way.
func (s *Store) Begin(ctx context.Context) (*Store, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin transaction: %w", err)
	}
	return &Store{pool: s.pool, db: tx, tx: tx}, nil
}

// Commit commits the transaction of a Store from Begin.
func (s *Store) Commit(ctx context.Context) error {
	if s.tx == nil {
		return errors.New("commit: not in a transaction")
	}
	if err := s.tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Rollback ends the transaction of a Store from Begin without keeping its
// work; after Commit it does nothing.
func (s *Store) Rollback(ctx context.Context) {
	if s.tx != nil {
		_ = s.tx.Rollback(context.WithoutCancel(ctx))
	}
}

// EnsureDatabase creates the database named in databaseURL if it does not
// exist, connecting to the server's "postgres" database to do so. It is how
// `reach serve` works on a fresh local Postgres.
func EnsureDatabase(ctx context.Context, databaseURL string) error {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return fmt.Errorf("parse database URL: %w", err)
	}
	name := cfg.Database
	if name == "" {
		return nil
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		return conn.Close(ctx)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" { // invalid_catalog_name
		return fmt.Errorf("connect to database %s: %w", redact(databaseURL), err)
	}
	admin := cfg.Copy()
	admin.Database = "postgres"
	aconn, err := pgx.ConnectConfig(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect to the postgres database to create %q: %w", name, err)
	}
	defer aconn.Close(ctx)
	if _, err := aconn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // created concurrently
			return nil
		}
		return fmt.Errorf("create database %q: %w", name, err)
	}
	return nil
}

// redact hides a password in a database URL for error messages.
// ErrNoDatabase: Open found no database of the URL's name (Postgres
// error 3D000). Only EnsureDatabase creates one.
var ErrNoDatabase = errors.New("no such database")

// Redact returns databaseURL with its password, if any, replaced by xxxxx:
// the form in which a URL may be printed or logged.
func Redact(databaseURL string) string { return redact(databaseURL) }

func redact(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil || u.User == nil {
		return databaseURL
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return strings.TrimSpace(u.String())
}
