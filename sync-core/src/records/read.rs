//! Reading single fields of a record document key by key: typed accessors that turn a missing
//! or mistyped value into `RecordError::Malformed` (never a panic), used by the edit paths that
//! need one or two values; and scalars or objects rendered as JSON for conflicts. A whole view
//! reads the document in one pass instead (`tree.rs`).

use automerge::{AutoCommit, ChangeHash, ObjId, ObjType, ReadDoc, ScalarValue, Value};
use chrono::DateTime;
use uuid::Uuid;

use super::RecordError;
use super::doc::{key, malformed};
use super::model::PersonRef;

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

// -------------------------------------------------------------------- conflicts

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

/// An object value as JSON (winning values only), for conflicts between whole objects; at
/// `heads` when given (a view of an earlier state of the record), else as the document reads.
///
/// A conflict's losing values are not in the tree the view walked, so this walk bounds its
/// own nesting (`depth`: levels below the conflicting object) by `MAX_DOCUMENT_DEPTH`.
pub(super) fn object_json(
    d: &AutoCommit,
    obj: &ObjId,
    heads: Option<&[ChangeHash]>,
    depth: usize,
) -> Result<serde_json::Value, RecordError> {
    super::tree::check_depth(depth)?;
    use serde_json::Value as J;
    let get = |o: &ObjId, p: automerge::Prop| match heads {
        Some(h) => d.get_at(o, p, h),
        None => d.get(o, p),
    };
    let child = |leaf: &str, v: Option<(Value<'_>, ObjId)>| -> Result<J, RecordError> {
        Ok(match v {
            None => J::Null,
            Some((Value::Scalar(s), _)) => scalar_json(leaf, &s),
            Some((Value::Object(_), id)) => object_json(d, &id, heads, depth + 1)?,
        })
    };
    Ok(match d.object_type(obj)? {
        ObjType::Map | ObjType::Table => {
            let keys: Vec<String> = match heads {
                Some(h) => d.keys_at(obj, h).collect(),
                None => d.keys(obj).collect(),
            };
            let mut m = serde_json::Map::new();
            for k in keys {
                let v = child(&k, get(obj, automerge::Prop::Map(k.clone()))?)?;
                m.insert(k, v);
            }
            J::Object(m)
        }
        ObjType::List => {
            let len = match heads {
                Some(h) => d.length_at(obj, h),
                None => d.length(obj),
            };
            J::Array(
                (0..len)
                    .map(|i| child("", get(obj, automerge::Prop::Seq(i))?))
                    .collect::<Result<_, _>>()?,
            )
        }
        ObjType::Text => J::String(match heads {
            Some(h) => d.text_at(obj, h)?,
            None => d.text(obj)?,
        }),
    })
}
