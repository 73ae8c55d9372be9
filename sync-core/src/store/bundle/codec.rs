//! The binary layout of a check bundle: postcard over mirrors of the domain types.
//!
//! Why mirrors rather than the domain types' own serde: postcard cannot read what needs
//! `deserialize_any` (the internally tagged `PermitState`/`PenaltyKind`, `Decimal`), and dates
//! as day numbers cost nothing to read where `NaiveDate`'s text form is parsed (a quarter of the
//! decode time, measured). Each mirror destructures its domain type exhaustively and rebuilds it
//! with a struct literal, so a field added to the domain fails to compile here until it is
//! carried. Document numbers and plates travel as their text and go back in through their
//! `parse` (what their own serde does, minus a copy).
//!
//! Device bench — what a field check pays per string is cut three ways: the text
//! fields of a struct travel as one string (`Joined`: one UTF-8 check, not one per field);
//! encoding borrows them (a snapshot's 40,000 permits are not copied) while decoding borrows
//! from the row and copies each into a spare string (`text`) that `Store::check` recycled from
//! the previous check rather than allocating it; and canonical document numbers are taken as
//! they are (`TryFrom<String>`), not re-parsed digit by digit.

use std::borrow::Cow;
use std::cell::RefCell;

use chrono::{Datelike, NaiveDate};
use rust_decimal::Decimal;
use serde::de::{Error as _, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Bundle, Role};
use crate::domain::{
    AuxiliaryDriver, CnhNumber, Cpf, DriverLicence, Fine, IllnessAuthorisation, LicenceKind,
    Penalty, PenaltyKind, Permit, PermitState, Person, Plate, Registry, Renavam, ServiceKind,
    Stand, StandSchedule, Taximeter, Vehicle, VehicleCategory,
};

/// Bump when a mirror or the bundle's shape changes (the fingerprint in `super` also covers
/// the domain types' schemas).
pub(super) const LAYOUT: &str = "postcard/5: bundle = permit vehicle people(role,cpf,person bytes) \
     stand penalties fines; driver = permits person; dates as CE days; texts joined per struct";

/// The parts of a bundle, borrowed from wherever they live (a decoded `Bundle` or a snapshot).
pub(super) struct Parts<'a> {
    pub(super) permit: &'a Permit,
    pub(super) vehicle: &'a Vehicle,
    pub(super) people: Vec<(Role, &'a Person)>,
    pub(super) stand: Option<&'a Stand>,
    pub(super) penalties: Vec<&'a Penalty>,
    pub(super) fines: Vec<&'a Fine>,
}

impl<'a> Parts<'a> {
    pub(super) fn of(b: &'a Bundle) -> Self {
        Self {
            permit: &b.permit,
            vehicle: &b.vehicle,
            people: b.people.iter().map(|(r, p)| (*r, p)).collect(),
            stand: b.stand.as_ref(),
            penalties: b.penalties.iter().collect(),
            fines: b.fines.iter().collect(),
        }
    }

    pub(super) fn encode(&self) -> postcard::Result<Vec<u8>> {
        let people = self
            .people
            .iter()
            .map(|(r, p)| {
                Ok((
                    *r,
                    p.cpf.as_str(),
                    postcard::to_allocvec(&PersonBin::of(p))?,
                ))
            })
            .collect::<postcard::Result<Vec<_>>>()?;
        postcard::to_allocvec(&BundleBin {
            permit: PermitBin::of(self.permit),
            vehicle: VehicleBin::of(self.vehicle),
            people: people
                .iter()
                .map(|(role, cpf, bytes)| Member {
                    role: *role,
                    cpf: Bytes(cpf.as_bytes()),
                    person: Bytes(bytes),
                })
                .collect(),
            stand: self.stand.map(StandBin::of),
            penalties: self.penalties.iter().map(|p| PenaltyBin::of(p)).collect(),
            fines: self.fines.iter().map(|f| FineBin::of(f)).collect(),
        })
    }
}

