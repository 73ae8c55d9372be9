-- Migration 5: what the sync client (`crate::client`, feature `client`) keeps between runs:
-- the session with the server and what the app shows as "sync status" (docs/adr/0010).

-- One row (id = 1) while a user is logged in on this device through the server. The tokens are
-- bearer secrets: they live in the same file as the records they protect (ADR 0010 says why and
-- how a platform keystore can take them later). `access_valid_until` is computed on the
-- device's own clock from the server's `expires_in` at receipt, so a device whose clock is off
-- by a day still refreshes at the right moment.
CREATE TABLE client_session (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    server_url TEXT NOT NULL,
    -- The device's id as registered on the server (`POST /v1/devices`), e.g. 'tablet-fiscal-01'.
    server_device_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    username TEXT NOT NULL,
    -- Server role: 'officer', 'coordinator', 'office', 'admin'.
    role TEXT NOT NULL,
    stand_id TEXT,
    access_token TEXT NOT NULL,
    access_valid_until TEXT NOT NULL,
    refresh_token TEXT NOT NULL,
    refresh_valid_until TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;

-- One row (id = 1) once the client ran: when it last tried, when a whole sync last succeeded,
-- and the last error (cleared by the next success), for the app's status line.
CREATE TABLE client_status (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    last_attempt_at TEXT,
    last_success_at TEXT,
    last_error TEXT,
    last_error_at TEXT
) STRICT;
