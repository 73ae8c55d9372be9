//! One device: its store in a temporary directory, its clock, and the sync client pointed at
//! the server (or at a proxy in front of it). Retries never sleep ([`NoSleep`] records the
//! delays it was asked for), so a fault costs no wall time and the test stays deterministic.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sync_core::client::{
    CancelToken, Cancelled, ClientOptions, Clock, HttpTransport, NumberTopUp, OffsetClock,
    RecordSync, RegistryPull, RetryPolicy, Sleeper, SyncClient, SyncSummary, Timeouts,
};
use sync_core::domain::{DriverId, Plate};
use sync_core::field::{FieldRecords, NewInfraction, NewTransgression, RecordOutcome};
use sync_core::records::{Gravity, LegalBasis, RecordDoc, Signature};
use sync_core::rules::{Observation, RuleId, VehicleQuery};
use sync_core::store::Store;
use sync_core::sync::hex_heads;

/// A sleeper that returns at once and remembers what it was asked to wait.
#[derive(Debug, Default)]
pub struct NoSleep(pub Mutex<Vec<Duration>>);

impl Sleeper for NoSleep {
    fn sleep(&self, d: Duration, cancel: &CancelToken) -> Result<(), Cancelled> {
        self.0.lock().unwrap().push(d);
        if cancel.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }
}

/// A phone or tablet.
#[derive(Debug)]
pub struct Device {
    pub name: String,
    pub store: Store,
    pub clock: Arc<dyn Clock>,
    pub sleeps: Arc<NoSleep>,
    client: SyncClient,
    url: String,
    /// The CA the device trusts besides the public ones (an HTTPS test server's).
    ca_pem: Option<String>,
    options: ClientOptions,
    pub server_device_id: String,
    _dir: Option<tempfile::TempDir>,
}

/// The retry policy of test devices: a few quick attempts, no jitter.
pub fn test_retry() -> RetryPolicy {
    RetryPolicy {
        attempts: 4,
        first_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(100),
        jitter_seed: None,
    }
}

impl Device {
    /// A new device store, logged in at `url` as `user` on the server device `device_id`, its
    /// clock shifted by `clock_offset`.
    pub fn login(
        name: &str,
        url: &str,
        device_id: &str,
        user: &str,
        password: &str,
        clock_offset: chrono::Duration,
    ) -> Self {
        Self::login_trusting(name, url, None, device_id, user, password, clock_offset)
    }

