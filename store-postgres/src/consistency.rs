//! What `audit verify` checks besides the hash chain: that the tables the server reads agree
//! with what the chain vouches for. The chain covers each change's *payload hash*, not the rows
//! derived from it, so an edited projection column or registry row would otherwise pass.
//!
//! 1. **Records**: each record's projection columns (plate, status, number, …) are recomputed
//!    from its stored Automerge document with the sync's own projection
//!    (`records::project`), and its `heads` from the document; each batch in `record_changes`
//!    must match the payload digest of the audit row it names, and every change it names must
//!    be in the record's document (the only copy of its bytes); the inbox's counters per status
//!    and per rule must be a count of the rows.
//!    Each receipt of a device-sealed record must match its audit row's payload and carry a
//!    server signature that verifies (`taxi_fiscal_store::receipts`).
//! 2. **Registry**: `registry_log` is replayed from version 0 and must give exactly
//!    `registry_entities` (body and version of every entity) and `registry_meta.version`; each
//!    logged batch must be the payload of an audit row (`registry::commit` hashes version and
//!    changes).
//! 3. **Editais**: each edital's stored state and version must be the payload of an audit row
//!    (`selection::save` hashes version and state), so an edited state shows.
//!
//! Every disagreement is reported (record or entity, column), never a value: the values may be
//! CPFs or plates. Subjects, columns and reasons are the SQLite backend's, word for word.
//!
//! Where PostgreSQL differs: SQLite streams each table through one statement; the driver here
//! hands a query's rows over all at once, so each large table (`records`, which holds every
//! document's bytes, `record_changes`, `record_receipts`, `registry_log`, `registry_entities`,
//! `editais`) is walked in keyset batches (`WHERE key > $1 ORDER BY key LIMIT n`), and memory
//! stays bounded by a batch, not by the table. The whole check runs in one read-only
//! `REPEATABLE READ` snapshot (`Pool::read`), so the batches see one state of the database, as
//! SQLite's single read transaction does. The change hashes of each record's batches come with
//! the record's row (an `ARRAY` subquery) instead of one query per record. The projection is
//! compared column by column with typed values (`sealed` is a BOOLEAN here, an integer there).

use std::collections::{BTreeMap, HashSet};

use sha2::Digest;

use crate::Result;
use crate::pool::Conn;
use crate::records::{corrupt, project};
use crate::registry::entity_of;

use taxi_fiscal_store::audit::{change_hashes_digest, payload_hash};

use taxi_fiscal_store::consistency::{ConsistencyReport, mismatch};

// The batch sizes are 2 in the unit tests, so that a few rows already walk several batches.

/// Records per batch: each row carries a whole Automerge document.
const RECORDS_BATCH: i64 = if cfg!(test) { 2 } else { 64 };

/// Registry versions or editais per batch: one version's changes may hold a whole import, one
/// edital's state all its candidates.
const LARGE_ROWS_BATCH: i64 = if cfg!(test) { 2 } else { 8 };

/// Rows per batch of the tables whose rows are small (`record_changes`, `record_receipts`'
/// keys, `registry_entities`).
const ROWS_BATCH: i64 = if cfg!(test) { 2 } else { 1000 };

/// Runs every check (read-only) on `conn`.
pub(crate) fn check(conn: &Conn<'_>) -> Result<ConsistencyReport> {
    let mut report = ConsistencyReport::default();
    check_records(conn, &mut report)?;
    check_record_changes(conn, &mut report)?;
    check_status_counts(conn, &mut report)?;
    check_rule_counts(conn, &mut report)?;
    check_receipts(conn, &mut report)?;
    check_registry(conn, &mut report)?;
    check_editais(conn, &mut report)?;
    Ok(report)
}

/// Each edital's version and state must be what an audit row's payload vouches for.
fn check_editais(conn: &Conn<'_>, report: &mut ConsistencyReport) -> Result<()> {
    let payloads: HashSet<String> = conn
        .query(
            "SELECT payload_hash FROM audit_log WHERE action LIKE 'edital.%'",
            &[],
        )?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?;
    // Edital ids are never empty, so every row follows "".
    let mut after = String::new();
    loop {
        let rows = conn.query(
            "SELECT id, version, state FROM editais WHERE id > $1 ORDER BY id LIMIT $2",
            &[&after, &LARGE_ROWS_BATCH],
        )?;
        for row in &rows {
            let id: String = row.try_get(0)?;
            let version: i64 = row.try_get(1)?;
            let state: &str = row.try_get(2)?;
            let hash = taxi_fiscal_store::selection::edital_payload_hash(
                u64::try_from(version).unwrap_or_default(),
                state,
            );
            if !payloads.contains(&hash) {
                report.mismatches.push(mismatch(
                    format!("edital:{id}"),
                    "state",
                    "nenhuma linha de auditoria registra este estado do edital",
                ));
            }
            after = id;
        }
        if rows.len() < batch_len(LARGE_ROWS_BATCH) {
            return Ok(());
        }
    }
}

