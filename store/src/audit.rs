//! The audit chain: an append-only, hash-chained log of every change the server accepts.
//!
//! Each row is `(seq, at, user, device, action, subject, payload_hash, prev_hash, hash)`:
//! - `payload_hash` is the SHA-256 of what changed (the registry changes as JSON, a photo's
//!   bytes, a record's change hashes: see [`payload_hash`] and [`change_hashes_digest`]);
//! - `prev_hash` is the previous row's `hash` (64 zeros for the first row);
//! - `hash` is SHA-256 over the canonical encoding of every other field ([`row_hash`]).
//!
//! Changing, removing or reordering a row breaks the chain at that row: its own hash no longer
//! matches, or the next row's `prev_hash` does not. [`verify_rows`] walks the chain and reports
//! the first broken row; `taxi-fiscal audit verify` runs it over the database.
//!
//! Rows are appended by the store *inside the transaction of the change they record* (for
//! SQLite: `taxi_fiscal_store_sqlite::audit::append`), so there is no change without its row and
//! no row without its change. This module is the backend-independent part: the entry, the
//! encoding and the verification.
//!
//! **Anchors.** The chain alone cannot show that rows were removed from its *end*, or that the
//! whole chain was rebuilt: what is left still links. So its head — `seq` and `hash` of the last
//! row, a [`ChainHead`] — is written down outside it: the server logs it at start and at each
//! shutdown, keeps it in [`ANCHOR_FILE`] in the data directory (written atomically at start,
//! every [`ANCHOR_INTERVAL`] while it changes, and at shutdown; never per request, since the
//! append is on the sync's hot path), and `taxi-fiscal audit head` prints it for a backup's
//! label. `audit verify` then requires the chain to still hold that row with that hash
//! ([`anchor_problem`]): a chain cut below an anchored head, or rewritten, fails.
//!
//! Canonical encoding (version 1): the ASCII tag `taxi-fiscal-audit-v1`, then each field in the
//! order above without `hash`: `seq` as 8 bytes big-endian; every text as its length (8 bytes
//! big-endian) followed by its UTF-8 bytes; an optional text as one byte `0` (absent) or `1`
//! followed by the text. `at` is hashed exactly as stored (RFC 3339, microseconds, `Z`).

use chrono::{DateTime, SecondsFormat, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// `prev_hash` of the first row.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

const TAG: &[u8] = b"taxi-fiscal-audit-v1";

/// What a caller appends (the store assigns `seq` and `prev_hash`, and computes `hash`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub at: DateTime<Utc>,
    pub user_id: Option<String>,
    pub device_id: Option<String>,
    /// What happened, dotted: `registry.permit.renew`, `device.revoke`, `photo.upload`, …
    pub action: String,
    /// What it happened to: `permit:0012`, `device:…`, `photo:<sha256>`.
    pub subject: String,
    /// SHA-256 (hex) of the payload.
    pub payload_hash: String,
}

/// What an action means, for staff reading a record's audit rows (the stored action stays the
/// dotted English name the chain hashes). Unknown actions are shown as stored.
pub fn action_label(action: &str) -> String {
    ACTION_LABELS
        .iter()
        .find(|(a, _)| *a == action)
        .map(|(_, l)| (*l).to_owned())
        // A name this table does not know yet (a newer server's): said in Portuguese, with the
        // area it belongs to, never the dotted name.
        .unwrap_or_else(|| match action.split('.').next() {
            Some("record") => "alteração do registro".to_owned(),
            Some("registry") => "alteração do cadastro".to_owned(),
            Some("office") => "ato da Unidade de Transportes".to_owned(),
            Some("edital") => "ato do edital de chamamento".to_owned(),
            Some("user") | Some("device") => "operação de conta ou dispositivo".to_owned(),
            _ => "operação do sistema".to_owned(),
        })
}

