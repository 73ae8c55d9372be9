-- The rules each record is judged under, one row per (rule, record): the inbox's rule filter
-- reads the records of one rule through this table's key instead of searching the
-- space-separated `records.rules` column of every row. It carries the record's status and time
-- too, so that a filter by rule (and status) is answered from its indexes alone: the total and
-- the counts per status without reading a record, the page's ids in order before fetching
-- them. Written with the projection (`projection::write_rules`), in the same transaction;
-- `records.rules` stays the list the pages show.
CREATE TABLE record_rules (
    rule TEXT NOT NULL,
    record_id TEXT NOT NULL REFERENCES records (id),
    status TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    PRIMARY KEY (rule, record_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX record_rules_record ON record_rules (record_id);
CREATE INDEX record_rules_status ON record_rules (rule, status);
CREATE INDEX record_rules_occurred ON record_rules (rule, occurred_at DESC, record_id DESC);

-- Every stored record's rules, split on spaces as `records::rules_of` joined them.
WITH RECURSIVE split (id, status, occurred_at, rest, rule) AS (
    SELECT id, status, occurred_at, trim(rules) || ' ', NULL FROM records
    WHERE rules IS NOT NULL
    UNION ALL
    SELECT id, status, occurred_at, substr(rest, instr(rest, ' ') + 1),
        substr(rest, 1, instr(rest, ' ') - 1)
    FROM split WHERE rest <> ''
)
INSERT OR IGNORE INTO record_rules (rule, record_id, status, occurred_at)
SELECT rule, id, status, occurred_at FROM split WHERE rule IS NOT NULL AND rule <> '';