/// Each receipt's digest must be that of its canonical bytes and the payload of the audit row
/// it names, for its record, and its server signature must verify with the key it names: an
/// edited receive time or device clock offset shows here.
fn check_receipts(conn: &Conn<'_>, report: &mut ConsistencyReport) -> Result<()> {
    // Record ids are never empty, so every row follows "".
    let mut after = String::new();
    loop {
        let rows = conn.query(
            "SELECT r.record_id, a.payload_hash, a.subject FROM record_receipts r
             LEFT JOIN audit_log a ON a.seq = r.audit_seq
             WHERE r.record_id > $1 ORDER BY r.record_id LIMIT $2",
            &[&after, &ROWS_BATCH],
        )?;
        for row in &rows {
            let record: String = row.try_get(0)?;
            let payload: Option<&str> = row.try_get(1)?;
            let audit_subject: Option<&str> = row.try_get(2)?;
            check_receipt(conn, report, &record, payload, audit_subject)?;
            after = record;
        }
        if rows.len() < batch_len(ROWS_BATCH) {
            return Ok(());
        }
    }
}

/// One receipt (see [`check_receipts`]).
fn check_receipt(
    conn: &Conn<'_>,
    report: &mut ConsistencyReport,
    record: &str,
    payload: Option<&str>,
    audit_subject: Option<&str>,
) -> Result<()> {
    let subject = format!("record_receipts:{record}");
    let Some(receipt) = crate::records::receipt_of(conn, record)? else {
        return Ok(());
    };
    let bytes = receipt.canonical();
    let digest = hex::encode(sha2::Sha256::digest(&bytes));
    if digest != receipt.receipt_sha256 || payload != Some(digest.as_str()) {
        report.mismatches.push(mismatch(
            subject.clone(),
            "receipt_sha256",
            "o recibo não confere com o payload da sua linha de auditoria",
        ));
    }
    if audit_subject != Some(format!("record:{record}").as_str()) {
        report.mismatches.push(mismatch(
            subject.clone(),
            "audit_seq",
            "não é o registro da linha de auditoria do recibo",
        ));
    }
    let key = hex::decode(&receipt.server_public_key)
        .ok()
        .and_then(|k| <[u8; 32]>::try_from(k).ok());
    if !key.is_some_and(|k| receipt.verify(&k)) {
        report.mismatches.push(mismatch(
            subject,
            "server_signature",
            "a assinatura do servidor no recibo não confere",
        ));
    }
    Ok(())
}

/// One projection column's value, typed as the schema stores it.
#[derive(Debug, PartialEq, Eq)]
enum Value {
    Text(Option<String>),
    Bool(bool),
    Int(i64),
}

/// The projection columns, in the order of the records query after `id` and `doc`.
const COLUMNS: [&str; 15] = [
    "kind",
    "heads",
    "number",
    "status",
    "plate",
    "stand_id",
    "permit_number",
    "author_user_id",
    "author_role",
    "author_device_id",
    "occurred_at",
    "sealed",
    "invalid_events",
    "conflicts",
    "rules",
];

/// The stored projection of one record, column by column, as `records::store_change` writes it
/// (`COLUMNS` order; the row's columns 2 to 16).
fn stored_projection(row: &tokio_postgres::Row) -> Result<[Value; 15]> {
    let text = |i: usize| -> Result<Value> { Ok(Value::Text(row.try_get(i)?)) };
    Ok([
        text(2)?,
        text(3)?,
        text(4)?,
        text(5)?,
        text(6)?,
        text(7)?,
        text(8)?,
        text(9)?,
        text(10)?,
        text(11)?,
        text(12)?,
        Value::Bool(row.try_get(13)?),
        Value::Int(row.try_get(14)?),
        Value::Int(row.try_get(15)?),
        text(16)?,
    ])
}

