-- Migration 005: field records and their sync (ADR 0009, module `sync_core::sync`).
--
-- A record is one Automerge document, stored whole (`doc`, its latest `save()`), next to the
-- columns the office filters on (the projection, rewritten from the document on every accepted
-- change). Every accepted batch of changes is also kept as it arrived (`record_changes`), with
-- the audit row that records it. Times are RFC 3339 UTC text with microseconds.

CREATE TABLE records (
    id TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('infraction', 'transgression')),
    -- Global change sequence number of the record's last change: devices ask for "everything
    -- after my cursor". Unique: one number per stored change.
    seq INTEGER NOT NULL UNIQUE CHECK (seq > 0),
    doc BLOB NOT NULL,
    -- JSON array of the heads (hex, sorted).
    heads TEXT NOT NULL,
    -- Projection (see `store::sqlite::records::project`).
    number TEXT,
    status TEXT NOT NULL,
    -- Canonical Mercosul plate (`Plate::canonical`), for lookups by any spelling.
    plate TEXT,
    stand_id TEXT,
    permit_number TEXT,
    author_user_id TEXT NOT NULL,
    author_role TEXT NOT NULL,
    author_device_id TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    sealed INTEGER NOT NULL CHECK (sealed IN (0, 1)),
    invalid_events INTEGER NOT NULL DEFAULT 0,
    conflicts INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX records_occurred ON records (occurred_at DESC, id DESC);
CREATE INDEX records_status ON records (status, occurred_at DESC);
CREATE INDEX records_stand ON records (stand_id, occurred_at DESC);
CREATE INDEX records_author ON records (author_user_id, occurred_at DESC);
CREATE INDEX records_plate ON records (plate, occurred_at DESC);

-- Each accepted batch, as the changes arrived (loadable over the document before it), with the
-- hashes the audit row's payload digest covers.
CREATE TABLE record_changes (
    id INTEGER PRIMARY KEY,
    record_id TEXT NOT NULL REFERENCES records (id),
    seq INTEGER NOT NULL,
    -- JSON array of change hashes (hex), in causal order.
    change_hashes TEXT NOT NULL,
    changes BLOB NOT NULL,
    user_id TEXT NOT NULL,
    device_id TEXT NOT NULL,
    at TEXT NOT NULL,
    audit_seq INTEGER NOT NULL REFERENCES audit_log (seq)
) STRICT;
CREATE INDEX record_changes_record ON record_changes (record_id, seq);

-- Refused changes, kept as evidence, never applied. A replayed request finds its row already
-- here (same record, device and bytes) and adds nothing.
CREATE TABLE record_quarantine (
    id INTEGER PRIMARY KEY,
    record_id TEXT NOT NULL,
    device_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    role TEXT NOT NULL,
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    change_hashes TEXT NOT NULL,
    bytes BLOB NOT NULL,
    bytes_sha256 TEXT NOT NULL,
    at TEXT NOT NULL,
    UNIQUE (record_id, device_id, bytes_sha256)
) STRICT;
CREATE INDEX record_quarantine_record ON record_quarantine (record_id);

-- What each device is known to have of each record (`sync_core::sync::PeerState`, JSON).
-- `device_uuid` is the device's protocol UUID (`sync_core::sync::device_uuid`).
CREATE TABLE record_peers (
    device_uuid TEXT NOT NULL,
    record_id TEXT NOT NULL,
    state TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (device_uuid, record_id)
) STRICT;

-- Automerge actors (hex) bound to the device that first used them; another device using one
-- is refused.
CREATE TABLE actor_bindings (
    actor TEXT PRIMARY KEY NOT NULL,
    device_uuid TEXT NOT NULL,
    device_id TEXT NOT NULL,
    bound_at TEXT NOT NULL
) STRICT;

-- Which of the two inspecting bodies of art. 36 an officer account belongs to (Guarda
-- Municipal or Secretaria de Transportes): accounts only say "officer", records say which.
-- Bound by the first record the officer creates, like an actor; absent means Guarda Municipal.
CREATE TABLE officer_bodies (
    user_id TEXT PRIMARY KEY NOT NULL REFERENCES users (id),
    record_role TEXT NOT NULL CHECK (record_role IN ('guarda_municipal', 'secretaria_inspector')),
    bound_at TEXT NOT NULL
) STRICT;
