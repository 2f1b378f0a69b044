-- +goose Up
-- Instance settings admins change in the browser, e.g. the endpoint network
-- policy (which addresses inference endpoints may have).
CREATE TABLE settings (
    key        text PRIMARY KEY,
    value      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    updated_by bigint REFERENCES users(id) ON DELETE SET NULL
);

-- +goose Down
DROP TABLE settings;
