-- +goose Up
-- Admins revoke unused invitations from the users page: an invitation needs
-- an id to name it there (its token is never stored) and a revocation time.
ALTER TABLE invites ADD COLUMN id bigserial;
ALTER TABLE invites ADD COLUMN revoked_at timestamptz;
CREATE UNIQUE INDEX invites_id ON invites (id);

-- +goose Down
DROP INDEX invites_id;
ALTER TABLE invites DROP COLUMN revoked_at, DROP COLUMN id;
