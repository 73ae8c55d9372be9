-- The records that may duplicate another, kept as records arrive instead of found by a scan of
-- every record on each visit to the duplicates page. A record is here when it is open (not a
-- draft, not annulled, archived or merged) and shares its canonical plate with an open record
-- of another device made at most two hours apart (`store::office::DUPLICATE_WINDOW_MINUTES`).
-- Maintained by `sqlite::office::refresh_duplicate_candidates` in the transaction of every
-- stored change, through `records_plate` (plate, occurred_at); the office's judgement of place
-- and of pairs kept apart is made on the documents of the page it shows, one plate at a time.
CREATE TABLE duplicate_candidates (
    record_id TEXT PRIMARY KEY NOT NULL REFERENCES records (id),
    plate TEXT NOT NULL,
    occurred_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX duplicate_candidates_plate ON duplicate_candidates (plate, occurred_at DESC);

-- The records stored before this migration (times are RFC 3339 UTC text; `unixepoch` reads
-- them to the millisecond, as exactly as this one-off pass needs: a record's next change
-- judges it again to the microsecond).
INSERT INTO duplicate_candidates (record_id, plate, occurred_at)
SELECT r.id, r.plate, r.occurred_at FROM records r
WHERE r.plate IS NOT NULL
  AND r.status NOT IN ('draft', 'annulled', 'archived', 'merged_as_duplicate')
  AND EXISTS (
      SELECT 1 FROM records o
      WHERE o.plate = r.plate AND o.id != r.id
        AND o.author_device_id != r.author_device_id
        AND o.status NOT IN ('draft', 'annulled', 'archived', 'merged_as_duplicate')
        AND abs(unixepoch(o.occurred_at, 'subsec') - unixepoch(r.occurred_at, 'subsec')) <= 7200.0
  );
