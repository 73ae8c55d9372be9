-- The rules each record is judged under, one row per (rule, record): the inbox's rule filter
-- reads the records of one rule through this table's key instead of searching the
-- space-separated `records.rules` column of every row. Written with the projection
-- (`projection::write_rules`), in the same transaction; `records.rules` stays the list the
-- pages show.
CREATE TABLE record_rules (
    rule TEXT NOT NULL,
    record_id TEXT NOT NULL REFERENCES records (id),
    PRIMARY KEY (rule, record_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX record_rules_record ON record_rules (record_id);

-- Every stored record's rules, split on spaces as `records::rules_of` joined them.
WITH RECURSIVE split (id, rest, rule) AS (
    SELECT id, trim(rules) || ' ', NULL FROM records WHERE rules IS NOT NULL
    UNION ALL
    SELECT id, substr(rest, instr(rest, ' ') + 1), substr(rest, 1, instr(rest, ' ') - 1)
    FROM split WHERE rest <> ''
)
INSERT OR IGNORE INTO record_rules (rule, record_id)
SELECT rule, id FROM split WHERE rule IS NOT NULL AND rule <> '';
