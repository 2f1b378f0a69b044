package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/reach-lab/reach/internal/store"
)

// ErrWrongState is returned when an action does not apply to a comparison
// in its current state (the error says which state it needs).
var ErrWrongState = errors.New("not possible in this state")

// CancelImport stops a comparison's import: its queued and running import,
// verification and aggregation jobs are cancelled, what they stored is
// deleted, and the comparison is failed with "cancelled by …". The
// uploaded files stay, so RetryImport can start it again.
// who names the user in the message.
func CancelImport(ctx context.Context, client *Client, st *store.Store, id, userID int64, who string) error {
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		return err
	}
	if c.Status != store.StatusPending && c.Status != store.StatusImporting {
		return fmt.Errorf("%w: the comparison is %s; only an import can be cancelled", ErrWrongState, c.Status)
	}
	ids, err := st.ActiveJobs(ctx, id, "import", "import-run", "import-local", "verify", "aggregate")
	if err != nil {
		return err
	}
	for _, jid := range ids {
		if _, err := client.JobCancel(ctx, jid); err != nil && !errors.Is(err, river.ErrNotFound) {
			return fmt.Errorf("cancel job %d: %w", jid, err)
		}
	}
	if who == "" {
		who = "a user"
	}
	if err := st.FailComparisonImport(ctx, id, 0, "cancelled by "+who, false); err != nil {
		return err
	}
	return st.AddAudit(ctx, store.AuditEntry{UserID: userID, ComparisonID: id, Action: "cancel-import", Old: c.Status, New: store.StatusFailed})
}

// RetryImport imports a failed comparison's stored files again (after a
// cancel, or a failure that was not in the files).
func RetryImport(ctx context.Context, client *Client, st *store.Store, id, userID int64) error {
	return st.WithTx(ctx, func(tx *store.Store) error {
		ok, err := tx.RetryImport(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: only a failed import whose files are still stored can be retried; after an error in a file, upload it again", ErrWrongState)
		}
		if err := tx.AddAudit(ctx, store.AuditEntry{UserID: userID, ComparisonID: id, Action: "retry-import", Old: store.StatusFailed, New: store.StatusPending}); err != nil {
			return err
		}
		return StartImport(ctx, client, tx, id)
	})
}
