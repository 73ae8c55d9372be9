//! A record document read in one pass: `read_tree` walks every visible object once (with
//! Automerge's `map_range` / `list_range`, values borrowed from the document, each slot's
//! conflict flag kept) and `RecordDoc::view` then reads fields from that tree instead of asking
//! the document key by key.
//!
//! Why: a view used to cost some forty keyed `get`s, each a seek into the document's op
//! columns, plus a separate walk for conflicts; the server views a record after every incoming
//! change, so that was the largest part of a sync (sync bench). One walk serves both.
//! The tree lives only as long as the borrow of the document it was read from.
//!
//! Typed accessors turn a missing or mistyped value into `RecordError::Malformed` with the
//! same Portuguese messages as the key-by-key readers in `read.rs`.

use std::borrow::Cow;

use automerge::{
    AutoCommit, ChangeHash, ObjId, ObjType, ROOT, ReadDoc, ScalarValue, ScalarValueRef, ValueRef,
};
use chrono::{DateTime, Utc};

use super::RecordError;
use super::doc::{key, malformed};
use super::events::{EventKind, EventView, InvalidEvent, RawEvent};
use super::model::{Agent, ConflictValue, FieldConflict, UserRole, Witness, device_of_actor};
use super::read::{object_json, parse_uuid, person_ref, scalar_json};
use crate::limits::{MAX_DOCUMENT_DEPTH, MAX_JSON_FIELD_BYTES};

/// One visible value and whether concurrent writers left other values beside it.
pub(super) struct Slot<'a> {
    pub(super) node: Node<'a>,
    pub(super) conflict: bool,
}

pub(super) enum Node<'a> {
    Scalar(ScalarValueRef<'a>),
    Map(Map<'a>),
    List(List<'a>),
    /// A text object: records hold none; kept so that one is reported as the wrong type.
    Text,
}

/// A map object: its id (for `get_all` on a conflicted key) and its entries in document order.
pub(super) struct Map<'a> {
    pub(super) id: ObjId,
    entries: Vec<(Cow<'a, str>, Slot<'a>)>,
}

/// A list object: its id and its items in order.
pub(super) struct List<'a> {
    pub(super) id: ObjId,
    pub(super) items: Vec<Slot<'a>>,
}

/// Reads the whole document as it is now, or at `heads` (an earlier state of it: the server
/// reads each incoming change's step this way, without isolating the document).
///
/// The walk recurses once per level of nesting and refuses, as malformed, an object deeper
/// than `MAX_DOCUMENT_DEPTH` before descending into it: anyone can send a document, and one of
/// a few kilobytes can nest maps hundreds of levels deep.
pub(super) fn read_tree<'a>(
    d: &'a AutoCommit,
    heads: Option<&[ChangeHash]>,
) -> Result<Map<'a>, RecordError> {
    read_map(d, ROOT, heads, 0)
}

/// Refuses an object at `depth` (the root is at 0) beyond the limit.
pub(super) fn check_depth(depth: usize) -> Result<(), RecordError> {
    if depth > MAX_DOCUMENT_DEPTH {
        return Err(malformed(format!(
            "o documento tem objetos aninhados em mais de {MAX_DOCUMENT_DEPTH} níveis"
        )));
    }
    Ok(())
}

fn read_map<'a>(
    d: &'a AutoCommit,
    id: ObjId,
    heads: Option<&[ChangeHash]>,
    depth: usize,
) -> Result<Map<'a>, RecordError> {
    check_depth(depth)?;
    let mut entries = Vec::new();
    let range = match heads {
        Some(h) => d.map_range_at(&id, .., h),
        None => d.map_range(&id, ..),
    };
    for item in range {
        let child = matches!(item.value, ValueRef::Object(_)).then(|| item.id());
        let node = node(d, item.value, child, heads, depth)?;
        entries.push((
            item.key,
            Slot {
                node,
                conflict: item.conflict,
            },
        ));
    }
    Ok(Map { id, entries })
}

