-- Migration 007: which record holds each auto number, so that two records never hold the same
-- one (the record sync checks it, in the same transaction, before storing; the primary key
-- guards it again), and so that a device's unused leased numbers can be counted.
--
-- Not a unique index on `records.number`: databases written before this check may already
-- hold two records with one number, and the migration must not fail on them. The earliest
-- stored record keeps the number here; the later one stays as it is, for the office to see.

CREATE TABLE record_numbers (
    number TEXT PRIMARY KEY NOT NULL,
    record_id TEXT NOT NULL REFERENCES records (id),
    -- The number as an integer when it is one (numbers from leased blocks), else NULL.
    value INTEGER
) STRICT;
CREATE INDEX record_numbers_value ON record_numbers (value);

INSERT OR IGNORE INTO record_numbers (number, record_id, value)
    SELECT number, id,
        CASE WHEN number GLOB '[0-9]*' AND NOT number GLOB '*[^0-9]*'
            THEN CAST(number AS INTEGER) END
    FROM records WHERE number IS NOT NULL ORDER BY created_at, id;

-- Per-device quotas (`crate::limits`) count a device's photos in a window and its quarantine
-- rows in the write's transaction: indexed, so the count is a range scan of that device only.
CREATE INDEX photos_device ON photos (device_id, uploaded_at);
CREATE INDEX record_quarantine_device ON record_quarantine (device_id);