/// Decodes a bundle with the people `want(role, cpf)` accepts (each person is its own byte
/// string: the others are skipped, not parsed); trailing bytes are an error.
pub(super) fn decode(bytes: &[u8], want: impl Fn(Role, &[u8]) -> bool) -> postcard::Result<Bundle> {
    let (bin, rest): (BundleBin<'_>, _) = postcard::take_from_bytes(bytes)?;
    if !rest.is_empty() {
        return Err(postcard::Error::DeserializeBadEncoding);
    }
    let mut people = Vec::with_capacity(bin.people.len());
    for m in &bin.people {
        if want(m.role, m.cpf.0) {
            let (p, rest): (PersonBin<'_>, _) = postcard::take_from_bytes(m.person.0)?;
            if !rest.is_empty() {
                return Err(postcard::Error::DeserializeBadEncoding);
            }
            people.push((m.role, p.owned()?));
        }
    }
    Ok(Bundle {
        permit: bin.permit.owned()?,
        vehicle: bin.vehicle.owned()?,
        people,
        stand: bin.stand.map(StandBin::owned).transpose()?,
        penalties: bin.penalties.into_iter().map(PenaltyBin::owned).collect(),
        fines: bin.fines.into_iter().map(FineBin::owned).collect(),
    })
}

/// Encodes a driver row: the permits the person holds or is auxiliary on, then the person.
pub(super) fn encode_driver(person: &Person, permits: &[&Permit]) -> postcard::Result<Vec<u8>> {
    postcard::to_allocvec(&DriverBin {
        permits: permits.iter().map(|p| PermitBin::of(p)).collect(),
        person: PersonBin::of(person),
    })
}

/// Decodes a driver row: the permits and, if `with_person`, the person.
pub(super) fn decode_driver(
    bytes: &[u8],
    with_person: bool,
) -> postcard::Result<(Option<Person>, Vec<Permit>)> {
    let (permits, rest): (Vec<PermitBin<'_>>, _) = postcard::take_from_bytes(bytes)?;
    let person = if with_person {
        let (p, rest): (PersonBin<'_>, _) = postcard::take_from_bytes(rest)?;
        if !rest.is_empty() {
            return Err(postcard::Error::DeserializeBadEncoding);
        }
        Some(p.owned()?)
    } else {
        None
    };
    let permits = permits
        .into_iter()
        .map(PermitBin::owned)
        .collect::<postcard::Result<_>>()?;
    Ok((person, permits))
}

// --- Spare strings (device bench) ---------------------------------------------------
//
// A check decodes some thirty short strings out of its bundle into a small `Registry` and drops
// them microseconds later; that malloc/free pair per string cost about as much as the rest of
// the decode. So `Store::check` hands the strings of the registry it is done with to a stack per
// thread (`recycle`), and decoding copies into those (`text`, `spare`) before it allocates. A
// string is cleared and written whole before use, so reuse cannot change what is decoded; an
// empty stack (`check_facts` alone, another thread) only means allocating, as before.

thread_local! {
    static SPARE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Strings kept at most (a check uses about thirty), and the largest capacity kept.
const SPARE_MAX: usize = 64;
const SPARE_CAPACITY_MAX: usize = 256;
/// The capacity of a new string at least: once spare, it fits most fields without growing.
const NEW_CAPACITY: usize = 32;

/// A spare string (its old contents still there: callers clear it), or a new one.
fn spare() -> String {
    SPARE
        .with_borrow_mut(Vec::pop)
        .unwrap_or_else(|| String::with_capacity(NEW_CAPACITY))
}

/// `v` as an owned string, in a spare one when there is one.
fn text(v: &str) -> String {
    let mut out = spare();
    out.clear();
    out.push_str(v);
    out
}

/// Keeps the strings of `reg` (one a check is done with) for the next decode; the rest is
/// dropped. Only what a check decodes is kept: anything left out is simply freed.
/// `recycle` for the strings of a check's facts.
pub(in crate::store) fn recycle_facts(facts: crate::rules::Facts) {
    recycle(facts.into_registry());
}

pub(in crate::store) fn recycle(reg: Registry) {
    SPARE.with_borrow_mut(|spare| {
        let mut keep = |v: String| {
            if spare.len() < SPARE_MAX && (1..=SPARE_CAPACITY_MAX).contains(&v.capacity()) {
                spare.push(v);
            }
        };
        for p in reg.people {
            let Person {
                id,
                name,
                cpf,
                licence,
                ..
            } = p;
            let DriverLicence {
                number,
                category,
                observations,
                ..
            } = licence;
            for v in [id, name, cpf.into(), number.into(), category] {
                keep(v);
            }
            observations.into_iter().for_each(&mut keep);
        }
        for v in reg.vehicles {
            let Vehicle {
                id,
                plate,
                renavam,
                make_model,
                colour,
                licensing_municipality,
                licensing_uf,
                owner_cpf,
                taximeter,
                ..
            } = v;
            let (raw, canonical) = plate.into_buffers();
            for v in [
                id,
                raw,
                canonical,
                renavam.into(),
                make_model,
                colour,
                licensing_municipality,
                licensing_uf,
                owner_cpf.into(),
            ] {
                keep(v);
            }
            if let Some(c) = taximeter.and_then(|t| t.certificate_number) {
                keep(c);
            }
        }
        for st in reg.stands {
            let Stand {
                id,
                name,
                address,
                coordinator_id,
                ..
            } = st;
            for v in [id, name, address] {
                keep(v);
            }
            if let Some(c) = coordinator_id {
                keep(c);
            }
        }
        for p in reg.permits {
            let Permit {
                number,
                holder_id,
                auxiliaries,
                vehicle_id,
                stand_id,
                illness_authorisation,
                ..
            } = p;
            for v in [number, holder_id, vehicle_id, stand_id] {
                keep(v);
            }
            for a in auxiliaries {
                keep(a.person_id);
                keep(a.licence_number);
            }
            if let Some(i) = illness_authorisation {
                keep(i.person_id);
            }
        }
    });
}

/// A list of strings (a licence's observations): borrowed from the domain value when encoding,
/// decoded into spare strings. Encoded as a sequence of strings, like `Vec<String>`.
enum Texts<'a> {
    Encode(&'a [String]),
    Decoded(Vec<String>),
}

impl Texts<'_> {
    fn into_vec(self) -> Vec<String> {
        match self {
            Self::Encode(v) => v.iter().map(|o| text(o)).collect(),
            Self::Decoded(v) => v,
        }
    }
}

impl Serialize for Texts<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Encode(v) => v.serialize(s),
            Self::Decoded(v) => v.serialize(s),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Texts<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Seq;
        impl<'de> Visitor<'de> for Seq {
            type Value = Vec<String>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a sequence of strings")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                // The length comes from the bytes: trusted for a few slots only.
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(8));
                while let Some(v) = seq.next_element::<&'de str>()? {
                    out.push(text(v));
                }
                Ok(out)
            }
        }
        d.deserialize_seq(Seq).map(Texts::Decoded)
    }
}