fn check_records(conn: &Conn<'_>, report: &mut ConsistencyReport) -> Result<()> {
    // Record ids are never empty (UUIDs), so every row follows "".
    let mut after = String::new();
    loop {
        let rows = conn.query(
            "SELECT id, doc, kind, heads, number, status, plate, stand_id, permit_number,
                 author_user_id, author_role, author_device_id, occurred_at, sealed,
                 invalid_events, conflicts, rules,
                 ARRAY(SELECT c.change_hashes FROM record_changes c WHERE c.record_id = r.id)
             FROM records r WHERE id > $1 ORDER BY id LIMIT $2",
            &[&after, &RECORDS_BATCH],
        )?;
        for row in &rows {
            let id: String = row.try_get(0)?;
            check_record(conn, report, &id, row)?;
            after = id;
        }
        if rows.len() < batch_len(RECORDS_BATCH) {
            return Ok(());
        }
    }
}

/// One record's projection, batches and rule index (see the module doc).
fn check_record(
    conn: &Conn<'_>,
    report: &mut ConsistencyReport,
    id: &str,
    row: &tokio_postgres::Row,
) -> Result<()> {
    report.records += 1;
    let subject = format!("record:{id}");
    let doc: &[u8] = row.try_get(1)?;
    let stored = stored_projection(row)?;
    let batches: Vec<String> = row.try_get(17)?;
    let loaded = sync_core::records::RecordDoc::load(doc).and_then(|mut d| {
        let heads = sync_core::sync::hex_heads(&mut d);
        d.view().map(|v| (heads, v, d))
    });
    let (heads, view, mut loaded_doc) = match loaded {
        Ok(x) => x,
        Err(e) => {
            report.mismatches.push(mismatch(
                subject,
                "doc",
                format!("o documento não pôde ser lido: {e}"),
            ));
            return Ok(());
        }
    };
    if batches_outside(&batches, &mut loaded_doc) {
        report.mismatches.push(mismatch(
            subject.clone(),
            "record_changes",
            "um lote aceito nomeia uma alteração que o documento do registro não contém",
        ));
    }
    let p = project(&view);
    let text = |s: &str| Value::Text(Some(s.to_owned()));
    let opt = |s: &Option<String>| Value::Text(s.clone());
    let heads = serde_json::to_string(&heads).map_err(|e| corrupt("records", e))?;
    let expected: [Value; 15] = [
        text(view.kind.as_str()),
        Value::Text(Some(heads)),
        opt(&p.number),
        text(p.status),
        opt(&p.plate),
        opt(&p.stand_id),
        opt(&p.permit_number),
        text(&p.author_user_id),
        text(p.author_role),
        text(&p.author_device_id),
        text(&p.occurred_at),
        Value::Bool(p.sealed),
        Value::Int(p.invalid_events),
        Value::Int(p.conflicts),
        text(&p.rules),
    ];
    for ((column, got), want) in COLUMNS.iter().zip(stored.iter()).zip(expected.iter()) {
        if got != want {
            report.mismatches.push(mismatch(
                subject.clone(),
                column,
                "difere do que o documento do registro diz",
            ));
        }
    }
    let indexed: Vec<(String, String, String)> = crate::projection::rule_set(&p.rules)
        .into_iter()
        .map(|rule| (rule, p.status.to_owned(), p.occurred_at.clone()))
        .collect();
    if crate::projection::rule_rows(conn, id)? != indexed {
        report.mismatches.push(mismatch(
            subject,
            "record_rules",
            "o índice de regras difere do que o documento do registro diz",
        ));
    }
    Ok(())
}

/// Whether a batch logged for the record (its `change_hashes`, JSON) names a change its
/// document does not hold: the document is the only copy of a record's bytes, so every
/// accepted change must be in it.
fn batches_outside(batches: &[String], doc: &mut sync_core::records::RecordDoc) -> bool {
    for hashes in batches {
        let Ok(hashes) = serde_json::from_str::<Vec<String>>(hashes) else {
            return true;
        };
        for hash in hashes {
            let found = hash
                .parse::<automerge::ChangeHash>()
                .ok()
                .and_then(|h| doc.automerge_mut().get_change_by_hash(&h).map(|_| ()));
            if found.is_none() {
                return true;
            }
        }
    }
    false
}

