//! Tables derived from a record's projection besides its `records` row, written in the same
//! transaction as that row so that they never disagree with it; and the SQL of a page of
//! records a filter selects ([`select`]).
//!
//! SQL assembled from a filter is written with `?` for its arguments, as the SQLite backend's
//! is, so that clauses compose in any order (a rule first, then the status conditions, then
//! the order's rank lists); [`numbered`] turns the finished statement into PostgreSQL's
//! `$1, $2, …` once, in order. The arguments are [`SqlValue`]s (a text, a bigint or a text
//! array: PostgreSQL types each parameter, and a list is one `text[]` parameter where SQLite
//! bound a JSON array for `json_each`); [`params`] lends them to the `Conn` calls.

use crate::Result;
use crate::pool::Conn;
use std::sync::Arc;

use tokio_postgres::types::ToSql;

use taxi_fiscal_store::records::RecordFilter;

/// One argument of SQL assembled at run time.
pub(crate) type SqlValue = Arc<dyn ToSql + Sync + Send>;

/// A text argument.
pub(crate) fn text(s: impl Into<String>) -> SqlValue {
    Arc::new(s.into())
}

/// A text argument that may be NULL.
pub(crate) fn opt_text(s: Option<String>) -> SqlValue {
    Arc::new(s)
}

/// A BIGINT argument.
pub(crate) fn int(v: i64) -> SqlValue {
    Arc::new(v)
}

/// A `text[]` argument (for `= ANY(?)`, `array_position(?::text[], …)`).
pub(crate) fn list(items: &[String]) -> SqlValue {
    Arc::new(items.to_vec())
}