    /// [`Device::login`] to a server whose certificate is from `ca_pem` (HTTPS tests).
    pub fn login_trusting(
        name: &str,
        url: &str,
        ca_pem: Option<&str>,
        device_id: &str,
        user: &str,
        password: &str,
        clock_offset: chrono::Duration,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join(format!("{name}.db"))).unwrap();
        let mut d = Self::with_store(name, store, url, device_id, clock_offset);
        d._dir = Some(dir);
        if ca_pem.is_some() {
            d.trust(ca_pem);
        }
        d.client
            .login(&mut d.store, user, password, Some(device_id))
            .unwrap();
        d
    }

    /// A new device store enrolled at `url` with the administrator's one-time `code` (named
    /// `label` on the devices page), then logged in as `user` without naming a device: the
    /// login uses the id the enrolment stored.
    pub fn enrol(
        name: &str,
        url: &str,
        code: &str,
        label: &str,
        user: &str,
        password: &str,
        clock_offset: chrono::Duration,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join(format!("{name}.db"))).unwrap();
        let mut d = Self::with_store(name, store, url, "", clock_offset);
        d._dir = Some(dir);
        let enrolled = d.client.enrol(&mut d.store, code, label).unwrap();
        d.server_device_id = enrolled.server_device_id.clone();
        let login = d.client.login(&mut d.store, user, password, None).unwrap();
        assert_eq!(login.server_device_id, enrolled.server_device_id);
        d
    }

    /// A device on an existing store file (e.g. on a RAM disk for the bench), not logged in.
    pub fn with_store(
        name: &str,
        store: Store,
        url: &str,
        device_id: &str,
        clock_offset: chrono::Duration,
    ) -> Self {
        let clock: Arc<dyn Clock> = Arc::new(OffsetClock(clock_offset));
        let sleeps = Arc::new(NoSleep::default());
        let options = ClientOptions::default();
        Self {
            name: name.to_owned(),
            store,
            client: client(url, None, clock.clone(), sleeps.clone(), options.clone()),
            url: url.to_owned(),
            ca_pem: None,
            options,
            clock,
            sleeps,
            server_device_id: device_id.to_owned(),
            _dir: None,
        }
    }

    pub fn login_again(&mut self, user: &str, password: &str) {
        let id = self.server_device_id.clone();
        self.client
            .login(&mut self.store, user, password, Some(&id))
            .unwrap();
    }

    /// From now on trust `ca_pem` too (an HTTPS test server's CA), or only the public roots.
    pub fn trust(&mut self, ca_pem: Option<&str>) {
        self.ca_pem = ca_pem.map(str::to_owned);
        self.rebuild();
    }

    /// From now on talk to `url` (the server, or a proxy in front of it).
    pub fn use_url(&mut self, url: &str) {
        self.url = url.to_owned();
        self.rebuild();
    }

    pub fn set_options(&mut self, options: ClientOptions) {
        self.options = options;
        self.rebuild();
    }

    fn rebuild(&mut self) {
        self.client = client(
            &self.url,
            self.ca_pem.as_deref(),
            self.clock.clone(),
            self.sleeps.clone(),
            self.options.clone(),
        );
    }

    pub fn client(&self) -> &SyncClient {
        &self.client
    }

    /// One whole sync.
    pub fn sync(&mut self) -> SyncSummary {
        self.client.sync(&mut self.store).unwrap()
    }

    /// Only the record exchanges (`SyncClient::sync_records`), which must succeed.
    pub fn sync_records(&mut self) -> RecordSync {
        self.client.sync_records(&mut self.store).unwrap()
    }

    /// Only the record exchanges, as they went (the load bench counts failures).
    pub fn try_sync_records(&mut self) -> Result<RecordSync, sync_core::client::ClientError> {
        self.client.sync_records(&mut self.store)
    }

    /// Only the registry pull, which must succeed.
    pub fn pull_registry(&mut self) -> RegistryPull {
        self.client.pull_registry(&mut self.store).unwrap()
    }

    /// Only the registry pull, as it went.
    pub fn try_pull_registry(&mut self) -> Result<RegistryPull, sync_core::client::ClientError> {
        self.client.pull_registry(&mut self.store)
    }

    /// Only the number top-up, which must succeed.
    pub fn top_up_numbers(&mut self) -> Option<NumberTopUp> {
        self.client.top_up_numbers(&mut self.store).unwrap()
    }

    /// A sync that must succeed completely.
    pub fn sync_ok(&mut self) -> SyncSummary {
        let s = self.sync();
        assert!(s.ok, "{}: sync failed: {:?}", self.name, s.errors);
        s
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    pub fn field(&mut self) -> FieldRecords<'_> {
        FieldRecords::open(&mut self.store).unwrap()
    }

    /// An auto de infração on `plate` with `driver` at the wheel, issued, at the device's now.
    pub fn infraction(&mut self, plate: &str, driver: &str, facts: &str) -> RecordOutcome {
        self.infraction_with_photos(plate, driver, facts, Vec::new())
    }

    /// `infraction` with photos taken at the scene.
    pub fn infraction_with_photos(
        &mut self,
        plate: &str,
        driver: &str,
        facts: &str,
        photos: Vec<Vec<u8>>,
    ) -> RecordOutcome {
        self.infraction_with(plate, driver, facts, photos, Vec::new())
    }

    /// `infraction` with witnesses heard on the spot.
    pub fn infraction_with_witnesses(
        &mut self,
        plate: &str,
        driver: &str,
        facts: &str,
        witnesses: Vec<sync_core::field::WitnessEntry>,
    ) -> RecordOutcome {
        self.infraction_with(plate, driver, facts, Vec::new(), witnesses)
    }

    fn infraction_with(
        &mut self,
        plate: &str,
        driver: &str,
        facts: &str,
        photos: Vec<Vec<u8>>,
        witnesses: Vec<sync_core::field::WitnessEntry>,
    ) -> RecordOutcome {
        let at = self.now();
        let input = NewInfraction {
            vehicle: VehicleQuery::Plate(Plate::parse(plate).unwrap()),
            driver: DriverId::parse(driver).unwrap(),
            driver_name: None,
            at,
            monotonic: u64::try_from(at.timestamp_millis()).unwrap_or_default(),
            observation: Observation::default(),
            position: None,
            facts: Some(facts.to_owned()),
            extra_legal_basis: vec![LegalBasis::of(RuleId::R24)],
            witnesses,
            photos,
            confirm_vehicle: true,
            issue: Some(Signature::Missing {
                reason: "recusou-se a assinar".into(),
            }),
        };
        self.field().create_infraction(input).unwrap()
    }

    /// A serious transgression report at the coordinator's stand, forwarded to the office.
    pub fn transgression(&mut self, permit: &str, driver: &str, facts: &str) -> RecordOutcome {
        let at = self.now();
        let input = NewTransgression {
            vehicle: VehicleQuery::Permit(permit.into()),
            driver: DriverId::parse(driver).unwrap(),
            coordinator_stand: None,
            gravity: Gravity::Serious,
            facts: facts.into(),
            legal_basis: vec![LegalBasis::of(RuleId::R24)],
            at,
            monotonic: u64::try_from(at.timestamp_millis()).unwrap_or_default(),
            position: None,
            witnesses: vec![sync_core::field::WitnessEntry::named(
                "Passageira",
                "Vi o motorista recusar a corrida.",
            )],
            photos: Vec::new(),
            issue: Some(Signature::Missing {
                reason: "ausente".into(),
            }),
            then: Some(sync_core::field::CoordinatorStep::Forward),
        };
        self.field().create_transgression(input).unwrap()
    }

    /// The record as stored on this device.
    pub fn doc(&self, id: &str) -> RecordDoc {
        RecordDoc::load(&self.store.load_record_bytes(id).unwrap().concat()).unwrap()
    }

    pub fn has(&self, id: &str) -> bool {
        self.store.record_summary(id).unwrap().is_some()
    }

    /// Heads of a record on this device (hex, sorted).
    pub fn heads(&self, id: &str) -> Vec<String> {
        let mut h = hex_heads(&mut self.doc(id));
        h.sort();
        h
    }

    /// Ids of every record on this device.
    pub fn record_ids(&self) -> Vec<String> {
        self.store
            .list_records()
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    }

    pub fn path(&self) -> &Path {
        self.store.path()
    }
}

fn client(
    url: &str,
    ca_pem: Option<&str>,
    clock: Arc<dyn Clock>,
    sleeps: Arc<NoSleep>,
    options: ClientOptions,
) -> SyncClient {
    let transport = HttpTransport::with_ca(
        url,
        Timeouts {
            connect: Duration::from_secs(5),
            request: Duration::from_secs(60),
        },
        ca_pem,
    )
    .unwrap();
    SyncClient::with_transport(Arc::new(transport))
        .with_clock(clock)
        .with_sleeper(sleeps)
        .with_retry(test_retry())
        .with_options(options)
}