/// Several text fields as one string and the length of each, in bytes: decoding checks the
/// UTF-8 of the one string instead of one per field (device bench: some twenty short
/// fields per check). Encoded as a tuple: the string, then the lengths.
struct Joined<'a, const N: usize> {
    text: Cow<'a, str>,
    lens: [usize; N],
}

impl<const N: usize> Joined<'_, N> {
    fn of(parts: [&str; N]) -> Self {
        let mut lens = [0; N];
        for (len, part) in lens.iter_mut().zip(parts) {
            *len = part.len();
        }
        Self {
            text: Cow::Owned(parts.concat()),
            lens,
        }
    }

    /// The fields again; lengths that do not cut the string into exactly `N` texts are a
    /// decode error.
    fn split(&self) -> postcard::Result<[&str; N]> {
        let mut out = [""; N];
        let mut at = 0usize;
        for (field, len) in out.iter_mut().zip(self.lens) {
            let end = at
                .checked_add(len)
                .ok_or(postcard::Error::DeserializeBadEncoding)?;
            *field = self
                .text
                .get(at..end)
                .ok_or(postcard::Error::DeserializeBadEncoding)?;
            at = end;
        }
        if at == self.text.len() {
            Ok(out)
        } else {
            Err(postcard::Error::DeserializeBadEncoding)
        }
    }
}

impl<const N: usize> Serialize for Joined<'_, N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(N + 1)?;
        t.serialize_element(self.text.as_ref())?;
        for len in &self.lens {
            t.serialize_element(len)?;
        }
        t.end()
    }
}

