//! Tables derived from a record's projection besides its `records` row, written in the same
//! transaction as that row so that they never disagree with it.

use crate::Result;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params};

use taxi_fiscal_store::records::RecordFilter;

/// Replaces the `record_rules` rows of `record_id` with the space-separated rule ids of
/// `rules` (`records::rules_of`, the `records.rules` column), each with the record's status and
/// time: the index of the inbox's rule filter (migration 015).
pub(super) fn write_rules(
    conn: &Connection,
    record_id: &str,
    rules: &str,
    status: &str,
    occurred_at: &str,
) -> Result<()> {
    conn.prepare_cached("DELETE FROM record_rules WHERE record_id = ?1")?
        .execute([record_id])?;
    let mut insert = conn.prepare_cached(
        "INSERT OR IGNORE INTO record_rules (rule, record_id, status, occurred_at)
         VALUES (?1, ?2, ?3, ?4)",
    )?;
    for rule in rules.split_whitespace() {
        insert.execute(params![rule, record_id, status, occurred_at])?;
    }
    Ok(())
}

/// The distinct rule ids of a `records.rules` value (shared: `taxi_fiscal_store::records`).
pub(super) use taxi_fiscal_store::records::rule_set;

/// The rule ids `record_rules` holds for a record.
#[cfg(test)]
pub(super) fn rules_of_record(
    conn: &Connection,
    record_id: &str,
) -> Result<std::collections::BTreeSet<String>> {
    Ok(rule_rows(conn, record_id)?
        .into_iter()
        .map(|(rule, _, _)| rule)
        .collect())
}

