-- Migration 2: field records and what they need offline (ARCHITECTURE.md, Records and Sync).
--
-- The store keeps Automerge bytes opaque: `records` holds the last full save and the row the
-- lists need; `record_chunks` holds one incremental save per write since then, so a write
-- appends a small row instead of rewriting the document. Compaction folds the chunks into `doc`.

CREATE TABLE records (
    -- UUID v7 (or any globally unique id) chosen by the records layer.
    id TEXT PRIMARY KEY NOT NULL,
    -- E.g. 'infraction', 'transgression'.
    kind TEXT NOT NULL,
    -- Auto number from a block leased by the server; NULL until one is available.
    number INTEGER UNIQUE CHECK (number IS NULL OR number > 0),
    -- 1 while the record waits for a number (blocks exhausted when it was written).
    wants_number INTEGER NOT NULL DEFAULT 0 CHECK (wants_number IN (0, 1)),
    -- Derived status as last computed by the records layer (for lists; the document rules).
    status TEXT NOT NULL,
    -- Small JSON projection for lists (plate, permit, …) written by the records layer.
    summary TEXT NOT NULL DEFAULT '{}',
    -- Automerge heads after the last write, opaque.
    heads BLOB NOT NULL DEFAULT x'',
    -- Last full save; empty until the first compaction (the chunks then hold everything).
    doc BLOB NOT NULL DEFAULT x'',
    -- Sequence number of the last chunk ever appended to this record; never goes back, so a
    -- compaction can name exactly which chunks its full save covers.
    last_chunk_seq INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- Store-wide counter of local writes: sync sends a record only if this moved since
    -- sync_state.synced_write_seq.
    write_seq INTEGER NOT NULL
) STRICT;
CREATE INDEX records_waiting_number ON records (created_at) WHERE wants_number = 1 AND number IS NULL;
CREATE INDEX records_write_seq ON records (write_seq);
CREATE INDEX records_kind_created ON records (kind, created_at);

CREATE TABLE record_chunks (
    record_id TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (record_id, seq)
) STRICT;

-- Blocks of auto numbers leased by the server. Blocks are kept after they run out so that a
-- block granted twice (or overlapping an old one) is recognised and refused.
CREATE TABLE number_blocks (
    first_number INTEGER PRIMARY KEY CHECK (first_number > 0),
    last_number INTEGER NOT NULL,
    -- Next number to hand out; last_number + 1 when exhausted.
    next_number INTEGER NOT NULL,
    granted_at TEXT NOT NULL,
    CHECK (first_number <= last_number),
    CHECK (next_number BETWEEN first_number AND last_number + 1)
) STRICT;

-- Photos, content-addressed by the SHA-256 of their bytes (taken at capture). Kept in the
-- database rather than in files next to it: one file to back up, the photo and the record that
-- names it commit together, and there are no orphan or half-written files after a crash.
CREATE TABLE photos (
    hash TEXT PRIMARY KEY NOT NULL CHECK (length(hash) = 64),
    bytes BLOB NOT NULL,
    size INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    -- Set when the server confirmed it received and verified the bytes.
    uploaded_at TEXT
) STRICT;

-- Automerge sync state per record and peer (the server), persisted so unchanged documents cost
-- nothing on the next exchange.
CREATE TABLE sync_state (
    record_id TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
    peer TEXT NOT NULL,
    state BLOB NOT NULL,
    synced_write_seq INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (record_id, peer)
) STRICT;

-- Personal data of drivers who are not in the registry. Records reference a row by id, never
-- copy it, so erasing it (LGPD) blanks this row and leaves the documents' history intact.
CREATE TABLE observed_people (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT,
    cpf TEXT,
    cnh TEXT,
    -- Anything else as typed (JSON object).
    details TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    erased_at TEXT
) STRICT;
CREATE INDEX observed_people_cpf ON observed_people (cpf) WHERE cpf IS NOT NULL;
CREATE INDEX observed_people_cnh ON observed_people (cnh) WHERE cnh IS NOT NULL;
