//! Sample field records for `taxi-fiscal demo`, so that the office's pages have something to
//! show: a duplicate pair and a record with a conflict, written on device stores and synced
//! into the server through the record sync, never inserted behind the protocol's back.
//!
//! # Flow of [`seed_records`]
//!
//! 1. Nothing is done when the server already holds a record (a restarted demo, or one where
//!    devices synced real records): seeding is idempotent.
//! 2. The sample accounts ([`SAMPLE_USERS`], [`SAMPLE_DEVICES`]) are registered if absent: a
//!    second Guarda Municipal officer (`fiscal02`) and second devices. The demo's own devices
//!    (`tablet-fiscal-01`, …) are left untouched: the server remembers per device what it holds
//!    of each record, so a store that synced under `tablet-fiscal-01` here and was then thrown
//!    away would leave the real tablet of that id without those records.
//! 3. Each sample device gets a device store in a scratch directory (removed at the end), its
//!    identity as a login would set it, the registry snapshot the feed serves, and a block of
//!    auto numbers leased from the server as `POST /v1/devices/{id}/number-blocks` does, and
//!    its device key registered as a login registers it (the seals of its autos verify).
//! 4. Records are written with `sync_core::field::FieldRecords` (the app's API: field check,
//!    sealed verdict, number from the block, photos content-addressed) and synced with the sans-IO
//!    `DeviceSync` against [`crate::store::Store::sync_records`] — the very call the
//!    `POST /v1/sync` handler makes after authenticating, so every change is vetted, projected
//!    and audited. Photos go to the server's photo store after their hash is checked, as
//!    `PUT /v1/photos/{sha256}` does.
//!
//! # What is seeded (all on the day before the first start, local time)
//!
//! - **Duplicate pair**: at 15:10 and 15:14, two officers (`fiscal` on `celular-fiscal-01`,
//!   `fiscal02` on `tablet-fiscal-02`) each write an auto for the same taxi found idle at the
//!   Terminal Rodoviário (S02) although its stand is another one (R24: art. 16, I; art. 31, VI),
//!   positions about 30 m apart, each with a photo.
//! - **Conflict**: `fiscal02` starts an auto on the tablet at 10:05 (discourtesy to a
//!   passenger, R28: art. 19; art. 31, VII) and syncs; the phone receives it and rewrites the
//!   facts at 10:20; offline, the tablet rewrites them too at 10:25 and issues at 10:26. After
//!   both sync, the server's record is issued (sealed) with two concurrent values of `facts`,
//!   which the office must resolve by choosing one.
//!
//! Content is deterministic (taxis, times, texts, positions and photos depend only on the
//! registry and the reference day); record and event ids are UUID v7 made by the device layer,
//! as on a real device.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Days, NaiveDate, NaiveTime, TimeZone, Utc};
use sync_core::domain::{DriverId, Plate, Registry};
use sync_core::field::{FieldRecords, NewInfraction, RecordOutcome};
use sync_core::records::{LegalBasis, Position, Signature};
use sync_core::rules::{CheckInput, Observation, Overall, RuleId, RulesConfig, VehicleQuery};
use sync_core::store::{DeviceIdentity, Store as DeviceStore, sha256_hex};
use sync_core::sync::{DeviceSync, ServerSync, device_uuid};

use super::DemoUser;
use crate::auth::Role;
use crate::error::AppError;
use crate::server::AppState;
use crate::store::records::{Caller, RecordFilter, SyncJob, record_role};
use crate::store::{Actor, NewDevice, PhotoMeta, UserRow};

/// The second officer of the sample records (not one of the four demo accounts: the API tests
/// count those).
pub const SAMPLE_USERS: &[DemoUser] = &[DemoUser {
    username: "fiscal02",
    password: "fiscal02-demo",
    display_name: "Fiscal da Guarda Municipal 02",
    role: Role::Officer,
    stand_id: None,
    device_id: "tablet-fiscal-02",
    device_label: "Tablet do fiscal 02",
}];

/// Further devices of the sample records: `(username, device id, label)`.
pub const SAMPLE_DEVICES: &[(&str, &str, &str)] = &[
    ("fiscal", "celular-fiscal-01", "Celular do fiscal 01"),
    ("fiscal02", "celular-fiscal-02", "Celular do fiscal 02"),
];

