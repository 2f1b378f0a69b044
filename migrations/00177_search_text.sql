-- +goose Up
-- The text the search in completion texts indexes (store.SearchTextSQL):
-- lower(completion) with each space replaced by the letter ᐟ (U+141F,
-- Canadian syllabics, caseless). pg_trgm takes trigrams from runs of
-- letters and digits only; with spaces turned into a letter its trigrams
-- span them ("rᐟ1" and "ᐟ17" in "answerᐟ17"), so a query of common words
-- (every text says "answer") still selects few candidates. It is not
-- one-to-one (a ᐟ in a text), so a match is exact only for texts and
-- queries without ᐟ; the search checks the others with ILIKE. Each run's
-- partial GIN index on it (samples_search_run_<id>) is built by the
-- search_index job. Changing the body needs new index names (every index
-- on it rebuilt). (A translate() of all ASCII punctuation, tried first,
-- cost 0.5 ms per 470-character text: too slow for the index's checks.)
CREATE OR REPLACE FUNCTION reach_search_text(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $fn$ SELECT replace(lower(t), ' ', 'ᐟ') $fn$;

-- +goose Down
-- The search indexes on it (samples_search_run_<id>) go with it.
DROP FUNCTION IF EXISTS reach_search_text(text) CASCADE;
