-- Migration 3: sync bookkeeping beyond the per-record `sync_state` of migration 2 (ARCHITECTURE.md, Sync,
-- module `crate::sync`).

-- Per peer (the server): the cursor of the last response applied. Stored in the same
-- transaction as that response's contents, so sending it back also tells the server that
-- everything the response carried arrived.
CREATE TABLE sync_peers (
    peer TEXT PRIMARY KEY NOT NULL,
    cursor INTEGER NOT NULL DEFAULT 0 CHECK (cursor >= 0),
    updated_at TEXT NOT NULL
) STRICT;

-- Local changes the server refused, kept as evidence after the record was reset to the
-- server's version (or removed, for a refused creation). No foreign key to `records`: the
-- evidence outlives the record.
CREATE TABLE sync_quarantine (
    id INTEGER PRIMARY KEY,
    record_id TEXT NOT NULL,
    peer TEXT NOT NULL,
    -- `RejectionCode` as sent by the server, e.g. 'sealed_field'.
    code TEXT NOT NULL,
    -- The server's reason, in Portuguese.
    message TEXT NOT NULL,
    -- JSON array of the refused changes' hashes (hex).
    change_hashes TEXT NOT NULL DEFAULT '[]',
    -- The refused changes (loadable over the server's version), or the whole refused record.
    bytes BLOB NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX sync_quarantine_record ON sync_quarantine (record_id);
