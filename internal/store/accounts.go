package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrExists is returned when a unique name (an email, a project name) is taken.
var ErrExists = errors.New("already exists")

// User is one local account.
type User struct {
	ID                 int64
	Email              string
	PasswordHash       string // argon2id PHC string (internal/auth)
	IsAdmin            bool
	MustChangePassword bool // signed in with a one-time password
	Disabled           bool
	CreatedAt          time.Time
	// CanCreateProjects: an admin let this user create projects (admins
	// always may).
	CanCreateProjects bool
}

// NormalizeEmail is how emails are compared and stored: trimmed, lower-case.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

const userColumns = `id, email, password_hash, is_admin, must_change_password, disabled, created_at, can_create_projects`

func scanUser(row pgx.Row) (User, error) {
	var u User
	err := row.Scan(&u.ID, &u.Email, &u.PasswordHash, &u.IsAdmin, &u.MustChangePassword, &u.Disabled, &u.CreatedAt, &u.CanCreateProjects)
	return u, err
}

// CountUsers returns how many accounts exist (0 on a fresh instance).
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// CreateUser inserts an account. The first admin created also becomes owner
// of the default project. A taken email gives ErrExists.
func (s *Store) CreateUser(ctx context.Context, email, passwordHash string, admin, mustChange bool) (User, error) {
	email = NormalizeEmail(email)
	u, err := scanUser(s.db.QueryRow(ctx, `INSERT INTO users (email, password_hash, is_admin, must_change_password)
		VALUES ($1, $2, $3, $4) RETURNING `+userColumns, email, passwordHash, admin, mustChange))
	if isUniqueViolation(err) {
		return u, fmt.Errorf("user %s: %w", email, ErrExists)
	}
	if err != nil {
		return u, fmt.Errorf("create user %s: %w", email, err)
	}
	if admin {
		_, err = s.db.Exec(ctx, `INSERT INTO project_members (project_id, user_id, role)
			SELECT p.id, $1, 'owner' FROM projects p WHERE p.is_default
				AND NOT EXISTS (SELECT 1 FROM project_members m WHERE m.project_id = p.id AND m.role = 'owner')`, u.ID)
		if err != nil {
			return u, fmt.Errorf("make %s owner of the default project: %w", email, err)
		}
	}
	return u, nil
}

// UserByEmail returns the account with that email, or ErrNotFound.
func (s *Store) UserByEmail(ctx context.Context, email string) (User, error) {
	u, err := scanUser(s.db.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE lower(email) = $1`, NormalizeEmail(email)))
	if errors.Is(err, pgx.ErrNoRows) {
		return u, fmt.Errorf("user %s: %w", NormalizeEmail(email), ErrNotFound)
	}
	if err != nil {
		return u, fmt.Errorf("user %s: %w", NormalizeEmail(email), err)
	}
	return u, nil
}

// FirstAdmin returns the oldest admin account, or ErrNotFound.
func (s *Store) FirstAdmin(ctx context.Context) (User, error) {
	u, err := scanUser(s.db.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE is_admin AND NOT disabled ORDER BY id LIMIT 1`))
	if errors.Is(err, pgx.ErrNoRows) {
		return u, fmt.Errorf("admin: %w", ErrNotFound)
	}
	if err != nil {
		return u, fmt.Errorf("admin: %w", err)
	}
	return u, nil
}