/// The inbox's counters (`record_status_counts`, kept by triggers) must be a count of the rows.
fn check_status_counts(conn: &Conn<'_>, report: &mut ConsistencyReport) -> Result<()> {
    check_counters(
        conn,
        report,
        ("record_status_counts", "records"),
        &["status"],
        "difere da contagem dos registros nesta situação",
    )
}

/// The rule filter's counters (`record_rule_counts`, kept by triggers) must be a count of the
/// rows of `record_rules`.
fn check_rule_counts(conn: &Conn<'_>, report: &mut ConsistencyReport) -> Result<()> {
    check_counters(
        conn,
        report,
        ("record_rule_counts", "record_rules"),
        &["rule", "status"],
        "difere da contagem dos registros desta regra nesta situação",
    )
}

/// A counters table (`counters`, column `n` per `keys`) against a count of `source`'s rows
/// grouped by the same keys, both ways; each key that differs is one mismatch, named
/// `counters:key1:key2`. The SQL is assembled from the fixed names above (never from input),
/// so it goes through `query_dynamic`; the answer is the differing keys only, a few rows.
fn check_counters(
    conn: &Conn<'_>,
    report: &mut ConsistencyReport,
    (counters, source): (&str, &str),
    keys: &[&str],
    message: &str,
) -> Result<()> {
    let k = keys.join(", ");
    let counted = format!("SELECT {k}, count(*) FROM {source} GROUP BY {k}");
    let kept = format!("SELECT {k}, n FROM {counters} WHERE n > 0");
    let sql = format!(
        "SELECT {k} FROM ({counted} EXCEPT {kept}) AS uncounted
         UNION
         SELECT {k} FROM ({kept} EXCEPT {counted}) AS miscounted
         ORDER BY {k}"
    );
    for row in conn.query_dynamic(&sql, &[])? {
        let key: Vec<String> = (0..keys.len())
            .map(|i| row.try_get(i))
            .collect::<Result<_, _>>()?;
        report.mismatches.push(mismatch(
            format!("{counters}:{}", key.join(":")),
            "n",
            message,
        ));
    }
    Ok(())
}

fn check_record_changes(conn: &Conn<'_>, report: &mut ConsistencyReport) -> Result<()> {
    // Identities start at 1.
    let mut after = 0i64;
    loop {
        let rows = conn.query(
            "SELECT c.id, c.change_hashes, a.payload_hash, a.subject, c.record_id
             FROM record_changes c LEFT JOIN audit_log a ON a.seq = c.audit_seq
             WHERE c.id > $1 ORDER BY c.id LIMIT $2",
            &[&after, &ROWS_BATCH],
        )?;
        for row in &rows {
            let id: i64 = row.try_get(0)?;
            after = id;
            let subject = format!("record_changes:{id}");
            let hashes: &str = row.try_get(1)?;
            let audit_payload: Option<&str> = row.try_get(2)?;
            let audit_subject: Option<&str> = row.try_get(3)?;
            let record: &str = row.try_get(4)?;
            let Some(audit_payload) = audit_payload else {
                report.mismatches.push(mismatch(
                    subject,
                    "audit_seq",
                    "a linha de auditoria deste lote não existe",
                ));
                continue;
            };
            let digest = serde_json::from_str::<Vec<String>>(hashes)
                .map(|h| change_hashes_digest(&h))
                .ok();
            if digest.as_deref() != Some(audit_payload) {
                report.mismatches.push(mismatch(
                    subject.clone(),
                    "change_hashes",
                    "não confere com o payload da linha de auditoria do lote",
                ));
            }
            if audit_subject != Some(format!("record:{record}").as_str()) {
                report.mismatches.push(mismatch(
                    subject,
                    "record_id",
                    "não é o registro da linha de auditoria do lote",
                ));
            }
        }
        if rows.len() < batch_len(ROWS_BATCH) {
            return Ok(());
        }
    }
}

