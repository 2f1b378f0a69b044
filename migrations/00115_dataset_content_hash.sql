-- +goose Up
-- The content hash of a dataset's problems (ingest.DatasetHash): an
-- identical dataset uploaded again in a project is stored once, and the
-- lists of loaded datasets show it once.
ALTER TABLE datasets ADD COLUMN content_hash bytea;
CREATE INDEX datasets_content_hash ON datasets (content_hash) WHERE content_hash IS NOT NULL;
-- A comparison whose uploaded dataset file was found stored already: it
-- uses that dataset as if its upload had created it (a failed import or a
-- delete drops it when no other comparison uses it).
ALTER TABLE comparisons ADD COLUMN dataset_reused bool NOT NULL DEFAULT false;

-- dataset_content_hash computes ingest.DatasetHash from stored problems
-- (for the datasets loaded before the hash was kept, and to test that the
-- two agree). A field is its length in bytes, ':' and its text with CRLF
-- as LF and surrounding whitespace trimmed.
-- +goose StatementBegin
CREATE FUNCTION dataset_content_hash(ds bigint) RETURNS bytea LANGUAGE sql STABLE AS $$
    WITH f AS (
        SELECT p.idx, (SELECT string_agg(octet_length(n) || ':' || n, '' ORDER BY ord)
            FROM unnest(ARRAY[p.key, p.statement, p.reference, p.subject, p.level, p.kind,
                    (SELECT count(*) FROM jsonb_object_keys(p.extra))::text]
                || COALESCE((SELECT array_agg(x ORDER BY k COLLATE "C", o)
                    FROM jsonb_each_text(p.extra) AS e(k, v), LATERAL (VALUES (1, e.k), (2, e.v)) AS kv(o, x)), '{}'))
                WITH ORDINALITY AS u(raw, ord),
                LATERAL (SELECT btrim(replace(COALESCE(u.raw, ''), E'\r\n', E'\n'), E' \t\n\r') AS n) AS norm) AS t
        FROM problems p WHERE p.dataset_id = ds
    )
    SELECT sha256(convert_to(string_agg(t, '' ORDER BY idx), 'UTF8')) FROM f
$$;
-- +goose StatementEnd
UPDATE datasets SET content_hash = dataset_content_hash(id) WHERE problem_count > 0;

-- +goose Down
DROP FUNCTION dataset_content_hash(bigint);
ALTER TABLE comparisons DROP COLUMN dataset_reused;
ALTER TABLE datasets DROP COLUMN content_hash;