/// Every action the server writes, and what staff read for it.
pub const ACTION_LABELS: &[(&str, &str)] = &[
    ("record.sync.create", "registro recebido do dispositivo"),
    ("record.sync.change", "alteração recebida do dispositivo"),
    ("record.office.create", "ato da Unidade de Transportes"),
    ("record.office.change", "ato da Unidade de Transportes"),
    ("office.notification", "notificação de penalidade gerada"),
    (
        "office.effect.fine",
        "multa lançada no cadastro pela decisão",
    ),
    (
        "office.effect.suspension",
        "suspensão lançada no cadastro pela decisão",
    ),
    (
        "office.effect.revocation",
        "cassação lançada no cadastro pela decisão",
    ),
    (
        "office.effect.warning",
        "advertência lançada no cadastro pela decisão",
    ),
    (
        "office.effect.lift",
        "penalidade retirada do cadastro pela decisão",
    ),
    ("photo.upload", "foto recebida"),
    ("edital.open", "edital de chamamento aberto"),
    ("edital.candidate.register", "candidato inscrito no edital"),
    (
        "edital.list.publish",
        "lista de inscritos do edital publicada",
    ),
    ("edital.draw", "sorteio do edital realizado"),
    ("edital.result.publish", "resultado do edital publicado"),
    ("edital.appeal.file", "recurso contra a escolha protocolado"),
    ("edital.appeal.decide", "recurso contra a escolha decidido"),
    ("edital.grant", "alvará concedido pelo edital"),
    (
        "record.observed_persons.upload",
        "identificação das testemunhas recebida do dispositivo",
    ),
    (
        "record.observed_persons.erase",
        "dados pessoais das testemunhas apagados",
    ),
    ("numbers.lease", "faixa de números reservada ao dispositivo"),
    (
        "device.key.register",
        "chave de assinatura do dispositivo registrada",
    ),
    ("registry.fine.create", "multa lançada no cadastro"),
    ("registry.fine.pay", "pagamento de multa registrado"),
    ("registry.law.import", "tabelas da lei importadas"),
    ("registry.law.ipca", "IPCA do ano registrado"),
    ("registry.law.rules", "configuração das regras alterada"),
    ("registry.penalty.create", "penalidade lançada no cadastro"),
    ("registry.permit.grant", "alvará concedido"),
    ("registry.permit.renew", "alvará renovado"),
    ("registry.permit.state", "situação do alvará alterada"),
    ("registry.permit.stand", "alvará mudado de ponto"),
    ("registry.permit.swap", "veículo do alvará substituído"),
    ("registry.permit.transfer", "alvará transferido"),
    ("registry.person.create", "pessoa cadastrada"),
    ("registry.person.update", "cadastro de pessoa alterado"),
    (
        "registry.stand.coordinator",
        "coordenador do ponto alterado",
    ),
    ("registry.stand.create", "ponto cadastrado"),
    ("registry.stand.update", "ponto alterado"),
    ("registry.vehicle.create", "veículo cadastrado"),
    ("registry.vehicle.update", "veículo alterado"),
    ("user.password.change", "senha alterada"),
];

/// A stored row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditRow {
    pub seq: u64,
    /// RFC 3339 UTC with microseconds, as stored and hashed.
    pub at: String,
    pub user_id: Option<String>,
    pub device_id: Option<String>,
    pub action: String,
    pub subject: String,
    pub payload_hash: String,
    pub prev_hash: String,
    pub hash: String,
}

/// Result of walking the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditReport {
    /// Rows read.
    pub rows: u64,
    /// True when every row is intact and linked.
    pub ok: bool,
    /// `hash` of the last row (the chain's head), when there is one and the chain is intact.
    pub head: Option<String>,
    /// The first row that does not verify.
    pub first_broken: Option<BrokenRow>,
}

/// Where and why the chain breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BrokenRow {
    pub seq: u64,
    pub reason: String,
}

/// File of the data directory holding the last anchored [`ChainHead`] (JSON).
pub const ANCHOR_FILE: &str = "audit-anchor.json";

/// How often a running server re-anchors the head when it moved: at most this much of the
/// chain's tail is unanchored if the machine dies (a clean shutdown anchors everything). One
/// small file write and fsync a minute costs nothing next to a commit's own fsync.
pub const ANCHOR_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);