fn check_registry(conn: &Conn<'_>, report: &mut ConsistencyReport) -> Result<()> {
    let payloads: HashSet<String> = conn
        .query("SELECT payload_hash FROM audit_log", &[])?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?;
    // (kind, key) → (body, version), replayed.
    let mut replayed: BTreeMap<(String, String), (String, i64)> = BTreeMap::new();
    let last = replay_log(conn, report, &payloads, &mut replayed)?;
    let meta: i64 = conn
        .query_one("SELECT version FROM registry_meta WHERE id = 1", &[])?
        .try_get(0)?;
    if meta != last {
        report.mismatches.push(mismatch(
            String::from("registry_meta"),
            "version",
            format!("a versão do cadastro ({meta}) não é a última do histórico ({last})"),
        ));
    }
    // Kinds are never empty (a CHECK lists them), so every row follows ("", "").
    let mut after = (String::new(), String::new());
    loop {
        let rows = conn.query(
            "SELECT kind, key, body, version FROM registry_entities
             WHERE (kind, key) > ($1, $2) ORDER BY kind, key LIMIT $3",
            &[&after.0, &after.1, &ROWS_BATCH],
        )?;
        for row in &rows {
            let kind: String = row.try_get(0)?;
            let key: String = row.try_get(1)?;
            let body: &str = row.try_get(2)?;
            let version: i64 = row.try_get(3)?;
            let subject = format!("registry:{kind}:{key}");
            let entity = (kind, key);
            match replayed.remove(&entity) {
                None => report.mismatches.push(mismatch(
                    subject,
                    "key",
                    "a entidade não consta do histórico do cadastro",
                )),
                Some((want, want_version)) => {
                    // Compared as JSON values: the same entity, however the text is spaced.
                    let same = serde_json::from_str::<serde_json::Value>(body).ok()
                        == Some(
                            serde_json::from_str::<serde_json::Value>(&want)
                                .map_err(|e| corrupt("cadastro", e))?,
                        );
                    if !same {
                        report.mismatches.push(mismatch(
                            subject.clone(),
                            "body",
                            "difere do que o histórico do cadastro diz",
                        ));
                    }
                    if version != want_version {
                        report.mismatches.push(mismatch(
                            subject,
                            "version",
                            "difere da versão que a escreveu no histórico",
                        ));
                    }
                }
            }
            after = entity;
        }
        if rows.len() < batch_len(ROWS_BATCH) {
            break;
        }
    }
    for (kind, key) in replayed.into_keys() {
        report.mismatches.push(mismatch(
            format!("registry:{kind}:{key}"),
            "key",
            "a entidade do histórico falta no cadastro",
        ));
    }
    Ok(())
}

/// Replays `registry_log` from version 0 into `replayed`, checking that versions follow one
/// another and that each batch is an audit row's payload; the last version logged (0 when
/// none).
fn replay_log(
    conn: &Conn<'_>,
    report: &mut ConsistencyReport,
    payloads: &HashSet<String>,
    replayed: &mut BTreeMap<(String, String), (String, i64)>,
) -> Result<i64> {
    let mut last = 0i64;
    // Versions start at 1; `after` is the keyset cursor, `last` what the replay reached.
    let mut after = 0i64;
    loop {
        let rows = conn.query(
            "SELECT version, from_version, changes FROM registry_log
             WHERE version > $1 ORDER BY version LIMIT $2",
            &[&after, &LARGE_ROWS_BATCH],
        )?;
        for row in &rows {
            let version: i64 = row.try_get(0)?;
            let from: i64 = row.try_get(1)?;
            let text: &str = row.try_get(2)?;
            after = version;
            let subject = format!("registry_log:{version}");
            report.registry_versions += 1;
            if from != last {
                report.mismatches.push(mismatch(
                    subject.clone(),
                    "version",
                    format!("o histórico do cadastro salta da versão {last} para a {from}"),
                ));
            }
            last = version;
            if !payloads.contains(&payload_hash(format!("{version}\n{text}").as_bytes())) {
                report.mismatches.push(mismatch(
                    subject.clone(),
                    "changes",
                    "nenhuma linha de auditoria registra este lote de alterações",
                ));
            }
            let batch: Vec<sync_core::feed::RegistryChange> = match serde_json::from_str(text) {
                Ok(b) => b,
                Err(_) => {
                    report
                        .mismatches
                        .push(mismatch(subject, "changes", "lote ilegível"));
                    continue;
                }
            };
            for change in &batch {
                let (kind, key, body) = entity_of(change)?;
                match body {
                    Some(body) => {
                        replayed.insert((kind.to_owned(), key), (body, version));
                    }
                    None => {
                        replayed.remove(&(kind.to_owned(), key));
                    }
                }
            }
        }
        if rows.len() < batch_len(LARGE_ROWS_BATCH) {
            return Ok(last);
        }
    }
}

