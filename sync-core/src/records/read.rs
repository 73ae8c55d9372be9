//! Reading a record document: typed accessors that turn a missing or mistyped value into
//! `RecordError::Malformed` (never a panic), the event list, and the conflict walk.

use automerge::{AutoCommit, ObjId, ObjType, ReadDoc, ScalarValue, Value, ValueRef};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::RecordError;
use super::doc::{key, malformed};
use super::events::{EventKind, EventView, InvalidEvent, RawEvent};
use super::model::{
    Agent, ConflictValue, FieldConflict, PersonRef, UserRole, Witness, device_of_actor,
};
use automerge::ROOT;

pub(super) fn scalar(
    d: &AutoCommit,
    obj: &ObjId,
    k: &str,
) -> Result<Option<ScalarValue>, RecordError> {
    match d.get(obj, k)? {
        None => Ok(None),
        Some((Value::Scalar(s), _)) => Ok(Some(s.into_owned())),
        Some((Value::Object(_), _)) => Err(malformed(format!(
            "«{k}» é um objeto, esperava-se um valor"
        ))),
    }
}

pub(super) fn opt_str(d: &AutoCommit, obj: &ObjId, k: &str) -> Result<Option<String>, RecordError> {
    match scalar(d, obj, k)? {
        None | Some(ScalarValue::Null) => Ok(None),
        Some(ScalarValue::Str(s)) => Ok(Some(s.to_string())),
        Some(other) => Err(malformed(format!("«{k}» deveria ser texto: {other}"))),
    }
}

pub(super) fn req_str(d: &AutoCommit, obj: &ObjId, k: &str) -> Result<String, RecordError> {
    opt_str(d, obj, k)?.ok_or_else(|| malformed(format!("falta «{k}»")))
}

pub(super) fn req_f64(d: &AutoCommit, obj: &ObjId, k: &str) -> Result<f64, RecordError> {
    match scalar(d, obj, k)? {
        Some(ScalarValue::F64(v)) => Ok(v),
        Some(ScalarValue::Int(v)) => Ok(v as f64),
        Some(ScalarValue::Uint(v)) => Ok(v as f64),
        _ => Err(malformed(format!("«{k}» deveria ser número"))),
    }
}

pub(super) fn req_u64(d: &AutoCommit, obj: &ObjId, k: &str) -> Result<u64, RecordError> {
    match scalar(d, obj, k)? {
        Some(ScalarValue::Uint(v)) => Ok(v),
        Some(ScalarValue::Int(v)) if v >= 0 => Ok(v.unsigned_abs()),
        _ => Err(malformed(format!("«{k}» deveria ser inteiro não negativo"))),
    }
}

pub(super) fn time_of(s: &ScalarValue) -> Option<DateTime<Utc>> {
    match s {
        ScalarValue::Timestamp(ms) | ScalarValue::Int(ms) => DateTime::from_timestamp_millis(*ms),
        _ => None,
    }
}

pub(super) fn req_time(d: &AutoCommit, obj: &ObjId, k: &str) -> Result<DateTime<Utc>, RecordError> {
    scalar(d, obj, k)?
        .as_ref()
        .and_then(time_of)
        .ok_or_else(|| malformed(format!("«{k}» deveria ser data e hora")))
}

pub(super) fn opt_obj(
    d: &AutoCommit,
    obj: &ObjId,
    k: &str,
    ty: ObjType,
) -> Result<Option<ObjId>, RecordError> {
    match d.get(obj, k)? {
        None => Ok(None),
        Some((Value::Object(t), id)) if t == ty => Ok(Some(id)),
        Some(_) => Err(malformed(format!("«{k}» tem o tipo errado"))),
    }
}

pub(super) fn req_obj(
    d: &AutoCommit,
    obj: &ObjId,
    k: &str,
    ty: ObjType,
) -> Result<ObjId, RecordError> {
    opt_obj(d, obj, k, ty)?.ok_or_else(|| malformed(format!("falta «{k}»")))
}