/// The head of the chain: its last row's `seq` and `hash`; `seq` 0 with [`GENESIS`] for an
/// empty chain (which every chain contains).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChainHead {
    pub seq: u64,
    pub hash: String,
}

impl ChainHead {
    /// The head of an empty chain.
    pub fn genesis() -> Self {
        Self {
            seq: 0,
            hash: GENESIS.to_owned(),
        }
    }

    /// Parses `SEQ:HASH` (what `audit head` prints as `anchor`).
    pub fn parse(text: &str) -> Option<Self> {
        let (seq, hash) = text.trim().split_once(':')?;
        let hash = hash.trim().to_ascii_lowercase();
        let ok = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit());
        Some(Self {
            seq: seq.trim().parse().ok()?,
            hash: ok.then_some(hash)?,
        })
    }
}

impl std::fmt::Display for ChainHead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.seq, self.hash)
    }
}

/// Why the chain does not hold `anchor`, given the chain's last `seq` and the hash of its row
/// `anchor.seq` (if it has one); `None` when it does.
pub fn anchor_problem(anchor: &ChainHead, last_seq: u64, hash_at: Option<&str>) -> Option<String> {
    if anchor.seq == 0 {
        return (anchor.hash != GENESIS)
            .then(|| String::from("âncora inválida: a linha 0 só pode ter o hash inicial"));
    }
    match hash_at {
        None => Some(format!(
            "a cadeia termina na linha {last_seq}, antes da linha {} ancorada: linhas finais \
             foram removidas",
            anchor.seq
        )),
        Some(h) if h != anchor.hash => Some(format!(
            "a linha {} não é a ancorada (hash diferente): a cadeia foi reescrita",
            anchor.seq
        )),
        Some(_) => None,
    }
}

/// Writes `head` to `path` atomically: a temporary file, fsync, rename, fsync of the
/// directory, so a crash leaves the old anchor or the new one, never half of one.
pub fn write_anchor(path: &std::path::Path, head: &ChainHead) -> std::io::Result<()> {
    use std::io::Write;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let bytes = serde_json::to_vec_pretty(head).map_err(std::io::Error::other)?;
    {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts.open(&tmp)?;
        f.write_all(&bytes)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    #[cfg(unix)]
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// The anchor at `path`; `Ok(None)` if there is no such file.
pub fn read_anchor(path: &std::path::Path) -> Result<Option<ChainHead>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{} não é uma âncora válida: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("não foi possível ler {}: {e}", path.display())),
    }
}

/// Time as stored and hashed.
pub fn format_at(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// SHA-256 of some bytes, as lowercase hex.
pub fn payload_hash(bytes: &[u8]) -> String {
    payload_hash_of_parts(&[bytes])
}

/// [`payload_hash`] of the parts' concatenation, without building it: a registry import's
/// payload is its whole change list, which need not be copied to be hashed.
pub fn payload_hash_of_parts(parts: &[&[u8]]) -> String {
    let mut digest = Sha256::new();
    for part in parts {
        digest.update(part);
    }
    hex::encode(digest.finalize())
}

/// One digest for a set of change hashes (record sync): sorted, newline-joined, hashed, so the
/// same set gives the same digest whatever order the changes arrived in.
pub fn change_hashes_digest(hashes: &[String]) -> String {
    let mut sorted: Vec<&str> = hashes.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    payload_hash(sorted.join("\n").as_bytes())
}

fn put_text(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(&(s.len() as u64).to_be_bytes());
    buf.extend_from_slice(s.as_bytes());
}

fn put_opt(buf: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => buf.push(0),
        Some(s) => {
            buf.push(1);
            put_text(buf, s);
        }
    }
}