fn read_list<'a>(
    d: &'a AutoCommit,
    id: ObjId,
    heads: Option<&[ChangeHash]>,
    depth: usize,
) -> Result<List<'a>, RecordError> {
    check_depth(depth)?;
    let mut items = Vec::new();
    let range = match heads {
        Some(h) => d.list_range_at(&id, .., h),
        None => d.list_range(&id, ..),
    };
    for item in range {
        let child = matches!(item.value, ValueRef::Object(_)).then(|| item.id());
        let node = node(d, item.value, child, heads, depth)?;
        items.push(Slot {
            node,
            conflict: item.conflict,
        });
    }
    Ok(List { id, items })
}

fn node<'a>(
    d: &'a AutoCommit,
    value: ValueRef<'a>,
    child: Option<ObjId>,
    heads: Option<&[ChangeHash]>,
    // Depth of the object holding `value`.
    depth: usize,
) -> Result<Node<'a>, RecordError> {
    Ok(match (value, child) {
        (ValueRef::Scalar(s), _) => Node::Scalar(s),
        (ValueRef::Object(ObjType::Map | ObjType::Table), Some(id)) => {
            Node::Map(read_map(d, id, heads, depth + 1)?)
        }
        (ValueRef::Object(ObjType::List), Some(id)) => {
            Node::List(read_list(d, id, heads, depth + 1)?)
        }
        (ValueRef::Object(_), _) => Node::Text,
    })
}

/// A scalar as the owned type the rest of the module matches on.
fn owned(s: &ScalarValueRef<'_>) -> ScalarValue {
    ScalarValue::from(s)
}

pub(super) fn time_of(s: &ScalarValueRef<'_>) -> Option<DateTime<Utc>> {
    match s {
        ScalarValueRef::Timestamp(ms) | ScalarValueRef::Int(ms) => {
            DateTime::from_timestamp_millis(*ms)
        }
        _ => None,
    }
}

impl<'a> Map<'a> {
    fn get(&self, k: &str) -> Option<&Node<'a>> {
        // A record's maps hold a few dozen keys at most: a scan beats building an index.
        self.entries
            .iter()
            .find(|(key, _)| key.as_ref() == k)
            .map(|(_, slot)| &slot.node)
    }

    pub(super) fn scalar(&self, k: &str) -> Result<Option<&ScalarValueRef<'a>>, RecordError> {
        match self.get(k) {
            None => Ok(None),
            Some(Node::Scalar(s)) => Ok(Some(s)),
            Some(_) => Err(malformed(format!(
                "«{k}» é um objeto, esperava-se um valor"
            ))),
        }
    }

    pub(super) fn opt_str(&self, k: &str) -> Result<Option<&str>, RecordError> {
        match self.scalar(k)? {
            None | Some(ScalarValueRef::Null) => Ok(None),
            Some(ScalarValueRef::Str(s)) => Ok(Some(s.as_ref())),
            Some(other) => Err(malformed(format!(
                "«{k}» deveria ser texto: {}",
                owned(other)
            ))),
        }
    }

    pub(super) fn opt_string(&self, k: &str) -> Result<Option<String>, RecordError> {
        Ok(self.opt_str(k)?.map(str::to_owned))
    }

    pub(super) fn req_str(&self, k: &str) -> Result<&str, RecordError> {
        self.opt_str(k)?
            .ok_or_else(|| malformed(format!("falta «{k}»")))
    }

    pub(super) fn req_f64(&self, k: &str) -> Result<f64, RecordError> {
        match self.scalar(k)? {
            Some(ScalarValueRef::F64(v)) => Ok(*v),
            Some(ScalarValueRef::Int(v)) => Ok(*v as f64),
            Some(ScalarValueRef::Uint(v)) => Ok(*v as f64),
            _ => Err(malformed(format!("«{k}» deveria ser número"))),
        }
    }

    pub(super) fn opt_u64(&self, k: &str) -> Result<Option<u64>, RecordError> {
        Ok(match self.scalar(k)? {
            Some(ScalarValueRef::Uint(v)) => Some(*v),
            Some(ScalarValueRef::Int(v)) if *v >= 0 => Some(v.unsigned_abs()),
            _ => None,
        })
    }

    pub(super) fn req_u64(&self, k: &str) -> Result<u64, RecordError> {
        self.opt_u64(k)?
            .ok_or_else(|| malformed(format!("«{k}» deveria ser inteiro não negativo")))
    }

    pub(super) fn req_time(&self, k: &str) -> Result<DateTime<Utc>, RecordError> {
        self.scalar(k)?
            .and_then(time_of)
            .ok_or_else(|| malformed(format!("«{k}» deveria ser data e hora")))
    }

    pub(super) fn opt_map(&self, k: &str) -> Result<Option<&Map<'a>>, RecordError> {
        match self.get(k) {
            None => Ok(None),
            Some(Node::Map(m)) => Ok(Some(m)),
            Some(_) => Err(malformed(format!("«{k}» tem o tipo errado"))),
        }
    }

    pub(super) fn req_map(&self, k: &str) -> Result<&Map<'a>, RecordError> {
        self.opt_map(k)?
            .ok_or_else(|| malformed(format!("falta «{k}»")))
    }

    pub(super) fn opt_list(&self, k: &str) -> Result<Option<&List<'a>>, RecordError> {
        match self.get(k) {
            None => Ok(None),
            Some(Node::List(l)) => Ok(Some(l)),
            Some(_) => Err(malformed(format!("«{k}» tem o tipo errado"))),
        }
    }

    pub(super) fn str_list(&self, k: &str) -> Result<Vec<String>, RecordError> {
        let Some(list) = self.opt_list(k)? else {
            return Ok(Vec::new());
        };
        list.items
            .iter()
            .enumerate()
            .map(|(i, slot)| match &slot.node {
                Node::Scalar(ScalarValueRef::Str(s)) => Ok(s.to_string()),
                Node::Scalar(other) => Err(malformed(format!(
                    "«{k}[{i}]» deveria ser texto: {}",
                    owned(other)
                ))),
                _ => Err(malformed(format!("«{k}[{i}]» deveria ser texto"))),
            })
            .collect()
    }
}