/// A batch size as a row count: a batch shorter than this is the table's last.
fn batch_len(limit: i64) -> usize {
    usize::try_from(limit).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chrono::Duration;
    use sync_core::domain::{Registry, ServiceKind, Stand, StandSchedule};
    use sync_core::feed;
    use sync_core::rules::selection::{Edital, Vacancy};
    use taxi_fiscal_store::conformance::{
        About, field_user, issued_record, job_of, request_of, t0,
    };
    use taxi_fiscal_store::selection::EditalSave;
    use taxi_fiscal_store::{Actor, RegistryCommit, Role, Store};

    use crate::PgStore;

    fn stand(id: &str) -> Stand {
        Stand {
            id: id.to_owned(),
            name: format!("Ponto {id}"),
            address: format!("Rua do ponto {id}, Americana"),
            schedule: StandSchedule::Day,
            service: ServiceKind::Common,
            vacancies: 4,
            coordinator_id: None,
            latitude: None,
            longitude: None,
        }
    }

    /// Commits the registry that holds exactly `stands`, from the current version.
    async fn commit_stands(store: &PgStore, stands: &[&str]) {
        let base = store.registry().await.unwrap();
        let version = base.version + 1;
        let at = t0() + Duration::minutes(i64::try_from(version).unwrap());
        let next = feed::sorted(Registry {
            version,
            generated_at: Some(at),
            stands: stands.iter().map(|s| stand(s)).collect(),
            ..(*base).clone()
        });
        store
            .commit_registry(RegistryCommit {
                expected_version: base.version,
                changes: feed::diff(&base, &next),
                registry: Arc::new(next),
                action: String::from("registry.stand.edit"),
                subject: String::from("stand:S01"),
                actor: Actor::cli(at),
            })
            .await
            .unwrap();
    }

    fn edital(id: &str, number: &str) -> Edital {
        let d = |y, m, day| chrono::NaiveDate::from_ymd_opt(y, m, day).unwrap();
        Edital {
            id: id.to_owned(),
            number: number.to_owned(),
            opened_on: d(2026, 11, 30),
            published_on: d(2026, 12, 1),
            applications_from: d(2026, 12, 21),
            applications_until: d(2026, 12, 31),
            reference_date: d(2026, 12, 31),
            seed_source: String::from("os prêmios da Loteria Federal de 09/01/2027"),
            draw_on: d(2027, 1, 9),
            vacancies: vec![Vacancy {
                stand_id: String::from("S01"),
                places: 2,
            }],
            documents: vec![String::from("Cédula de Identidade")],
            criteria: String::from("art. 3º"),
            certificate_validity_days: 90,
            candidates: Vec::new(),
            list: None,
            draw: None,
            result: None,
            appeals: Vec::new(),
            grants: Vec::new(),
        }
    }

    async fn save_edital(store: &PgStore, edital: Edital, expected_version: Option<u64>) {
        store
            .save_edital(EditalSave {
                subject: format!("edital:{}", edital.id),
                expected_version,
                edital,
                action: String::from("edital.open"),
                actor: Actor::cli(t0()),
                registry: None,
                read: None,
            })
            .await
            .unwrap();
    }

    /// A store with three synced records (more than one batch), two registry versions
    /// (four stands) and three editais, one saved twice; its URL and the records' ids, sorted.
    async fn populated() -> (PgStore, String, Vec<String>) {
        let url = crate::test_db::fresh().await;
        let store = PgStore::open(&url).await.unwrap();
        let ana = field_user(&store, "ana", Role::Officer, None, "tablet-ana").await;
        let mut docs: Vec<_> = [("ABC1D23", 30), ("DEF4G56", 20), ("GHI7J89", 10)]
            .into_iter()
            .map(|(plate, ago)| issued_record(&ana.agent, &About::plate(plate, ago)))
            .collect();
        let mut refs: Vec<_> = docs.iter_mut().collect();
        let request = request_of(&ana, &mut refs, 0);
        let response = store
            .sync_records(job_of(&store, &ana, request).await)
            .await
            .unwrap()
            .unwrap();
        assert!(response.rejections.is_empty(), "{:?}", response.rejections);
        assert_eq!(response.accepted.len(), 3);
        let mut ids: Vec<String> = docs.iter().map(|d| d.id().to_string()).collect();
        ids.sort();
        commit_stands(&store, &["S01", "S02", "S03"]).await;
        commit_stands(&store, &["S01", "S02", "S03", "S04"]).await;
        for id in ["2026-01", "2026-02", "2026-03"] {
            save_edital(&store, edital(id, &format!("{id}/2026")), None).await;
        }
        save_edital(&store, edital("2026-02", "002/2026"), Some(1)).await;
        (store, url, ids)
    }

    /// A direct connection to the store's database, to tamper with its tables.
    async fn connect(url: &str) -> tokio_postgres::Client {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
    }

    /// The (subject, column) of each mismatch the store reports.
    async fn found(store: &PgStore) -> Vec<(String, String)> {
        store
            .check_consistency()
            .await
            .unwrap()
            .mismatches
            .into_iter()
            .map(|m| (m.subject, m.column))
            .collect()
    }

    fn pair(subject: impl Into<String>, column: &str) -> (String, String) {
        (subject.into(), column.to_owned())
    }

    #[tokio::test]
    async fn consistency_of_a_store_written_through_its_own_calls_has_no_mismatch() {
        let (store, _, _) = populated().await;
        let report = store.check_consistency().await.unwrap();
        assert_eq!(report.mismatches, Vec::new());
        assert_eq!((report.records, report.registry_versions), (3, 2));
        // An empty store agrees with itself too.
        let empty = PgStore::open(&crate::test_db::fresh().await).await.unwrap();
        let report = empty.check_consistency().await.unwrap();
        assert_eq!(
            (report.records, report.registry_versions, report.mismatches),
            (0, 0, Vec::new())
        );
    }

    #[tokio::test]
    async fn consistency_reports_each_tampered_row_and_column() {
        let (store, url, ids) = populated().await;
        let db = connect(&url).await;
        // A projection column, text and boolean, of the last record (in the last batch).
        let last = &ids[2];
        db.execute(
            "UPDATE records SET plate = 'XXX0000', sealed = NOT sealed WHERE id = $1",
            &[last],
        )
        .await
        .unwrap();
        let record = format!("record:{last}");
        assert_eq!(
            found(&store).await,
            [pair(&*record, "plate"), pair(&*record, "sealed")]
        );
        db.execute(
            "UPDATE records SET plate = 'GHI7J89', sealed = NOT sealed WHERE id = $1",
            &[last],
        )
        .await
        .unwrap();
        assert_eq!(found(&store).await, Vec::new());

        // A batch naming a change the document does not hold (its digest no longer the
        // audited one either).
        let first = &ids[0];
        let batch: i64 = db
            .query_one(
                "UPDATE record_changes SET change_hashes = $1 WHERE record_id = $2 RETURNING id",
                &[&format!("[\"{}\"]", "0".repeat(64)), first],
            )
            .await
            .unwrap()
            .get(0);
        let batches = vec![
            pair(format!("record:{first}"), "record_changes"),
            pair(format!("record_changes:{batch}"), "change_hashes"),
        ];
        assert_eq!(found(&store).await, batches);

        // The counters kept by triggers, against a count of the rows.
        db.batch_execute(
            "UPDATE record_status_counts SET n = n + 1 WHERE status = 'issued';
             INSERT INTO record_rule_counts (rule, status, n) VALUES ('R99', 'issued', 1);",
        )
        .await
        .unwrap();
        let mut want = batches.clone();
        want.push(pair("record_status_counts:issued", "n"));
        want.push(pair("record_rule_counts:R99:issued", "n"));
        assert_eq!(found(&store).await, want);

        // The registry: an edited body, an entity the log never wrote, a version that is not
        // the log's last.
        db.batch_execute(
            "UPDATE registry_entities SET body = '{\"id\":\"S03\"}'
                 WHERE kind = 'stand' AND key = 'S03';
             INSERT INTO registry_entities (kind, key, body, version)
                 VALUES ('stand', 'S99', '{}', 2);
             UPDATE registry_meta SET version = 7 WHERE id = 1;",
        )
        .await
        .unwrap();
        want.push(pair("registry_meta", "version"));
        want.push(pair("registry:stand:S03", "body"));
        want.push(pair("registry:stand:S99", "key"));
        assert_eq!(found(&store).await, want);

        // An edited edital state, in the second batch of editais.
        db.execute(
            "UPDATE editais SET state = replace(state, '2026-03/2026', '2026-09/2026')
             WHERE id = '2026-03'",
            &[],
        )
        .await
        .unwrap();
        want.push(pair("edital:2026-03", "state"));
        let report = store.check_consistency().await.unwrap();
        assert_eq!(
            report
                .mismatches
                .iter()
                .map(|m| (m.subject.clone(), m.column.clone()))
                .collect::<Vec<_>>(),
            want
        );
        // Still counted whole.
        assert_eq!((report.records, report.registry_versions), (3, 2));
        // The reasons are the SQLite backend's.
        assert_eq!(
            report.mismatches[0].reason,
            "um lote aceito nomeia uma alteração que o documento do registro não contém"
        );
    }

    /// A receipt of `record`, signed by a fresh key, then with `received_at` moved by `moved`
    /// minutes (0: as signed).
    fn receipt(record: &str, moved: i64) -> taxi_fiscal_store::receipts::Receipt {
        let key = taxi_fiscal_store::receipts::ServerKey::ephemeral().unwrap();
        let mut receipt = taxi_fiscal_store::receipts::Receipt {
            record_id: record.to_owned(),
            verification_code: format!("code-{record}"),
            device_id: String::from("tablet-ana"),
            device_public_key: "ab".repeat(32),
            device_signature: "cd".repeat(64),
            evidence_sha256: "ef".repeat(32),
            issued_at: t0() - Duration::minutes(5),
            received_at: t0(),
            device_clock_offset_ms: Some(1500),
            server_public_key: String::new(),
            server_signature: String::new(),
            receipt_sha256: String::new(),
            audit_seq: 0,
        };
        receipt.sign(&key);
        receipt.received_at += Duration::minutes(moved);
        receipt
    }

    /// Stores `receipt`, naming audit row `audit_seq`.
    async fn insert_receipt(
        db: &tokio_postgres::Client,
        receipt: &taxi_fiscal_store::receipts::Receipt,
        audit_seq: i64,
    ) {
        let at = taxi_fiscal_store::audit::format_at;
        db.execute(
            "INSERT INTO record_receipts (record_id, verification_code, device_id,
                 device_public_key, device_signature, evidence_sha256, issued_at, received_at,
                 device_clock_offset_ms, server_public_key, server_signature, receipt_sha256,
                 audit_seq)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            &[
                &receipt.record_id,
                &receipt.verification_code,
                &receipt.device_id,
                &receipt.device_public_key,
                &receipt.device_signature,
                &receipt.evidence_sha256,
                &at(receipt.issued_at),
                &at(receipt.received_at),
                &receipt.device_clock_offset_ms,
                &receipt.server_public_key,
                &receipt.server_signature,
                &receipt.receipt_sha256,
                &audit_seq,
            ],
        )
        .await
        .unwrap();
    }

    #[tokio::test]
    async fn consistency_checks_receipts_against_their_audit_rows() {
        let (store, url, ids) = populated().await;
        let db = connect(&url).await;
        // The record's own audit row (its sync batch), and one appended for the receipt, as
        // `records::write_receipt` does (directly here: the chain is not what is checked).
        let batch_seq: i64 = db
            .query_one(
                "SELECT max(seq) FROM audit_log WHERE subject = $1",
                &[&format!("record:{}", ids[0])],
            )
            .await
            .unwrap()
            .get(0);
        let good = receipt(&ids[2], 0);
        let receipt_seq: i64 = db
            .query_one(
                "INSERT INTO audit_log (seq, at, action, subject, payload_hash, prev_hash, hash)
                 SELECT max(seq) + 1, $1, 'record.receipt', $2, $3, $4, $5 FROM audit_log
                 RETURNING seq",
                &[
                    &taxi_fiscal_store::audit::format_at(t0()),
                    &format!("record:{}", ids[2]),
                    &good.receipt_sha256,
                    &"1".repeat(64),
                    &"2".repeat(64),
                ],
            )
            .await
            .unwrap()
            .get(0);
        insert_receipt(&db, &good, receipt_seq).await;
        assert_eq!(found(&store).await, Vec::new());
        // Signed, but the audit row it names covers the record's batch, not this receipt.
        insert_receipt(&db, &receipt(&ids[0], 0), batch_seq).await;
        // Another record's audit row, and a receive time edited after signing.
        insert_receipt(&db, &receipt(&ids[1], 60), batch_seq).await;
        let first = format!("record_receipts:{}", ids[0]);
        let second = format!("record_receipts:{}", ids[1]);
        assert_eq!(
            found(&store).await,
            [
                pair(&*first, "receipt_sha256"),
                pair(&*second, "receipt_sha256"),
                pair(&*second, "audit_seq"),
                pair(&*second, "server_signature"),
            ]
        );
    }
}
