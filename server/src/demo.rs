//! The demo: a registry of Americana generated deterministically, users of every role with
//! their devices, seeded once into an empty data directory by `taxi-fiscal demo`.
//!
//! The registry ([`registry`]) has the stands the law and the news name (docs/law/reference.md, Americana): Terminal
//! Urbano, Terminal Rodoviário and Praça Comendador Muller / R. Fernando de Camargo (06–24),
//! Praça Basílio Rangel, Av. Dr. Antônio Lobo, Hospital Municipal Dr. Waldemar Tebaldi and
//! Rua 12 de Novembro (06–20), and one radio-taxi central. It has 121 permits of which 118 are not
//! revoked, and every stand has exactly as many places as permits in force (the revoked
//! permits' places were closed): exactly the art. 14 cap at 1 taxi per 2,000 inhabitants of the
//! Censo 2022 (237,240 ÷ 2,000 = 118, `office::taxi_cap`), so the demo's rules configuration
//! uses the original 1:2,000 ratio and any new permit or vacancy is refused with R23. CPFs, CNH numbers
//! and RENAVAMs carry valid check digits (computed here); plates mix Mercosul and old formats.
//! Every verdict can be seen: see [`CASES`].
//!
//! Generation depends only on the reference date ("today" at first start), through a fixed-seed
//! generator, so two data directories seeded on the same day hold the same registry.
//!
//! Seeding is two steps: [`seed`] writes the registry and the four accounts (what the API tests
//! start from); `taxi-fiscal demo` then calls [`seed_records`] ([`records`]), which writes
//! sample field records on device stores and syncs them in — a duplicate pair and a record
//! with a conflict — so the office's pages have something to show.

use std::collections::BTreeSet;

use chrono::{Datelike, Days, Months, NaiveDate};
use rust_decimal::Decimal;
use sync_core::domain::{
    AuxiliaryDriver, CnhNumber, Cpf, DriverLicence, Fine, LicenceKind, Penalty, PenaltyKind,
    Permit, PermitState, Person, Plate, Registry, Renavam, ServiceKind, Stand, StandSchedule,
    Taximeter, Vehicle, VehicleCategory,
};
use sync_core::rules::RulesConfig;

use crate::auth::Role;
use crate::error::AppError;
use crate::registry;
use crate::server::AppState;
use crate::store::{Actor, NewDevice, UserRow};

pub mod records;
pub use records::{SAMPLE_DEVICES, SAMPLE_USERS, SampleRecords, seed_records};

/// The permits that show each verdict, for the README and the start-up banner.
pub const CASES: &[(&str, &str)] = &[
    ("0001", "regular; o titular coordena o Terminal Urbano"),
    (
        "0003",
        "2 motoristas auxiliares: um terceiro é recusado (art. 8º)",
    ),
    (
        "0005",
        "expedido há 1 ano: transferência voluntária recusada (art. 10, I)",
    ),
    ("0007", "suspenso por 15 dias (penalidade em vigor)"),
    ("0012", "CNH do titular vencida (art. 2º, II)"),
    (
        "0019",
        "não renovado até 31 de janeiro, com multa não paga: renovação recusada (arts. 7º e 17, § 2º, III)",
    ),
    ("0022", "CNH do motorista auxiliar vencida"),
    ("0027", "motorista auxiliar sem a observação EAR (aviso)"),
    ("0040", "cassado"),
    ("0052", "em sucessão (titular falecido, art. 1º, § 4º)"),
    ("0102", "rádio-táxi"),
];

/// A demo account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoUser {
    pub username: &'static str,
    pub password: &'static str,
    pub display_name: &'static str,
    pub role: Role,
    pub stand_id: Option<&'static str>,
    pub device_id: &'static str,
    pub device_label: &'static str,
}

/// One account per role, each with its registered device.
pub const USERS: &[DemoUser] = &[
    DemoUser {
        username: "admin",
        password: "admin-demo",
        display_name: "Administrador",
        role: Role::Admin,
        stand_id: None,
        device_id: "desktop-admin",
        device_label: "Computador da administração",
    },
    DemoUser {
        username: "escritorio",
        password: "escritorio-demo",
        display_name: "Unidade de Transportes",
        role: Role::Office,
        stand_id: None,
        device_id: "desktop-escritorio",
        device_label: "Computador da Unidade de Transportes",
    },
    DemoUser {
        username: "fiscal",
        password: "fiscal-demo",
        display_name: "Fiscal da Guarda Municipal",
        role: Role::Officer,
        stand_id: None,
        device_id: "tablet-fiscal-01",
        device_label: "Tablet do fiscal 01",
    },
    DemoUser {
        username: "coordenador",
        password: "coordenador-demo",
        display_name: "Coordenador do Terminal Urbano",
        role: Role::Coordinator,
        stand_id: Some("S01"),
        device_id: "celular-coordenador-s01",
        device_label: "Celular do coordenador do Terminal Urbano",
    },
];

