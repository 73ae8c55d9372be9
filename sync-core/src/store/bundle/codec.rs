//! The binary layout of a check bundle: postcard over mirrors of the domain types.
//!
//! Why mirrors rather than the domain types' own serde: postcard cannot read what needs
//! `deserialize_any` (the internally tagged `PermitState`/`PenaltyKind`, `Decimal`), and dates
//! as day numbers cost nothing to read where `NaiveDate`'s text form is parsed (a quarter of the
//! decode time, measured). Each mirror destructures its domain type exhaustively and rebuilds it
//! with a struct literal, so a field added to the domain fails to compile here until it is
//! carried. Document numbers and plates travel as their text and go back in through their
//! `parse` (what their own serde does, minus a copy); `Stand` keeps its own serde (no dates, no
//! tagged enums). `Cow` fields: encoding borrows (a snapshot's 40,000 permits are not copied),
//! decoding owns.

use std::borrow::Cow;

use chrono::{Datelike, NaiveDate};
use rust_decimal::Decimal;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Bundle, Role};
use crate::domain::{
    AuxiliaryDriver, CnhNumber, Cpf, DriverLicence, Fine, IllnessAuthorisation, LicenceKind,
    Penalty, PenaltyKind, Permit, PermitState, Person, Plate, Renavam, ServiceKind, Stand,
    Taximeter, Vehicle, VehicleCategory,
};

/// Bump when a mirror or the bundle's shape changes (the fingerprint in `super` also covers
/// the domain types' schemas).
pub(super) const LAYOUT: &str = "postcard/4: bundle = permit vehicle people(role,cpf,person bytes) \
     stand penalties fines; driver = permits person; dates as CE days";

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
                    cpf,
                    person: Bytes(bytes),
                })
                .collect(),
            stand: self.stand.map(Cow::Borrowed),
            penalties: self.penalties.iter().map(|p| PenaltyBin::of(p)).collect(),
            fines: self.fines.iter().map(|f| FineBin::of(f)).collect(),
        })
    }
}

/// Decodes a bundle with the people `want(role, cpf)` accepts (each person is its own byte
/// string: the others are skipped, not parsed); trailing bytes are an error.
pub(super) fn decode(bytes: &[u8], want: impl Fn(Role, &str) -> bool) -> postcard::Result<Bundle> {
    let (bin, rest): (BundleBin<'_>, _) = postcard::take_from_bytes(bytes)?;
    if !rest.is_empty() {
        return Err(postcard::Error::DeserializeBadEncoding);
    }
    let mut people = Vec::with_capacity(bin.people.len());
    for m in &bin.people {
        if want(m.role, m.cpf) {
            let (p, rest): (PersonBin<'_>, _) = postcard::take_from_bytes(m.person.0)?;
            if !rest.is_empty() {
                return Err(postcard::Error::DeserializeBadEncoding);
            }
            people.push((m.role, p.owned()?));
        }
    }
    Ok(Bundle {
        permit: bin.permit.owned(),
        vehicle: bin.vehicle.owned()?,
        people,
        stand: bin.stand.map(Cow::into_owned),
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
    Ok((person, permits.into_iter().map(PermitBin::owned).collect()))
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

fn s(v: &str) -> Cow<'_, str> {
    Cow::Borrowed(v)
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
    stand: Option<Cow<'a, Stand>>,
    penalties: Vec<PenaltyBin<'a>>,
    fines: Vec<FineBin<'a>>,
}

/// A person on the permit: role and CPF readable without decoding the person, who is kept as
/// an encoded `PersonBin` (a check decodes only the holder and the driver).
#[derive(Serialize, Deserialize)]
struct Member<'a> {
    role: Role,
    cpf: &'a str,
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
    id: Cow<'a, str>,
    name: Cow<'a, str>,
    cpf: &'a str,
    birth_date: Day,
    number: &'a str,
    category: Cow<'a, str>,
    first_licence_date: Day,
    expiry: Day,
    kind: LicenceKind,
    observations: Cow<'a, [String]>,
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
            id: s(id),
            name: s(name),
            cpf: cpf.as_str(),
            birth_date: day(*birth_date),
            number: number.as_str(),
            category: s(category),
            first_licence_date: day(*first_licence_date),
            expiry: day(*expiry),
            kind: *kind,
            observations: Cow::Borrowed(observations),
        }
    }

    fn owned(self) -> postcard::Result<Person> {
        Ok(Person {
            id: self.id.into_owned(),
            name: self.name.into_owned(),
            cpf: Cpf::parse(self.cpf).map_err(bad)?,
            birth_date: self.birth_date.0,
            licence: DriverLicence {
                number: CnhNumber::parse(self.number).map_err(bad)?,
                category: self.category.into_owned(),
                first_licence_date: self.first_licence_date.0,
                expiry: self.expiry.0,
                kind: self.kind,
                observations: self.observations.into_owned(),
            },
        })
    }
}

#[derive(Serialize, Deserialize)]
struct VehicleBin<'a> {
    id: Cow<'a, str>,
    /// `Plate::raw`, parsed again on the way in (as the domain's serde does).
    plate: &'a str,
    renavam: &'a str,
    make_model: Cow<'a, str>,
    colour: Cow<'a, str>,
    year_of_manufacture: i32,
    doors: u8,
    capacity_incl_driver: u8,
    licensing_municipality: Cow<'a, str>,
    licensing_uf: Cow<'a, str>,
    category: VehicleCategory,
    owner_cpf: &'a str,
    taximeter: Option<TaximeterBin<'a>>,
}

