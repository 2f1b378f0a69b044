-- +goose Up
-- A collection groups comparisons of one project to compare runs across them (issue 14):
-- its page overlays every model's pass@k curve. Deleting a comparison drops it from its collections.
CREATE TABLE collections (
    id bigserial PRIMARY KEY,
    project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by bigint REFERENCES users (id) ON DELETE SET NULL
);
CREATE INDEX collections_project ON collections (project_id);

CREATE TABLE collection_comparisons (
    collection_id bigint NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    comparison_id bigint NOT NULL REFERENCES comparisons (id) ON DELETE CASCADE,
    position int NOT NULL,
    PRIMARY KEY (collection_id, comparison_id)
);
CREATE INDEX collection_comparisons_comparison ON collection_comparisons (comparison_id);

-- +goose Down
DROP TABLE collection_comparisons;
DROP TABLE collections;