impl<'de: 'a, 'a, const N: usize> Deserialize<'de> for Joined<'a, N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields<const N: usize>;
        impl<'de, const N: usize> Visitor<'de> for Fields<N> {
            type Value = (&'de str, [usize; N]);
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "a string and {N} lengths")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let text: &'de str = seq
                    .next_element()?
                    .ok_or_else(|| A::Error::invalid_length(0, &self))?;
                let mut lens = [0; N];
                for (i, len) in lens.iter_mut().enumerate() {
                    *len = seq
                        .next_element()?
                        .ok_or_else(|| A::Error::invalid_length(i + 1, &self))?;
                }
                Ok((text, lens))
            }
        }
        let (text, lens) = d.deserialize_tuple(N + 1, Fields::<N>)?;
        Ok(Self {
            text: Cow::Borrowed(text),
            lens,
        })
    }
}

/// A date as its day number from 1 January of year 1 (`num_days_from_ce`): a varint.
#[derive(Clone, Copy)]
struct Day(NaiveDate);

impl Serialize for Day {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i32(self.0.num_days_from_ce())
    }
}

impl<'de> Deserialize<'de> for Day {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = i32::deserialize(d)?;
        NaiveDate::from_num_days_from_ce_opt(n)
            .map(Day)
            .ok_or_else(|| D::Error::custom("dia fora do calendário"))
    }
}

/// A document number or plate that no longer parses: the bundle is not this build's.
fn bad(_: crate::domain::DomainError) -> postcard::Error {
    postcard::Error::DeserializeBadEncoding
}

fn day(d: NaiveDate) -> Day {
    Day(d)
}

/// A text field as encoded: borrowed from the domain value.
fn s(v: &str) -> &str {
    v
}

/// Field order matters: `decode_driver` reads the permits without the person.
#[derive(Serialize, Deserialize)]
struct DriverBin<'a> {
    permits: Vec<PermitBin<'a>>,
    #[serde(borrow)]
    person: PersonBin<'a>,
}

#[derive(Serialize, Deserialize)]
struct BundleBin<'a> {
    permit: PermitBin<'a>,
    vehicle: VehicleBin<'a>,
    #[serde(borrow)]
    people: Vec<Member<'a>>,
    #[serde(borrow)]
    stand: Option<StandBin<'a>>,
    penalties: Vec<PenaltyBin<'a>>,
    fines: Vec<FineBin<'a>>,
}

/// A person on the permit: role and CPF readable without decoding the person, who is kept as
/// an encoded `PersonBin` (a check decodes only the holder and the driver). The CPF is compared,
/// never used as text: read as bytes, it is not checked for UTF-8 (postcard writes a `str` and
/// a byte string alike).
#[derive(Serialize, Deserialize)]
struct Member<'a> {
    role: Role,
    #[serde(borrow)]
    cpf: Bytes<'a>,
    #[serde(borrow)]
    person: Bytes<'a>,
}

/// A byte string (postcard: length, then the bytes), borrowed from the row when decoding.
struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Bytes<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a [u8]>::deserialize(d).map(Bytes)
    }
}

#[derive(Serialize, Deserialize)]
struct PersonBin<'a> {
    /// id, name, CPF, CNH number, category.
    #[serde(borrow)]
    texts: Joined<'a, 5>,
    birth_date: Day,
    first_licence_date: Day,
    expiry: Day,
    kind: LicenceKind,
    #[serde(borrow)]
    observations: Texts<'a>,
}

impl<'a> PersonBin<'a> {
    fn of(p: &'a Person) -> Self {
        let Person {
            id,
            name,
            cpf,
            birth_date,
            licence,
        } = p;
        let DriverLicence {
            number,
            category,
            first_licence_date,
            expiry,
            kind,
            observations,
        } = licence;
        Self {
            texts: Joined::of([id, name, cpf.as_str(), number.as_str(), category]),
            birth_date: day(*birth_date),
            first_licence_date: day(*first_licence_date),
            expiry: day(*expiry),
            kind: *kind,
            observations: Texts::Encode(observations),
        }
    }