#[derive(Serialize, Deserialize)]
struct TaximeterBin<'a> {
    certificate_number: Option<Cow<'a, str>>,
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
            id: s(id),
            plate: plate.raw(),
            renavam: renavam.as_str(),
            make_model: s(make_model),
            colour: s(colour),
            year_of_manufacture: *year_of_manufacture,
            doors: *doors,
            capacity_incl_driver: *capacity_incl_driver,
            licensing_municipality: s(licensing_municipality),
            licensing_uf: s(licensing_uf),
            category: *category,
            owner_cpf: owner_cpf.as_str(),
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
        Ok(Vehicle {
            id: self.id.into_owned(),
            plate: Plate::parse(self.plate).map_err(bad)?,
            renavam: Renavam::parse(self.renavam).map_err(bad)?,
            make_model: self.make_model.into_owned(),
            colour: self.colour.into_owned(),
            year_of_manufacture: self.year_of_manufacture,
            doors: self.doors,
            capacity_incl_driver: self.capacity_incl_driver,
            licensing_municipality: self.licensing_municipality.into_owned(),
            licensing_uf: self.licensing_uf.into_owned(),
            category: self.category,
            owner_cpf: Cpf::parse(self.owner_cpf).map_err(bad)?,
            taximeter: self.taximeter.map(|t| Taximeter {
                certificate_number: t.certificate_number.map(Cow::into_owned),
                verified_on: t.verified_on.0,
                valid_until_year: t.valid_until_year,
                seal_intact: t.seal_intact,
            }),
        })
    }
}

#[derive(Serialize, Deserialize)]
struct PermitBin<'a> {
    number: Cow<'a, str>,
    holder_id: Cow<'a, str>,
    auxiliaries: Vec<AuxBin<'a>>,
    vehicle_id: Cow<'a, str>,
    stand_id: Cow<'a, str>,
    service: ServiceKind,
    issued_on: Day,
    renewal_year: i32,
    edital_date: Option<Day>,
    state: StateBin,
    illness_authorisation: Option<IllnessBin<'a>>,
}

#[derive(Serialize, Deserialize)]
struct AuxBin<'a> {
    person_id: Cow<'a, str>,
    licence_number: Cow<'a, str>,
    registered_on: Day,
}

#[derive(Serialize, Deserialize)]
struct IllnessBin<'a> {
    person_id: Cow<'a, str>,
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
            number: s(number),
            holder_id: s(holder_id),
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
            vehicle_id: s(vehicle_id),
            stand_id: s(stand_id),
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

    fn owned(self) -> Permit {
        Permit {
            number: self.number.into_owned(),
            holder_id: self.holder_id.into_owned(),
            auxiliaries: self
                .auxiliaries
                .into_iter()
                .map(|a| AuxiliaryDriver {
                    person_id: a.person_id.into_owned(),
                    licence_number: a.licence_number.into_owned(),
                    registered_on: a.registered_on.0,
                })
                .collect(),
            vehicle_id: self.vehicle_id.into_owned(),
            stand_id: self.stand_id.into_owned(),
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
                person_id: i.person_id.into_owned(),
                medical_proof_on_file: i.medical_proof_on_file,
                valid_from: i.valid_from.0,
                valid_until: i.valid_until.0,
            }),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct PenaltyBin<'a> {
    id: Cow<'a, str>,
    permit_number: Cow<'a, str>,
    person_id: Option<Cow<'a, str>>,
    kind: KindBin,
    decided_on: Day,
    starts_on: Day,
    record_id: Option<Cow<'a, str>>,
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
            id: self.id.into_owned(),
            permit_number: self.permit_number.into_owned(),
            person_id: self.person_id.map(Cow::into_owned),
            kind: match self.kind {
                KindBin::WrittenWarning => PenaltyKind::WrittenWarning,
                KindBin::Fine => PenaltyKind::Fine,
                KindBin::Suspension { days } => PenaltyKind::Suspension { days },
                KindBin::Revocation => PenaltyKind::Revocation,
            },
            decided_on: self.decided_on.0,
            starts_on: self.starts_on.0,
            record_id: self.record_id.map(Cow::into_owned),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct FineBin<'a> {
    id: Cow<'a, str>,
    permit_number: Cow<'a, str>,
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
            id: self.id.into_owned(),
            permit_number: self.permit_number.into_owned(),
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