/// Two photos of the scene (small PNGs drawn for the demo), one per auto of the duplicate pair.
const PHOTOS: [&[u8]; 2] = [
    include_bytes!("foto-1.png").as_slice(),
    include_bytes!("foto-2.png").as_slice(),
];

/// Where the sample taxis are (approximate, for the office's map and duplicate check).
const RODOVIARIA: Position = Position {
    lat: -22.747_40,
    lon: -47.328_30,
    accuracy_m: 8.0,
};
const RODOVIARIA_2: Position = Position {
    lat: -22.747_60,
    lon: -47.328_50,
    accuracy_m: 12.0,
};
const ANTONIO_LOBO: Position = Position {
    lat: -22.739_20,
    lon: -47.333_80,
    accuracy_m: 6.0,
};

const FACTS_DUP_A: &str = "Táxi estacionado e aguardando passageiros no Terminal Rodoviário, \
    fora do seu ponto, em horário de permanência obrigatória. Condutor identificado pela CNH.";
const FACTS_DUP_B: &str = "Veículo de aluguel parado na fila do ponto do Terminal Rodoviário, \
    que não é o seu ponto, com o condutor aguardando corrida.";
const FACTS_DRAFT: &str = "Condutor tratou passageira com descortesia.";
/// The two concurrent versions of the conflict record's facts.
pub const FACTS_TABLET: &str = "Condutor tratou com descortesia passageira idosa, recusou-se a \
    colocar a bagagem no porta-malas e proferiu palavras ofensivas diante de testemunhas.";
pub const FACTS_PHONE: &str = "Condutor discutiu em voz alta com passageira idosa e recusou-se a \
    ajudar com a bagagem; a passageira desistiu da corrida.";

/// What `seed_records` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleRecords {
    /// The two autos of the same occurrence (first: `fiscal`, second: `fiscal02`).
    pub duplicate_pair: [String; 2],
    /// The issued auto with two concurrent values of `facts`.
    pub conflict: String,
    /// Photos stored on the server.
    pub photos: usize,
}

/// Seeds the sample records into a demo whose accounts exist ([`super::seed`] first). Does
/// nothing (`None`) when the server already holds any record.
pub async fn seed_records(state: &AppState) -> Result<Option<SampleRecords>, AppError> {
    let store = state.store();
    let any = store
        .list_records(RecordFilter {
            limit: 1,
            ..RecordFilter::default()
        })
        .await?;
    if any.total > 0 {
        return Ok(None);
    }
    let now = state.clock().now();
    register_sample_accounts(state, now).await?;
    let fiscal = user(state, "fiscal").await?;
    let fiscal02 = user(state, "fiscal02").await?;
    let registry = store.registry().await?;
    let day = state
        .clock()
        .today()
        .checked_sub_days(Days::new(1))
        .unwrap_or_else(|| state.clock().today());
    let at = |h: u32, m: u32| local(day, h, m);
    let (dup_taxi, conflict_taxi) = sample_taxis(&registry, &registry.law().rules, at(15, 10))?;

    let scratch = Scratch::new(state.config().data_dir.as_path())?;
    let open = |user, id| SampleDevice::open(state, &scratch, user, id, &registry, now);
    let mut phone01 = open(&fiscal, "celular-fiscal-01").await?;
    let mut tablet02 = open(&fiscal02, "tablet-fiscal-02").await?;
    let mut phone02 = open(&fiscal02, "celular-fiscal-02").await?;

    // The duplicate pair: the same taxi, idle at S02, four minutes and ~30 m apart.
    let seen_at_s02 = |at, position, facts: &str, photo: &[u8]| NewInfraction {
        observation: Observation {
            at_stand: Some(String::from("S02")),
            idle: true,
            ..Observation::default()
        },
        photos: vec![photo.to_vec()],
        issue: Some(Signature::Missing {
            reason: String::from("condutor recusou-se a assinar"),
        }),
        ..infraction(&dup_taxi, at, position, facts)
    };
    let a = phone01.infraction(seen_at_s02(at(15, 10), RODOVIARIA, FACTS_DUP_A, PHOTOS[0]))?;
    let b = tablet02.infraction(seen_at_s02(
        at(15, 14),
        RODOVIARIA_2,
        FACTS_DUP_B,
        PHOTOS[1],
    ))?;

    // The conflict: a draft synced to both devices of fiscal02, whose facts each rewrites.
    let draft = NewInfraction {
        extra_legal_basis: vec![LegalBasis::of(RuleId::R28)],
        ..infraction(&conflict_taxi, at(10, 5), ANTONIO_LOBO, FACTS_DRAFT)
    };
    let c = tablet02.infraction(draft)?;
    tablet02.sync().await?;
    phone02.sync().await?;
    phone02
        .field()?
        .set_facts(&c.id, at(10, 20), FACTS_PHONE)
        .map_err(internal)?;
    phone02.sync().await?;
    {
        let mut field = tablet02.field()?;
        field
            .set_facts(&c.id, at(10, 25), FACTS_TABLET)
            .map_err(internal)?;
        field
            .issue(
                &c.id,
                at(10, 26),
                Signature::Missing {
                    reason: String::from("recusou-se a assinar"),
                },
            )
            .map_err(internal)?;
    }
    // Everyone sends what they have and receives the rest; photos go after their records.
    let mut photos = 0;
    for d in [&mut phone01, &mut tablet02, &mut phone02] {
        d.sync().await?;
        photos += d.upload_photos().await?;
    }
    // The stores close before their directory goes.
    drop((phone01, tablet02, phone02));
    drop(scratch);
    Ok(Some(SampleRecords {
        duplicate_pair: [a.id, b.id],
        conflict: c.id,
        photos,
    }))
}