pub(super) fn read_str_list(
    d: &AutoCommit,
    obj: &ObjId,
    k: &str,
) -> Result<Vec<String>, RecordError> {
    let Some(list) = opt_obj(d, obj, k, ObjType::List)? else {
        return Ok(Vec::new());
    };
    (0..d.length(&list))
        .map(|i| match d.get(&list, i)? {
            Some((Value::Scalar(s), _)) => match s.as_ref() {
                ScalarValue::Str(s) => Ok(s.to_string()),
                other => Err(malformed(format!("«{k}[{i}]» deveria ser texto: {other}"))),
            },
            _ => Err(malformed(format!("«{k}[{i}]» deveria ser texto"))),
        })
        .collect()
}

pub(super) fn parse_uuid(s: &str, what: &str) -> Result<Uuid, RecordError> {
    Uuid::parse_str(s).map_err(|_| malformed(format!("{what}: {s:?} não é um UUID")))
}

pub(super) fn person_ref(s: &str) -> Result<PersonRef, RecordError> {
    PersonRef::decode(s).ok_or_else(|| malformed(format!("referência de pessoa inválida: {s:?}")))
}

pub(super) fn read_agent(d: &AutoCommit, obj: &ObjId) -> Result<Agent, RecordError> {
    let role_s = req_str(d, obj, key::ROLE)?;
    Ok(Agent {
        user_id: req_str(d, obj, key::USER_ID)?,
        role: UserRole::parse(&role_s)
            .ok_or_else(|| malformed(format!("papel desconhecido: {role_s:?}")))?,
        device_id: parse_uuid(&req_str(d, obj, key::DEVICE_ID)?, "dispositivo")?,
    })
}

pub(super) fn read_witnesses(d: &AutoCommit) -> Result<Vec<Witness>, RecordError> {
    let Some(list) = opt_obj(d, &ROOT, key::WITNESSES, ObjType::List)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for i in 0..d.length(&list) {
        let Some((Value::Object(ObjType::Map), w)) = d.get(&list, i)? else {
            return Err(malformed(format!("testemunha {i} malformada")));
        };
        out.push(Witness {
            person: person_ref(&req_str(d, &w, key::PERSON)?)?,
            statement: opt_str(d, &w, key::STATEMENT)?.unwrap_or_default(),
            added_at: req_time(d, &w, key::AT)?,
            added_by: req_str(d, &w, key::BY)?,
        });
    }
    Ok(out)
}

/// Reads the event list. A malformed entry does not make the record unreadable: it becomes an
/// `InvalidEvent` (kept, flagged), like an event the state machine refuses.
pub(super) fn read_events(d: &AutoCommit) -> Result<Vec<RawEvent>, RecordError> {
    let list = req_obj(d, &ROOT, key::EVENTS, ObjType::List)?;
    let mut out = Vec::new();
    for i in 0..d.length(&list) {
        let Some((Value::Object(ObjType::Map), e)) = d.get(&list, i)? else {
            out.push(RawEvent::Malformed(InvalidEvent {
                id: format!("#{i}"),
                kind: String::new(),
                at: None,
                reason: String::from("evento malformado (não é um objeto)"),
            }));
            continue;
        };
        let id = opt_str(d, &e, key::ID).ok().flatten();
        let kind = opt_str(d, &e, key::EVENT_KIND).ok().flatten();
        let at = scalar(d, &e, key::AT)
            .ok()
            .flatten()
            .as_ref()
            .and_then(time_of);
        let decoded = (|| -> Result<EventView, String> {
            let id = id.clone().ok_or("sem identificador")?;
            let kind = kind.clone().ok_or("sem tipo")?;
            let at = at.ok_or("sem data e hora")?;
            let by = read_agent(d, &e).map_err(|e| e.to_string())?;
            let payload = opt_str(d, &e, key::PAYLOAD).map_err(|e| e.to_string())?;
            let event = EventKind::from_stored(&kind, payload.as_deref())?;
            Ok(EventView {
                id,
                at,
                by,
                event,
                valid: true,
            })
        })();
        out.push(match decoded {
            Ok(ev) => RawEvent::Ok(ev),
            Err(reason) => RawEvent::Malformed(InvalidEvent {
                id: id.unwrap_or_else(|| format!("#{i}")),
                kind: kind.unwrap_or_default(),
                at,
                reason: format!("evento malformado: {reason}"),
            }),
        });
    }
    Ok(out)
}

// -------------------------------------------------------------------- conflicts