// ListUsers returns every account, oldest first.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	rows, err := s.db.Query(ctx, `SELECT `+userColumns+` FROM users ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (User, error) { return scanUser(r) })
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// SetProjectCreator lets a user create projects, or stops them
// (ErrNotFound for an unknown user).
func (s *Store) SetProjectCreator(ctx context.Context, userID int64, allowed bool) error {
	tag, err := s.db.Exec(ctx, `UPDATE users SET can_create_projects = $2 WHERE id = $1`, userID, allowed)
	if err != nil {
		return fmt.Errorf("set project creation of user %d: %w", userID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("user %d: %w", userID, ErrNotFound)
	}
	return nil
}

// SetPassword replaces a user's password hash and ends all their sessions
// except the one whose token hash is keep (nil: all of them).
func (s *Store) SetPassword(ctx context.Context, userID int64, hash string, mustChange bool, keep []byte) error {
	_, err := s.db.Exec(ctx, `UPDATE users SET password_hash = $2, must_change_password = $3, password_changed_at = now() WHERE id = $1`,
		userID, hash, mustChange)
	if err != nil {
		return fmt.Errorf("set password of user %d: %w", userID, err)
	}
	if _, err := s.db.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1 AND ($2::bytea IS NULL OR token_hash <> $2)`, userID, keep); err != nil {
		return fmt.Errorf("end sessions of user %d: %w", userID, err)
	}
	return nil
}

// ResetPassword is an admin's reset: a new one-time password, and every
// session and API token of the user ended, since whoever held them may be
// why the password was reset.
func (s *Store) ResetPassword(ctx context.Context, userID int64, hash string) error {
	return s.WithTx(ctx, func(tx *Store) error {
		tag, err := tx.db.Exec(ctx, `UPDATE users SET password_hash = $2, must_change_password = true, password_changed_at = now() WHERE id = $1`,
			userID, hash)
		if err != nil {
			return fmt.Errorf("reset password of user %d: %w", userID, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("user %d: %w", userID, ErrNotFound)
		}
		return tx.endAccess(ctx, userID)
	})
}

// endAccess ends every session of a user and revokes all their API tokens.
func (s *Store) endAccess(ctx context.Context, userID int64) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1`, userID); err != nil {
		return fmt.Errorf("end sessions of user %d: %w", userID, err)
	}
	if _, err := s.db.Exec(ctx, `UPDATE api_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`, userID); err != nil {
		return fmt.Errorf("revoke API tokens of user %d: %w", userID, err)
	}
	return nil
}

