-- Migration 4: who this device is (ARCHITECTURE.md, Records: one Automerge actor per device).
--
-- One row (id = 1) once the device was set up: its registered id (whose 16 bytes are the actor
-- of every change it writes), the user signed in and their role, the coordinator's stand. Kept
-- in the same file as the records it signs, so a backup restores both together and the app and
-- the command line agree on the identity without flags.
CREATE TABLE device_identity (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    device_id TEXT NOT NULL,
    -- JSON of `DeviceIdentity` (user, role, stand, issuing body): new fields need no migration.
    body TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