/// The demo's rules: the defaults with the original art. 14 ratio of 1:2,000 (cap 118).
pub fn rules_config() -> RulesConfig {
    RulesConfig {
        inhabitants_per_taxi: 2_000,
        ..RulesConfig::default()
    }
}

/// SplitMix64: small, fixed, good enough to spread demo data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn digits<const N: usize>(&mut self) -> [u8; N] {
        std::array::from_fn(|_| self.below(10) as u8)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

fn years_before(d: NaiveDate, years: u32) -> NaiveDate {
    d.checked_sub_months(Months::new(12 * years)).unwrap_or(d)
}

fn days_after(d: NaiveDate, n: u64) -> NaiveDate {
    d.checked_add_days(Days::new(n)).unwrap_or(d)
}

fn days_before(d: NaiveDate, n: u64) -> NaiveDate {
    d.checked_sub_days(Days::new(n)).unwrap_or(d)
}

const LETTERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const FIRST: &[&str] = &[
    "Ana",
    "João",
    "Maria",
    "Pedro",
    "Carla",
    "Luiz",
    "Beatriz",
    "Rafael",
    "Helena",
    "Sérgio",
    "Fernanda",
    "Marcos",
    "Juliana",
    "Antônio",
    "Patrícia",
    "Roberto",
];
const LAST: &[&str] = &[
    "Silva",
    "Souza",
    "Costa",
    "Fernandes",
    "Lima",
    "Pereira",
    "Oliveira",
    "Santos",
    "Almeida",
    "Rocha",
    "Martins",
    "Barbosa",
    "Ribeiro",
    "Carvalho",
];
const MODELS: &[&str] = &[
    "Chevrolet Spin 1.8",
    "Fiat Cronos 1.3",
    "Toyota Corolla 2.0",
    "Volkswagen Virtus 1.6",
    "Nissan Versa 1.6",
];

/// Deterministic generator of the demo registry's people, vehicles and documents.
struct Gen {
    rng: Rng,
    today: NaiveDate,
    cpfs: BTreeSet<String>,
    cnhs: BTreeSet<String>,
    plates: BTreeSet<String>,
    people: Vec<Person>,
}

impl Gen {
    // Check digits come from sync-core (`from_base`): one implementation of D01–D03.
    fn cpf(&mut self) -> Cpf {
        loop {
            if let Some(c) = Cpf::from_base(self.rng.digits())
                && self.cpfs.insert(c.as_str().to_owned())
            {
                return c;
            }
        }
    }

    fn cnh(&mut self) -> CnhNumber {
        loop {
            if let Some(n) = CnhNumber::from_base(self.rng.digits())
                && self.cnhs.insert(n.as_str().to_owned())
            {
                return n;
            }
        }
    }

    fn renavam(&mut self) -> Renavam {
        loop {
            if let Some(r) = Renavam::from_base(self.rng.digits()) {
                return r;
            }
        }
    }

    fn plate(&mut self, mercosul: bool) -> Plate {
        loop {
            let l: String = (0..3)
                .map(|_| char::from(LETTERS[self.rng.below(LETTERS.len() as u64) as usize]))
                .collect();
            let [d0, d1, d2, d3] = self.rng.digits::<4>();
            let raw = if mercosul {
                let fifth = char::from(LETTERS[self.rng.below(LETTERS.len() as u64) as usize]);
                format!("{l}{d0}{fifth}{d2}{d3}")
            } else {
                format!("{l}-{d0}{d1}{d2}{d3}")
            };
            if let Ok(p) = Plate::parse(&raw)
                && self.plates.insert(p.canonical().to_owned())
            {
                return p;
            }
        }
    }

