-- Migration 022: the login failure budgets (`taxi_fiscal_store::logins`), moved here from each
-- server process's memory so that every node counts the same attempts and a restart forgets
-- none. One row per (username, client address) pair and one per username: the attempts of the
-- current window (those still running included), when it started, the lockout and the number of
-- lockouts in a row. `expires_at` is when forgetting the row changes nothing (window, lockout and
-- backoff memory over); each reserve deletes a bounded batch of expired rows, oldest first,
-- through its index. Instants are RFC 3339 text (`store::audit::format_at`), which sorts as time.
CREATE TABLE login_pair_budgets (
    username     TEXT NOT NULL,
    address      TEXT NOT NULL,
    attempts     INTEGER NOT NULL CHECK (attempts >= 0),
    window_start TEXT NOT NULL,
    locked_until TEXT,
    strikes      INTEGER NOT NULL CHECK (strikes >= 0),
    expires_at   TEXT NOT NULL,
    PRIMARY KEY (username, address)
) STRICT;
CREATE INDEX login_pair_budgets_expiry ON login_pair_budgets (expires_at);

CREATE TABLE login_username_budgets (
    username     TEXT PRIMARY KEY NOT NULL,
    attempts     INTEGER NOT NULL CHECK (attempts >= 0),
    window_start TEXT NOT NULL,
    locked_until TEXT,
    strikes      INTEGER NOT NULL CHECK (strikes >= 0),
    expires_at   TEXT NOT NULL
) STRICT;
CREATE INDEX login_username_budgets_expiry ON login_username_budgets (expires_at);
