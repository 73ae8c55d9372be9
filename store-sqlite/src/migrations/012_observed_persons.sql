-- Migration 012: identity and contact of the observed persons of records (witnesses, drivers
-- the registry does not know), kept apart from the records' Automerge history so they can be
-- erased when the case ends; and which record a merged duplicate was joined to.
--
-- `observed_persons`: the set the author's device last sent for a record (each upload replaces
-- it). Read only by the office; never in a record document, the registry feed or a sync
-- response.
CREATE TABLE observed_persons (
    record_id   TEXT NOT NULL REFERENCES records(id),
    person_id   TEXT NOT NULL,
    name        TEXT,
    cpf         TEXT,
    cnh         TEXT,
    document    TEXT,
    phone       TEXT,
    address     TEXT,
    uploaded_at TEXT NOT NULL,
    uploaded_by TEXT NOT NULL,
    device_id   TEXT,
    PRIMARY KEY (record_id, person_id)
);

-- `observed_person_erasures`: the office erased a record's observed persons (the rows above
-- are deleted in the same transaction). Holds no personal data: who, when, how many, and the
-- audit row. A record erased once takes no upload again.
CREATE TABLE observed_person_erasures (
    record_id TEXT PRIMARY KEY REFERENCES records(id),
    erased_at TEXT NOT NULL,
    erased_by TEXT NOT NULL,
    persons   INTEGER NOT NULL,
    audit_seq INTEGER NOT NULL
);

-- `record_merges`: a record merged as a duplicate and the record it was joined to, written
-- with the projection of every accepted change (the kept record lists its merged ones).
CREATE TABLE record_merges (
    merged_id TEXT PRIMARY KEY REFERENCES records(id),
    kept_id   TEXT NOT NULL
);
CREATE INDEX record_merges_kept ON record_merges(kept_id);
