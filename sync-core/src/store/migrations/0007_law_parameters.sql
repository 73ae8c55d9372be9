-- Migration 7: the law's parameters of the replica (module `store::parameters`).
--
-- The rules configuration, holiday calendar and IPCA series the office set, as the registry
-- feed delivers them (`RegistryChange::UpsertLawParameters`), so that the device judges with the
-- same parameters as the server for the same registry version. One row at most; no row, or a
-- NULL body, means the compiled-in defaults (a registry whose parameters were never set).
CREATE TABLE reg_law_parameters (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    -- The registry version from which this body is in force on this replica: a check whose
    -- facts are of an older version read them before the change and is evaluated again.
    since_version INTEGER NOT NULL CHECK (since_version >= 0),
    -- Bumped on every write: the key of the in-memory copy a check reuses.
    generation INTEGER NOT NULL,
    -- `LawParameters` as JSON, or NULL for the defaults.
    body TEXT
) STRICT;
