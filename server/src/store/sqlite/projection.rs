//! Tables derived from a record's projection besides its `records` row, written in the same
//! transaction as that row so that they never disagree with it.

use std::collections::BTreeSet;

use rusqlite::{Connection, params};

use crate::store::StoreError;

/// Replaces the `record_rules` rows of `record_id` with the space-separated rule ids of
/// `rules` (`records::rules_of`, the `records.rules` column): the index of the inbox's rule
/// filter (migration 015).
pub(super) fn write_rules(
    conn: &Connection,
    record_id: &str,
    rules: &str,
) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM record_rules WHERE record_id = ?1")?
        .execute([record_id])?;
    let mut insert = conn
        .prepare_cached("INSERT OR IGNORE INTO record_rules (rule, record_id) VALUES (?1, ?2)")?;
    for rule in rules.split_whitespace() {
        insert.execute(params![rule, record_id])?;
    }
    Ok(())
}

/// The distinct rule ids of a `records.rules` value.
pub(super) fn rule_set(rules: &str) -> BTreeSet<String> {
    rules.split_whitespace().map(String::from).collect()
}

/// The rule ids `record_rules` holds for a record (for the consistency check).
pub(super) fn rules_of_record(
    conn: &Connection,
    record_id: &str,
) -> Result<BTreeSet<String>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT rule FROM record_rules WHERE record_id = ?1")?;
    let rules = stmt
        .query_map([record_id], |r| r.get::<_, String>(0))?
        .collect::<Result<_, _>>()?;
    Ok(rules)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use rusqlite::Connection;

    use super::{rule_set, rules_of_record, write_rules};

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn, ":memory:", true).unwrap();
        conn
    }

    fn insert_record(conn: &Connection, id: &str, rules: Option<&str>) {
        conn.execute(
            "INSERT INTO records (id, kind, seq, doc, heads, status, author_user_id, author_role,
                 author_device_id, occurred_at, sealed, created_at, updated_at, rules)
             VALUES (?1, 'infraction', (SELECT coalesce(max(seq), 0) + 1 FROM records), x'00',
                 '[]', 'issued', 'u', 'guarda_municipal', 'd', '2026-01-01T00:00:00Z', 0,
                 '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', ?2)",
            rusqlite::params![id, rules],
        )
        .unwrap();
    }

    /// Rewriting a record's rules replaces its rows: a rule it no longer has is gone, a rule
    /// another record has stays, and `R2` is its own key beside `R24`.
    #[test]
    fn writing_a_records_rules_replaces_its_rows() {
        let conn = db();
        insert_record(&conn, "a", Some("R2 R24"));
        insert_record(&conn, "b", Some("R24"));
        write_rules(&conn, "a", "R2 R24").unwrap();
        write_rules(&conn, "b", "R24").unwrap();
        assert_eq!(rules_of_record(&conn, "a").unwrap(), rule_set("R24 R2"));
        write_rules(&conn, "a", "R30").unwrap();
        assert_eq!(rules_of_record(&conn, "a").unwrap(), rule_set("R30"));
        assert_eq!(rules_of_record(&conn, "b").unwrap(), rule_set("R24"));
        write_rules(&conn, "a", "").unwrap();
        assert!(rules_of_record(&conn, "a").unwrap().is_empty());
    }

    /// Migration 015 fills the table from the rows stored before it, splitting the column on
    /// any run of spaces, and the rule filter's query then reads it by key.
    #[test]
    fn the_migration_fills_the_rules_of_records_stored_before_it() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn, ":memory:", true).unwrap();
        conn.execute_batch("DROP TABLE record_rules; PRAGMA user_version = 14;")
            .unwrap();
        insert_record(&conn, "a", Some("R2 R24"));
        insert_record(&conn, "b", Some(" R24  R30 "));
        insert_record(&conn, "c", Some(""));
        insert_record(&conn, "d", None);
        super::super::migrations::migrate(&mut conn, ":memory:", false).unwrap();
        assert_eq!(rules_of_record(&conn, "a").unwrap(), rule_set("R2 R24"));
        assert_eq!(rules_of_record(&conn, "b").unwrap(), rule_set("R24 R30"));
        assert!(rules_of_record(&conn, "c").unwrap().is_empty());
        assert!(rules_of_record(&conn, "d").unwrap().is_empty());
        let plan: Vec<String> = conn
            .prepare(
                "EXPLAIN QUERY PLAN SELECT id FROM records
                 WHERE id IN (SELECT record_id FROM record_rules WHERE rule = ?1)
                 ORDER BY occurred_at DESC, id DESC LIMIT 50",
            )
            .unwrap()
            .query_map(["R24"], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            plan.iter()
                .any(|p| p.contains("record_rules") && p.contains("rule=?")),
            "{plan:?}"
        );
    }
}
