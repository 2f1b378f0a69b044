package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reach-lab/reach/internal/ingest"
)

// Only errors that can go away on a retry are retried; a file's error is
// final at once (issue 10.9).
func TestTransientErrors(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("import run 3: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"deadlock", &pgconn.PgError{Code: "40P01"}, true},
		{"serialization failure", wrap(&pgconn.PgError{Code: "40001"}), true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"admin shutdown", wrap(&pgconn.PgError{Code: "57P01"}), true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"lock not available", &pgconn.PgError{Code: "55P03"}, true},
		{"NUL in text", &pgconn.PgError{Code: "22021"}, false},
		{"unique violation", wrap(&pgconn.PgError{Code: "23505"}), false},
		{"undefined column (a bug)", &pgconn.PgError{Code: "42703"}, false},
		{"deadline", wrap(context.DeadlineExceeded), true},
		{"connection reset", wrap(syscall.ECONNRESET), true},
		{"connection refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{"cut stream", wrap(io.ErrUnexpectedEOF), true},
		{"conn closed text", errors.New("conn closed"), true},
		{"file error", wrap(&ingest.Error{File: "base.jsonl", Line: 3, Field: "completion", Msg: "want a string"}), false},
		{"plain error", errors.New("comparison has no sampling config"), false},
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("%s: transient(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
