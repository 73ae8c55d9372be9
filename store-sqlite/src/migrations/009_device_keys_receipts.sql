-- Migration 009: device keys and record receipts.
--
-- `device_keys`: every Ed25519 public key a device registered at login, never deleted (a
-- reinstalled app brings a new key; the seals of records issued under the old one still verify
-- against it). A key belongs to one device; it is revoked with its device (`devices.revoked_at`:
-- a revoked device can no longer log in or sync).
CREATE TABLE device_keys (
    -- Lower-case hex of the 32 bytes.
    public_key TEXT PRIMARY KEY NOT NULL CHECK (length(public_key) = 64),
    device_id TEXT NOT NULL REFERENCES devices (id),
    registered_at TEXT NOT NULL
) STRICT;
CREATE INDEX device_keys_device ON device_keys (device_id);

-- `record_receipts`: the server's countersignature of a record's device seal, written in the
-- transaction that accepted the issuing batch. `server_signature` is the server key's Ed25519
-- signature over the canonical receipt (`crate::receipts`); its digest is the payload of the
-- audit row `audit_seq`, so the receipt is anchored in the chain.
CREATE TABLE record_receipts (
    record_id TEXT PRIMARY KEY NOT NULL REFERENCES records (id),
    verification_code TEXT NOT NULL UNIQUE,
    device_id TEXT NOT NULL,
    device_public_key TEXT NOT NULL,
    device_signature TEXT NOT NULL,
    evidence_sha256 TEXT NOT NULL,
    -- The issued event's instant, on the device clock.
    issued_at TEXT NOT NULL,
    -- Server clock: the record was received no later than this.
    received_at TEXT NOT NULL,
    -- Server clock minus device clock at the request, milliseconds; NULL when the device did
    -- not send its clock.
    device_clock_offset_ms INTEGER,
    server_public_key TEXT NOT NULL,
    server_signature TEXT NOT NULL,
    receipt_sha256 TEXT NOT NULL,
    audit_seq INTEGER NOT NULL REFERENCES audit_log (seq)
) STRICT;

CREATE TRIGGER record_receipts_no_update BEFORE UPDATE ON record_receipts
BEGIN
    SELECT RAISE(ABORT, 'record_receipts is append-only');
END;
CREATE TRIGGER record_receipts_no_delete BEFORE DELETE ON record_receipts
BEGIN
    SELECT RAISE(ABORT, 'record_receipts is append-only');
END;