/// A local wall-clock time in Americana on `day`, as UTC.
fn local(day: NaiveDate, h: u32, m: u32) -> DateTime<Utc> {
    let t = NaiveTime::from_hms_opt(h, m, 0).unwrap_or(NaiveTime::MIN);
    sync_core::time::LOCAL_TZ
        .from_local_datetime(&day.and_time(t))
        .earliest()
        .map_or_else(|| day.and_time(t).and_utc(), |d| d.with_timezone(&Utc))
}

/// A taxi the samples are about, with its holder at the wheel.
#[derive(Debug, Clone)]
struct Taxi {
    plate: Plate,
    driver: DriverId,
}

/// Two taxis in order (so the only irregularity is the one the officer sees): one of S04 for
/// the duplicate pair (found at S02, R24), one of S05 for the conflict.
fn sample_taxis(
    registry: &Registry,
    rules: &RulesConfig,
    at: DateTime<Utc>,
) -> Result<(Taxi, Taxi), AppError> {
    let index = registry.index();
    let pick = |stand: &str| -> Option<Taxi> {
        registry
            .permits
            .iter()
            .filter(|p| p.stand_id == stand)
            .find_map(|p| {
                let holder = index.person(&p.holder_id)?;
                let vehicle = index.vehicle(&p.vehicle_id)?;
                let driver = DriverId::parse(holder.cpf.as_str()).ok()?;
                let verdict = sync_core::rules::check_registry(
                    &index,
                    &CheckInput {
                        vehicle: VehicleQuery::Plate(vehicle.plate.clone()),
                        driver: driver.clone(),
                        at,
                        observation: Observation::default(),
                        registry_refreshed_at: None,
                    },
                    rules,
                );
                (verdict.overall == Overall::Regular).then(|| Taxi {
                    plate: vehicle.plate.clone(),
                    driver,
                })
            })
    };
    match (pick("S04"), pick("S05")) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(AppError::internal(
            &"registros de exemplo: o cadastro não tem táxi regular nos pontos S04 e S05",
        )),
    }
}

/// A draft auto about `taxi` with its holder at the wheel (nothing observed, no photo).
fn infraction(taxi: &Taxi, at: DateTime<Utc>, position: Position, facts: &str) -> NewInfraction {
    NewInfraction {
        vehicle: VehicleQuery::Plate(taxi.plate.clone()),
        driver: taxi.driver.clone(),
        driver_name: None,
        at,
        monotonic: u64::try_from(at.timestamp_millis()).unwrap_or_default(),
        observation: Observation::default(),
        position: Some(position),
        facts: Some(facts.to_owned()),
        extra_legal_basis: Vec::new(),
        witnesses: Vec::new(),
        photos: Vec::new(),
        confirm_vehicle: true,
        issue: None,
    }
}

fn internal(e: impl std::fmt::Display) -> AppError {
    AppError::internal(&format!("registros de exemplo: {e}"))
}

async fn user(state: &AppState, username: &str) -> Result<UserRow, AppError> {
    state
        .store()
        .user_by_username(username.to_owned())
        .await?
        .ok_or_else(|| internal(format!("usuário de demonstração {username} ausente")))
}

