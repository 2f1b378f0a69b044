package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Setting keys.
const (
	// SettingEndpointNetworks holds the endpoint network policy's text
	// (sampling.ParseNetPolicy); absent means the built-in default.
	SettingEndpointNetworks = "endpoint_networks"
)

// Setting returns the value of an instance setting and whether it is set.
func (s *Store) Setting(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := s.db.QueryRow(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("setting %s: %w", key, err)
	}
	return v, true, nil
}

// SetSetting stores an instance setting, recording who changed it.
func (s *Store) SetSetting(ctx context.Context, key, value string, userID int64) error {
	_, err := s.db.Exec(ctx, `INSERT INTO settings (key, value, updated_by) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_by = EXCLUDED.updated_by, updated_at = now()`,
		key, value, nullID(userID))
	if err != nil {
		return fmt.Errorf("set setting %s: %w", key, err)
	}
	return nil
}
