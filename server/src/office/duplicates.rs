//! Records that are probably the same occurrence, written on different devices (two patrols,
//! an officer and a coordinator): grouped for the office, which merges them or keeps them
//! apart. Pure: the store supplies the candidates (same plate, other device, close in time) and
//! this module judges place, settled pairs and groups.
//!
//! A pair is proposed when the canonical plate is the same, the devices differ, the times are at
//! most [`DUPLICATE_WINDOW_MINUTES`] apart, and the places agree: both positions within
//! [`DUPLICATE_RADIUS_M`], or the same stand, or a position within that radius of the other's
//! stand (stand coordinates from the registry). When neither record says where, the pair is
//! still proposed, saying so: the office decides. A pair is settled — never proposed again —
//! once either record has a valid `duplicate_kept_apart` naming the other; a record merged into
//! another is closed and no longer a candidate at all. Groups are the connected pairs.

use std::collections::BTreeMap;

use chrono::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::domain::Registry;
use sync_core::records::{EventKind, Position, RecordView};

use crate::store::records::RecordRow;

pub use crate::store::office::DUPLICATE_WINDOW_MINUTES;

/// Two positions farther apart than this are different places. 300 m: phone GPS in the city
/// centre errs by tens of metres (100 m near tall buildings), a taxi moves between two
/// officers' sightings, and the surroundings of a stand that art. 21 speaks of fit in it; two
/// stands of the demo city centre are farther apart than this.
pub const DUPLICATE_RADIUS_M: f64 = 300.0;

/// A record in a group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DuplicateMember {
    pub row: RecordRow,
    /// The device that wrote it.
    pub author_device_id: String,
    pub position: Option<Position>,
    /// E.g. "emitido", "em análise".
    pub status_label: String,
    /// SHA-256 of its photos, to compare them side by side.
    #[serde(default)]
    pub photos: Vec<String>,
    /// What the author described.
    #[serde(default)]
    pub facts: String,
}

/// Why two records look like one occurrence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DuplicatePair {
    pub a: String,
    pub b: String,
    pub minutes_apart: i64,
    /// Metres between the positions (or a position and the other's stand), when known.
    pub distance_m: Option<f64>,
    pub same_stand: bool,
    /// In Portuguese, e.g. "mesma placa, 25 min e 80 m de distância, dispositivos diferentes".
    pub reason: String,
}

/// Records probably of one occurrence, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DuplicateGroup {
    /// The oldest record's id: stable while the group stands.
    pub id: String,
    /// Canonical plate.
    pub plate: String,
    pub records: Vec<DuplicateMember>,
    pub pairs: Vec<DuplicatePair>,
}