/// The canonical encoding of a row without its own hash.
pub fn canonical(row: &AuditRow) -> Vec<u8> {
    let mut buf = Vec::with_capacity(256);
    buf.extend_from_slice(TAG);
    buf.extend_from_slice(&row.seq.to_be_bytes());
    put_text(&mut buf, &row.at);
    put_opt(&mut buf, row.user_id.as_deref());
    put_opt(&mut buf, row.device_id.as_deref());
    put_text(&mut buf, &row.action);
    put_text(&mut buf, &row.subject);
    put_text(&mut buf, &row.payload_hash);
    put_text(&mut buf, &row.prev_hash);
    buf
}

/// SHA-256 (hex) of the canonical encoding.
pub fn row_hash(row: &AuditRow) -> String {
    payload_hash(&canonical(row))
}

/// The row that follows `prev` (seq and hash of the chain's head, if any) for `entry`.
pub fn next_row(prev: Option<(u64, &str)>, entry: &AuditEntry) -> AuditRow {
    let (seq, prev_hash) = match prev {
        Some((seq, hash)) => (seq + 1, hash.to_owned()),
        None => (1, GENESIS.to_owned()),
    };
    let mut row = AuditRow {
        seq,
        at: format_at(entry.at),
        user_id: entry.user_id.clone(),
        device_id: entry.device_id.clone(),
        action: entry.action.clone(),
        subject: entry.subject.clone(),
        payload_hash: entry.payload_hash.clone(),
        prev_hash,
        hash: String::new(),
    };
    row.hash = row_hash(&row);
    row
}

