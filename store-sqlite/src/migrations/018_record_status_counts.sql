-- How many records are in each status, kept by triggers on `records`, so that the inbox's total
-- and its counts per status — with no filter but on the status — are read from a handful of rows
-- instead of counted over every record on each visit (the first page of a 100,000-record inbox
-- spent nearly all its time counting). Triggers, not code: every writer of `records` (the sync,
-- the office's events, a migration) keeps them true. `audit verify` compares them with a count.
CREATE TABLE record_status_counts (
    status TEXT PRIMARY KEY NOT NULL,
    n INTEGER NOT NULL CHECK (n >= 0)
) STRICT, WITHOUT ROWID;

INSERT INTO record_status_counts (status, n)
SELECT status, count(*) FROM records GROUP BY status;

CREATE TRIGGER record_status_counts_insert AFTER INSERT ON records
BEGIN
    INSERT INTO record_status_counts (status, n) VALUES (NEW.status, 1)
    ON CONFLICT (status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER record_status_counts_update AFTER UPDATE OF status ON records
WHEN OLD.status IS NOT NEW.status
BEGIN
    UPDATE record_status_counts SET n = n - 1 WHERE status = OLD.status;
    INSERT INTO record_status_counts (status, n) VALUES (NEW.status, 1)
    ON CONFLICT (status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER record_status_counts_delete AFTER DELETE ON records
BEGIN
    UPDATE record_status_counts SET n = n - 1 WHERE status = OLD.status;
END;
