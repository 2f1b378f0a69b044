-- +goose Up
-- Duplicated samples of a run (store.RefreshRunQuality, next to run_quality): of its problems with
-- at least 8 samples whose completions average at least 32 bytes (shorter answers repeat
-- legitimately), how many there are and how many have at most half as many distinct texts as
-- samples, and the worst of those. A table of its own because run_quality is created by a later
-- migration number (goose applies a fresh database in order).
CREATE TABLE run_duplicates (
    run_id         bigint PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    checked        int NOT NULL,  -- problems with n >= 8 and completions averaging >= 32 bytes
    duplicated     int NOT NULL,  -- of those, problems with 2 * distinct texts <= n
    worst_problem  bigint,        -- the duplicated one with the fewest distinct texts per sample
    worst_n        int,
    worst_distinct int
);

-- Runs sampled or imported before this migration get their figures from their samples (one scan).
INSERT INTO run_duplicates (run_id, checked, duplicated, worst_problem, worst_n, worst_distinct)
SELECT run_id, count(*) FILTER (WHERE checked), count(*) FILTER (WHERE checked AND 2 * distinct_texts <= n),
    (array_agg(problem_id ORDER BY distinct_texts::float8 / n, problem_id) FILTER (WHERE checked AND 2 * distinct_texts <= n))[1],
    (array_agg(n ORDER BY distinct_texts::float8 / n, problem_id) FILTER (WHERE checked AND 2 * distinct_texts <= n))[1],
    (array_agg(distinct_texts ORDER BY distinct_texts::float8 / n, problem_id) FILTER (WHERE checked AND 2 * distinct_texts <= n))[1]
FROM (SELECT run_id, problem_id, count(*) AS n, count(*) >= 8 AND avg(octet_length(completion)) >= 32 AS checked,
        count(DISTINCT md5(completion)) AS distinct_texts
    FROM samples GROUP BY run_id, problem_id) p
GROUP BY run_id;

-- +goose Down
DROP TABLE run_duplicates;
