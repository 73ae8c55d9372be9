-- Migration 011: one-time codes of the administrator's day.
--
-- `account_codes`: a password-reset code (the user opens `/redefinir-senha/{code}` and chooses a
-- new password) or a device-enrolment code (the app exchanges it at `POST /v1/devices/enrol`
-- for its device registration). Only the SHA-256 of a code is kept: whoever reads the database
-- cannot use one. A code is spent once (`used_at`), ends at `expires_at`, and a new code of the
-- same purpose for the same user replaces the unused ones (`used_at` set, `replaced = 1`).
CREATE TABLE account_codes (
    code_hash TEXT PRIMARY KEY NOT NULL CHECK (length(code_hash) = 64),
    purpose TEXT NOT NULL CHECK (purpose IN ('password_reset', 'device_enrolment')),
    user_id TEXT NOT NULL REFERENCES users (id),
    created_at TEXT NOT NULL,
    -- The administrator who generated it.
    created_by TEXT,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    replaced INTEGER NOT NULL DEFAULT 0 CHECK (replaced IN (0, 1)),
    -- The device an enrolment code registered.
    device_id TEXT REFERENCES devices (id)
) STRICT;
CREATE INDEX account_codes_user ON account_codes (user_id, purpose);

-- The devices page shows when each device last sent a record: one index range per device.
CREATE INDEX record_changes_device ON record_changes (device_id, at);
