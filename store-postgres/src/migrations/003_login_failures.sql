-- The login failure budgets (`taxi_fiscal_store::logins`), moved here from each server process's
-- memory so that every node counts the same attempts and a restart forgets none: the same
-- tables as the SQLite backend's migration 022. One row per (username, client address) pair and
-- one per username: the attempts of the current window (those still running included), when it
-- started, the lockout and the number of lockouts in a row. `expires_at` is when forgetting the
-- row changes nothing (window, lockout and backoff memory over); each reserve deletes a bounded
-- batch of expired rows, oldest first, through its index. Instants are RFC 3339 text
-- (`store::audit::format_at`) in byte order, which sorts as time.
CREATE TABLE login_pair_budgets (
    username     TEXT COLLATE "C" NOT NULL,
    address      TEXT COLLATE "C" NOT NULL,
    attempts     BIGINT NOT NULL CHECK (attempts >= 0),
    window_start TEXT COLLATE "C" NOT NULL,
    locked_until TEXT COLLATE "C",
    strikes      BIGINT NOT NULL CHECK (strikes >= 0),
    expires_at   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (username, address)
);
CREATE INDEX login_pair_budgets_expiry ON login_pair_budgets (expires_at);

CREATE TABLE login_username_budgets (
    username     TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    attempts     BIGINT NOT NULL CHECK (attempts >= 0),
    window_start TEXT COLLATE "C" NOT NULL,
    locked_until TEXT COLLATE "C",
    strikes      BIGINT NOT NULL CHECK (strikes >= 0),
    expires_at   TEXT COLLATE "C" NOT NULL
);
CREATE INDEX login_username_budgets_expiry ON login_username_budgets (expires_at);
