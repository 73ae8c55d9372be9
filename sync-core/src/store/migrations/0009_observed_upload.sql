-- Migration 9: observed people are sent to the server apart from the records' history.
--
-- `record_id`: the record whose change named the person (written in the same transaction);
-- NULL for rows written before this version or outside a record. `uploaded_at`: when the
-- server last confirmed the record's whole set of observed people; NULL means the record's
-- set is to be sent (a new person, or one erased here since).
ALTER TABLE observed_people ADD COLUMN record_id TEXT;
ALTER TABLE observed_people ADD COLUMN uploaded_at TEXT;
CREATE INDEX observed_people_pending ON observed_people (record_id) WHERE uploaded_at IS NULL;