/// Registers the sample officer and devices that are not there yet (a seed interrupted before
/// its records were written left some of them).
async fn register_sample_accounts(state: &AppState, now: DateTime<Utc>) -> Result<(), AppError> {
    let store = state.store();
    for u in SAMPLE_USERS {
        if store
            .user_by_username(u.username.to_owned())
            .await?
            .is_none()
        {
            store
                .create_user(
                    UserRow {
                        id: format!("u-{}", u.username),
                        username: u.username.into(),
                        display_name: u.display_name.into(),
                        role: u.role,
                        stand_id: u.stand_id.map(str::to_owned),
                        password_hash: state.passwords().hash(u.password)?,
                        active: true,
                        created_at: now,
                    },
                    Actor::cli(now),
                )
                .await?;
        }
    }
    let devices = SAMPLE_USERS
        .iter()
        .map(|u| (u.username, u.device_id, u.device_label))
        .chain(SAMPLE_DEVICES.iter().copied());
    for (username, id, label) in devices {
        if store.device(id.to_owned()).await?.is_none() {
            let owner = user(state, username).await?;
            store
                .register_device(
                    NewDevice {
                        id: id.into(),
                        user_id: owner.id,
                        label: label.into(),
                    },
                    Actor::cli(now),
                )
                .await?;
        }
    }
    Ok(())
}

