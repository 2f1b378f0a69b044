-- +goose Up
-- The search indexes (samples_search_run_<id>) keep no statistics of their
-- expression, reach_search_text(completion): with them the planner knew how
-- many texts a common query matches but priced the inlined lower() and
-- replace() as two operators, and read a whole run instead of the index's
-- candidates (5.0 s against 0.85 s for `the final answer is` on a
-- 128,000-sample run). store.BuildSearchIndex sets this on each index it
-- builds; this sets it on those built before, and drops the statistics an
-- ANALYZE already gathered for them (pg_statistic is writable by a
-- superuser only; otherwise they stay until the index is rebuilt).
-- +goose StatementBegin
DO $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT c.oid, c.relname FROM pg_class c
		WHERE c.relkind = 'i' AND c.relname LIKE 'samples\_search\_run\_%' AND c.relnamespace = 'public'::regnamespace
	LOOP
		EXECUTE format('ALTER INDEX %I ALTER COLUMN 1 SET STATISTICS 0', r.relname);
		BEGIN
			DELETE FROM pg_statistic WHERE starelid = r.oid;
		EXCEPTION WHEN insufficient_privilege THEN
			NULL;
		END;
	END LOOP;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT c.relname FROM pg_class c
		WHERE c.relkind = 'i' AND c.relname LIKE 'samples\_search\_run\_%' AND c.relnamespace = 'public'::regnamespace
	LOOP
		EXECUTE format('ALTER INDEX %I ALTER COLUMN 1 SET STATISTICS -1', r.relname);
	END LOOP;
END $$;
-- +goose StatementEnd
