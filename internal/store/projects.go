package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Project groups comparisons; its members are owners, editors or viewers.
type Project struct {
	ID        int64
	Name      string
	IsDefault bool // holds comparisons created without a project
	CreatedAt time.Time
	// Role is the asking user's role ("" when listed for an admin who is
	// not a member).
	Role        string
	Comparisons int
}

// CreateProject creates a project with owner as its owner (ownerID 0: no
// owner yet). A taken name gives ErrExists.
func (s *Store) CreateProject(ctx context.Context, name string, ownerID int64) (int64, error) {
	var id int64
	err := s.db.QueryRow(ctx, `INSERT INTO projects (name) VALUES ($1) RETURNING id`, name).Scan(&id)
	if isUniqueViolation(err) {
		return 0, fmt.Errorf("project %q: %w", name, ErrExists)
	}
	if err != nil {
		return 0, fmt.Errorf("create project %q: %w", name, err)
	}
	if ownerID != 0 {
		if err := s.SetMember(ctx, id, ownerID, "owner"); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// EnsureProject returns the id of the project called name, creating it
// with ownerID as owner when it does not exist.
func (s *Store) EnsureProject(ctx context.Context, name string, ownerID int64) (int64, error) {
	var id int64
	err := s.db.QueryRow(ctx, `SELECT id FROM projects WHERE name = $1`, name).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("project %q: %w", name, err)
	}
	id, err = s.CreateProject(ctx, name, ownerID)
	if errors.Is(err, ErrExists) { // created concurrently
		return s.EnsureProject(ctx, name, ownerID)
	}
	return id, err
}

// GetProject returns one project, or ErrNotFound.
func (s *Store) GetProject(ctx context.Context, id int64) (Project, error) {
	p := Project{ID: id}
	err := s.db.QueryRow(ctx, `SELECT name, is_default, created_at FROM projects WHERE id = $1`, id).Scan(&p.Name, &p.IsDefault, &p.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, fmt.Errorf("project %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return p, fmt.Errorf("project %d: %w", id, err)
	}
	return p, nil
}

// DefaultProjectID returns the default project's id.
func (s *Store) DefaultProjectID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.db.QueryRow(ctx, `SELECT id FROM projects WHERE is_default`).Scan(&id); err != nil {
		return 0, fmt.Errorf("default project: %w", err)
	}
	return id, nil
}

// ProjectsFor returns the projects a user belongs to with their role; with
// all set (admins) every project, with the role where they have one.
func (s *Store) ProjectsFor(ctx context.Context, userID int64, all bool) ([]Project, error) {
	rows, err := s.db.Query(ctx, `SELECT p.id, p.name, p.is_default, p.created_at, COALESCE(m.role, ''),
			(SELECT count(*) FROM comparisons c WHERE c.project_id = p.id)
		FROM projects p LEFT JOIN project_members m ON m.project_id = p.id AND m.user_id = $1
		WHERE $2 OR m.role IS NOT NULL ORDER BY p.is_default DESC, p.name`, userID, all)
	if err != nil {
		return nil, fmt.Errorf("projects of user %d: %w", userID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Project, error) {
		var p Project
		err := r.Scan(&p.ID, &p.Name, &p.IsDefault, &p.CreatedAt, &p.Role, &p.Comparisons)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("projects of user %d: %w", userID, err)
	}
	return out, nil
}

// RoleIn returns a user's role in a project ("" when not a member).
func (s *Store) RoleIn(ctx context.Context, projectID, userID int64) (string, error) {
	var role string
	err := s.db.QueryRow(ctx, `SELECT role FROM project_members WHERE project_id = $1 AND user_id = $2`, projectID, userID).Scan(&role)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("role of user %d in project %d: %w", userID, projectID, err)
	}
	return role, nil
}

// ComparisonRole returns the project of a comparison and the user's role
// in it ("" when not a member); an unknown comparison gives ErrNotFound.
func (s *Store) ComparisonRole(ctx context.Context, comparisonID, userID int64) (projectID int64, role string, err error) {
	err = s.db.QueryRow(ctx, `SELECT c.project_id, COALESCE(m.role, '') FROM comparisons c
		LEFT JOIN project_members m ON m.project_id = c.project_id AND m.user_id = $2 WHERE c.id = $1`, comparisonID, userID).Scan(&projectID, &role)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", fmt.Errorf("comparison %d: %w", comparisonID, ErrNotFound)
	}
	if err != nil {
		return 0, "", fmt.Errorf("access to comparison %d: %w", comparisonID, err)
	}
	return projectID, role, nil
}

// Member is one user's membership of a project.
type Member struct {
	UserID int64
	Email  string
	Role   string
}

// Members lists a project's members, owners first.
func (s *Store) Members(ctx context.Context, projectID int64) ([]Member, error) {
	rows, err := s.db.Query(ctx, `SELECT u.id, u.email, m.role FROM project_members m JOIN users u ON u.id = m.user_id
		WHERE m.project_id = $1 ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END, u.email`, projectID)
	if err != nil {
		return nil, fmt.Errorf("members of project %d: %w", projectID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Member, error) {
		var m Member
		err := r.Scan(&m.UserID, &m.Email, &m.Role)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("members of project %d: %w", projectID, err)
	}
	return out, nil
}

// SetMember adds a user to a project or changes their role (owner, editor
// or viewer).
func (s *Store) SetMember(ctx context.Context, projectID, userID int64, role string) error {
	_, err := s.db.Exec(ctx, `INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3)
		ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role`, projectID, userID, role)
	if err != nil {
		return fmt.Errorf("set role of user %d in project %d: %w", userID, projectID, err)
	}
	return nil
}

// RemoveMember takes a user out of a project; ErrNotFound when they are
// not a member.
func (s *Store) RemoveMember(ctx context.Context, projectID, userID int64) error {
	tag, err := s.db.Exec(ctx, `DELETE FROM project_members WHERE project_id = $1 AND user_id = $2`, projectID, userID)
	if err != nil {
		return fmt.Errorf("remove user %d from project %d: %w", userID, projectID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("user %d in project %d: %w", userID, projectID, ErrNotFound)
	}
	return nil
}

// ListComparisonsFor returns the comparisons of the projects a user is a
// member of (all of them when all is set), newest first.
func (s *Store) ListComparisonsFor(ctx context.Context, userID int64, all bool) ([]ComparisonSummary, error) {
	rows, err := s.db.Query(ctx, `SELECT c.id, c.name, COALESCE(d.name, ''), c.status, COALESCE(d.problem_count, 0), c.created_at,
			COALESCE((SELECT array_agg(r.model_name ORDER BY r.position) FROM runs r WHERE r.comparison_id = c.id), '{}'),
			c.project_id, p.name, CASE WHEN c.status = 'failed' THEN c.error ELSE '' END
		FROM comparisons c JOIN projects p ON p.id = c.project_id LEFT JOIN datasets d ON d.id = c.dataset_id
		WHERE $2 OR EXISTS (SELECT 1 FROM project_members m WHERE m.project_id = c.project_id AND m.user_id = $1)
		ORDER BY c.id DESC`, userID, all)
	if err != nil {
		return nil, fmt.Errorf("list comparisons: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ComparisonSummary, error) {
		var c ComparisonSummary
		err := row.Scan(&c.ID, &c.Name, &c.DatasetName, &c.Status, &c.Problems, &c.CreatedAt, &c.Models, &c.ProjectID, &c.ProjectName, &c.Error)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("list comparisons: %w", err)
	}
	return out, nil
}
