package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/reach-lab/reach/migrations"
)

// Migrate applies River's migrations and then Reach's own (goose, embedded).
// It is safe to run on every start: applied migrations are skipped.
func (s *Store) Migrate(ctx context.Context) error {
	migrator, err := rivermigrate.New(riverpgxv5.New(s.pool), nil)
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	res, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	for _, v := range res.Versions {
		slog.Debug("applied river migration", "version", v.Version)
	}

	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	// Out of order: migrations written on parallel branches get numbers from
	// separate ranges, so a database may have a higher one applied first.
	provider, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithAllowOutofOrder(true),
		goose.WithGoMigrations(goMigrations...))
	if err != nil {
		return fmt.Errorf("reach migrations: %w", err)
	}
	results, err := provider.Up(ctx)
	if err != nil {
		return fmt.Errorf("reach migrations: %w", err)
	}
	for _, r := range results {
		slog.Debug("applied migration", "source", r.Source.Path, "duration", r.Duration)
	}
	return nil
}

// goMigrations are the migrations that need Go: SQL built from Reach's
// constants (the grading policy's SQL, verify.FallbackRules).
var goMigrations = []*goose.Migration{
	// 00091: answer groups of the runs aggregated before run_answers (00090).
	goose.NewGoMigration(91, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		return FillAnswerGroups(ctx, tx)
	}}, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error { return nil }}),
	// 00180: run_grading, filled for the runs stored before it.
	goose.NewGoMigration(180, &goose.GoFunc{RunTx: CreateRunGrading},
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `DROP TABLE run_grading`)
			return err
		}}),
}