    fn owned(self) -> postcard::Result<Person> {
        let [id, name, cpf, number, category] = self.texts.split()?;
        Ok(Person {
            id: text(id),
            name: text(name),
            cpf: Cpf::try_from(text(cpf)).map_err(bad)?,
            birth_date: self.birth_date.0,
            licence: DriverLicence {
                number: CnhNumber::try_from(text(number)).map_err(bad)?,
                category: text(category),
                first_licence_date: self.first_licence_date.0,
                expiry: self.expiry.0,
                kind: self.kind,
                observations: self.observations.into_vec(),
            },
        })
    }
}

#[derive(Serialize, Deserialize)]
struct VehicleBin<'a> {
    /// id, `Plate::raw` (parsed again on the way in, as the domain's serde does), RENAVAM,
    /// make and model, colour, licensing municipality and UF, owner's CPF.
    #[serde(borrow)]
    texts: Joined<'a, 8>,
    year_of_manufacture: i32,
    doors: u8,
    capacity_incl_driver: u8,
    category: VehicleCategory,
    taximeter: Option<TaximeterBin<'a>>,
}

#[derive(Serialize, Deserialize)]
struct TaximeterBin<'a> {
    #[serde(borrow)]
    certificate_number: Option<&'a str>,
    verified_on: Day,
    valid_until_year: Option<i32>,
    seal_intact: bool,
}

impl<'a> VehicleBin<'a> {
    fn of(v: &'a Vehicle) -> Self {
        let Vehicle {
            id,
            plate,
            renavam,
            make_model,
            colour,
            year_of_manufacture,
            doors,
            capacity_incl_driver,
            licensing_municipality,
            licensing_uf,
            category,
            owner_cpf,
            taximeter,
        } = v;
        Self {
            texts: Joined::of([
                id,
                plate.raw(),
                renavam.as_str(),
                make_model,
                colour,
                licensing_municipality,
                licensing_uf,
                owner_cpf.as_str(),
            ]),
            year_of_manufacture: *year_of_manufacture,
            doors: *doors,
            capacity_incl_driver: *capacity_incl_driver,
            category: *category,
            taximeter: taximeter.as_ref().map(|t| {
                let Taximeter {
                    certificate_number,
                    verified_on,
                    valid_until_year,
                    seal_intact,
                } = t;
                TaximeterBin {
                    certificate_number: certificate_number.as_deref().map(s),
                    verified_on: day(*verified_on),
                    valid_until_year: *valid_until_year,
                    seal_intact: *seal_intact,
                }
            }),
        }
    }

    fn owned(self) -> postcard::Result<Vehicle> {
        let [
            id,
            plate,
            renavam,
            make_model,
            colour,
            municipality,
            uf,
            owner_cpf,
        ] = self.texts.split()?;
        Ok(Vehicle {
            id: text(id),
            plate: Plate::parse_into(plate, spare(), spare()).map_err(bad)?,
            renavam: Renavam::try_from(text(renavam)).map_err(bad)?,
            make_model: text(make_model),
            colour: text(colour),
            year_of_manufacture: self.year_of_manufacture,
            doors: self.doors,
            capacity_incl_driver: self.capacity_incl_driver,
            licensing_municipality: text(municipality),
            licensing_uf: text(uf),
            category: self.category,
            owner_cpf: Cpf::try_from(text(owner_cpf)).map_err(bad)?,
            taximeter: self.taximeter.map(|t| Taximeter {
                certificate_number: t.certificate_number.map(text),
                verified_on: t.verified_on.0,
                valid_until_year: t.valid_until_year,
                seal_intact: t.seal_intact,
            }),
        })
    }
}

#[derive(Serialize, Deserialize)]
struct StandBin<'a> {
    /// id, name, address.
    #[serde(borrow)]
    texts: Joined<'a, 3>,
    schedule: StandSchedule,
    service: ServiceKind,
    vacancies: u32,
    #[serde(borrow)]
    coordinator_id: Option<&'a str>,
    latitude: Option<f64>,
    longitude: Option<f64>,
}

impl<'a> StandBin<'a> {
    fn of(st: &'a Stand) -> Self {
        let Stand {
            id,
            name,
            address,
            schedule,
            service,
            vacancies,
            coordinator_id,
            latitude,
            longitude,
        } = st;
        Self {
            texts: Joined::of([id, name, address]),
            schedule: *schedule,
            service: *service,
            vacancies: *vacancies,
            coordinator_id: coordinator_id.as_deref(),
            latitude: *latitude,
            longitude: *longitude,
        }
    }

