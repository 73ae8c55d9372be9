-- Migration 1: the registry replica (ARCHITECTURE.md, Two kinds of data).
--
-- Each entity is one row: the few columns a lookup or a reference needs, indexed, plus the whole
-- entity as JSON in `body` (what the rules engine reads). Reading a permit is then one B-tree
-- descent and one small JSON parse, and a new field in the registry needs no migration.
--
-- Foreign keys mirror `Registry::validate` exactly (the same references, no more) and are
-- DEFERRABLE INITIALLY DEFERRED: they are checked at COMMIT, so a batch of changes may arrive in
-- any order, and a batch that would leave a reference dangling fails whole.

-- One row (id = 1) once a snapshot was applied; no row means "no registry on this device".
CREATE TABLE replica_meta (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL CHECK (version >= 0),
    -- When the office produced this version (RFC 3339 UTC), if known.
    generated_at TEXT,
    -- When this device last received it or was told it is current (RFC 3339 UTC).
    refreshed_at TEXT NOT NULL
) STRICT;

CREATE TABLE reg_people (
    id TEXT PRIMARY KEY NOT NULL,
    cpf TEXT NOT NULL UNIQUE,
    -- CNH registro number; not unique in the registry's own validation, so not here either.
    cnh TEXT NOT NULL,
    body TEXT NOT NULL
) STRICT;
CREATE INDEX reg_people_cnh ON reg_people (cnh);

CREATE TABLE reg_vehicles (
    id TEXT PRIMARY KEY NOT NULL,
    -- Canonical Mercosul form (`Plate::canonical`): every spelling is looked up by it.
    plate TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL
) STRICT;

CREATE TABLE reg_stands (
    id TEXT PRIMARY KEY NOT NULL,
    coordinator_id TEXT REFERENCES reg_people (id) DEFERRABLE INITIALLY DEFERRED,
    body TEXT NOT NULL
) STRICT;
CREATE INDEX reg_stands_coordinator ON reg_stands (coordinator_id);

CREATE TABLE reg_permits (
    number TEXT PRIMARY KEY NOT NULL,
    holder_id TEXT NOT NULL REFERENCES reg_people (id) DEFERRABLE INITIALLY DEFERRED,
    vehicle_id TEXT NOT NULL REFERENCES reg_vehicles (id) DEFERRABLE INITIALLY DEFERRED,
    stand_id TEXT NOT NULL REFERENCES reg_stands (id) DEFERRABLE INITIALLY DEFERRED,
    body TEXT NOT NULL
) STRICT;
-- Plate lookups go reg_vehicles(plate) -> reg_permits(vehicle_id); the other two indexes let
-- SQLite check the foreign keys when a person or stand is deleted without a full scan.
CREATE INDEX reg_permits_vehicle ON reg_permits (vehicle_id);
CREATE INDEX reg_permits_holder ON reg_permits (holder_id);
CREATE INDEX reg_permits_stand ON reg_permits (stand_id);

-- Who is on which permit, derived from the permit's body on every write: the index behind
-- "lookup by CPF/CNH" and the driver's other permits (art. 8 §3).
CREATE TABLE reg_permit_people (
    permit_number TEXT NOT NULL
        REFERENCES reg_permits (number) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    person_id TEXT NOT NULL REFERENCES reg_people (id) DEFERRABLE INITIALLY DEFERRED,
    role TEXT NOT NULL CHECK (role IN ('holder', 'auxiliary', 'illness_substitute')),
    PRIMARY KEY (permit_number, role, person_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX reg_permit_people_person ON reg_permit_people (person_id, role);

CREATE TABLE reg_penalties (
    id TEXT PRIMARY KEY NOT NULL,
    permit_number TEXT NOT NULL REFERENCES reg_permits (number) DEFERRABLE INITIALLY DEFERRED,
    body TEXT NOT NULL
) STRICT;
CREATE INDEX reg_penalties_permit ON reg_penalties (permit_number);

CREATE TABLE reg_fines (
    id TEXT PRIMARY KEY NOT NULL,
    permit_number TEXT NOT NULL REFERENCES reg_permits (number) DEFERRABLE INITIALLY DEFERRED,
    body TEXT NOT NULL
) STRICT;
CREATE INDEX reg_fines_permit ON reg_fines (permit_number);

-- Transfers are history (art. 10) and may name permits or people no longer registered, as in
-- `Registry::validate`: no foreign keys.
CREATE TABLE reg_transfers (
    permit_number TEXT NOT NULL,
    on_date TEXT NOT NULL,
    from_person_id TEXT NOT NULL,
    to_person_id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (permit_number, on_date, from_person_id, to_person_id)
) STRICT;