    fn person(&mut self, id: String) -> Person {
        let first = self.rng.pick(FIRST);
        let last1 = self.rng.pick(LAST);
        let last2 = self.rng.pick(LAST);
        let age = 28 + self.rng.below(35) as u32;
        let birth = days_before(years_before(self.today, age), self.rng.below(360));
        let first_licence = days_after(
            birth
                .checked_add_months(Months::new(12 * (18 + self.rng.below(6) as u32)))
                .unwrap_or(birth),
            self.rng.below(300),
        );
        let category = match self.rng.below(10) {
            0..=5 => "B",
            6..=8 => "AB",
            _ => "D",
        };
        let p = Person {
            id,
            name: format!("{first} {last1} {last2}"),
            cpf: self.cpf(),
            birth_date: birth,
            licence: DriverLicence {
                number: self.cnh(),
                category: category.into(),
                first_licence_date: first_licence,
                expiry: days_after(self.today, 200 + self.rng.below(1_600)),
                kind: LicenceKind::D,
                observations: vec!["EAR".into()],
            },
        };
        self.people.push(p.clone());
        p
    }

    fn vehicle(&mut self, id: String, owner: &Cpf) -> Vehicle {
        let year = self.today.year() - 1 - self.rng.below(8) as i32;
        let verified = days_before(self.today, 20 + self.rng.below(300));
        let mercosul = year >= 2019 || self.rng.below(4) == 0;
        Vehicle {
            id,
            plate: self.plate(mercosul),
            renavam: self.renavam(),
            make_model: self.rng.pick(MODELS).into(),
            colour: if self.rng.below(5) == 0 {
                "Prata"
            } else {
                "Branco"
            }
            .into(),
            year_of_manufacture: year,
            doors: 4,
            capacity_incl_driver: 5,
            licensing_municipality: "AMERICANA".into(),
            licensing_uf: "SP".into(),
            category: VehicleCategory::Aluguel,
            owner_cpf: owner.clone(),
            taximeter: Some(Taximeter {
                certificate_number: Some(format!("IPEM-SP-{}", 100_000 + self.rng.below(900_000))),
                verified_on: verified,
                valid_until_year: Some(verified.year() + 1),
                seal_intact: true,
            }),
        }
    }
}

/// `(id, name, schedule, service, permits)` of the demo stands.
const STANDS: &[(&str, &str, StandSchedule, ServiceKind, usize)] = &[
    (
        "S01",
        "Terminal Urbano",
        StandSchedule::Extended,
        ServiceKind::Common,
        22,
    ),
    (
        "S02",
        "Terminal Rodoviário",
        StandSchedule::Extended,
        ServiceKind::Common,
        18,
    ),
    (
        "S03",
        "Praça Comendador Muller / R. Fernando de Camargo",
        StandSchedule::Extended,
        ServiceKind::Common,
        14,
    ),
    (
        "S04",
        "Praça Basílio Rangel",
        StandSchedule::Day,
        ServiceKind::Common,
        16,
    ),
    (
        "S05",
        "Av. Dr. Antônio Lobo",
        StandSchedule::Day,
        ServiceKind::Common,
        10,
    ),
    (
        "S06",
        "Hospital Municipal Dr. Waldemar Tebaldi",
        StandSchedule::Day,
        ServiceKind::Common,
        12,
    ),
    (
        "S07",
        "Rua 12 de Novembro",
        StandSchedule::Day,
        ServiceKind::Common,
        9,
    ),
    (
        "S08",
        "Rádio-táxi Americana (central)",
        StandSchedule::Day,
        ServiceKind::RadioTaxi,
        20,
    ),
];

/// Permits revoked in the demo (they do not count for the art. 14 cap).
const REVOKED: &[usize] = &[40, 80, 121];

