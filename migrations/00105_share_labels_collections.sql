-- +goose Up
-- Share links (issue 14): a label their owners recognise them by, whether the
-- comparison's notes show on the shared page, and links to a collection (its
-- overlay and table) instead of one comparison: exactly one of the two is set.
ALTER TABLE share_links
    ADD COLUMN label text NOT NULL DEFAULT '',
    ADD COLUMN show_notes bool NOT NULL DEFAULT false,
    ADD COLUMN collection_id bigint REFERENCES collections (id) ON DELETE CASCADE,
    ALTER COLUMN comparison_id DROP NOT NULL,
    ADD CONSTRAINT share_links_one_target CHECK ((comparison_id IS NULL) <> (collection_id IS NULL));
CREATE INDEX share_links_collection ON share_links (collection_id) WHERE collection_id IS NOT NULL;

-- +goose Down
DELETE FROM share_links WHERE collection_id IS NOT NULL;
DROP INDEX share_links_collection;
ALTER TABLE share_links
    DROP CONSTRAINT share_links_one_target,
    ALTER COLUMN comparison_id SET NOT NULL,
    DROP COLUMN collection_id,
    DROP COLUMN show_notes,
    DROP COLUMN label;
