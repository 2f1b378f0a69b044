package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SettingFollowRoots holds the server folders that comparisons may follow
// from the browser, one absolute path a line (internal/follow); absent or
// empty means following is off.
const SettingFollowRoots = "follow_roots"

// Follow is a comparison following a server folder of a training run.
type Follow struct {
	ID           int64
	ComparisonID int64
	ModelName    string // its checkpoints are "ModelName step N"
	Path         string
	Every        time.Duration
	State        json.RawMessage
	StartedAt    time.Time
	LastScanAt   *time.Time
	LastError    string
	StoppedAt    *time.Time
}

// ErrFollowing refuses a second folder for a comparison that follows one.
var ErrFollowing = errors.New("the comparison follows a folder already: stop it first")

const followCols = `id, comparison_id, model_name, path, every_ms, state, started_at, last_scan_at, last_error, stopped_at`

func scanFollow(row pgx.Row) (Follow, error) {
	var f Follow
	var ms int
	err := row.Scan(&f.ID, &f.ComparisonID, &f.ModelName, &f.Path, &ms, &f.State, &f.StartedAt, &f.LastScanAt, &f.LastError, &f.StoppedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return f, ErrNotFound
	}
	f.Every = time.Duration(ms) * time.Millisecond
	return f, err
}

// CreateFollow records that comparison follows path (resolved, inside an
// allowed root) for model's checkpoints, looking every interval; it
// returns the follow's id. ErrFollowing when the comparison follows one.
func (s *Store) CreateFollow(ctx context.Context, comparisonID int64, model, path string, every time.Duration, userID int64) (int64, error) {
	var id int64
	err := s.db.QueryRow(ctx, `INSERT INTO follows (comparison_id, model_name, path, every_ms, started_by) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		comparisonID, model, path, max(1, every.Milliseconds()), nullID(userID)).Scan(&id)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return 0, ErrFollowing
	}
	if err != nil {
		return 0, fmt.Errorf("follow %s for comparison %d: %w", path, comparisonID, err)
	}
	return id, nil
}

// GetFollow returns a follow by id, or ErrNotFound.
func (s *Store) GetFollow(ctx context.Context, id int64) (Follow, error) {
	f, err := scanFollow(s.db.QueryRow(ctx, `SELECT `+followCols+` FROM follows WHERE id = $1`, id))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return f, fmt.Errorf("follow %d: %w", id, err)
	}
	return f, err
}

// LatestFollow returns the comparison's follow under way, else the last
// one stopped; ErrNotFound when it never followed a folder.
func (s *Store) LatestFollow(ctx context.Context, comparisonID int64) (Follow, error) {
	var f Follow
	var found bool
	if err := s.Batch(ctx, s.LatestFollowInto(comparisonID, &f, &found)); err != nil {
		return f, err
	}
	if !found {
		return f, ErrNotFound
	}
	return f, nil
}

// LatestFollowInto queues LatestFollow's query (Batch): f is the follow
// and found whether there is one.
func (s *Store) LatestFollowInto(comparisonID int64, f *Follow, found *bool) Queued {
	return func(b *pgx.Batch) {
		*found = false
		b.Queue(`SELECT `+followCols+` FROM follows WHERE comparison_id = $1
		ORDER BY stopped_at IS NULL DESC, id DESC LIMIT 1`, comparisonID).QueryRow(func(row pgx.Row) error {
			got, err := scanFollow(row)
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("follow of comparison %d: %w", comparisonID, err)
			}
			*f, *found = got, true
			return nil
		})
	}
}

// SaveFollowScan records a look at the folder: its state, when, and the
// error of the look or of steps that failed ("" for none). A change to
// the state's failed steps changes the comparison's report (FailedSteps).
func (s *Store) SaveFollowScan(ctx context.Context, id int64, state json.RawMessage, at time.Time, lastError string) error {
	if _, err := s.db.Exec(ctx, `WITH old AS (SELECT state->'failed' AS failed FROM follows WHERE id = $1),
		upd AS (UPDATE follows SET state = $2, last_scan_at = $3, last_error = $4 WHERE id = $1 RETURNING comparison_id)
		INSERT INTO report_changes (comparison_id) SELECT upd.comparison_id FROM upd, old WHERE old.failed IS DISTINCT FROM $2::jsonb->'failed'`,
		id, state, at, lastError); err != nil {
		return fmt.Errorf("save follow %d: %w", id, err)
	}
	return nil
}

// StopFollow stops the comparison's follow under way (noting why, when
// reason is not ""); false when none was.
func (s *Store) StopFollow(ctx context.Context, comparisonID int64, reason string) (bool, error) {
	tag, err := s.db.Exec(ctx, `UPDATE follows SET stopped_at = now(), last_error = CASE WHEN $2 = '' THEN last_error ELSE $2 END
		WHERE comparison_id = $1 AND stopped_at IS NULL`, comparisonID, reason)
	if err != nil {
		return false, fmt.Errorf("stop the follow of comparison %d: %w", comparisonID, err)
	}
	return tag.RowsAffected() > 0, nil
}

// FailedStep is a step of a followed training run that did not go in: its
// file was refused, or its import failed and took it out. A follow keeps
// it in its state (under "failed") until the step goes in.
type FailedStep struct {
	Step  int    `json:"step"`
	Model string `json:"model"` // the checkpoint's name, "MODEL step N"
	File  string `json:"file"`  // the step's first file, by name
	Error string `json:"error"`
}

// FailedSteps returns the failed steps the comparison's latest follow
// (under way or stopped) keeps, steps ascending; none without a follow.
func (s *Store) FailedSteps(ctx context.Context, comparisonID int64) ([]FailedStep, error) {
	var raw []byte
	err := s.db.QueryRow(ctx, `SELECT COALESCE(state->'failed', '[]') FROM follows WHERE comparison_id = $1
		ORDER BY stopped_at IS NULL DESC, id DESC LIMIT 1`, comparisonID).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed steps of comparison %d: %w", comparisonID, err)
	}
	var out []FailedStep
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, nil // an unreadable state is only a fresh one (follow.State)
	}
	return out, nil
}