/// The `record_rules` rows of a record: rule, status, time.
pub(super) fn rule_rows(
    conn: &Connection,
    record_id: &str,
) -> Result<Vec<(String, String, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT rule, status, occurred_at FROM record_rules WHERE record_id = ?1 ORDER BY rule",
    )?;
    let rows = stmt
        .query_map([record_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The parts of a page of records the filter `f` selects, as SQL over `records`: the `WHERE`
/// with its arguments for the total, the counts (without the single `status`) and the page.
/// When `record_rules` answers the filter alone ([`by_rule_alone`]) the total and counts are
/// read from its indexes, and the page's ids too in the default order (newest first), so a
/// rule's inbox costs its page and its index entries, never a record it does not show.
#[derive(Debug)]
pub(super) struct Selection {
    /// `SELECT count(*) …` of every page together.
    pub(super) total: (String, Vec<SqlValue>),
    /// `SELECT status, count(*) … GROUP BY status` over the filter without its `status`.
    pub(super) counts: (String, Vec<SqlValue>),
    /// `FROM … WHERE …` of the page, to which the caller adds `ORDER BY`, `LIMIT ? OFFSET ?`.
    pub(super) page: (String, Vec<SqlValue>),
    /// When set, the page's `FROM … WHERE` already orders and cuts (the caller binds no
    /// `LIMIT`/`OFFSET` of its own and orders by the default order only).
    pub(super) page_cut: bool,
}

impl Selection {
    /// `SELECT columns …` of the page of `f`, in its order, with its arguments.
    pub(super) fn page_query(&self, columns: &str, f: &RecordFilter) -> (String, Vec<SqlValue>) {
        let (from, mut args) = self.page.clone();
        if self.page_cut {
            return (
                format!("SELECT {columns} {from} ORDER BY occurred_at DESC, id DESC"),
                args,
            );
        }
        let (order, order_args) = super::records::order_of(&f.order);
        args.extend(order_args);
        args.push(SqlValue::Integer(i64::from(f.limit)));
        args.push(SqlValue::Integer(i64::from(f.offset)));
        (
            format!("SELECT {columns} {from} ORDER BY {order} LIMIT ? OFFSET ?"),
            args,
        )
    }
}

/// See [`Selection`].
pub(super) fn select(f: &RecordFilter) -> Selection {
    const COUNTS: &str = "GROUP BY status ORDER BY count(*) DESC, status";
    let Some((rule, rest)) = by_rule_alone(f) else {
        let (w, a) = super::records::where_of(f, true);
        let (wc, ac) = super::records::where_of(f, false);
        if by_status_alone(f) {
            // The total and the counts from `record_status_counts` (migration 018): the
            // clauses are on `status` alone, a column both tables have.
            let (total, counts) = from_counters("record_status_counts", (&w, &a), (wc, ac));
            return Selection {
                total,
                counts,
                page: (format!("FROM records {w}"), a),
                page_cut: false,
            };
        }
        return Selection {
            total: (format!("SELECT count(*) FROM records {w}"), a.clone()),
            counts: (
                format!("SELECT status, count(*) FROM records {wc} {COUNTS}"),
                ac,
            ),
            page: (format!("FROM records {w}"), a),
            page_cut: false,
        };
    };
    let (w, a) = rule_where(&rule, &rest, true);
    let (wc, ac) = rule_where(&rule, &rest, false);
    // The total and the counts from `record_rule_counts` (migration 019): the clauses are on
    // `rule` and `status` alone, columns both tables have.
    let (total, counts) = from_counters("record_rule_counts", (&w, &a), (wc, ac));
    if f.order != taxi_fiscal_store::records::RecordOrder::default() {
        let (w, a) = super::records::where_of(f, true);
        return Selection {
            total,
            counts,
            page: (format!("FROM records {w}"), a),
            page_cut: false,
        };
    }
    let mut page_args = a;
    page_args.push(SqlValue::Integer(i64::from(f.limit)));
    page_args.push(SqlValue::Integer(i64::from(f.offset)));
    Selection {
        total,
        counts,
        page: (
            format!(
                "FROM records WHERE id IN (SELECT record_id FROM record_rules {w}
                     ORDER BY occurred_at DESC, record_id DESC LIMIT ? OFFSET ?)"
            ),
            page_args,
        ),
        page_cut: true,
    }
}

/// A statement and its arguments.
type Sql = (String, Vec<SqlValue>);

/// The total (`WHERE` `w`) and the counts per status (`WHERE` `wc`, without the single status)
/// read from a counters table kept by triggers, whose columns the clauses name.
fn from_counters(table: &str, (w, a): (&str, &[SqlValue]), (wc, ac): Sql) -> (Sql, Sql) {
    (
        (
            format!("SELECT coalesce(sum(n), 0) FROM {table} {w}"),
            a.to_vec(),
        ),
        (
            format!(
                "SELECT status, sum(n) FROM {table} {wc}
                 GROUP BY status HAVING sum(n) > 0 ORDER BY sum(n) DESC, status"
            ),
            ac,
        ),
    )
}

/// Whether `f` filters on the status alone (or not at all): then the counters answer its total
/// and counts.
fn by_status_alone(f: &RecordFilter) -> bool {
    *f == status_rest(f)
}

/// `f` with only its conditions on the status, its order and its page.
fn status_rest(f: &RecordFilter) -> RecordFilter {
    RecordFilter {
        status: f.status.clone(),
        statuses: f.statuses.clone(),
        not_statuses: f.not_statuses.clone(),
        order: f.order.clone(),
        limit: f.limit,
        offset: f.offset,
        ..RecordFilter::default()
    }
}

/// A filter `record_rules` answers alone: a rule, and at most conditions on the status (the
/// inbox's usual shape). Returns the rule, as the filter matches it, and the status-only rest.
pub(super) fn by_rule_alone(f: &RecordFilter) -> Option<(String, RecordFilter)> {
    let rule = f.rule.as_ref()?;
    let rest = status_rest(f);
    let same = RecordFilter {
        rule: Some(rule.clone()),
        ..rest.clone()
    };
    (same == *f).then(|| (rule.trim().to_uppercase(), rest))
}

/// The `WHERE` over `record_rules` of [`by_rule_alone`]'s parts: the rule first, then the
/// status conditions `records::where_of` writes for `rest` (they name only `status`, a column
/// both tables have).
pub(super) fn rule_where(
    rule: &str,
    rest: &RecordFilter,
    with_status: bool,
) -> (String, Vec<SqlValue>) {
    let (filter, args) = super::records::where_of(rest, with_status);
    let mut all = vec![SqlValue::Text(rule.to_owned())];
    all.extend(args);
    let filter = match filter.strip_prefix("WHERE ") {
        Some(clauses) => format!("WHERE rule = ? AND {clauses}"),
        None => String::from("WHERE rule = ?"),
    };
    (filter, all)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use rusqlite::Connection;

    use super::{by_rule_alone, by_status_alone, rule_set, rules_of_record, write_rules};

    const T: &str = "2026-01-01T00:00:00Z";

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
        write_rules(&conn, "a", "R2 R24", "issued", T).unwrap();
        write_rules(&conn, "b", "R24", "issued", T).unwrap();
        assert_eq!(rules_of_record(&conn, "a").unwrap(), rule_set("R24 R2"));
        write_rules(&conn, "a", "R30", "decided", T).unwrap();
        assert_eq!(rules_of_record(&conn, "a").unwrap(), rule_set("R30"));
        assert_eq!(rules_of_record(&conn, "b").unwrap(), rule_set("R24"));
        write_rules(&conn, "a", "", "decided", T).unwrap();
        assert!(rules_of_record(&conn, "a").unwrap().is_empty());
    }

    /// Migration 015 fills the table from the rows stored before it, splitting the column on
    /// any run of spaces, and the rule filter's query then reads it by key.
    #[test]
    fn the_migration_fills_the_rules_of_records_stored_before_it() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn, ":memory:", true).unwrap();
        // Back to schema 14: the rules and candidates tables gone, the batch bytes column back.
        conn.execute_batch(
            "DROP TRIGGER record_rule_counts_insert; DROP TRIGGER record_rule_counts_update;
             DROP TRIGGER record_rule_counts_delete; DROP TABLE record_rule_counts;
             DROP TRIGGER record_status_counts_insert; DROP TRIGGER record_status_counts_update;
             DROP TRIGGER record_status_counts_delete; DROP TABLE record_status_counts;
             DROP TABLE editais;
             DROP TABLE web_sessions;
             DROP TABLE login_pair_budgets; DROP TABLE login_username_budgets;
             DROP TABLE duplicate_candidates;
             DROP TABLE record_rules;
             ALTER TABLE record_changes ADD COLUMN changes BLOB NOT NULL DEFAULT x'';
             PRAGMA user_version = 14;",
        )
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

    /// A filter by rule (and status) answered from `record_rules` gives the same total, counts
    /// and page as the plain filter over every row: compared with the rows filtered here, for
    /// a single status, a status list, an excluded list, pages past the first, and a non-default
    /// order (whose page is read from `records`).
    #[test]
    fn a_rules_inbox_from_its_index_matches_the_rows() {
        use taxi_fiscal_store::records::{RecordFilter, RecordOrder, RecordSort};
        let conn = db();
        let statuses = ["issued", "under_review", "decided", "archived"];
        let mut rows = Vec::new();
        for i in 0..120_u32 {
            let id = format!("r{i:03}");
            let rules = match i % 4 {
                0 => "R24",
                1 => "R2 R24",
                2 => "R2",
                _ => "R24 R30",
            };
            let status = statuses[(i as usize * 7) % 4];
            let at = format!("2026-01-{:02}T{:02}:00:00Z", 1 + i % 28, i % 24);
            conn.execute(
                "INSERT INTO records (id, kind, seq, doc, heads, status, author_user_id,
                     author_role, author_device_id, occurred_at, sealed, created_at, updated_at,
                     rules)
                 VALUES (?1, 'infraction', ?2, x'00', '[]', ?3, 'u', 'guarda_municipal', 'd', ?4,
                     0, ?4, ?4, ?5)",
                rusqlite::params![id, i + 1, status, at, rules],
            )
            .unwrap();
            write_rules(&conn, &id, rules, status, &at).unwrap();
            rows.push((id, status, at, rules));
        }
        // Rewritten as the projection rewrites them (so the counters of migration 019 follow
        // deletions and inserts): a record leaves R24, one changes status, one is removed.
        for (i, rules, status) in [(1, "R2", "under_review"), (4, "R24", "annulled")] {
            conn.execute(
                "UPDATE records SET status = ?1, rules = ?2 WHERE id = ?3",
                rusqlite::params![status, rules, rows[i].0],
            )
            .unwrap();
            write_rules(&conn, &rows[i].0, rules, status, &rows[i].2).unwrap();
            rows[i].1 = status;
            rows[i].3 = rules;
        }
        write_rules(&conn, &rows[8].0, "", "issued", &rows[8].2).unwrap();
        conn.execute("DELETE FROM records WHERE id = ?1", [&rows[8].0])
            .unwrap();
        rows.remove(8);
        // An update in place (no writer does it today) keeps them true too.
        conn.execute(
            "UPDATE record_rules SET status = 'decided' WHERE record_id = ?1",
            [&rows[0].0],
        )
        .unwrap();
        conn.execute(
            "UPDATE records SET status = 'decided' WHERE id = ?1",
            [&rows[0].0],
        )
        .unwrap();
        rows[0].1 = "decided";
        let base = RecordFilter {
            rule: Some(String::from("r24")),
            limit: 7,
            offset: 3,
            ..RecordFilter::default()
        };
        let filters = [
            base.clone(),
            RecordFilter {
                status: Some(String::from("decided")),
                ..base.clone()
            },
            RecordFilter {
                statuses: vec![String::from("issued"), String::from("archived")],
                offset: 0,
                ..base.clone()
            },
            RecordFilter {
                not_statuses: vec![String::from("archived")],
                offset: 14,
                ..base.clone()
            },
            RecordFilter {
                order: RecordOrder {
                    by: RecordSort::Occurred,
                    desc: false,
                },
                ..base.clone()
            },
        ];
        for f in &filters {
            assert!(by_rule_alone(f).is_some());
            let keep = |(_, status, _, rules): &&(String, &str, String, &str),
                        with_status: bool| {
                rules.split(' ').any(|r| r == "R24")
                    && (!with_status || f.status.as_deref().is_none_or(|s| s == *status))
                    && (f.statuses.is_empty() || f.statuses.iter().any(|s| s == status))
                    && !f.not_statuses.iter().any(|s| s == status)
            };
            let mut matching: Vec<_> = rows.iter().filter(|r| keep(r, true)).collect();
            matching.sort_by(|a, b| (&b.2, &b.0).cmp(&(&a.2, &a.0)));
            if !f.order.desc {
                matching.sort_by(|a, b| (&a.2, &b.0).cmp(&(&b.2, &a.0)));
            }
            let want_page: Vec<String> = matching
                .iter()
                .skip(f.offset as usize)
                .take(f.limit as usize)
                .map(|r| r.0.clone())
                .collect();
            let mut want_counts: std::collections::BTreeMap<String, u64> = Default::default();
            for r in rows.iter().filter(|r| keep(r, false)) {
                *want_counts.entry(r.1.to_owned()).or_default() += 1;
            }
            let got = super::super::office::inbox(&conn, f).unwrap();
            assert_eq!(got.total, matching.len() as u64, "{f:?}");
            let page: Vec<String> = got.items.iter().map(|r| r.row.id.clone()).collect();
            assert_eq!(page, want_page, "{f:?}");
            let counts: std::collections::BTreeMap<String, u64> = got.counts.into_iter().collect();
            assert_eq!(counts, want_counts, "{f:?}");
            let listed = super::super::records::list(&conn, f).unwrap();
            assert_eq!(listed.total, matching.len() as u64);
            let page: Vec<String> = listed.items.iter().map(|r| r.id.clone()).collect();
            assert_eq!(page, want_page, "{f:?}");
        }
        // Any other condition takes the general path.
        assert!(
            by_rule_alone(&RecordFilter {
                plate: Some(String::from("ABC1D23")),
                ..base
            })
            .is_none()
        );
    }

    /// With no filter but on the status, the inbox's total and counts come from
    /// `record_status_counts`, which its triggers keep true through inserts, status changes and
    /// deletions: the same answer as counting the rows.
    #[test]
    fn status_counters_answer_as_a_count_of_the_rows() {
        use taxi_fiscal_store::records::RecordFilter;
        let conn = db();
        let statuses = ["issued", "under_review", "decided", "archived"];
        let mut rows: Vec<(String, &str)> = Vec::new();
        for i in 0..60_u32 {
            let id = format!("r{i:03}");
            let status = statuses[(i as usize * 5) % 4];
            let at = format!("2026-01-{:02}T{:02}:00:00Z", 1 + i % 28, i % 24);
            conn.execute(
                "INSERT INTO records (id, kind, seq, doc, heads, status, author_user_id,
                     author_role, author_device_id, occurred_at, sealed, created_at, updated_at)
                 VALUES (?1, 'infraction', ?2, x'00', '[]', ?3, 'u', 'guarda_municipal', 'd', ?4,
                     0, ?4, ?4)",
                rusqlite::params![id, i + 1, status, at],
            )
            .unwrap();
            rows.push((id, status));
        }
        // Status changes (one to the same status, which changes nothing) and a deletion.
        for (i, status) in [
            (0, "decided"),
            (1, "decided"),
            (2, "issued"),
            (7, "annulled"),
        ] {
            conn.execute(
                "UPDATE records SET status = ?1 WHERE id = ?2",
                rusqlite::params![status, rows[i].0],
            )
            .unwrap();
            rows[i].1 = status;
        }
        conn.execute("DELETE FROM records WHERE id = ?1", [&rows[3].0])
            .unwrap();
        rows.remove(3);
        let filters = [
            RecordFilter {
                limit: 10,
                ..RecordFilter::default()
            },
            RecordFilter {
                status: Some(String::from("decided")),
                limit: 10,
                ..RecordFilter::default()
            },
            RecordFilter {
                statuses: vec![String::from("issued"), String::from("annulled")],
                limit: 10,
                ..RecordFilter::default()
            },
            RecordFilter {
                not_statuses: vec![String::from("archived")],
                limit: 10,
                ..RecordFilter::default()
            },
        ];
        for f in &filters {
            assert!(by_status_alone(f));
            let keep = |status: &str, with_status: bool| {
                (!with_status || f.status.as_deref().is_none_or(|s| s == status))
                    && (f.statuses.is_empty() || f.statuses.iter().any(|s| s == status))
                    && !f.not_statuses.iter().any(|s| s == status)
            };
            let total = rows.iter().filter(|r| keep(r.1, true)).count() as u64;
            let mut want_counts: std::collections::BTreeMap<String, u64> = Default::default();
            for r in rows.iter().filter(|r| keep(r.1, false)) {
                *want_counts.entry(r.1.to_owned()).or_default() += 1;
            }
            let got = super::super::office::inbox(&conn, f).unwrap();
            assert_eq!(got.total, total, "{f:?}");
            let counts: std::collections::BTreeMap<String, u64> = got.counts.into_iter().collect();
            assert_eq!(counts, want_counts, "{f:?}");
            assert_eq!(got.items.len(), total.min(10) as usize, "{f:?}");
        }
        assert!(!by_status_alone(&RecordFilter {
            kind: Some(String::from("infraction")),
            ..RecordFilter::default()
        }));
    }
}
