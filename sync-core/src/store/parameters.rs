//! The law's parameters of the replica: what `Registry::parameters` was at the replica's
//! version, in `reg_law_parameters` (migration 7), written in the same transaction as the
//! snapshot or batch that carried them (module `replica`).
//!
//! A check evaluates its facts with the parameters of the same version: the row records the
//! version from which its body is in force (`since_version`), and facts read at an older
//! version (a batch committed between the two reads) are read again inside one read
//! transaction. The parsed value is kept in memory by the row's `generation`, so a check parses
//! it only after a change.
//!
//! The check bundles (module `bundle`) hold registry facts only, never a parameter or a
//! verdict, so a change of parameters does not invalidate them: it takes effect at the next
//! check.

use std::cell::RefCell;
use std::sync::Arc;

use rusqlite::{Connection, params};

use super::lookup::ReadTx;
use super::{Store, StoreError, StoreResult, optional, to_i64, to_u64};
use crate::rules::{CheckInput, Facts, LawParameters, default_parameters};

const TABLE: &str = "reg_law_parameters";

/// The schema version that added the table (a store opened at an older version for a
/// migration test has none; every other store is migrated to the latest on open).
const SINCE_VERSION: i64 = 7;

fn kept(conn: &Connection) -> StoreResult<bool> {
    let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    Ok(v >= SINCE_VERSION)
}

/// The last parsed parameters, by generation (`None` generation: no row), and the last
/// registry version they were found in force at.
#[derive(Debug, Default)]
pub(super) struct Memo(
    RefCell<Option<(Option<i64>, Arc<LawParameters>)>>,
    RefCell<Option<(u64, Arc<LawParameters>)>>,
);

impl Memo {
    /// Forgets which version the parameters were read at: called by this store before it applies
    /// a snapshot or a batch (another connection's batch moves the version, which misses the
    /// memo by itself).
    pub(super) fn forget_version(&self) {
        *self.1.borrow_mut() = None;
    }
}

/// What the row says, without its body.
struct Row {
    since_version: u64,
    generation: Option<i64>,
}

fn row(conn: &Connection) -> StoreResult<Row> {
    let r = optional(
        conn.prepare_cached(
            "SELECT since_version, generation FROM reg_law_parameters WHERE id = 1",
        )?
        .query_row([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))),
    )?;
    Ok(match r {
        Some((since, generation)) => Row {
            since_version: to_u64(since, TABLE)?,
            generation: Some(generation),
        },
        None => Row {
            since_version: 0,
            generation: None,
        },
    })
}

/// The stored parameters (`None`: the defaults apply).
pub(super) fn stored(conn: &Connection) -> StoreResult<Option<LawParameters>> {
    if !kept(conn)? {
        return Ok(None);
    }
    let body: Option<Option<String>> = optional(
        conn.prepare_cached("SELECT body FROM reg_law_parameters WHERE id = 1")?
            .query_row([], |r| r.get(0)),
    )?;
    match body.flatten() {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| StoreError::Decode {
                table: TABLE,
                key: String::from("1"),
                detail: e.to_string(),
            }),
    }
}

/// Records `value` as in force from `since_version`, unless it is what is stored already.
pub(super) fn write(
    conn: &Connection,
    since_version: u64,
    value: Option<&LawParameters>,
) -> StoreResult<()> {
    if !kept(conn)? {
        return Ok(());
    }
    if stored(conn)?.as_ref() == value && row(conn)?.generation.is_some() {
        return Ok(());
    }
    let body = value
        .map(|p| {
            serde_json::to_string(p).map_err(|e| StoreError::Decode {
                table: TABLE,
                key: String::from("1"),
                detail: format!("não serializável: {e}"),
            })
        })
        .transpose()?;
    conn.prepare_cached(
        "INSERT INTO reg_law_parameters (id, since_version, generation, body) VALUES (1, ?1, 1, ?2)
         ON CONFLICT (id) DO UPDATE SET since_version = excluded.since_version,
             generation = reg_law_parameters.generation + 1, body = excluded.body",
    )?
    .execute(params![to_i64(since_version, TABLE)?, body])?;
    Ok(())
}

impl Store {
    /// The law's parameters of the replica: the office's, or the defaults when the registry
    /// never had any (or no snapshot arrived yet).
    pub fn law_parameters(&self) -> StoreResult<Arc<LawParameters>> {
        let r = row(&self.conn)?;
        self.parameters_of(&r)
    }

    fn parameters_of(&self, r: &Row) -> StoreResult<Arc<LawParameters>> {
        if let Some((generation, p)) = self.parameters.0.borrow().as_ref()
            && *generation == r.generation
        {
            return Ok(Arc::clone(p));
        }
        let p = Arc::new(match r.generation {
            None => default_parameters().clone(),
            Some(_) => stored(&self.conn)?.unwrap_or_else(|| default_parameters().clone()),
        });
        *self.parameters.0.borrow_mut() = Some((r.generation, Arc::clone(&p)));
        Ok(p)
    }

    /// `check_facts` and the law's parameters in force at the facts' version.
    pub fn check_facts_and_parameters(
        &self,
        input: &CheckInput,
    ) -> StoreResult<(Facts, Arc<LawParameters>)> {
        let facts = self.check_facts(input)?;
        // The parameters in force at a registry version are a function of that version (the
        // server makes every change of them a new version): at the version last read, no
        // second statement (device bench: it was a third of a check).
        if let Some((version, p)) = self.parameters.1.borrow().as_ref()
            && *version == facts.registry_version
        {
            return Ok((facts, Arc::clone(p)));
        }
        let r = row(&self.conn)?;
        if r.since_version <= facts.registry_version {
            let p = self.parameters_of(&r)?;
            *self.parameters.1.borrow_mut() = Some((facts.registry_version, Arc::clone(&p)));
            return Ok((facts, p));
        }
        // The parameters changed after the facts were read: both again, from one version.
        let _tx = ReadTx::begin(&self.conn)?;
        let facts = self.check_facts(input)?;
        let r = row(&self.conn)?;
        Ok((facts, self.parameters_of(&r)?))
    }
}
