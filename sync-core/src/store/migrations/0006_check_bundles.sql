-- Migration 6: precomputed check bundles and driver rows (module `store::bundle`, ADR 0005).
--
-- One row per permit with everything a field check of it reads — the permit, its vehicle, the
-- people on it, its stand, its penalties and fines — in a compact binary encoding, so that a
-- check is one point query and one decode instead of ~8 rows and as many JSON parses. Derived
-- from the `reg_*` rows (still the source of truth) and rewritten in the same transaction as
-- every snapshot or batch. No foreign keys: the store maintains the rows itself, and a batch
-- that breaks a reference fails on the `reg_*` tables' keys anyway.
--
-- Keyed by (canonical plate, permit number) WITHOUT ROWID, so that the usual lookup — by plate —
-- is a single B-tree descent that lands on the body; lookups by number go through the unique
-- index on the number.
CREATE TABLE reg_check_bundles (
    -- Canonical plate of the permit's vehicle (`Plate::canonical`).
    plate TEXT NOT NULL,
    permit_number TEXT NOT NULL,
    -- 1 when the permit is revoked: on a plate named by several permits, one in force wins.
    revoked INTEGER NOT NULL CHECK (revoked IN (0, 1)),
    body BLOB NOT NULL,
    PRIMARY KEY (plate, permit_number)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX reg_check_bundles_number ON reg_check_bundles (permit_number);

-- Per registered person, what a check needs when they drive a taxi they are not on: the person
-- and the permits they hold or are auxiliary on (art. 8 §3, "holder of another permit"), in the
-- same encoding. Keyed by CPF (unique), so that this too is one B-tree descent; by CNH through
-- the index (not unique: the lowest person id wins, as in `DriverId::resolve`).
CREATE TABLE reg_check_drivers (
    cpf TEXT PRIMARY KEY NOT NULL,
    person_id TEXT NOT NULL UNIQUE,
    cnh TEXT NOT NULL,
    body BLOB NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX reg_check_drivers_cnh ON reg_check_drivers (cnh);

-- One row (id = 1): the fingerprint of the encoding the bundles were written with. A build
-- whose encoding differs rebuilds every bundle from the `reg_*` rows when it opens the file;
-- no row yet (a file just migrated) means "rebuild".
CREATE TABLE reg_bundle_format (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    fingerprint TEXT NOT NULL
) STRICT;
