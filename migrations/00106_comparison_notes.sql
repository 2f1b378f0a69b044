-- +goose Up
-- The team's notes on a comparison (issue 14): one markdown text, rendered
-- sanitised; at most 64 KiB (the form says so before the database refuses).
CREATE TABLE comparison_notes (
    comparison_id bigint PRIMARY KEY REFERENCES comparisons (id) ON DELETE CASCADE,
    body text NOT NULL CHECK (octet_length(body) <= 65536),
    updated_by bigint REFERENCES users (id) ON DELETE SET NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE comparison_notes;
