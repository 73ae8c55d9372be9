-- Migration 008: the law's parameters are a registry entity (`Registry::parameters`: rules
-- configuration, holiday calendar, IPCA series), kind `law_parameters` with the single key
-- `current`, versioned, logged and audited like every other registry write. SQLite cannot
-- change a CHECK constraint in place: the table is rebuilt with its rows.
CREATE TABLE registry_entities_new (
    kind TEXT NOT NULL
        CHECK (kind IN ('person', 'vehicle', 'stand', 'permit', 'penalty', 'fine', 'transfer',
                        'law_parameters')),
    key TEXT NOT NULL,
    body TEXT NOT NULL,
    -- The version that last wrote this entity.
    version INTEGER NOT NULL,
    PRIMARY KEY (kind, key)
) STRICT, WITHOUT ROWID;
INSERT INTO registry_entities_new (kind, key, body, version)
    SELECT kind, key, body, version FROM registry_entities;
DROP TABLE registry_entities;
ALTER TABLE registry_entities_new RENAME TO registry_entities;
