-- The office pages' browser sessions, moved here from each server process's memory so that
-- every node serves every office browser and a restart logs nobody out. `key` is the SHA-256
-- of the cookie's token (never the token); `flash_ok`/`flash_message` are the one-shot message
-- of the next page, both NULL when there is none. Opening a session deletes the expired ones
-- (by `last_seen` and `created_at`) and the user's oldest beyond the per-user cap (by
-- `user_id`, `created_at`): hence the indexes.
CREATE TABLE web_sessions (
    key TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    username TEXT COLLATE "C" NOT NULL,
    device_id TEXT COLLATE "C" NOT NULL REFERENCES devices (id),
    display_name TEXT COLLATE "C" NOT NULL,
    csrf TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    last_seen TEXT COLLATE "C" NOT NULL,
    flash_ok BOOLEAN,
    flash_message TEXT COLLATE "C",
    CHECK ((flash_ok IS NULL) = (flash_message IS NULL))
);
CREATE INDEX web_sessions_user ON web_sessions (user_id, created_at);
CREATE INDEX web_sessions_last_seen ON web_sessions (last_seen);
CREATE INDEX web_sessions_created ON web_sessions (created_at);