pub(super) fn read_agent(m: &Map<'_>) -> Result<Agent, RecordError> {
    let role_s = m.req_str(key::ROLE)?;
    Ok(Agent {
        user_id: m.req_str(key::USER_ID)?.to_owned(),
        role: UserRole::parse(role_s)
            .ok_or_else(|| malformed(format!("papel desconhecido: {role_s:?}")))?,
        device_id: parse_uuid(m.req_str(key::DEVICE_ID)?, "dispositivo")?,
    })
}

pub(super) fn read_witnesses(root: &Map<'_>) -> Result<Vec<Witness>, RecordError> {
    let Some(list) = root.opt_list(key::WITNESSES)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(list.items.len());
    for (i, slot) in list.items.iter().enumerate() {
        let Node::Map(w) = &slot.node else {
            return Err(malformed(format!("testemunha {i} malformada")));
        };
        out.push(Witness {
            person: person_ref(w.req_str(key::PERSON)?)?,
            statement: w.opt_string(key::STATEMENT)?.unwrap_or_default(),
            added_at: w.req_time(key::AT)?,
            added_by: w.req_str(key::BY)?.to_owned(),
        });
    }
    Ok(out)
}

/// Reads the event list. A malformed entry does not make the record unreadable: it becomes an
/// `InvalidEvent` (kept, flagged), like an event the state machine refuses.
pub(super) fn read_events(root: &Map<'_>) -> Result<Vec<RawEvent>, RecordError> {
    let list = root
        .opt_list(key::EVENTS)?
        .ok_or_else(|| malformed(format!("falta «{}»", key::EVENTS)))?;
    let mut out = Vec::with_capacity(list.items.len());
    for (i, slot) in list.items.iter().enumerate() {
        let Node::Map(e) = &slot.node else {
            out.push(RawEvent::Malformed(InvalidEvent {
                id: format!("#{i}"),
                kind: String::new(),
                at: None,
                reason: String::from("evento malformado (não é um objeto)"),
            }));
            continue;
        };
        let id = e.opt_str(key::ID).ok().flatten();
        let kind = e.opt_str(key::EVENT_KIND).ok().flatten();
        let at = e.scalar(key::AT).ok().flatten().and_then(time_of);
        let decoded = (|| -> Result<EventView, String> {
            let id = id.ok_or("sem identificador")?;
            let kind = kind.ok_or("sem tipo")?;
            let at = at.ok_or("sem data e hora")?;
            let by = read_agent(e).map_err(|e| e.to_string())?;
            let payload = e.opt_str(key::PAYLOAD).map_err(|e| e.to_string())?;
            // Bounded before it is parsed: the payload is JSON from outside.
            if payload.is_some_and(|p| p.len() > MAX_JSON_FIELD_BYTES) {
                return Err(format!(
                    "dados do evento acima de {} KB",
                    MAX_JSON_FIELD_BYTES / 1024
                ));
            }
            let event = EventKind::from_stored(kind, payload)?;
            Ok(EventView {
                id: id.to_owned(),
                at,
                by,
                event,
                valid: true,
            })
        })();
        out.push(match decoded {
            Ok(ev) => RawEvent::Ok(ev),
            Err(reason) => RawEvent::Malformed(InvalidEvent {
                id: id.map_or_else(|| format!("#{i}"), str::to_owned),
                kind: kind.unwrap_or_default().to_owned(),
                at,
                reason: format!("evento malformado: {reason}"),
            }),
        });
    }
    Ok(out)
}