    fn owned(self) -> postcard::Result<Stand> {
        let [id, name, address] = self.texts.split()?;
        Ok(Stand {
            id: text(id),
            name: text(name),
            address: text(address),
            schedule: self.schedule,
            service: self.service,
            vacancies: self.vacancies,
            coordinator_id: self.coordinator_id.map(text),
            latitude: self.latitude,
            longitude: self.longitude,
        })
    }
}

#[derive(Serialize, Deserialize)]
struct PermitBin<'a> {
    /// number, holder's id, vehicle id, stand id.
    #[serde(borrow)]
    texts: Joined<'a, 4>,
    auxiliaries: Vec<AuxBin<'a>>,
    service: ServiceKind,
    issued_on: Day,
    renewal_year: i32,
    edital_date: Option<Day>,
    state: StateBin,
    illness_authorisation: Option<IllnessBin<'a>>,
}

#[derive(Serialize, Deserialize)]
struct AuxBin<'a> {
    person_id: &'a str,
    licence_number: &'a str,
    registered_on: Day,
}

#[derive(Serialize, Deserialize)]
struct IllnessBin<'a> {
    person_id: &'a str,
    medical_proof_on_file: bool,
    valid_from: Day,
    valid_until: Day,
}

/// `PermitState`, externally tagged.
#[derive(Clone, Copy, Serialize, Deserialize)]
enum StateBin {
    Active,
    Suspended { from: Day, until: Day },
    Revoked { on: Day },
    InSuccession { since: Day },
}

impl<'a> PermitBin<'a> {
    fn of(p: &'a Permit) -> Self {
        let Permit {
            number,
            holder_id,
            auxiliaries,
            vehicle_id,
            stand_id,
            service,
            issued_on,
            renewal_year,
            edital_date,
            state,
            illness_authorisation,
        } = p;
        Self {
            texts: Joined::of([number, holder_id, vehicle_id, stand_id]),
            auxiliaries: auxiliaries
                .iter()
                .map(|a| {
                    let AuxiliaryDriver {
                        person_id,
                        licence_number,
                        registered_on,
                    } = a;
                    AuxBin {
                        person_id: s(person_id),
                        licence_number: s(licence_number),
                        registered_on: day(*registered_on),
                    }
                })
                .collect(),
            service: *service,
            issued_on: day(*issued_on),
            renewal_year: *renewal_year,
            edital_date: edital_date.map(day),
            state: match *state {
                PermitState::Active => StateBin::Active,
                PermitState::Suspended { from, until } => StateBin::Suspended {
                    from: day(from),
                    until: day(until),
                },
                PermitState::Revoked { on } => StateBin::Revoked { on: day(on) },
                PermitState::InSuccession { since } => StateBin::InSuccession { since: day(since) },
            },
            illness_authorisation: illness_authorisation.as_ref().map(|i| {
                let IllnessAuthorisation {
                    person_id,
                    medical_proof_on_file,
                    valid_from,
                    valid_until,
                } = i;
                IllnessBin {
                    person_id: s(person_id),
                    medical_proof_on_file: *medical_proof_on_file,
                    valid_from: day(*valid_from),
                    valid_until: day(*valid_until),
                }
            }),
        }
    }

    fn owned(self) -> postcard::Result<Permit> {
        let [number, holder_id, vehicle_id, stand_id] = self.texts.split()?;
        Ok(Permit {
            number: text(number),
            holder_id: text(holder_id),
            auxiliaries: self
                .auxiliaries
                .into_iter()
                .map(|a| AuxiliaryDriver {
                    person_id: text(a.person_id),
                    licence_number: text(a.licence_number),
                    registered_on: a.registered_on.0,
                })
                .collect(),
            vehicle_id: text(vehicle_id),
            stand_id: text(stand_id),
            service: self.service,
            issued_on: self.issued_on.0,
            renewal_year: self.renewal_year,
            edital_date: self.edital_date.map(|d| d.0),
            state: match self.state {
                StateBin::Active => PermitState::Active,
                StateBin::Suspended { from, until } => PermitState::Suspended {
                    from: from.0,
                    until: until.0,
                },
                StateBin::Revoked { on } => PermitState::Revoked { on: on.0 },
                StateBin::InSuccession { since } => PermitState::InSuccession { since: since.0 },
            },
            illness_authorisation: self.illness_authorisation.map(|i| IllnessAuthorisation {
                person_id: text(i.person_id),
                medical_proof_on_file: i.medical_proof_on_file,
                valid_from: i.valid_from.0,
                valid_until: i.valid_until.0,
            }),
        })
    }
}

