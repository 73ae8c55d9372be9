-- Migration 001: user accounts, their devices and refresh tokens (ADR 0007).
--
-- Times are RFC 3339 UTC text with microseconds (`audit::format_at`), so they sort as text.

CREATE TABLE users (
    id TEXT PRIMARY KEY NOT NULL,
    -- Stored lower-cased; logins compare lower-cased.
    username TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('officer', 'coordinator', 'office', 'admin')),
    -- The stand a coordinator coordinates (art. 17); only coordinators have one.
    stand_id TEXT,
    -- Argon2id PHC string; the parameters travel with each hash.
    password_hash TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    created_at TEXT NOT NULL,
    CHECK ((role = 'coordinator') = (stand_id IS NOT NULL))
) STRICT;

CREATE TABLE devices (
    id TEXT PRIMARY KEY NOT NULL,
    -- The one user who logs in on this device.
    user_id TEXT NOT NULL REFERENCES users (id),
    label TEXT NOT NULL,
    registered_at TEXT NOT NULL,
    registered_by TEXT,
    -- Once set, the auth extractor refuses every token of this device.
    revoked_at TEXT,
    revoked_by TEXT
) STRICT;
CREATE INDEX devices_user ON devices (user_id);

-- Only the SHA-256 of a refresh token is kept. A token is spent once (`used_at`); presenting a
-- spent token revokes its whole family (every token descending from the same login).
CREATE TABLE refresh_tokens (
    token_hash TEXT PRIMARY KEY NOT NULL,
    family_id TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id),
    device_id TEXT NOT NULL REFERENCES devices (id),
    issued_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    revoked_at TEXT
) STRICT;
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_device ON refresh_tokens (device_id);