/// Walks the whole document and reports every map key or list slot with several values.
///
/// One pass over each object's visible values, using Automerge's own `conflict` flag, and
/// `get_all` only where it is set (issue 5, sync bench: the previous `get_all` + `get` per slot
/// made this walk the largest part of materialising a view, which the server does for every
/// incoming change).
pub(super) fn collect_conflicts(
    d: &AutoCommit,
    obj: &ObjId,
    path: &str,
    out: &mut Vec<FieldConflict>,
) -> Result<(), RecordError> {
    // (path, prop, conflicted, child object)
    let slots: Vec<(String, automerge::Prop, bool, Option<ObjId>)> = match d.object_type(obj)? {
        ObjType::Map | ObjType::Table => d
            .map_range(obj, ..)
            .map(|item| {
                let k = item.key.to_string();
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                let child = matches!(item.value, ValueRef::Object(_)).then(|| item.id());
                (p, automerge::Prop::Map(k), item.conflict, child)
            })
            .collect(),
        ObjType::List => d
            .list_range(obj, ..)
            .map(|item| {
                let child = matches!(item.value, ValueRef::Object(_)).then(|| item.id());
                (
                    format!("{path}[{}]", item.index),
                    automerge::Prop::Seq(item.index),
                    item.conflict,
                    child,
                )
            })
            .collect(),
        ObjType::Text => Vec::new(),
    };
    for (p, prop, conflicted, child) in slots {
        if conflicted {
            let leaf = match &prop {
                automerge::Prop::Map(k) => k.clone(),
                automerge::Prop::Seq(_) => String::new(),
            };
            let all = d.get_all(obj, prop)?;
            if all.len() > 1 {
                let mut values = Vec::new();
                for (v, id) in &all {
                    let value = match v {
                        Value::Scalar(s) => scalar_json(&leaf, s),
                        Value::Object(_) => object_json(d, id)?,
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
                    field: p.clone(),
                    values,
                });
            }
        }
        if let Some(child) = child {
            collect_conflicts(d, &child, &p, out)?;
        }
    }
    Ok(())
}

/// A stored scalar as JSON: timestamps as RFC 3339 (as in `RecordView`), JSON-bearing strings
/// decoded, bytes as hex.
pub(super) fn scalar_json(field: &str, s: &ScalarValue) -> serde_json::Value {
    use serde_json::Value as J;
    match s {
        ScalarValue::Str(t) => {
            if key::JSON_FIELDS.contains(&field)
                && let Ok(v) = serde_json::from_str::<J>(t)
            {
                return v;
            }
            J::String(t.to_string())
        }
        ScalarValue::Timestamp(ms) => DateTime::from_timestamp_millis(*ms)
            .and_then(|t| serde_json::to_value(t).ok())
            .unwrap_or(J::from(*ms)),
        ScalarValue::Int(i) => J::from(*i),
        ScalarValue::Uint(u) => J::from(*u),
        ScalarValue::F64(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        ScalarValue::Boolean(b) => J::Bool(*b),
        ScalarValue::Bytes(b) => J::String(hex::encode(b)),
        ScalarValue::Counter(_) => s.as_i64().map_or(J::Null, J::from),
        ScalarValue::Null | ScalarValue::Unknown { .. } => J::Null,
    }
}

/// An object value as JSON (winning values only), for conflicts between whole objects.
pub(super) fn object_json(d: &AutoCommit, obj: &ObjId) -> Result<serde_json::Value, RecordError> {
    use serde_json::Value as J;
    let child =
        |d: &AutoCommit, leaf: &str, v: Option<(Value<'_>, ObjId)>| -> Result<J, RecordError> {
            Ok(match v {
                None => J::Null,
                Some((Value::Scalar(s), _)) => scalar_json(leaf, &s),
                Some((Value::Object(_), id)) => object_json(d, &id)?,
            })
        };
    Ok(match d.object_type(obj)? {
        ObjType::Map | ObjType::Table => {
            let mut m = serde_json::Map::new();
            for k in d.keys(obj).collect::<Vec<_>>() {
                let v = child(d, &k, d.get(obj, k.as_str())?)?;
                m.insert(k, v);
            }
            J::Object(m)
        }
        ObjType::List => J::Array(
            (0..d.length(obj))
                .map(|i| child(d, "", d.get(obj, i)?))
                .collect::<Result<_, _>>()?,
        ),
        ObjType::Text => J::String(d.text(obj)?),
    })
}
