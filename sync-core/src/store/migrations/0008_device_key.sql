-- Migration 8: the device's Ed25519 key, which seals the evidence of every record it issues.
--
-- One row (id = 1), created on the device the first time it is needed and never replaced: a
-- new key is a new install (the server keeps every key a device has registered). The secret
-- stays in this file, beside the records it signs; no API reads it back out.
CREATE TABLE device_key (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    secret BLOB NOT NULL CHECK (length(secret) = 32),
    -- Hex of the public key, for reading without deriving it.
    public_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    -- The server and device id (`<server url> <device id>`) a password login last registered
    -- the key with; the client sends no record to another until a login registers it there.
    registered_with TEXT,
    registered_at TEXT
) STRICT;