/// Great-circle distance in metres (haversine; the city is small enough for any formula).
pub fn distance_m(a: (f64, f64), b: (f64, f64)) -> f64 {
    const EARTH_RADIUS_M: f64 = 6_371_000.0;
    let (la1, lo1) = (a.0.to_radians(), a.1.to_radians());
    let (la2, lo2) = (b.0.to_radians(), b.1.to_radians());
    let h = ((la2 - la1) / 2.0).sin().powi(2)
        + la1.cos() * la2.cos() * ((lo2 - lo1) / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * h.sqrt().min(1.0).asin()
}

/// Whether either record kept the other apart already.
fn settled(a: &RecordView, b: &RecordView) -> bool {
    let names = |v: &RecordView, other: &RecordView| {
        let other = other.id.to_string();
        v.events.iter().any(|e| {
            e.valid
                && matches!(&e.event, EventKind::DuplicateKeptApart { other_record_id }
                    if *other_record_id == other)
        })
    };
    names(a, b) || names(b, a)
}

fn stand_point(reg: &Registry, stand: Option<&String>) -> Option<(f64, f64)> {
    let s = reg.stands.iter().find(|s| Some(&s.id) == stand)?;
    Some((s.latitude?, s.longitude?))
}

/// The pair, if `a` and `b` look like one occurrence and were not kept apart.
fn pair(a: &RecordView, b: &RecordView, reg: &Registry) -> Option<DuplicatePair> {
    let plate_a = a.vehicle.as_ref()?.plate.as_str();
    if Some(plate_a) != b.vehicle.as_ref().map(|v| v.plate.as_str()) {
        return None;
    }
    if a.author.device_id == b.author.device_id {
        return None;
    }
    let apart = (a.occurred_at - b.occurred_at).abs();
    if apart > Duration::minutes(DUPLICATE_WINDOW_MINUTES) {
        return None;
    }
    let same_stand = a.stand_id.is_some() && a.stand_id == b.stand_id;
    let point = |v: &RecordView| v.position.map(|p| (p.lat, p.lon));
    let distance = match (point(a), point(b)) {
        (Some(p), Some(q)) => Some(distance_m(p, q)),
        (Some(p), None) => stand_point(reg, b.stand_id.as_ref()).map(|q| distance_m(p, q)),
        (None, Some(q)) => stand_point(reg, a.stand_id.as_ref()).map(|p| distance_m(p, q)),
        (None, None) => None,
    };
    let place = match distance {
        // Positions decide when there are two; a stand name alone cannot outweigh them.
        Some(d) if d <= DUPLICATE_RADIUS_M => format!("{d:.0} m de distância"),
        Some(_) => return None,
        None if same_stand => String::from("mesmo ponto"),
        None if a.stand_id.is_some() && b.stand_id.is_some() => return None,
        None => String::from("local não comparável (sem posição ou ponto em um dos registros)"),
    };
    if settled(a, b) {
        return None;
    }
    let minutes = apart.num_minutes();
    let (first, second) = if (a.occurred_at, a.id) <= (b.occurred_at, b.id) {
        (a, b)
    } else {
        (b, a)
    };
    Some(DuplicatePair {
        a: first.id.to_string(),
        b: second.id.to_string(),
        minutes_apart: minutes,
        distance_m: distance.map(|d| d.round()),
        same_stand,
        reason: format!(
            "mesma placa {plate_a}, {minutes} min de intervalo, {place}, dispositivos diferentes"
        ),
    })
}

/// Groups the candidates (see the module doc). `members` pairs each record's row with its view
/// and the device that wrote it.
pub fn groups(members: &[(RecordRow, RecordView)], reg: &Registry) -> Vec<DuplicateGroup> {
    let n = members.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if let Some(p) = pair(&members[i].1, &members[j].1, reg) {
                let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
                parent[ri] = rj;
                pairs.push((i, p));
            }
        }
    }
    let mut by_root: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, _) in &pairs {
        let r = root(&mut parent, *i);
        by_root.entry(r).or_default();
    }
    for i in 0..n {
        let r = root(&mut parent, i);
        if let Some(list) = by_root.get_mut(&r) {
            list.push(i);
        }
    }
    let mut out: Vec<DuplicateGroup> = by_root
        .into_iter()
        .map(|(r, mut idx)| {
            idx.sort_by_key(|&i| (members[i].1.occurred_at, members[i].1.id));
            let records: Vec<DuplicateMember> = idx
                .iter()
                .map(|&i| DuplicateMember {
                    row: members[i].0.clone(),
                    author_device_id: members[i].1.author.device_id.to_string(),
                    position: members[i].1.position,
                    status_label: members[i].1.status.label_pt().to_owned(),
                    photos: members[i].1.photos.clone(),
                    facts: members[i].1.facts.clone(),
                })
                .collect();
            let group_pairs = pairs
                .iter()
                .filter(|(i, _)| root(&mut parent, *i) == r)
                .map(|(_, p)| p.clone())
                .collect();
            DuplicateGroup {
                id: records
                    .first()
                    .map(|m| m.row.id.clone())
                    .unwrap_or_default(),
                plate: records
                    .first()
                    .and_then(|m| m.row.plate.clone())
                    .unwrap_or_default(),
                records,
                pairs: group_pairs,
            }
        })
        .collect();
    // Newest occurrence first, like the inbox.
    out.sort_by(|a, b| {
        let last = |g: &DuplicateGroup| g.records.last().map(|m| m.row.occurred_at);
        last(b).cmp(&last(a)).then_with(|| a.id.cmp(&b.id))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_are_metres() {
        // 0.001° of latitude is about 111 m.
        let d = distance_m((-22.7393, -47.3314), (-22.7403, -47.3314));
        assert!((d - 111.2).abs() < 1.0, "{d}");
        assert_eq!(distance_m((-22.7, -47.3), (-22.7, -47.3)), 0.0);
    }
}