/// Every map key or list slot with several values, from the conflict flags the walk kept;
/// `get_all` is asked only where one is set.
pub(super) fn conflicts(
    d: &AutoCommit,
    heads: Option<&[ChangeHash]>,
    root: &Map<'_>,
) -> Result<Vec<FieldConflict>, RecordError> {
    let mut out = Vec::new();
    map_conflicts(&At { d, heads }, root, "", &mut out)?;
    Ok(out)
}

/// The document and the heads a tree was read at, for the `get_all` of a conflicted slot.
struct At<'d, 'h> {
    d: &'d AutoCommit,
    heads: Option<&'h [ChangeHash]>,
}

fn map_conflicts(
    d: &At<'_, '_>,
    m: &Map<'_>,
    path: &str,
    out: &mut Vec<FieldConflict>,
) -> Result<(), RecordError> {
    for (k, slot) in &m.entries {
        let p = if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        };
        if slot.conflict {
            slot_conflict(d, &m.id, automerge::Prop::Map(k.to_string()), k, &p, out)?;
        }
        node_conflicts(d, &slot.node, &p, out)?;
    }
    Ok(())
}

fn node_conflicts(
    d: &At<'_, '_>,
    node: &Node<'_>,
    path: &str,
    out: &mut Vec<FieldConflict>,
) -> Result<(), RecordError> {
    match node {
        Node::Map(m) => map_conflicts(d, m, path, out),
        Node::List(l) => {
            for (i, slot) in l.items.iter().enumerate() {
                let p = format!("{path}[{i}]");
                if slot.conflict {
                    slot_conflict(d, &l.id, automerge::Prop::Seq(i), "", &p, out)?;
                }
                node_conflicts(d, &slot.node, &p, out)?;
            }
            Ok(())
        }
        Node::Scalar(_) | Node::Text => Ok(()),
    }
}

fn slot_conflict(
    at: &At<'_, '_>,
    obj: &ObjId,
    prop: automerge::Prop,
    leaf: &str,
    path: &str,
    out: &mut Vec<FieldConflict>,
) -> Result<(), RecordError> {
    use automerge::Value;
    let all = match at.heads {
        Some(h) => at.d.get_all_at(obj, prop, h)?,
        None => at.d.get_all(obj, prop)?,
    };
    if all.len() < 2 {
        return Ok(());
    }
    let mut values = Vec::with_capacity(all.len());
    for (v, id) in &all {
        let value = match v {
            Value::Scalar(s) => scalar_json(leaf, s),
            Value::Object(_) => object_json(at.d, id, at.heads, 0)?,
        };
        let (actor, device_id) = match id {
            ObjId::Id(_, actor, _) => (actor.to_hex_string(), device_of_actor(actor)),
            ObjId::Root => (String::new(), None),
        };
        values.push(ConflictValue {
            value,
            actor,
            device_id,
        });
    }
    out.push(FieldConflict {
        field: path.to_owned(),
        values,
    });
    Ok(())
}
