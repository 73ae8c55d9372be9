//! A small, valid registry of Americana used by tests, benches and the example fixture
//! (`schemas/examples/registry.json` is this registry serialised). Reference date: 30 Nov 2026.
//!
//! | permit | holder | auxiliaries | plate | stand | state |
//! |---|---|---|---|---|---|
//! | 0001 | P01 João | P02 Maria, P03 Carlos | BRA2E19 (Mercosul) | S01 Terminal Urbano (06–24) | active, renewed 2026 |
//! | 0002 | P04 Ana | P05 Pedro | ABC-1234 (old) | S02 Praça Basílio Rangel (06–20) | active |
//! | 0003 | P06 Lucas | — | DEF4G56 | S03 Hospital Municipal | suspended 15 days from 2026-11-20 |
//! | 0004 | P07 Beatriz | P08 Rafael (CNH expired) | GHI7J89 | S02 | not renewed (2025), unpaid fine |
//! | 0005 | P09 Sérgio | — | JKL1M23 | S04 rádio-táxi | active, radio-taxi |
//!
//! P10 Helena coordinates S01 and holds no permit.

use chrono::{DateTime, NaiveDate, Utc};
use rust_decimal::Decimal;

use crate::domain::*;

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap_or_default()
}

fn cpf(s: &str) -> Cpf {
    Cpf::parse(s).unwrap_or_else(|_| unreachable!("testkit CPF {s}"))
}

fn person(id: &str, name: &str, cpf_s: &str, cnh: &str, birth: NaiveDate) -> Person {
    Person {
        id: id.into(),
        name: name.into(),
        cpf: cpf(cpf_s),
        birth_date: birth,
        licence: DriverLicence {
            number: CnhNumber::parse(cnh).unwrap_or_else(|_| unreachable!("testkit CNH {cnh}")),
            category: "B".into(),
            first_licence_date: d(2010, 3, 15),
            expiry: d(2030, 5, 10),
            kind: LicenceKind::D,
            observations: vec!["EAR".into()],
        },
    }
}

fn vehicle(id: &str, plate: &str, renavam: &str, owner: &str) -> Vehicle {
    Vehicle {
        id: id.into(),
        plate: Plate::parse(plate).unwrap_or_else(|_| unreachable!("testkit plate {plate}")),
        renavam: Renavam::parse(renavam).unwrap_or_else(|_| unreachable!("testkit renavam")),
        make_model: "Chevrolet Spin 1.8".into(),
        colour: "Prata".into(),
        year_of_manufacture: 2022,
        doors: 4,
        capacity_incl_driver: 7,
        licensing_municipality: "AMERICANA".into(),
        licensing_uf: "SP".into(),
        category: VehicleCategory::Aluguel,
        owner_cpf: cpf(owner),
        taximeter: Some(Taximeter {
            certificate_number: Some(format!("IPEM-{id}")),
            verified_on: d(2026, 3, 2),
            valid_until_year: Some(2027),
            seal_intact: true,
        }),
    }
}

fn stand(id: &str, name: &str, schedule: StandSchedule, service: ServiceKind) -> Stand {
    Stand {
        id: id.into(),
        name: name.into(),
        address: format!("{name}, Americana-SP"),
        schedule,
        service,
        vacancies: 10,
        coordinator_id: None,
        latitude: None,
        longitude: None,
    }
}

fn permit(number: &str, holder: &str, vehicle: &str, stand: &str) -> Permit {
    Permit {
        number: number.into(),
        holder_id: holder.into(),
        auxiliaries: Vec::new(),
        vehicle_id: vehicle.into(),
        stand_id: stand.into(),
        service: ServiceKind::Common,
        issued_on: d(2015, 6, 1),
        renewal_year: 2026,
        edital_date: Some(d(2015, 3, 2)),
        state: PermitState::Active,
        illness_authorisation: None,
    }
}

fn aux(person: &str, licence: &str) -> AuxiliaryDriver {
    AuxiliaryDriver {
        person_id: person.into(),
        licence_number: licence.into(),
        registered_on: d(2020, 2, 10),
    }
}

/// CPF of a person who is in no registry (valid check digits).
pub const STRANGER_CPF: &str = "11144477735";

