-- Migration 002: the registry, server-authoritative (ARCHITECTURE.md, Two kinds of data).
--
-- Whole entities as JSON keyed by (kind, key): the server validates the whole registry in memory
-- (`Registry::validate`) before every commit, so integrity is enforced in one place for every
-- backend, and these rows are its persistence. Keys: people, vehicles, stands, penalties and
-- fines by id, permits by number, transfers by the JSON of their `TransferKey`.

-- One row: the version devices see, and when the office produced it.
CREATE TABLE registry_meta (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL CHECK (version >= 0),
    generated_at TEXT
) STRICT;
INSERT INTO registry_meta (id, version, generated_at) VALUES (1, 0, NULL);

CREATE TABLE registry_entities (
    kind TEXT NOT NULL
        CHECK (kind IN ('person', 'vehicle', 'stand', 'permit', 'penalty', 'fine', 'transfer')),
    key TEXT NOT NULL,
    body TEXT NOT NULL,
    -- The version that last wrote this entity.
    version INTEGER NOT NULL,
    PRIMARY KEY (kind, key)
) STRICT, WITHOUT ROWID;

-- Every version's changes (a JSON array of `sync_core::feed::RegistryChange`), so that
-- `GET /v1/registry/changes?since=N` can answer any N still in the log.
CREATE TABLE registry_log (
    version INTEGER PRIMARY KEY,
    from_version INTEGER NOT NULL,
    at TEXT NOT NULL,
    user_id TEXT,
    device_id TEXT,
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    changes TEXT NOT NULL,
    CHECK (version = from_version + 1)
) STRICT;