/// A scratch directory for the sample devices' stores, removed when seeding ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(data_dir: &Path) -> Result<Self, AppError> {
        let dir = data_dir.join(format!(".demo-devices-{}", std::process::id()));
        // A directory left by a crashed seed of this pid is stale: start over.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(internal)?;
        Ok(Self(dir))
    }

    fn path(&self, device_id: &str) -> PathBuf {
        self.0.join(format!("{device_id}.db"))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One sample phone or tablet: its store and the caller the server authenticates it as.
struct SampleDevice {
    store: DeviceStore,
    caller: Caller,
    sync: DeviceSync,
    state: AppState,
    /// The instant every sync and upload happens at (the server's clock at seeding).
    now: DateTime<Utc>,
}

impl SampleDevice {
    /// A store as a login, a registry pull and a number top-up leave it.
    async fn open(
        state: &AppState,
        scratch: &Scratch,
        user: &UserRow,
        device_id: &str,
        registry: &Registry,
        now: DateTime<Utc>,
    ) -> Result<Self, AppError> {
        let mut store = DeviceStore::open(scratch.path(device_id)).map_err(internal)?;
        let role = record_role(user.role, None)
            .ok_or_else(|| internal(format!("{} não escreve registros", user.username)))?;
        let uuid = device_uuid(device_id);
        store
            .set_device_identity(
                &DeviceIdentity {
                    device_id: uuid,
                    user_id: user.id.clone(),
                    role,
                    stand_id: user.stand_id.clone(),
                    issuing_body: None,
                },
                now,
            )
            .map_err(internal)?;
        store.apply_snapshot(registry, now).map_err(internal)?;
        let block = state
            .store()
            .lease_numbers(
                device_id.to_owned(),
                state.config().number_block_size,
                Actor {
                    user_id: Some(user.id.clone()),
                    device_id: Some(device_id.to_owned()),
                    at: now,
                },
            )
            .await?;
        store
            .add_number_block(block.start, block.end)
            .map_err(internal)?;
        // As a login does: the device's key, so that the seals of the autos it issues verify.
        let key = store.device_public_key().map_err(internal)?;
        state
            .store()
            .register_device_key(device_id.to_owned(), hex::encode(key), now)
            .await?;
        Ok(Self {
            store,
            caller: Caller {
                user_id: user.id.clone(),
                role: user.role,
                stand_id: user.stand_id.clone(),
                device_id: device_id.to_owned(),
            },
            sync: DeviceSync::new(uuid),
            state: state.clone(),
            now,
        })
    }

    /// The app's record API on this store, checking under its replica's law parameters.
    fn field(&mut self) -> Result<FieldRecords<'_>, AppError> {
        FieldRecords::open(&mut self.store).map_err(internal)
    }

    fn infraction(&mut self, input: NewInfraction) -> Result<RecordOutcome, AppError> {
        self.field()?.create_infraction(input).map_err(internal)
    }

    /// Record exchanges until nothing is left, as the sync client does, each one through the
    /// store call behind `POST /v1/sync`. Any rejection is an error: the samples are lawful.
    async fn sync(&mut self) -> Result<(), AppError> {
        let (state, now) = (self.state.clone(), self.now);
        for _ in 0..10 {
            let prepared = self.sync.build_request(&self.store).map_err(internal)?;
            if let Some(issue) = prepared.issues.first() {
                return Err(internal(&issue.message));
            }
            let job = SyncJob {
                caller: self.caller.clone(),
                request: prepared.request.clone(),
                registry: state.services().indexed_registry().await?,
                logic: ServerSync::default(),
                now,
                server_key: state.signing_key().clone(),
            };
            let response = state.store().sync_records(job).await?.map_err(internal)?;
            if let Some(r) = response.rejections.first() {
                return Err(internal(format!("{}: {}", r.record_id, r.message)));
            }
            let report = self
                .sync
                .apply_response(&mut self.store, &prepared.request, &response, now)
                .map_err(internal)?;
            if !report.again {
                return Ok(());
            }
        }
        Err(internal("a sincronização não convergiu"))
    }

    /// Uploads the photos the server has not confirmed, checking each hash as the upload
    /// handler does. Returns how many were stored.
    async fn upload_photos(&mut self) -> Result<usize, AppError> {
        let (state, now) = (self.state.clone(), self.now);
        let pending = self.store.pending_photos().map_err(internal)?;
        let mut done = Vec::new();
        for p in pending {
            let bytes = self
                .store
                .photo(&p.hash)
                .map_err(internal)?
                .ok_or_else(|| internal(format!("foto {} ausente do aparelho", p.hash)))?;
            if sha256_hex(&bytes) != p.hash {
                return Err(internal(format!("foto {} corrompida no aparelho", p.hash)));
            }
            let meta = PhotoMeta {
                sha256: p.hash.clone(),
                size: bytes.len() as u64,
                content_type: String::from("image/png"),
                uploaded_at: now,
                user_id: self.caller.user_id.clone(),
                device_id: self.caller.device_id.clone(),
                record_id: None,
            };
            let actor = Actor {
                user_id: Some(self.caller.user_id.clone()),
                device_id: Some(self.caller.device_id.clone()),
                at: now,
            };
            state.store().put_photo(meta, bytes, actor).await?;
            done.push(p.hash);
        }
        self.store
            .mark_photos_uploaded(&done, now)
            .map_err(internal)?;
        Ok(done.len())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::auth::Auth;
    use crate::config::PasswordParams;
    use crate::store::records::view_of;
    use crate::{Clock, Config};
    use sync_core::records::{RecordView, Status};

    async fn demo_state(dir: &Path) -> AppState {
        let mut c = Config::new(dir);
        c.clock = Clock::fixed("2026-11-30T15:00:00Z".parse().unwrap());
        c.password_params = PasswordParams::insecure_fast();
        let state = AppState::open(c, crate::store::sqlite::open).await.unwrap();
        super::super::seed(&state).await.unwrap().unwrap();
        state
    }

    async fn view(state: &AppState, id: &str) -> RecordView {
        view_of(&state.store().record(id.to_owned()).await.unwrap().unwrap()).unwrap()
    }

    #[tokio::test]
    async fn samples_are_synced_in_once_with_a_duplicate_pair_and_a_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let state = demo_state(dir.path()).await;
        let seeded = seed_records(&state).await.unwrap().expect("seeded");
        assert_eq!(seeded.photos, 2);
        let page = state
            .store()
            .list_records(RecordFilter {
                limit: 50,
                ..RecordFilter::default()
            })
            .await
            .unwrap();
        assert_eq!(page.total, 3);
        // The scratch device stores are gone.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(".demo-devices"))
            .collect();
        assert!(left.is_empty(), "{left:?}");

        // The duplicate pair: same plate, other officers' devices, 4 minutes and ~30 m apart,
        // each issued with a number from its device's block and a photo the server holds.
        let [a, b] = &seeded.duplicate_pair;
        let (va, vb) = (view(&state, a).await, view(&state, b).await);
        assert_eq!(va.vehicle, vb.vehicle);
        assert_ne!(va.author.device_id, vb.author.device_id);
        assert_eq!(va.author.device_id, device_uuid("celular-fiscal-01"));
        assert_eq!(vb.author.device_id, device_uuid("tablet-fiscal-02"));
        assert_eq!((vb.occurred_at - va.occurred_at).num_minutes(), 4);
        assert_eq!(
            sync_core::time::local_date(va.occurred_at),
            NaiveDate::from_ymd_opt(2026, 11, 29).unwrap()
        );
        for v in [&va, &vb] {
            assert_eq!(v.status, Status::Issued);
            assert!(v.sealed && v.number.is_some() && v.conflicts.is_empty());
            assert_eq!(v.stand_id.as_deref(), Some("S02"));
            assert!(
                v.legal_basis.iter().any(|l| l.rule_id == RuleId::R24),
                "{:?}",
                v.legal_basis
            );
            assert_eq!(v.photos.len(), 1);
            let (meta, bytes) = state
                .store()
                .photo(v.photos[0].clone())
                .await
                .unwrap()
                .expect("photo on the server");
            assert_eq!(sha256_hex(&bytes), meta.sha256);
            assert!(bytes.starts_with(b"\x89PNG"));
        }
        let office = Auth {
            user_id: "u-escritorio".into(),
            username: "escritorio".into(),
            role: Role::Office,
            stand_id: None,
            device_id: "desktop-escritorio".into(),
        };
        let groups = crate::office::duplicate_groups(
            state.services(),
            &office,
            crate::office::DuplicatesQuery::default(),
        )
        .await
        .unwrap()
        .groups;
        assert_eq!(groups.len(), 1, "{groups:?}");
        let mut ids: Vec<String> = groups[0].records.iter().map(|m| m.row.id.clone()).collect();
        ids.sort();
        let mut want = vec![a.clone(), b.clone()];
        want.sort();
        assert_eq!(ids, want);
        let d = groups[0].pairs[0].distance_m.unwrap();
        assert!((10.0..100.0).contains(&d), "{d} m");

        // The conflict: issued (sealed) with the facts of both of fiscal02's devices side by side.
        let c = view(&state, &seeded.conflict).await;
        assert!(c.sealed);
        assert_eq!(c.status, Status::Issued);
        assert_eq!(c.conflicts.len(), 1, "{:?}", c.conflicts);
        let facts = &c.conflicts[0];
        assert_eq!(facts.field, "facts");
        let values: Vec<_> = facts.values.iter().map(|v| v.value.clone()).collect();
        assert!(
            values.contains(&serde_json::json!(FACTS_TABLET)),
            "{values:?}"
        );
        assert!(
            values.contains(&serde_json::json!(FACTS_PHONE)),
            "{values:?}"
        );
        let devices: Vec<_> = facts.values.iter().map(|v| v.device_id).collect();
        assert!(devices.contains(&Some(device_uuid("tablet-fiscal-02"))));
        assert!(devices.contains(&Some(device_uuid("celular-fiscal-02"))));
        let row = state
            .store()
            .record(seeded.conflict.clone())
            .await
            .unwrap()
            .unwrap()
            .row;
        assert_eq!(row.conflicts, 1);
        // Came in through the sync: one audit row per accepted batch, chain intact.
        assert!(
            !state
                .store()
                .record_audit(seeded.conflict.clone())
                .await
                .unwrap()
                .is_empty()
        );
        assert!(state.store().verify_audit().await.unwrap().ok);

        // Idempotent: a second start seeds nothing.
        assert_eq!(seed_records(&state).await.unwrap(), None);
        let again = state
            .store()
            .list_records(RecordFilter {
                limit: 50,
                ..RecordFilter::default()
            })
            .await
            .unwrap();
        assert_eq!(again.total, 3);
    }

    #[tokio::test]
    async fn content_is_the_same_on_two_data_directories() {
        let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (s1, s2) = (demo_state(d1.path()).await, demo_state(d2.path()).await);
        let (r1, r2) = (
            seed_records(&s1).await.unwrap().unwrap(),
            seed_records(&s2).await.unwrap().unwrap(),
        );
        // Ids are the devices' UUID v7; the contents are the same.
        let strip = |v: RecordView| {
            serde_json::json!({
                "number": v.number, "plate": v.vehicle, "occurred_at": v.occurred_at,
                "position": v.position, "facts": v.facts, "legal_basis": v.legal_basis,
                "photos": v.photos, "author": v.author, "status": v.status,
                "conflicts": v.conflicts.iter().map(|c| &c.field).collect::<Vec<_>>(),
            })
        };
        for (x, y) in r1
            .duplicate_pair
            .iter()
            .chain([&r1.conflict])
            .zip(r2.duplicate_pair.iter().chain([&r2.conflict]))
        {
            assert_eq!(strip(view(&s1, x).await), strip(view(&s2, y).await));
        }
    }
}
