package jobs

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river/rivertype"
)

// transient reports whether err may go away when the same work is tried
// again: a lost or refused database connection, a deadlock or
// serialization failure, a server shutting down or out of resources, a
// timeout. Everything else (a bad file, a missing row, a constraint the
// data violates, a bug) is permanent: retrying it only delays the error the
// user must see, so workers cancel the job at once (river.JobCancel).
func transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true // shutdown or a timeout of this attempt
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:2] {
		case "08", // connection exception
			"40", // transaction rollback: serialization failure, deadlock
			"53", // insufficient resources: disk full, out of memory, too many connections
			"57": // operator intervention: admin/crash shutdown, cannot connect now, query canceled
			return true
		}
		return pgErr.Code == "55P03" // lock not available
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	// pgx reports a connection that died mid-query as "conn closed" or
	// "unexpected EOF" without a typed error on some paths.
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"conn closed", "connection reset", "broken pipe", "unexpected eof", "failed to connect"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// unfinished are the job states in which a second job with the same
// arguments would duplicate work.
var unfinished = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
	rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}
