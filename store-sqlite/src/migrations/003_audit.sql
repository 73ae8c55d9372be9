-- Migration 003: the audit chain (module `audit`). Append-only: the triggers refuse UPDATE and
-- DELETE, and each row's hash covers its fields and the previous row's hash, so a row changed by
-- someone who bypasses the triggers (editing the file) is found by `taxi-fiscal audit verify`.

CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    user_id TEXT,
    device_id TEXT,
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    payload_hash TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE
) STRICT;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