/// Walks rows in `seq` order and reports the first one that breaks the chain.
pub fn verify_rows<E>(
    rows: impl IntoIterator<Item = Result<AuditRow, E>>,
) -> Result<AuditReport, E> {
    let mut count = 0u64;
    let mut prev: Option<(u64, String)> = None;
    for row in rows {
        let row = row?;
        count += 1;
        let (expected_seq, expected_prev) = match &prev {
            Some((seq, hash)) => (seq + 1, hash.as_str()),
            None => (1, GENESIS),
        };
        let reason = if row.seq != expected_seq {
            Some(format!(
                "sequência interrompida: esperada a linha {expected_seq}, encontrada a {}",
                row.seq
            ))
        } else if row.prev_hash != expected_prev {
            Some(String::from(
                "prev_hash não confere com o hash da linha anterior (linha removida ou alterada)",
            ))
        } else if row_hash(&row) != row.hash {
            Some(String::from(
                "hash não confere com o conteúdo da linha (linha alterada)",
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            return Ok(AuditReport {
                rows: count,
                ok: false,
                head: None,
                first_broken: Some(BrokenRow {
                    seq: row.seq,
                    reason,
                }),
            });
        }
        prev = Some((row.seq, row.hash));
    }
    Ok(AuditReport {
        rows: count,
        ok: true,
        head: prev.map(|(_, h)| h),
        first_broken: None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn entry(action: &str) -> AuditEntry {
        AuditEntry {
            at: "2026-11-30T15:00:00Z".parse().unwrap(),
            user_id: Some("u1".into()),
            device_id: None,
            action: action.into(),
            subject: "permit:0001".into(),
            payload_hash: payload_hash(b"x"),
        }
    }

    fn chain(n: usize) -> Vec<AuditRow> {
        let mut rows: Vec<AuditRow> = Vec::new();
        for i in 0..n {
            let prev = rows.last().map(|r| (r.seq, r.hash.as_str()));
            let row = next_row(prev, &entry(&format!("a{i}")));
            rows.push(row);
        }
        rows
    }

    fn verify(rows: &[AuditRow]) -> AuditReport {
        verify_rows(rows.iter().cloned().map(Ok::<_, ()>)).unwrap()
    }

    #[test]
    fn record_actions_read_in_portuguese() {
        assert_eq!(
            action_label("office.notification"),
            "notificação de penalidade gerada"
        );
        assert_eq!(
            action_label("record.sync.create"),
            "registro recebido do dispositivo"
        );
        // An unknown name never reaches the page as it is stored.
        assert_eq!(action_label("something.new"), "operação do sistema");
        assert_eq!(
            action_label("record.witness.erase"),
            "alteração do registro"
        );
        for (action, label) in ACTION_LABELS {
            assert!(
                !label.contains('.') && !label.contains('_'),
                "{action}: {label}"
            );
        }
    }

    #[test]
    fn intact_chain_verifies() {
        let rows = chain(5);
        let r = verify(&rows);
        assert!(r.ok);
        assert_eq!(r.rows, 5);
        assert_eq!(r.head.as_deref(), Some(rows[4].hash.as_str()));
        assert!(verify(&[]).ok);
    }

    #[test]
    fn tampering_is_found_at_the_row() {
        let mut rows = chain(5);
        rows[2].subject = "permit:0002".into();
        let r = verify(&rows);
        assert_eq!(r.first_broken.unwrap().seq, 3);

        // Rehashing the altered row moves the break to the next row's link.
        let mut rows = chain(5);
        rows[2].action = "other".into();
        rows[2].hash = row_hash(&rows[2]);
        let r = verify(&rows);
        let b = r.first_broken.unwrap();
        assert_eq!(b.seq, 4);
        assert!(b.reason.contains("prev_hash"));

        // A removed row breaks the sequence.
        let mut rows = chain(5);
        rows.remove(1);
        assert_eq!(verify(&rows).first_broken.unwrap().seq, 3);
    }

    #[test]
    fn encoding_separates_fields() {
        // Moving a character between fields changes the hash (length prefixes).
        let mut a = next_row(None, &entry("ab"));
        let mut b = a.clone();
        a.action = "ab".into();
        a.subject = "c".into();
        b.action = "a".into();
        b.subject = "bc".into();
        assert_ne!(row_hash(&a), row_hash(&b));
        // Absent and empty are different.
        a.user_id = None;
        b = a.clone();
        b.user_id = Some(String::new());
        assert_ne!(row_hash(&a), row_hash(&b));
    }

    #[test]
    fn an_anchor_catches_a_cut_tail_and_a_rewritten_chain() {
        let rows = chain(5);
        let head = ChainHead {
            seq: 4,
            hash: rows[3].hash.clone(),
        };
        assert_eq!(anchor_problem(&head, 5, Some(&rows[3].hash)), None);
        // Cut to 3 rows: row 4 is gone.
        let cut = anchor_problem(&head, 3, None).unwrap();
        assert!(cut.contains("termina na linha 3"), "{cut}");
        // Rebuilt from scratch: row 4 is there with another hash.
        let other = chain(6);
        let mut rewritten = other[3].clone();
        rewritten.subject = "permit:0009".into();
        let r = anchor_problem(&head, 6, Some(&row_hash(&rewritten))).unwrap();
        assert!(r.contains("reescrita"), "{r}");
        assert_eq!(anchor_problem(&ChainHead::genesis(), 0, None), None);

        assert_eq!(ChainHead::parse(&head.to_string()), Some(head.clone()));
        assert_eq!(ChainHead::parse("4"), None);
        assert_eq!(ChainHead::parse("x:abc"), None);
        assert_eq!(ChainHead::parse(&format!("4:{}", &rows[3].hash[1..])), None);
    }

    #[test]
    fn anchors_are_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(ANCHOR_FILE);
        assert_eq!(read_anchor(&path).unwrap(), None);
        let head = ChainHead {
            seq: 7,
            hash: GENESIS.replace('0', "a"),
        };
        write_anchor(&path, &head).unwrap();
        write_anchor(&path, &head).unwrap();
        assert_eq!(read_anchor(&path).unwrap(), Some(head));
        assert!(!dir.path().join(format!("{ANCHOR_FILE}.tmp")).exists());
        std::fs::write(&path, "{").unwrap();
        assert!(read_anchor(&path).is_err());
    }

    #[test]
    fn change_digest_ignores_order() {
        let x = vec!["b".to_string(), "a".to_string()];
        let y = vec!["a".to_string(), "b".to_string()];
        assert_eq!(change_hashes_digest(&x), change_hashes_digest(&y));
    }
}