/// The arguments as the `Conn` calls take them.
pub(crate) fn params(args: &[SqlValue]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter()
        .map(|a| a.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

/// `sql` with its `?` placeholders numbered `$1, $2, …` in order. The SQL assembled here holds
/// no `?` of its own (no string literal with one, no JSON operator).
pub(crate) fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0_usize;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// Replaces the `record_rules` rows of `record_id` with the space-separated rule ids of
/// `rules` (`records::rules_of`, the `records.rules` column), each with the record's status and
/// time: the index of the inbox's rule filter. One statement for the new rows (`unnest` of the
/// ids), where SQLite ran one cached insert per rule.
pub(crate) fn write_rules(
    conn: &Conn<'_>,
    record_id: &str,
    rules: &str,
    status: &str,
    occurred_at: &str,
) -> Result<()> {
    conn.execute(
        "DELETE FROM record_rules WHERE record_id = $1",
        &[&record_id],
    )?;
    let ids: Vec<String> = rule_set(rules).into_iter().collect();
    if ids.is_empty() {
        return Ok(());
    }
    conn.execute(
        "INSERT INTO record_rules (rule, record_id, status, occurred_at)
         SELECT rule, $2, $3, $4 FROM unnest($1::text[]) AS rule
         ON CONFLICT DO NOTHING",
        &[&ids, &record_id, &status, &occurred_at],
    )?;
    Ok(())
}

/// The distinct rule ids of a `records.rules` value (shared: `taxi_fiscal_store::records`).
pub(crate) use taxi_fiscal_store::records::rule_set;

/// The rule ids `record_rules` holds for a record.
#[cfg(test)]
pub(crate) fn rules_of_record(
    conn: &Conn<'_>,
    record_id: &str,
) -> Result<std::collections::BTreeSet<String>> {
    Ok(rule_rows(conn, record_id)?
        .into_iter()
        .map(|(rule, _, _)| rule)
        .collect())
}

/// The `record_rules` rows of a record: rule, status, time (what `consistency` compares with
/// the projection).
// Its caller, `consistency::check`, is still being ported: drop this `allow` once it calls it.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn rule_rows(conn: &Conn<'_>, record_id: &str) -> Result<Vec<(String, String, String)>> {
    conn.query(
        "SELECT rule, status, occurred_at FROM record_rules WHERE record_id = $1 ORDER BY rule",
        &[&record_id],
    )?
    .iter()
    .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
    .collect()
}

/// The parts of a page of records the filter `f` selects, as SQL over `records`: the `WHERE`
/// with its arguments for the total, the counts (without the single `status`) and the page.
/// When `record_rules` answers the filter alone ([`by_rule_alone`]) the total and counts are
/// read from its counters and the page's ids from its index in the default order (newest
/// first), so a rule's inbox costs its page and its index entries, never a record it does not
/// show.
///
/// `total` and `counts` are ready to run (`$n` placeholders: `conn.query_dynamic(&sel.total.0,
/// &params(&sel.total.1))`); the page is run through [`Selection::page_query`].
#[derive(Debug)]
pub(crate) struct Selection {
    /// `SELECT count(*) …` of every page together (one BIGINT).
    pub(crate) total: (String, Vec<SqlValue>),
    /// `SELECT status, count(*) … GROUP BY status` over the filter without its `status`
    /// (TEXT, BIGINT).
    pub(crate) counts: (String, Vec<SqlValue>),
    /// `FROM … WHERE …` of the page (`?` placeholders), to which `page_query` adds `ORDER BY`,
    /// `LIMIT ? OFFSET ?`.
    pub(crate) page: (String, Vec<SqlValue>),
    /// When set, the page's `FROM … WHERE` already orders and cuts (`page_query` binds no
    /// `LIMIT`/`OFFSET` of its own and orders by the default order only).
    pub(crate) page_cut: bool,
}

impl Selection {
    /// `SELECT columns …` of the page of `f`, in its order, with its arguments (`$n`
    /// placeholders, ready to run).
    pub(crate) fn page_query(&self, columns: &str, f: &RecordFilter) -> (String, Vec<SqlValue>) {
        let (from, mut args) = self.page.clone();
        if self.page_cut {
            return (
                numbered(&format!(
                    "SELECT {columns} {from} ORDER BY occurred_at DESC, id DESC"
                )),
                args,
            );
        }
        let (order, order_args) = super::records::order_of(&f.order);
        args.extend(order_args);
        args.push(int(i64::from(f.limit)));
        args.push(int(i64::from(f.offset)));
        (
            numbered(&format!(
                "SELECT {columns} {from} ORDER BY {order} LIMIT ? OFFSET ?"
            )),
            args,
        )
    }
}

/// See [`Selection`].
pub(crate) fn select(f: &RecordFilter) -> Selection {
    const COUNTS: &str = "GROUP BY status ORDER BY count(*) DESC, status";
    let Some((rule, rest)) = by_rule_alone(f) else {
        let (w, a) = super::records::where_of(f, true);
        let (wc, ac) = super::records::where_of(f, false);
        if by_status_alone(f) {
            // The total and the counts from `record_status_counts`: the clauses are on
            // `status` alone, a column both tables have.
            let (total, counts) = from_counters("record_status_counts", (&w, &a), (wc, ac));
            return Selection {
                total,
                counts,
                page: (format!("FROM records {w}"), a),
                page_cut: false,
            };
        }
        return Selection {
            total: (
                numbered(&format!("SELECT count(*) FROM records {w}")),
                a.clone(),
            ),
            counts: (
                numbered(&format!(
                    "SELECT status, count(*) FROM records {wc} {COUNTS}"
                )),
                ac,
            ),
            page: (format!("FROM records {w}"), a),
            page_cut: false,
        };
    };
    let (w, a) = rule_where(&rule, &rest, true);
    let (wc, ac) = rule_where(&rule, &rest, false);
    // The total and the counts from `record_rule_counts`: the clauses are on `rule` and
    // `status` alone, columns both tables have.
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
    page_args.push(int(i64::from(f.limit)));
    page_args.push(int(i64::from(f.offset)));
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
/// read from a counters table kept by triggers, whose columns the clauses name. `sum` over a
/// BIGINT is NUMERIC in PostgreSQL: cast back, so both read as BIGINT like `count(*)`.
fn from_counters(table: &str, (w, a): (&str, &[SqlValue]), (wc, ac): Sql) -> (Sql, Sql) {
    (
        (
            numbered(&format!(
                "SELECT coalesce(sum(n), 0)::bigint FROM {table} {w}"
            )),
            a.to_vec(),
        ),
        (
            numbered(&format!(
                "SELECT status, sum(n)::bigint FROM {table} {wc}
                 GROUP BY status HAVING sum(n) > 0 ORDER BY sum(n) DESC, status"
            )),
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
pub(crate) fn by_rule_alone(f: &RecordFilter) -> Option<(String, RecordFilter)> {
    let rule = f.rule.as_ref()?;
    let rest = status_rest(f);
    let same = RecordFilter {
        rule: Some(rule.clone()),
        ..rest.clone()
    };
    (same == *f).then(|| (rule.trim().to_uppercase(), rest))
}

/// The `WHERE` over `record_rules` of [`by_rule_alone`]'s parts (`?` placeholders): the rule
/// first, then the status conditions `records::where_of` writes for `rest` (they name only
/// `status`, a column both tables have).
pub(crate) fn rule_where(rule: &str, rest: &RecordFilter, with_status: bool) -> Sql {
    let (filter, args) = super::records::where_of(rest, with_status);
    let mut all = vec![text(rule)];
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
    use std::collections::BTreeMap;

    use super::{
        by_rule_alone, by_status_alone, params, rule_set, rules_of_record, select, write_rules,
    };
    use crate::PgStore;
    use crate::pool::Conn;
    use taxi_fiscal_store::records::RecordFilter;

    const T: &str = "2026-01-01T00:00:00Z";

    async fn db() -> PgStore {
        PgStore::open(&crate::test_db::fresh().await).await.unwrap()
    }

    fn insert_record(
        conn: &Conn<'_>,
        id: &str,
        seq: i64,
        status: &str,
        at: &str,
        rules: Option<&str>,
    ) {
        conn.execute(
            "INSERT INTO records (id, kind, seq, doc, heads, status, author_user_id, author_role,
                 author_device_id, occurred_at, sealed, created_at, updated_at, rules)
             VALUES ($1, 'infraction', $2, '\\x00', '[]', $3, 'u', 'guarda_municipal', 'd', $4,
                 FALSE, $4, $4, $5)",
            &[&id, &seq, &status, &at, &rules],
        )
        .unwrap();
    }

    /// The inbox's total and counts per status as `office::inbox` reads them.
    fn counted(conn: &Conn<'_>, f: &RecordFilter) -> (u64, BTreeMap<String, u64>) {
        let sel = select(f);
        let total: i64 = conn
            .query_dynamic(&sel.total.0, &params(&sel.total.1))
            .unwrap()[0]
            .get(0);
        let counts = conn
            .query_dynamic(&sel.counts.0, &params(&sel.counts.1))
            .unwrap()
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1) as u64))
            .collect();
        (total as u64, counts)
    }

    /// Rewriting a record's rules replaces its rows: a rule it no longer has is gone, a rule
    /// another record has stays, and `R2` is its own key beside `R24`.
    #[tokio::test]
    async fn writing_a_records_rules_replaces_its_rows() {
        let store = db().await;
        store
            .pool
            .write(|conn| {
                insert_record(conn, "a", 1, "issued", T, Some("R2 R24"));
                insert_record(conn, "b", 2, "issued", T, Some("R24"));
                write_rules(conn, "a", "R2 R24", "issued", T)?;
                write_rules(conn, "b", "R24", "issued", T)?;
                assert_eq!(rules_of_record(conn, "a")?, rule_set("R24 R2"));
                write_rules(conn, "a", "R30", "decided", T)?;
                assert_eq!(rules_of_record(conn, "a")?, rule_set("R30"));
                assert_eq!(rules_of_record(conn, "b")?, rule_set("R24"));
                write_rules(conn, "a", "", "decided", T)?;
                assert!(rules_of_record(conn, "a")?.is_empty());
                // A rule named twice is one row.
                write_rules(conn, "a", " R7  R7 ", "decided", T)?;
                assert_eq!(rules_of_record(conn, "a")?, rule_set("R7"));
                Ok(())
            })
            .await
            .unwrap();
    }

    /// A filter by rule (and status) answered from `record_rules` gives the same total, counts
    /// and page as the plain filter over every row: compared with the rows filtered here, for
    /// a single status, a status list, an excluded list, pages past the first, and a non-default
    /// order (whose page is read from `records`).
    #[tokio::test]
    async fn a_rules_inbox_from_its_index_matches_the_rows() {
        use taxi_fiscal_store::records::{RecordOrder, RecordSort};
        let store = db().await;
        store
            .pool
            .write(|conn| {
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
                    insert_record(conn, &id, i64::from(i) + 1, status, &at, Some(rules));
                    write_rules(conn, &id, rules, status, &at)?;
                    rows.push((id, status, at, rules));
                }
                // Rewritten as the projection rewrites them (so the counters follow deletions
                // and inserts): a record leaves R24, one changes status, one is removed.
                for (i, rules, status) in [(1, "R2", "under_review"), (4, "R24", "annulled")] {
                    conn.execute(
                        "UPDATE records SET status = $1, rules = $2 WHERE id = $3",
                        &[&status, &rules, &rows[i].0],
                    )?;
                    write_rules(conn, &rows[i].0, rules, status, &rows[i].2)?;
                    rows[i].1 = status;
                    rows[i].3 = rules;
                }
                write_rules(conn, &rows[8].0, "", "issued", &rows[8].2)?;
                conn.execute("DELETE FROM records WHERE id = $1", &[&rows[8].0])?;
                rows.remove(8);
                // An update in place (no writer does it today) keeps them true too.
                conn.execute(
                    "UPDATE record_rules SET status = 'decided' WHERE record_id = $1",
                    &[&rows[0].0],
                )?;
                conn.execute(
                    "UPDATE records SET status = 'decided' WHERE id = $1",
                    &[&rows[0].0],
                )?;
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
                        matching.sort_by(|a, b| (&a.2, &a.0).cmp(&(&b.2, &b.0)));
                    }
                    let want_page: Vec<String> = matching
                        .iter()
                        .skip(f.offset as usize)
                        .take(f.limit as usize)
                        .map(|r| r.0.clone())
                        .collect();
                    let mut want_counts: BTreeMap<String, u64> = BTreeMap::new();
                    for r in rows.iter().filter(|r| keep(r, false)) {
                        *want_counts.entry(r.1.to_owned()).or_default() += 1;
                    }
                    let (total, counts) = counted(conn, f);
                    assert_eq!(total, matching.len() as u64, "{f:?}");
                    assert_eq!(counts, want_counts, "{f:?}");
                    let listed = crate::records::list(conn, f)?;
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
                Ok(())
            })
            .await
            .unwrap();
    }

    /// With no filter but on the status, the inbox's total and counts come from
    /// `record_status_counts`, which its triggers keep true through inserts, status changes and
    /// deletions: the same answer as counting the rows.
    #[tokio::test]
    async fn status_counters_answer_as_a_count_of_the_rows() {
        let store = db().await;
        store
            .pool
            .write(|conn| {
                let statuses = ["issued", "under_review", "decided", "archived"];
                let mut rows: Vec<(String, &str)> = Vec::new();
                for i in 0..60_u32 {
                    let id = format!("r{i:03}");
                    let status = statuses[(i as usize * 5) % 4];
                    let at = format!("2026-01-{:02}T{:02}:00:00Z", 1 + i % 28, i % 24);
                    insert_record(conn, &id, i64::from(i) + 1, status, &at, None);
                    rows.push((id, status));
                }
                // Status changes (one to the same status, which changes nothing) and a
                // deletion.
                for (i, status) in [
                    (0, "decided"),
                    (1, "decided"),
                    (2, "issued"),
                    (7, "annulled"),
                ] {
                    conn.execute(
                        "UPDATE records SET status = $1 WHERE id = $2",
                        &[&status, &rows[i].0],
                    )?;
                    rows[i].1 = status;
                }
                conn.execute("DELETE FROM records WHERE id = $1", &[&rows[3].0])?;
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
                    let mut want_counts: BTreeMap<String, u64> = BTreeMap::new();
                    for r in rows.iter().filter(|r| keep(r.1, false)) {
                        *want_counts.entry(r.1.to_owned()).or_default() += 1;
                    }
                    let (got_total, counts) = counted(conn, f);
                    assert_eq!(got_total, total, "{f:?}");
                    assert_eq!(counts, want_counts, "{f:?}");
                    let listed = crate::records::list(conn, f)?;
                    assert_eq!(listed.total, total, "{f:?}");
                    assert_eq!(listed.items.len(), total.min(10) as usize, "{f:?}");
                }
                assert!(!by_status_alone(&RecordFilter {
                    kind: Some(String::from("infraction")),
                    ..RecordFilter::default()
                }));
                Ok(())
            })
            .await
            .unwrap();
    }
}
