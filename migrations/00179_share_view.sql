-- +goose Up
-- A share link shows the view its creator was looking at: guessable
-- problems left out, the biased estimator, short problems or problems with
-- grading errors left out (a query string of those options; '' is the
-- default view). Links made before keep the default view they showed.
ALTER TABLE share_links ADD COLUMN view text NOT NULL DEFAULT '' CHECK (length(view) <= 200);

-- +goose Down
ALTER TABLE share_links DROP COLUMN view;
