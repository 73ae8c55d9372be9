//! What `audit verify` checks besides the hash chain: that the tables the server reads agree
//! with what the chain vouches for. The chain covers each change's *payload hash*, not the rows
//! derived from it, so an edited projection column or registry row would otherwise pass.
//!
//! 1. **Records**: each record's projection columns (plate, status, number, …) are recomputed
//!    from its stored Automerge document with the sync's own projection
//!    (`records::project`), and its `heads` from the document; each batch in `record_changes`
//!    must match the payload digest of the audit row it names, and every change it names must
//!    be in the record's document (the only copy of its bytes); the inbox's counters per status
//!    must be a count of the rows.
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
//! CPFs or plates.

use crate::Result;
use std::collections::{BTreeMap, HashSet};

use rusqlite::Connection;

use super::records::project;
use super::registry::entity_of;
use sha2::Digest;

use taxi_fiscal_store::StoreError;
use taxi_fiscal_store::audit::{change_hashes_digest, payload_hash};

pub use taxi_fiscal_store::consistency::{ConsistencyReport, Mismatch, mismatch};

/// Runs every check (read-only) on `conn`.
pub(crate) fn check(conn: &Connection) -> Result<ConsistencyReport> {
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
fn check_editais(conn: &Connection, report: &mut ConsistencyReport) -> Result<()> {
    let payloads: HashSet<String> = {
        let mut stmt =
            conn.prepare("SELECT payload_hash FROM audit_log WHERE action LIKE 'edital.%'")?;
        stmt.query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut stmt = conn.prepare("SELECT id, version, state FROM editais ORDER BY id")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let id: String = row.get(0)?;
        let version: i64 = row.get(1)?;
        let state: String = row.get(2)?;
        let hash = taxi_fiscal_store::selection::edital_payload_hash(
            u64::try_from(version).unwrap_or_default(),
            &state,
        );
        if !payloads.contains(&hash) {
            report.mismatches.push(mismatch(
                format!("edital:{id}"),
                "state",
                "nenhuma linha de auditoria registra este estado do edital",
            ));
        }
    }
    Ok(())
}

/// Each receipt's digest must be that of its canonical bytes and the payload of the audit row
/// it names, for its record, and its server signature must verify with the key it names: an
/// edited receive time or device clock offset shows here.
fn check_receipts(conn: &Connection, report: &mut ConsistencyReport) -> Result<()> {
    let mut stmt = conn.prepare(
        "SELECT r.record_id, a.payload_hash, a.subject FROM record_receipts r
         LEFT JOIN audit_log a ON a.seq = r.audit_seq ORDER BY r.record_id",
    )?;
    let rows: Vec<(String, Option<String>, Option<String>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (record, payload, audit_subject) in rows {
        let subject = format!("record_receipts:{record}");
        let Some(receipt) = super::records::receipt_of(conn, &record)? else {
            continue;
        };
        let bytes = receipt.canonical();
        let digest = hex::encode(sha2::Sha256::digest(&bytes));
        if digest != receipt.receipt_sha256 || payload.as_deref() != Some(digest.as_str()) {
            report.mismatches.push(mismatch(
                subject.clone(),
                "receipt_sha256",
                "o recibo não confere com o payload da sua linha de auditoria",
            ));
        }
        if audit_subject.as_deref() != Some(format!("record:{record}").as_str()) {
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
    }
    Ok(())
}

/// The stored projection of one record, column by column, as `records::store_change` writes it.
type StoredProjection = Vec<(&'static str, rusqlite::types::Value)>;

fn check_records(conn: &Connection, report: &mut ConsistencyReport) -> Result<()> {
    use rusqlite::types::Value as V;
    let mut stmt = conn.prepare(
        "SELECT id, doc, kind, heads, number, status, plate, stand_id, permit_number,
             author_user_id, author_role, author_device_id, occurred_at, sealed, invalid_events,
             conflicts, rules
         FROM records ORDER BY id",
    )?;
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
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        report.records += 1;
        let id: String = row.get(0)?;
        let subject = format!("record:{id}");
        let doc: Vec<u8> = row.get(1)?;
        let stored: StoredProjection = COLUMNS
            .iter()
            .enumerate()
            .map(|(i, c)| Ok((*c, row.get::<_, V>(i + 2)?)))
            .collect::<rusqlite::Result<_>>()?;
        let loaded = sync_core::records::RecordDoc::load(&doc).and_then(|mut d| {
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
                continue;
            }
        };
        if batches_outside(conn, &id, &mut loaded_doc)? {
            report.mismatches.push(mismatch(
                subject.clone(),
                "record_changes",
                "um lote aceito nomeia uma alteração que o documento do registro não contém",
            ));
        }
        let p = project(&view);
        let text = |s: &str| V::Text(s.to_owned());
        let opt = |s: &Option<String>| s.as_deref().map_or(V::Null, text);
        let heads =
            serde_json::to_string(&heads).map_err(|e| super::records::corrupt("records", e))?;
        let expected: [V; 15] = [
            text(view.kind.as_str()),
            V::Text(heads),
            opt(&p.number),
            text(p.status),
            opt(&p.plate),
            opt(&p.stand_id),
            opt(&p.permit_number),
            text(&p.author_user_id),
            text(p.author_role),
            text(&p.author_device_id),
            text(&p.occurred_at),
            V::Integer(i64::from(p.sealed)),
            V::Integer(p.invalid_events),
            V::Integer(p.conflicts),
            text(&p.rules),
        ];
        for ((column, got), want) in stored.iter().zip(expected.iter()) {
            if got != want {
                report.mismatches.push(mismatch(
                    subject.clone(),
                    column,
                    "difere do que o documento do registro diz",
                ));
            }
        }
        let indexed: Vec<(String, String, String)> = super::projection::rule_set(&p.rules)
            .into_iter()
            .map(|rule| (rule, p.status.to_owned(), p.occurred_at.clone()))
            .collect();
        if super::projection::rule_rows(conn, &id)? != indexed {
            report.mismatches.push(mismatch(
                subject,
                "record_rules",
                "o índice de regras difere do que o documento do registro diz",
            ));
        }
    }
    Ok(())
}

/// Whether a batch logged for the record names a change its document does not hold: the
/// document is the only copy of a record's bytes, so every accepted change must be in it.
fn batches_outside(
    conn: &Connection,
    record_id: &str,
    doc: &mut sync_core::records::RecordDoc,
) -> Result<bool> {
    let mut stmt =
        conn.prepare_cached("SELECT change_hashes FROM record_changes WHERE record_id = ?1")?;
    let mut rows = stmt.query([record_id])?;
    while let Some(row) = rows.next()? {
        let hashes: String = row.get(0)?;
        let Ok(hashes) = serde_json::from_str::<Vec<String>>(&hashes) else {
            return Ok(true);
        };
        for hash in hashes {
            let found = hash
                .parse::<automerge::ChangeHash>()
                .ok()
                .and_then(|h| doc.automerge_mut().get_change_by_hash(&h).map(|_| ()));
            if found.is_none() {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The inbox's counters (`record_status_counts`, kept by triggers) must be a count of the rows.
fn check_status_counts(conn: &Connection, report: &mut ConsistencyReport) -> Result<()> {
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
fn check_rule_counts(conn: &Connection, report: &mut ConsistencyReport) -> Result<()> {
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
/// `counters:key1:key2`.
fn check_counters(
    conn: &Connection,
    report: &mut ConsistencyReport,
    (counters, source): (&str, &str),
    keys: &[&str],
    message: &str,
) -> Result<()> {
    let k = keys.join(", ");
    let counted = format!("SELECT {k}, count(*) FROM {source} GROUP BY {k}");
    let kept = format!("SELECT {k}, n FROM {counters} WHERE n > 0");
    let mut stmt = conn.prepare(&format!(
        "SELECT {k} FROM ({counted} EXCEPT {kept})
         UNION
         SELECT {k} FROM ({kept} EXCEPT {counted})
         ORDER BY {k}"
    ))?;
    let wrong: Vec<Vec<String>> = stmt
        .query_map([], |r| (0..keys.len()).map(|i| r.get(i)).collect())?
        .collect::<Result<_, _>>()?;
    for key in wrong {
        report.mismatches.push(mismatch(
            format!("{counters}:{}", key.join(":")),
            "n",
            message,
        ));
    }
    Ok(())
}

fn check_record_changes(conn: &Connection, report: &mut ConsistencyReport) -> Result<()> {
    let mut stmt = conn.prepare(
        "SELECT c.id, c.change_hashes, a.payload_hash, a.subject, c.record_id
         FROM record_changes c LEFT JOIN audit_log a ON a.seq = c.audit_seq ORDER BY c.id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let subject = format!("record_changes:{id}");
        let hashes: String = row.get(1)?;
        let audit_payload: Option<String> = row.get(2)?;
        let audit_subject: Option<String> = row.get(3)?;
        let record: String = row.get(4)?;
        let Some(audit_payload) = audit_payload else {
            report.mismatches.push(mismatch(
                subject,
                "audit_seq",
                "a linha de auditoria deste lote não existe",
            ));
            continue;
        };
        let digest = serde_json::from_str::<Vec<String>>(&hashes)
            .map(|h| change_hashes_digest(&h))
            .ok();
        if digest.as_deref() != Some(audit_payload.as_str()) {
            report.mismatches.push(mismatch(
                subject.clone(),
                "change_hashes",
                "não confere com o payload da linha de auditoria do lote",
            ));
        }
        if audit_subject.as_deref() != Some(format!("record:{record}").as_str()) {
            report.mismatches.push(mismatch(
                subject,
                "record_id",
                "não é o registro da linha de auditoria do lote",
            ));
        }
    }
    Ok(())
}

fn check_registry(conn: &Connection, report: &mut ConsistencyReport) -> Result<()> {
    let corrupt = |e: serde_json::Error| StoreError::Corrupt {
        what: "cadastro",
        reason: e.to_string(),
    };
    let payloads: HashSet<String> = {
        let mut stmt = conn.prepare("SELECT payload_hash FROM audit_log")?;
        stmt.query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    // (kind, key) → (body, version), replayed.
    let mut replayed: BTreeMap<(String, String), (String, i64)> = BTreeMap::new();
    let mut last = 0i64;
    {
        let mut stmt = conn
            .prepare("SELECT version, from_version, changes FROM registry_log ORDER BY version")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let version: i64 = row.get(0)?;
            let from: i64 = row.get(1)?;
            let text: String = row.get(2)?;
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
            let batch: Vec<sync_core::feed::RegistryChange> = match serde_json::from_str(&text) {
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
    }
    let meta: i64 = conn.query_row("SELECT version FROM registry_meta WHERE id = 1", [], |r| {
        r.get(0)
    })?;
    if meta != last {
        report.mismatches.push(mismatch(
            String::from("registry_meta"),
            "version",
            format!("a versão do cadastro ({meta}) não é a última do histórico ({last})"),
        ));
    }
    let mut stmt = conn.prepare("SELECT kind, key, body, version FROM registry_entities")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let kind: String = row.get(0)?;
        let key: String = row.get(1)?;
        let body: String = row.get(2)?;
        let version: i64 = row.get(3)?;
        let subject = format!("registry:{kind}:{key}");
        match replayed.remove(&(kind, key)) {
            None => report.mismatches.push(mismatch(
                subject,
                "key",
                "a entidade não consta do histórico do cadastro",
            )),
            Some((want, want_version)) => {
                // Compared as JSON values: the same entity, however the text is spaced.
                let same = serde_json::from_str::<serde_json::Value>(&body).ok()
                    == Some(serde_json::from_str::<serde_json::Value>(&want).map_err(corrupt)?);
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
