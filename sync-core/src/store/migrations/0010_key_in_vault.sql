-- Migration 10: the device's signing key may live in the platform's keystore instead.
--
-- A store opened with a secret vault (Android Keystore, iOS Keychain: `Store::open_encrypted`)
-- keeps the Ed25519 secret there and an empty `secret` here, so that the file alone — even
-- decrypted — cannot sign. `public_key` stays, to check that the vault's key is this device's.
-- SQLite cannot change a CHECK in place: the table is rebuilt, rows copied as they are.
CREATE TABLE device_key_new (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    -- 32 bytes, or 0 bytes when the secret is in the vault.
    secret BLOB NOT NULL CHECK (length(secret) IN (0, 32)),
    public_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    registered_with TEXT,
    registered_at TEXT
) STRICT;
INSERT INTO device_key_new (id, secret, public_key, created_at, registered_with, registered_at)
    SELECT id, secret, public_key, created_at, registered_with, registered_at FROM device_key;
DROP TABLE device_key;
ALTER TABLE device_key_new RENAME TO device_key;
