//! A big registry for the benchmark: the demo's, extended with generated permits — one holder
//! each, an auxiliary driver on two thirds of them and a second on every fifth, on 120 more
//! stands; valid CPF, CNH and RENAVAM check digits (sync-core's `from_base`), plates
//! `AAA0A00`… derived from an index. The same shape as the device-store benchmark's registry.
//! The demo's permits stay (the CSV import keeps the penalty and fine history, which must keep
//! its permits).

use chrono::NaiveDate;
use sync_core::domain::{
    AuxiliaryDriver, CnhNumber, Cpf, DriverLicence, LicenceKind, Permit, PermitState, Person,
    Plate, Registry, Renavam, ServiceKind, Stand, StandSchedule, Taximeter, Vehicle,
    VehicleCategory,
};

const STANDS: usize = 120;

fn digits<const N: usize>(mut n: u64) -> [u8; N] {
    let mut d = [0u8; N];
    for slot in d.iter_mut().rev() {
        *slot = (n % 10) as u8;
        n /= 10;
    }
    d
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// `LLL9L99` from the index.
fn plate_of(i: usize) -> Plate {
    let mut n = i;
    let d67 = n % 100;
    n /= 100;
    let l5 = n % 26;
    n /= 26;
    let d4 = n % 10;
    n /= 10;
    let letter = |k: usize| char::from(b'A' + (k % 26) as u8);
    Plate::parse(&format!(
        "{}{}{}{d4}{}{d67:02}",
        letter(n / 676),
        letter(n / 26),
        letter(n),
        letter(l5)
    ))
    .unwrap()
}

fn cpf_of(k: usize) -> Cpf {
    Cpf::from_base(digits(100_000_000 + k as u64 * 7)).unwrap()
}

fn person(k: usize) -> Person {
    Person {
        id: format!("P{k:06}"),
        name: format!("Motorista {k}"),
        cpf: cpf_of(k),
        birth_date: date(
            1960 + (k % 40) as i32,
            1 + (k % 12) as u32,
            1 + (k % 28) as u32,
        ),
        licence: DriverLicence {
            number: CnhNumber::from_base(digits(300_000_000 + k as u64 * 3)).unwrap(),
            category: if k.is_multiple_of(4) { "AB" } else { "B" }.into(),
            first_licence_date: date(2000 + (k % 20) as i32, 3, 1),
            expiry: date(2028 + (k % 5) as i32, 6, 30),
            kind: LicenceKind::D,
            observations: vec!["EAR".into()],
        },
    }
}

/// Adds generated permits (with their holders, auxiliaries and vehicles, on 120 new stands)
/// to `base` until it has `permits` permits. Generated ids (`P000123`, `V000123`, `00123`,
/// `S000`) do not collide with the demo's; documents and plates that happen to equal one of
/// `base`'s are skipped.
pub fn extend(base: &mut Registry, permits: usize) {
    use std::collections::BTreeSet;
    let mut cpfs: BTreeSet<String> = base
        .people
        .iter()
        .map(|p| p.cpf.as_str().to_owned())
        .collect();
    let mut cnhs: BTreeSet<String> = base
        .people
        .iter()
        .map(|p| p.licence.number.as_str().to_owned())
        .collect();
    let mut plates: BTreeSet<String> = base
        .vehicles
        .iter()
        .map(|v| v.plate.canonical().to_owned())
        .collect();
    let first_stand = base.stands.len();
    for s in 0..STANDS {
        base.stands.push(Stand {
            id: format!("S{s:03}"),
            name: format!("Ponto {s}"),
            address: format!("Rua {s}, Americana-SP"),
            schedule: if s.is_multiple_of(6) {
                StandSchedule::Extended
            } else {
                StandSchedule::Day
            },
            service: ServiceKind::Common,
            vacancies: u32::try_from(permits / STANDS + 1).unwrap(),
            coordinator_id: None,
            latitude: None,
            longitude: None,
        });
    }
    let mut k = 0usize;
    let mut next_person = |cpfs: &mut BTreeSet<String>, cnhs: &mut BTreeSet<String>| loop {
        let p = person(k);
        k += 1;
        if cpfs.insert(p.cpf.as_str().to_owned())
            && cnhs.insert(p.licence.number.as_str().to_owned())
        {
            return p;
        }
    };
    let mut v = 0usize;
    let mut i = 0usize;
    while base.permits.len() < permits {
        let holder = next_person(&mut cpfs, &mut cnhs);
        let number = format!("{:05}", i + 1);
        let mut auxiliaries = Vec::new();
        for extra in [!i.is_multiple_of(3), i.is_multiple_of(5)] {
            if extra {
                let a = next_person(&mut cpfs, &mut cnhs);
                auxiliaries.push(AuxiliaryDriver {
                    person_id: a.id.clone(),
                    licence_number: format!("{number}-A{}", auxiliaries.len() + 1),
                    registered_on: date(2020, 2, 10),
                });
                base.people.push(a);
            }
        }
        let plate = loop {
            let p = plate_of(v);
            v += 1;
            if plates.insert(p.canonical().to_owned()) {
                break p;
            }
        };
        let vehicle_id = format!("V{i:06}");
        base.vehicles.push(Vehicle {
            id: vehicle_id.clone(),
            plate,
            renavam: Renavam::from_base(digits(5_000_000_000 + i as u64 * 13)).unwrap(),
            make_model: "Chevrolet Spin 1.8".into(),
            colour: "Prata".into(),
            year_of_manufacture: 2018 + (i % 8) as i32,
            doors: 4,
            capacity_incl_driver: 7,
            licensing_municipality: "AMERICANA".into(),
            licensing_uf: "SP".into(),
            category: VehicleCategory::Aluguel,
            owner_cpf: holder.cpf.clone(),
            taximeter: Some(Taximeter {
                certificate_number: Some(format!("IPEM-{i}")),
                verified_on: date(2026, 3, 2),
                valid_until_year: Some(2027),
                seal_intact: true,
            }),
        });
        base.permits.push(Permit {
            number,
            holder_id: holder.id.clone(),
            auxiliaries,
            vehicle_id,
            stand_id: base.stands[first_stand + i % STANDS].id.clone(),
            service: ServiceKind::Common,
            issued_on: date(2015, 6, 1),
            renewal_year: 2026,
            edital_date: Some(date(2015, 3, 2)),
            state: PermitState::Active,
            illness_authorisation: None,
        });
        base.people.push(holder);
        i += 1;
    }
}