// SetDisabled disables or re-enables an account (ErrNotFound for an unknown
// user). Disabling also ends its sessions and revokes its API tokens, so
// re-enabling never brings back a session or token from before.
func (s *Store) SetDisabled(ctx context.Context, userID int64, disabled bool) error {
	return s.WithTx(ctx, func(tx *Store) error {
		tag, err := tx.db.Exec(ctx, `UPDATE users SET disabled = $2 WHERE id = $1`, userID, disabled)
		if err != nil {
			return fmt.Errorf("set disabled of user %d: %w", userID, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("user %d: %w", userID, ErrNotFound)
		}
		if !disabled {
			return nil
		}
		return tx.endAccess(ctx, userID)
	})
}

// GetUser returns an account by id, or ErrNotFound.
func (s *Store) GetUser(ctx context.Context, id int64) (User, error) {
	u, err := scanUser(s.db.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return u, fmt.Errorf("user %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return u, fmt.Errorf("user %d: %w", id, err)
	}
	return u, nil
}

// CreateSession stores a session (the SHA-256 of its cookie token).
func (s *Store) CreateSession(ctx context.Context, tokenHash []byte, userID int64, expires time.Time) error {
	_, err := s.db.Exec(ctx, `INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3)`, tokenHash, userID, expires)
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// SessionUser returns the user of a live session and slides its expiry to
// now + idle (at most once a minute, to spare writes). An unknown or
// expired session, or a disabled user, gives ErrNotFound.
func (s *Store) SessionUser(ctx context.Context, tokenHash []byte, idle, absolute time.Duration) (User, error) {
	var created, seen time.Time
	var u User
	err := s.db.QueryRow(ctx, `SELECT s.created_at, s.last_seen, u.id, u.email, u.password_hash, u.is_admin, u.must_change_password, u.disabled, u.created_at,
			u.can_create_projects
		FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1 AND s.expires_at > now() AND NOT u.disabled`, tokenHash).
		Scan(&created, &seen, &u.ID, &u.Email, &u.PasswordHash, &u.IsAdmin, &u.MustChangePassword, &u.Disabled, &u.CreatedAt,
			&u.CanCreateProjects)
	if errors.Is(err, pgx.ErrNoRows) {
		return u, fmt.Errorf("session: %w", ErrNotFound)
	}
	if err != nil {
		return u, fmt.Errorf("session: %w", err)
	}
	if time.Since(seen) > time.Minute {
		_, err := s.db.Exec(ctx, `UPDATE sessions SET last_seen = now(), expires_at = LEAST(now() + make_interval(secs => $2), created_at + make_interval(secs => $3))
			WHERE token_hash = $1`, tokenHash, idle.Seconds(), absolute.Seconds())
		if err != nil {
			return u, fmt.Errorf("refresh session: %w", err)
		}
	}
	return u, nil
}

// DeleteSession ends one session (logout).
func (s *Store) DeleteSession(ctx context.Context, tokenHash []byte) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM sessions WHERE token_hash = $1`, tokenHash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions removes sessions past their expiry.
func (s *Store) DeleteExpiredSessions(ctx context.Context) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM sessions WHERE expires_at <= now()`); err != nil {
		return fmt.Errorf("delete expired sessions: %w", err)
	}
	return nil
}

// APIToken is one API token (its secret is never stored).
type APIToken struct {
	ID         int64
	UserID     int64
	Name       string
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// CreateAPIToken stores a token's hash and returns its id.
func (s *Store) CreateAPIToken(ctx context.Context, userID int64, name, prefix string, tokenHash []byte) (int64, error) {
	var id int64
	err := s.db.QueryRow(ctx, `INSERT INTO api_tokens (user_id, name, prefix, token_hash) VALUES ($1, $2, $3, $4) RETURNING id`,
		userID, name, prefix, tokenHash).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("create API token: %w", err)
	}
	return id, nil
}

// APITokenUser returns the user of a live (unrevoked) token and records its
// use (at most once a minute: a write per request would serialise a
// script's concurrent requests on the token's row); anything else gives
// ErrNotFound.
func (s *Store) APITokenUser(ctx context.Context, tokenHash []byte) (User, error) {
	var u User
	var last *time.Time
	err := s.db.QueryRow(ctx, `SELECT u.id, u.email, u.password_hash, u.is_admin, u.must_change_password, u.disabled, u.created_at,
			u.can_create_projects, t.last_used_at
		FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND NOT u.disabled`, tokenHash).
		Scan(&u.ID, &u.Email, &u.PasswordHash, &u.IsAdmin, &u.MustChangePassword, &u.Disabled, &u.CreatedAt, &u.CanCreateProjects, &last)
	if errors.Is(err, pgx.ErrNoRows) {
		return u, fmt.Errorf("API token: %w", ErrNotFound)
	}
	if err != nil {
		return u, fmt.Errorf("API token: %w", err)
	}
	if last == nil || time.Since(*last) > time.Minute {
		if _, err := s.db.Exec(ctx, `UPDATE api_tokens SET last_used_at = now() WHERE token_hash = $1`, tokenHash); err != nil {
			return u, fmt.Errorf("API token: %w", err)
		}
	}
	return u, nil
}

// ListAPITokens returns a user's tokens, newest first.
func (s *Store) ListAPITokens(ctx context.Context, userID int64) ([]APIToken, error) {
	rows, err := s.db.Query(ctx, `SELECT id, user_id, name, prefix, created_at, last_used_at, revoked_at
		FROM api_tokens WHERE user_id = $1 ORDER BY id DESC`, userID)
	if err != nil {
		return nil, fmt.Errorf("API tokens of user %d: %w", userID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (APIToken, error) {
		var t APIToken
		err := r.Scan(&t.ID, &t.UserID, &t.Name, &t.Prefix, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("API tokens of user %d: %w", userID, err)
	}
	return out, nil
}

// RevokeAPIToken revokes one of a user's tokens; another user's token (or
// an unknown id) gives ErrNotFound.
func (s *Store) RevokeAPIToken(ctx context.Context, userID, id int64) error {
	tag, err := s.db.Exec(ctx, `UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND user_id = $2`, id, userID)
	if err != nil {
		return fmt.Errorf("revoke API token %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("API token %d: %w", id, ErrNotFound)
	}
	return nil
}

// Invite is an admin's invitation to create an account (or, for an email
// that has one, to join a project with it).
type Invite struct {
	ID        int64
	Email     string
	IsAdmin   bool
	ProjectID *int64 // joined with Role on acceptance
	Project   string // its name (listings only)
	Role      string
	CreatedBy int64
	CreatedAt time.Time
	ExpiresAt time.Time
}

// CreateInvite stores an invitation under the hash of its link's token.
func (s *Store) CreateInvite(ctx context.Context, tokenHash []byte, inv Invite) error {
	_, err := s.db.Exec(ctx, `INSERT INTO invites (token_hash, email, is_admin, project_id, role, created_by, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, tokenHash, NormalizeEmail(inv.Email), inv.IsAdmin, inv.ProjectID, inv.Role, inv.CreatedBy, inv.ExpiresAt)
	if err != nil {
		return fmt.Errorf("create invite for %s: %w", inv.Email, err)
	}
	return nil
}

// openInvite is the condition of an invitation that can still be accepted
// (its columns are invites' own, so it needs no table alias).
const openInvite = `used_at IS NULL AND revoked_at IS NULL AND expires_at > now()`

// OpenInvite returns an unused, unrevoked, unexpired invitation, or
// ErrNotFound.
func (s *Store) OpenInvite(ctx context.Context, tokenHash []byte) (Invite, error) {
	var inv Invite
	var by *int64
	err := s.db.QueryRow(ctx, `SELECT i.id, i.email, i.is_admin, i.project_id, COALESCE(p.name, ''), i.role, i.created_by, i.created_at, i.expires_at
		FROM invites i LEFT JOIN projects p ON p.id = i.project_id
		WHERE i.token_hash = $1 AND `+openInvite, tokenHash).
		Scan(&inv.ID, &inv.Email, &inv.IsAdmin, &inv.ProjectID, &inv.Project, &inv.Role, &by, &inv.CreatedAt, &inv.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return inv, fmt.Errorf("invite: %w", ErrNotFound)
	}
	if err != nil {
		return inv, fmt.Errorf("invite: %w", err)
	}
	if by != nil {
		inv.CreatedBy = *by
	}
	return inv, nil
}

// OpenInvites lists the invitations that can still be accepted, newest
// first (for the admin's users page).
func (s *Store) OpenInvites(ctx context.Context) ([]Invite, error) {
	rows, err := s.db.Query(ctx, `SELECT i.id, i.email, i.is_admin, i.project_id, COALESCE(p.name, ''), i.role, COALESCE(i.created_by, 0),
			i.created_at, i.expires_at
		FROM invites i LEFT JOIN projects p ON p.id = i.project_id
		WHERE `+openInvite+` ORDER BY i.id DESC`)
	if err != nil {
		return nil, fmt.Errorf("open invites: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Invite, error) {
		var inv Invite
		err := r.Scan(&inv.ID, &inv.Email, &inv.IsAdmin, &inv.ProjectID, &inv.Project, &inv.Role, &inv.CreatedBy, &inv.CreatedAt, &inv.ExpiresAt)
		return inv, err
	})
	if err != nil {
		return nil, fmt.Errorf("open invites: %w", err)
	}
	return out, nil
}

// RevokeInvite revokes an invitation that can still be accepted; any other
// (used, expired, revoked, unknown) gives ErrNotFound.
func (s *Store) RevokeInvite(ctx context.Context, id int64) error {
	tag, err := s.db.Exec(ctx, `UPDATE invites SET revoked_at = now() WHERE id = $1 AND `+openInvite, id)
	if err != nil {
		return fmt.Errorf("revoke invite %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("open invite %d: %w", id, ErrNotFound)
	}
	return nil
}

// useInvite marks an open invitation used and returns it; ErrNotFound when
// it cannot be accepted (any more).
func (s *Store) useInvite(ctx context.Context, tokenHash []byte) (Invite, error) {
	var inv Invite
	err := s.db.QueryRow(ctx, `UPDATE invites SET used_at = now() WHERE token_hash = $1 AND `+openInvite+`
		RETURNING id, email, is_admin, project_id, role`, tokenHash).Scan(&inv.ID, &inv.Email, &inv.IsAdmin, &inv.ProjectID, &inv.Role)
	if errors.Is(err, pgx.ErrNoRows) {
		return inv, fmt.Errorf("invite: %w", ErrNotFound)
	}
	if err != nil {
		return inv, fmt.Errorf("invite: %w", err)
	}
	return inv, nil
}

// AcceptInvite marks the invitation used and creates its account with
// passwordHash (and project membership), in one transaction. A used,
// revoked or expired invitation gives ErrNotFound; an email that has an
// account meanwhile gives ErrExists (see JoinByInvite).
func (s *Store) AcceptInvite(ctx context.Context, tokenHash []byte, passwordHash string) (User, error) {
	var u User
	err := s.WithTx(ctx, func(tx *Store) error {
		inv, err := tx.useInvite(ctx, tokenHash)
		if err != nil {
			return err
		}
		if u, err = tx.CreateUser(ctx, inv.Email, passwordHash, inv.IsAdmin, false); err != nil {
			return err
		}
		if inv.ProjectID != nil {
			return tx.SetMember(ctx, *inv.ProjectID, u.ID, inv.Role)
		}
		return nil
	})
	return u, err
}

// CreateSSOUser creates the account of someone signed in by single
// sign-on for the first time: no password (password sign-in refuses it),
// and role (viewer, editor or owner) in the default project, in one
// transaction. A taken email gives ErrExists.
func (s *Store) CreateSSOUser(ctx context.Context, email, role string) (User, error) {
	var u User
	err := s.WithTx(ctx, func(tx *Store) error {
		var err error
		if u, err = tx.CreateUser(ctx, email, "", false, false); err != nil {
			return err
		}
		pid, err := tx.DefaultProjectID(ctx)
		if err != nil {
			return err
		}
		return tx.SetMember(ctx, pid, u.ID, role)
	})
	return u, err
}

// JoinByInvite accepts an invitation for an email that already has an
// account, user (whose password the caller checked): the invitation is
// used, the user joins its project with its role unless they hold a
// higher one there, and becomes an admin if it says so. Nothing is
// lowered. A used, revoked or expired invitation, or one for another
// email, gives ErrNotFound.
func (s *Store) JoinByInvite(ctx context.Context, tokenHash []byte, userID int64) error {
	return s.WithTx(ctx, func(tx *Store) error {
		inv, err := tx.useInvite(ctx, tokenHash)
		if err != nil {
			return err
		}
		tag, err := tx.db.Exec(ctx, `UPDATE users SET is_admin = is_admin OR $3 WHERE id = $1 AND lower(email) = $2 AND NOT disabled`,
			userID, NormalizeEmail(inv.Email), inv.IsAdmin)
		if err != nil {
			return fmt.Errorf("join by invite: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("invite for user %d: %w", userID, ErrNotFound)
		}
		if inv.ProjectID == nil {
			return nil
		}
		// Roles in rank order: keep the higher of the held and the invited.
		_, err = tx.db.Exec(ctx, `INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3)
			ON CONFLICT (project_id, user_id) DO UPDATE SET role = CASE
				WHEN array_position(ARRAY['viewer', 'editor', 'owner'], EXCLUDED.role) > array_position(ARRAY['viewer', 'editor', 'owner'], project_members.role)
				THEN EXCLUDED.role ELSE project_members.role END`, *inv.ProjectID, userID, inv.Role)
		if err != nil {
			return fmt.Errorf("join project %d by invite: %w", *inv.ProjectID, err)
		}
		return nil
	})
}

// ErrHasUsers is returned by CreateFirstAdmin once any account exists.
var ErrHasUsers = errors.New("the instance already has accounts")

// CreateFirstAdmin creates the instance's first account, an admin, only
// while there is none (serialised with an advisory lock, so two first-run
// forms cannot both succeed); otherwise ErrHasUsers.
func (s *Store) CreateFirstAdmin(ctx context.Context, email, passwordHash string) (User, error) {
	var u User
	err := s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.db.Exec(ctx, `SELECT pg_advisory_xact_lock(4242000001)`); err != nil {
			return fmt.Errorf("first admin: %w", err)
		}
		n, err := tx.CountUsers(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			return ErrHasUsers
		}
		u, err = tx.CreateUser(ctx, email, passwordHash, true, false)
		return err
	})
	return u, err
}