/// The sample registry, version 7, generated 2026-11-29 12:00 UTC.
pub fn sample_registry() -> Registry {
    let b = |y| d(y, 1, 20);
    let mut people = vec![
        person(
            "P01",
            "João da Silva",
            "45074952883",
            "41491906696",
            b(1975),
        ),
        person(
            "P02",
            "Maria Oliveira",
            "36084852955",
            "69128337113",
            b(1985),
        ),
        person("P03", "Carlos Souza", "51131154444", "83793216178", b(1990)),
        person("P04", "Ana Pereira", "86840102130", "18257841559", b(1970)),
        person("P05", "Pedro Santos", "99940561580", "71049964159", b(1988)),
        person(
            "P06",
            "Lucas Almeida",
            "59765613148",
            "02235222258",
            b(1979),
        ),
        person(
            "P07",
            "Beatriz Costa",
            "92624395717",
            "27766144600",
            b(1982),
        ),
        person("P08", "Rafael Lima", "78000751925", "79160746320", b(1992)),
        person("P09", "Sérgio Rocha", "65684083285", "56620450682", b(1968)),
        person(
            "P10",
            "Helena Martins",
            "87257178127",
            "34524549559",
            b(1972),
        ),
    ];
    people[1].licence.category = "AB".into();
    people[7].licence.expiry = d(2026, 10, 1);

    let vehicles = vec![
        vehicle("V01", "BRA2E19", "09653984190", "45074952883"),
        vehicle("V02", "ABC-1234", "79590578299", "86840102130"),
        vehicle("V03", "DEF4G56", "77438968008", "59765613148"),
        vehicle("V04", "GHI7J89", "42568590657", "92624395717"),
        vehicle("V05", "JKL1M23", "41576783150", "65684083285"),
    ];

    let mut stands = vec![
        stand(
            "S01",
            "Terminal Urbano",
            StandSchedule::Extended,
            ServiceKind::Common,
        ),
        stand(
            "S02",
            "Praça Basílio Rangel",
            StandSchedule::Day,
            ServiceKind::Common,
        ),
        stand(
            "S03",
            "Hospital Municipal Dr. Waldemar Tebaldi",
            StandSchedule::Day,
            ServiceKind::Common,
        ),
        stand(
            "S04",
            "Rádio-táxi Centro",
            StandSchedule::Day,
            ServiceKind::RadioTaxi,
        ),
    ];
    stands[0].coordinator_id = Some("P10".into());

    let mut p1 = permit("0001", "P01", "V01", "S01");
    p1.auxiliaries = vec![aux("P02", "0001-A1"), aux("P03", "0001-A2")];
    let mut p2 = permit("0002", "P04", "V02", "S02");
    p2.auxiliaries = vec![aux("P05", "0002-A1")];
    let mut p3 = permit("0003", "P06", "V03", "S03");
    p3.state = PermitState::Suspended {
        from: d(2026, 11, 20),
        until: d(2026, 12, 4),
    };
    let mut p4 = permit("0004", "P07", "V04", "S02");
    p4.renewal_year = 2025;
    p4.auxiliaries = vec![aux("P08", "0004-A1")];
    let mut p5 = permit("0005", "P09", "V05", "S04");
    p5.service = ServiceKind::RadioTaxi;

    Registry {
        version: 7,
        generated_at: "2026-11-29T12:00:00Z".parse::<DateTime<Utc>>().ok(),
        people,
        vehicles,
        stands,
        permits: vec![p1, p2, p3, p4, p5],
        penalties: vec![Penalty {
            id: "PEN-1".into(),
            permit_number: "0003".into(),
            person_id: Some("P06".into()),
            kind: PenaltyKind::Suspension { days: 15 },
            decided_on: d(2026, 11, 16),
            starts_on: d(2026, 11, 20),
            record_id: None,
        }],
        fines: vec![Fine {
            id: "FINE-1".into(),
            permit_number: "0004".into(),
            amount: Decimal::new(76445, 2),
            issued_on: d(2025, 9, 1),
            paid_on: None,
        }],
        transfers: Vec::new(),
        parameters: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_registry_is_valid() {
        let r = sample_registry();
        r.validate().unwrap();
        for p in &r.people {
            assert!(p.cpf.check_digits_ok(), "{}", p.id);
            assert!(p.licence.number.check_digits_ok(), "{}", p.id);
        }
        for v in &r.vehicles {
            assert!(v.renavam.check_digits_ok(), "{}", v.id);
        }
        let idx = r.index();
        let plate = Plate::parse("abc1c34").unwrap();
        assert_eq!(
            idx.permit_by_plate(&plate).map(|p| p.number.as_str()),
            Some("0002")
        );
        assert_eq!(r.penalties[0].suspension_last_day(), Some(d(2026, 12, 4)));
    }
}
