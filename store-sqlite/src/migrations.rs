//! Numbered schema migrations of the server database. `MIGRATIONS[i]` takes the schema from
//! version `i` to `i + 1`; `PRAGMA user_version` is the version a file is at, and
//! `PRAGMA application_id` marks it as a taxi-fiscal *server* database ("TFSV"), so that a
//! device store or another SQLite file given as `--data` is refused, not migrated.
//!
//! Adding one (e.g. the record sync's `005_records.sql`): append a file and a line below, never
//! edit a shipped one. Each runs in its own `IMMEDIATE` transaction with its `user_version`
//! bump, so a crash leaves a whole version, and `PRAGMA foreign_key_check` must be clean.

use crate::Result;
use rusqlite::{Connection, TransactionBehavior};

use taxi_fiscal_store::StoreError;

/// `PRAGMA application_id`: ASCII "TFSV".
pub(crate) const APPLICATION_ID: i32 = 0x5446_5356;

/// `(name, sql)` in order.
const MIGRATIONS: &[(&str, &str)] = &[
    ("001_accounts", include_str!("migrations/001_accounts.sql")),
    ("002_registry", include_str!("migrations/002_registry.sql")),
    ("003_audit", include_str!("migrations/003_audit.sql")),
    (
        "004_field_support",
        include_str!("migrations/004_field_support.sql"),
    ),
    ("005_records", include_str!("migrations/005_records.sql")),
    ("006_office", include_str!("migrations/006_office.sql")),
    (
        "007_record_numbers",
        include_str!("migrations/007_record_numbers.sql"),
    ),
    (
        "008_law_parameters",
        include_str!("migrations/008_law_parameters.sql"),
    ),
    (
        "009_device_keys_receipts",
        include_str!("migrations/009_device_keys_receipts.sql"),
    ),
    (
        "010_notifications",
        include_str!("migrations/010_notifications.sql"),
    ),
    (
        "011_account_codes",
        include_str!("migrations/011_account_codes.sql"),
    ),
    (
        "012_observed_persons",
        include_str!("migrations/012_observed_persons.sql"),
    ),
    (
        "013_refresh_tokens_by_user",
        include_str!("migrations/013_refresh_tokens_by_user.sql"),
    ),
    (
        "014_visible_changes_by_scope",
        include_str!("migrations/014_visible_changes_by_scope.sql"),
    ),
    (
        "015_record_rules",
        include_str!("migrations/015_record_rules.sql"),
    ),
    (
        "016_record_bytes_once",
        include_str!("migrations/016_record_bytes_once.sql"),
    ),
    (
        "017_duplicate_candidates",
        include_str!("migrations/017_duplicate_candidates.sql"),
    ),
    (
        "018_record_status_counts",
        include_str!("migrations/018_record_status_counts.sql"),
    ),
    (
        "019_record_rule_counts",
        include_str!("migrations/019_record_rule_counts.sql"),
    ),
    ("020_editais", include_str!("migrations/020_editais.sql")),
    (
        "021_web_sessions",
        include_str!("migrations/021_web_sessions.sql"),
    ),
    (
        "022_login_failures",
        include_str!("migrations/022_login_failures.sql"),
    ),
];

/// The schema version this code writes.
pub(crate) const LATEST_VERSION: i64 = MIGRATIONS.len() as i64;

/// Checks what the file is, then migrates it to the latest version. Only a database the caller
/// has just created (`fresh`) may be at version 0: an existing file at version 0 is an empty or
/// foreign SQLite file, and initialising it would start an empty server in its place.
pub(super) fn migrate(conn: &mut Connection, path: &str, fresh: bool) -> Result<()> {
    let open_err = |reason: String| {
        crate::Error::Store(StoreError::Open {
            path: path.to_owned(),
            reason,
        })
    };
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let app_id: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
        [],
        |r| r.get(0),
    )?;
    if (version > 0 || app_id != 0) && app_id != APPLICATION_ID {
        return Err(open_err(String::from(
            "não é um banco de dados do servidor taxi-fiscal",
        )));
    }
    if version == 0 && tables > 0 {
        return Err(open_err(String::from(
            "o arquivo já tem tabelas de outro programa",
        )));
    }
    if version == 0 && !fresh {
        return Err(open_err(String::from(
            "o arquivo existe mas não tem o esquema do servidor taxi-fiscal (banco vazio ou de \
             outro programa); restaure o backup, ou remova o arquivo para criar um banco novo",
        )));
    }
    if version > LATEST_VERSION {
        return Err(open_err(format!(
            "o banco está na versão {version}, mais nova que a deste programa ({LATEST_VERSION})"
        )));
    }
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate() {
        let target = i as i64 + 1;
        if target <= version {
            continue;
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if current >= target {
            continue;
        }
        tx.execute_batch(sql)
            .map_err(|e| open_err(format!("migração {name}: {e}")))?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.pragma_update(None, "user_version", target)?;
        let dangling = tx
            .prepare("PRAGMA foreign_key_check")
            .and_then(|mut s| s.exists([]))?;
        if dangling {
            return Err(open_err(format!(
                "migração {name}: referências inválidas após migrar"
            )));
        }
        tx.commit()?;
    }
    Ok(())
}