/// The demo registry as of `today` (version 0: the seeding commit makes it version 1).
pub fn registry(today: NaiveDate) -> Registry {
    let mut g = Gen {
        rng: Rng(0x5441_5849_2D46_4953),
        today,
        cpfs: BTreeSet::new(),
        cnhs: BTreeSet::new(),
        plates: BTreeSet::new(),
        people: Vec::new(),
    };
    let mut stands = Vec::new();
    let mut stand_of = Vec::new();
    for (id, name, schedule, service, count) in STANDS {
        stands.push(Stand {
            id: (*id).into(),
            name: (*name).into(),
            address: format!("{name}, Americana-SP"),
            schedule: *schedule,
            service: *service,
            vacancies: *count as u32,
            coordinator_id: None,
            latitude: None,
            longitude: None,
        });
        stand_of.extend(std::iter::repeat_n((*id, *service), *count));
    }
    let total = stand_of.len();
    let mut vehicles = Vec::new();
    let mut permits = Vec::new();
    let mut penalties = Vec::new();
    let mut fines = Vec::new();
    let mut next_aux = total + 1;
    let year = today.year();
    for i in 1..=total {
        let number = format!("{i:04}");
        let holder = g.person(format!("P{i:04}"));
        let vehicle = g.vehicle(format!("V{i:04}"), &holder.cpf);
        let (stand_id, service) = stand_of[i - 1];
        let issued_on = days_before(years_before(today, 2 + (i as u32 % 18)), g.rng.below(200));
        let aux_count = match i % 3 {
            0 => 2,
            1 => 1,
            _ => 0,
        };
        let mut auxiliaries = Vec::new();
        for k in 1..=aux_count {
            let p = g.person(format!("P{next_aux:04}"));
            next_aux += 1;
            auxiliaries.push(AuxiliaryDriver {
                person_id: p.id,
                licence_number: format!("{number}-A{k}"),
                registered_on: days_after(issued_on, 30 + g.rng.below(700))
                    .min(days_before(today, 1)),
            });
        }
        permits.push(Permit {
            number,
            holder_id: holder.id,
            auxiliaries,
            vehicle_id: vehicle.id.clone(),
            stand_id: stand_id.into(),
            service,
            issued_on,
            renewal_year: year,
            edital_date: Some(days_before(issued_on, 60)),
            state: PermitState::Active,
            illness_authorisation: None,
        });
        vehicles.push(vehicle);
    }

    // The cases of `CASES`.
    let person_idx = |g: &Gen, id: &str| g.people.iter().position(|p| p.id == id);
    let permit = |permits: &mut Vec<Permit>, n: usize| -> Option<usize> {
        let number = format!("{n:04}");
        permits.iter().position(|p| p.number == number)
    };
    if let Some(s) = stands.iter_mut().find(|s| s.id == "S01") {
        s.coordinator_id = Some("P0001".into());
    }
    if let Some(p) = permit(&mut permits, 5) {
        permits[p].issued_on = years_before(today, 1);
        permits[p].edital_date = Some(days_before(permits[p].issued_on, 60));
    }
    if let Some(p) = permit(&mut permits, 7) {
        let from = days_before(today, 5);
        permits[p].state = PermitState::Suspended {
            from,
            until: days_after(from, 14),
        };
        penalties.push(Penalty {
            id: format!("PEN-{}-0001", days_before(from, 5).year()),
            permit_number: permits[p].number.clone(),
            person_id: Some(permits[p].holder_id.clone()),
            kind: PenaltyKind::Suspension { days: 15 },
            decided_on: days_before(from, 5),
            starts_on: from,
            record_id: None,
        });
    }
    if let Some(i) = person_idx(&g, "P0012") {
        g.people[i].licence.expiry = days_before(today, 40);
    }
    if let Some(p) = permit(&mut permits, 19) {
        permits[p].renewal_year = year - 1;
        let issued = days_before(today, 200);
        fines.push(Fine {
            id: format!("MUL-{}-0001", issued.year()),
            permit_number: permits[p].number.clone(),
            amount: Decimal::new(79702, 2),
            issued_on: issued,
            paid_on: None,
        });
    }
    if let Some(p) = permit(&mut permits, 22)
        && let Some(aux) = permits[p].auxiliaries.first()
        && let Some(i) = person_idx(&g, &aux.person_id)
    {
        g.people[i].licence.expiry = days_before(today, 15);
    }
    if let Some(p) = permit(&mut permits, 27)
        && let Some(aux) = permits[p].auxiliaries.first()
        && let Some(i) = person_idx(&g, &aux.person_id)
    {
        g.people[i].licence.observations.clear();
    }
    if let Some(p) = permit(&mut permits, 44) {
        let issued = days_before(today, 300);
        fines.push(Fine {
            id: format!("MUL-{}-0002", issued.year()),
            permit_number: permits[p].number.clone(),
            amount: Decimal::new(24000, 2),
            issued_on: issued,
            paid_on: Some(days_after(issued, 20)),
        });
    }
    if let Some(p) = permit(&mut permits, 52) {
        permits[p].state = PermitState::InSuccession {
            since: days_before(today, 90),
        };
    }
    if let Some(p) = permit(&mut permits, 60) {
        penalties.push(Penalty {
            id: format!("PEN-{}-0002", days_before(today, 120).year()),
            permit_number: permits[p].number.clone(),
            person_id: Some(permits[p].holder_id.clone()),
            kind: PenaltyKind::WrittenWarning,
            decided_on: days_before(today, 120),
            starts_on: days_before(today, 120),
            record_id: None,
        });
    }
    for (k, n) in REVOKED.iter().enumerate() {
        if let Some(p) = permit(&mut permits, *n) {
            let on = days_before(today, 100 + 200 * k as u64);
            permits[p].state = PermitState::Revoked { on };
            penalties.push(Penalty {
                id: format!("PEN-{}-{:04}", on.year(), 10 + k),
                permit_number: permits[p].number.clone(),
                person_id: Some(permits[p].holder_id.clone()),
                kind: PenaltyKind::Revocation,
                decided_on: on,
                starts_on: on,
                record_id: None,
            });
        }
    }
    // The places of the revoked permits were closed (art. 7 declares them vacant; here the
    // office then lowered the stands' vacancies), so the registry is exactly at the art. 14 cap
    // counted as the office counts it: places open or filled over all stands.
    for p in permits
        .iter()
        .filter(|p| matches!(p.state, PermitState::Revoked { .. }))
    {
        if let Some(s) = stands.iter_mut().find(|s| s.id == p.stand_id) {
            s.vacancies = s.vacancies.saturating_sub(1);
        }
    }
    sync_core::feed::sorted(Registry {
        version: 0,
        generated_at: None,
        people: g.people,
        vehicles,
        stands,
        permits,
        penalties,
        fines,
        transfers: Vec::new(),
        // The demo's law parameters travel with its registry, to devices too.
        parameters: Some(sync_core::rules::LawParameters {
            rules: rules_config(),
            ..Default::default()
        }),
    })
}