#[derive(Serialize, Deserialize)]
struct PenaltyBin<'a> {
    id: &'a str,
    permit_number: &'a str,
    #[serde(borrow)]
    person_id: Option<&'a str>,
    kind: KindBin,
    decided_on: Day,
    starts_on: Day,
    #[serde(borrow)]
    record_id: Option<&'a str>,
}

/// `PenaltyKind`, externally tagged.
#[derive(Clone, Copy, Serialize, Deserialize)]
enum KindBin {
    WrittenWarning,
    Fine,
    Suspension { days: u16 },
    Revocation,
}

impl<'a> PenaltyBin<'a> {
    fn of(p: &'a Penalty) -> Self {
        let Penalty {
            id,
            permit_number,
            person_id,
            kind,
            decided_on,
            starts_on,
            record_id,
        } = p;
        Self {
            id: s(id),
            permit_number: s(permit_number),
            person_id: person_id.as_deref().map(s),
            kind: match *kind {
                PenaltyKind::WrittenWarning => KindBin::WrittenWarning,
                PenaltyKind::Fine => KindBin::Fine,
                PenaltyKind::Suspension { days } => KindBin::Suspension { days },
                PenaltyKind::Revocation => KindBin::Revocation,
            },
            decided_on: day(*decided_on),
            starts_on: day(*starts_on),
            record_id: record_id.as_deref().map(s),
        }
    }

    fn owned(self) -> Penalty {
        Penalty {
            id: text(self.id),
            permit_number: text(self.permit_number),
            person_id: self.person_id.map(text),
            kind: match self.kind {
                KindBin::WrittenWarning => PenaltyKind::WrittenWarning,
                KindBin::Fine => PenaltyKind::Fine,
                KindBin::Suspension { days } => PenaltyKind::Suspension { days },
                KindBin::Revocation => PenaltyKind::Revocation,
            },
            decided_on: self.decided_on.0,
            starts_on: self.starts_on.0,
            record_id: self.record_id.map(text),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct FineBin<'a> {
    id: &'a str,
    permit_number: &'a str,
    /// `Decimal::serialize`: exact, 16 bytes.
    amount: [u8; 16],
    issued_on: Day,
    paid_on: Option<Day>,
}

impl<'a> FineBin<'a> {
    fn of(f: &'a Fine) -> Self {
        let Fine {
            id,
            permit_number,
            amount,
            issued_on,
            paid_on,
        } = f;
        Self {
            id: s(id),
            permit_number: s(permit_number),
            amount: amount.serialize(),
            issued_on: day(*issued_on),
            paid_on: paid_on.map(day),
        }
    }

    fn owned(self) -> Fine {
        Fine {
            id: text(self.id),
            permit_number: text(self.permit_number),
            amount: Decimal::deserialize(self.amount),
            issued_on: self.issued_on.0,
            paid_on: self.paid_on.map(|d| d.0),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Every date the calendar holds survives, the edges included; a day number outside it is
    /// an error, not a panic.
    #[test]
    fn days_round_trip() {
        for d in [
            NaiveDate::MIN,
            NaiveDate::from_ymd_opt(1, 1, 1).unwrap(),
            NaiveDate::from_ymd_opt(2024, 2, 29).unwrap(),
            NaiveDate::MAX,
        ] {
            let bytes = postcard::to_allocvec(&Day(d)).unwrap();
            assert_eq!(postcard::from_bytes::<Day>(&bytes).unwrap().0, d);
        }
        let bytes = postcard::to_allocvec(&i32::MAX).unwrap();
        assert!(postcard::from_bytes::<Day>(&bytes).is_err());
    }
}
