-- +goose Up
-- Accounts, projects, API tokens, share links and the review of base-only problems.

CREATE TABLE users (
    id            bigserial PRIMARY KEY,
    email         text NOT NULL,                     -- stored lower-case
    password_hash text NOT NULL DEFAULT '',           -- argon2id PHC string; '' = no password yet
    is_admin      bool NOT NULL DEFAULT false,
    must_change_password bool NOT NULL DEFAULT false,  -- signed in with a one-time password
    disabled      bool NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    password_changed_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email ON users (lower(email));

-- Server-side sessions; the cookie holds the token, the table its SHA-256.
CREATE TABLE sessions (
    token_hash  bytea PRIMARY KEY,
    user_id     bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    last_seen   timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

-- Invitations an admin hands out; the link holds the token, the table its SHA-256.
CREATE TABLE invites (
    token_hash  bytea PRIMARY KEY,
    email       text NOT NULL,
    is_admin    bool NOT NULL DEFAULT false,
    project_id  bigint,                               -- joined on acceptance, with role
    role        text NOT NULL DEFAULT 'viewer',
    created_by  bigint REFERENCES users(id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);

CREATE TABLE projects (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    is_default  bool NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now()
);
-- Comparisons made before accounts existed, and those created without a
-- project (examples, `reach import` without --project), live here.
CREATE UNIQUE INDEX projects_one_default ON projects (is_default) WHERE is_default;
INSERT INTO projects (name, is_default) VALUES ('Default', true);
ALTER TABLE invites ADD FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE;

CREATE TABLE project_members (
    project_id  bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id     bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role        text   NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    PRIMARY KEY (project_id, user_id)
);

ALTER TABLE comparisons ADD COLUMN project_id bigint REFERENCES projects(id);
UPDATE comparisons SET project_id = (SELECT id FROM projects WHERE is_default);
ALTER TABLE comparisons ALTER COLUMN project_id SET NOT NULL;
CREATE INDEX comparisons_project ON comparisons (project_id);

-- API tokens for scripts (Bearer); only the SHA-256 is kept.
CREATE TABLE api_tokens (
    id           bigserial PRIMARY KEY,
    user_id      bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         text   NOT NULL DEFAULT '',
    token_hash   bytea  NOT NULL UNIQUE,
    prefix       text   NOT NULL,                     -- first characters, to recognise it in the list
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);

-- Read-only links to a comparison's charts; only the SHA-256 of the token is kept.
CREATE TABLE share_links (
    id            bigserial PRIMARY KEY,
    comparison_id bigint NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
    token_hash    bytea  NOT NULL UNIQUE,
    chart         text   NOT NULL DEFAULT '',          -- '' = every chart; or crossover | venn | histogram
    show_texts    bool   NOT NULL DEFAULT false,       -- problem statements and completions visible
    created_by    bigint REFERENCES users(id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz,
    revoked_at    timestamptz,
    views         bigint NOT NULL DEFAULT 0,
    last_viewed_at timestamptz
);
CREATE INDEX share_links_comparison ON share_links (comparison_id);

-- One verdict per reviewed problem of a comparison.
CREATE TABLE problem_reviews (
    comparison_id bigint NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
    problem_id    bigint NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
    verdict       text   NOT NULL CHECK (verdict IN ('genuine', 'lucky', 'verifier-fp', 'wrong-reference', 'unsure')),
    note          text   NOT NULL DEFAULT '',
    reviewer_id   bigint REFERENCES users(id) ON DELETE SET NULL,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (comparison_id, problem_id)
);

-- A reviewer's override of one sample's verdict: status holds the new
-- verdict, override_from what the verifier (or file) said.
ALTER TABLE samples
    ADD COLUMN override_from text,
    ADD COLUMN override_by   bigint REFERENCES users(id) ON DELETE SET NULL,
    ADD COLUMN override_at   timestamptz,
    ADD COLUMN override_note text NOT NULL DEFAULT '';

-- Who changed what from what to what.
CREATE TABLE audit_log (
    id            bigserial PRIMARY KEY,
    at            timestamptz NOT NULL DEFAULT now(),
    user_id       bigint REFERENCES users(id) ON DELETE SET NULL,
    comparison_id bigint REFERENCES comparisons(id) ON DELETE CASCADE,
    problem_id    bigint,
    action        text NOT NULL,   -- review | sample-verdict | share | share-revoke | member | ...
    target        text NOT NULL DEFAULT '',
    old_value     text NOT NULL DEFAULT '',
    new_value     text NOT NULL DEFAULT '',
    note          text NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_comparison ON audit_log (comparison_id, problem_id);

-- +goose Down
DROP TABLE audit_log;
ALTER TABLE samples DROP COLUMN override_from, DROP COLUMN override_by, DROP COLUMN override_at, DROP COLUMN override_note;
DROP TABLE problem_reviews, share_links, api_tokens;
ALTER TABLE comparisons DROP COLUMN project_id;
DROP TABLE project_members, invites, projects, sessions, users;