/// What seeding did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seeded {
    pub registry_version: u64,
    pub users: usize,
}

/// Seeds an empty data directory: the demo registry (unless one is there) and the demo users
/// with their devices. Does nothing when any user exists. Returns `None` when nothing was done.
pub async fn seed(state: &AppState) -> Result<Option<Seeded>, AppError> {
    let store = state.store();
    if store.count_users().await? > 0 {
        return Ok(None);
    }
    let now = state.clock().now();
    let demo = registry(state.clock().today());
    let update = registry::commit(
        store.as_ref(),
        Actor::cli(now),
        "demo.seed",
        "registry",
        |current| {
            // A registry that holds only law parameters (imported from `rules-config.json` at
            // start) is still empty: seed it, keeping those parameters.
            let empty = current.people.is_empty()
                && current.vehicles.is_empty()
                && current.stands.is_empty()
                && current.permits.is_empty();
            if !empty {
                return Ok(current.clone());
            }
            let mut next = demo.clone();
            if current.parameters.is_some() {
                next.parameters = current.parameters.clone();
            }
            Ok(next)
        },
    )
    .await?;
    for u in USERS {
        let user = UserRow {
            id: format!("u-{}", u.username),
            username: u.username.into(),
            display_name: u.display_name.into(),
            role: u.role,
            stand_id: u.stand_id.map(str::to_owned),
            password_hash: state.passwords().hash(u.password)?,
            active: true,
            created_at: now,
        };
        let user = store.create_user(user, Actor::cli(now)).await?;
        store
            .register_device(
                NewDevice {
                    id: u.device_id.into(),
                    user_id: user.id,
                    label: u.device_label.into(),
                },
                Actor::cli(now),
            )
            .await?;
    }
    Ok(Some(Seeded {
        registry_version: update.version,
        users: USERS.len(),
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use sync_core::rules::office;

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, 30).unwrap()
    }

    #[test]
    fn demo_registry_is_valid_deterministic_and_at_the_cap() {
        let r = registry(today());
        r.validate().unwrap();
        assert_eq!(r, registry(today()));
        assert_eq!(r.permits.len(), 121);
        let live = r
            .permits
            .iter()
            .filter(|p| !matches!(p.state, PermitState::Revoked { .. }))
            .count();
        assert_eq!(live as u32, office::taxi_cap(&rules_config()));
        assert_eq!(live, 118);
        for p in &r.people {
            assert!(p.cpf.check_digits_ok(), "{}", p.id);
            assert!(p.licence.number.check_digits_ok(), "{}", p.id);
        }
        for v in &r.vehicles {
            assert!(v.renavam.check_digits_ok(), "{}", v.id);
        }
        use sync_core::domain::PlateFormat;
        let old = r
            .vehicles
            .iter()
            .filter(|v| v.plate.format() == PlateFormat::Old)
            .count();
        assert!(
            old > 0 && old < r.vehicles.len(),
            "both plate formats: {old} old"
        );
        assert!(r.permits.iter().all(|p| p.auxiliaries.len() <= 2));
        assert_eq!(r.stands.len(), 8);
        // Every place is filled and the registry is at the cap: one more place is refused.
        assert_eq!(office::fleet_size(&r), 118);
        let mut more = r.clone();
        more.stands[0].vacancies += 1;
        assert!(office::check_cap(&r, &more, &rules_config()).is_err());
    }
}
