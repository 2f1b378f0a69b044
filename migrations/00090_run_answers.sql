-- +goose Up
-- How each run's samples on each problem distribute over final answers (store.AnswerSQL): the
-- problem page's answer distribution and uncounted solves read these few rows instead of every
-- sample of the problem. AggregateRun rewrites a run's rows together with its counts, so they
-- change whenever its verdicts do (verification, overrides, restored file verdicts, the grading
-- policy). Migration 00091 (Go, internal/store/migrate.go) fills them for existing runs.
-- No key on answer: an extracted answer may be longer than a B-tree entry can hold.
CREATE TABLE run_answers (
    run_id     bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    problem_id bigint NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
    answer     text   NOT NULL,
    n          int    NOT NULL,        -- samples with this answer
    correct    int    NOT NULL,        -- of which graded correct (status)
    fallback   int    NOT NULL,        -- of which correct but not counted: answer from a fallback rule
    truncated  int    NOT NULL         -- of which correct but not counted: cut by the length limit
);
CREATE INDEX run_answers_problem ON run_answers (run_id, problem_id);

-- +goose Down
DROP TABLE run_answers;
