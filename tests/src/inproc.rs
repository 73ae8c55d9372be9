//! The real server inside the test process, on a clock the test moves.
//!
//! [`InProcServer::start_demo`] builds what `taxi-fiscal demo` builds — the real router
//! (`launch_with_state`), a real TCP listener on `127.0.0.1:0`, the real SQLite store in a
//! temporary data directory, the demo registry and users (`demo::seed`) — but with
//! `Clock::fixed`, so a test can let weeks pass ([`InProcServer::advance_to`]) where the law
//! counts them (an edital's 20 days of notice, its window, its draw date, the 5 days of appeal).
//! The server runs on a multi-threaded tokio runtime the harness owns; the test talks to it over
//! HTTP with the blocking [`crate::Api`], like any desk client. [`InProcServer::stop`] (or
//! dropping it) shuts it down gracefully — requests drained, the audit head anchored — and
//! [`InProcServer::audit_verify`] then runs the real binary's `audit verify` on its data.
//!
//! Differences from the real `demo`, on purpose: access tokens live a year of the fixed clock
//! (a login survives the jumps of time), and passwords are hashed with the cheapest Argon2
//! parameters (a debug build logs in quickly).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use taxi_fiscal_server::config::PasswordParams;
use taxi_fiscal_server::{AppState, Clock, Config, ServerError, demo};

/// How long a graceful shutdown may take before the runtime is dropped anyway.
const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(20);

/// Lifetime of an access token on the fixed clock.
const TOKEN_LIFETIME: Duration = Duration::from_secs(366 * 24 * 3600);

/// A demo server in this process, on a fixed clock. Stopped on drop.
#[derive(Debug)]
pub struct InProcServer {
    pub url: String,
    pub addr: SocketAddr,
    clock: Clock,
    data: PathBuf,
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Result<(), ServerError>>>,
    _dir: tempfile::TempDir,
}

impl InProcServer {
    /// The demo (registry as of `at`'s local date, the four demo users) on a fresh temporary
    /// data directory, serving on a free loopback port, its clock stopped at `at`.
    pub fn start_demo(at: DateTime<Utc>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("dados");
        let clock = Clock::fixed(at);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (listener, addr, state) = runtime.block_on(async {
            // Bound first, so the configuration names the real address (the office pages'
            // accepted origins follow it, as `demo --listen 127.0.0.1:0` does).
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let mut config = Config::new(&data);
            config.listen = addr;
            config.clock = clock.clone();
            config.access_ttl = TOKEN_LIFETIME;
            config.password_params = PasswordParams::insecure_fast();
            let state = AppState::open(config, taxi_fiscal_server::store::sqlite::open)
                .await
                .unwrap();
            let seeded = demo::seed(&state).await.unwrap();
            assert!(seeded.is_some(), "a fresh data directory is seeded");
            (listener, addr, state)
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = runtime.spawn(taxi_fiscal_server::launch_with_state(
            listener,
            state,
            async move {
                let _ = stopped.await;
            },
        ));
        let server = Self {
            url: format!("http://{addr}"),
            addr,
            clock,
            data,
            runtime: Some(runtime),
            stop: Some(stop),
            task: Some(task),
            _dir: dir,
        };
        server.wait_ready();
        server
    }

    /// Polls `/health` until it answers 200, within a deadline.
    fn wait_ready(&self) {
        let http = crate::tls::http(None)
            .timeout(Duration::from_secs(2))
            .build()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = http.get(format!("{}/health", self.url)).send()
                && r.status() == 200
            {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "in-process server at {} not ready",
                self.url
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server's clock (shared: moving it moves the server's "now").
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The server's "today" in Americana.
    pub fn today(&self) -> NaiveDate {
        self.clock.today()
    }

    /// Moves the clock forward to noon (Americana, UTC−3) of `day`, which must not be earlier
    /// than today.
    pub fn advance_to(&self, day: NaiveDate) {
        let target = day.and_hms_opt(15, 0, 0).unwrap().and_utc();
        let by = target - self.clock.now();
        assert!(
            by >= chrono::Duration::zero() || self.today() == day,
            "the clock only moves forward: {} → {day}",
            self.today()
        );
        if by > chrono::Duration::zero() {
            self.clock.advance(by);
        }
        assert_eq!(self.today(), day);
    }

    /// The data directory (database, secret, audit anchor).
    pub fn data(&self) -> &Path {
        &self.data
    }

    /// Graceful shutdown: stops accepting, drains requests in flight, anchors the audit head.
    /// The data directory stays until the server is dropped.
    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let (Some(task), Some(rt)) = (self.task.take(), self.runtime.as_ref()) {
            let served = rt.block_on(async { tokio::time::timeout(SHUTDOWN_DEADLINE, task).await });
            match served {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(e))) => panic!("in-process server failed: {e}"),
                Ok(Err(e)) => panic!("in-process server task: {e}"),
                Err(_) => panic!("in-process server did not shut down in time"),
            }
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(SHUTDOWN_DEADLINE);
        }
    }

    /// `taxi-fiscal audit verify --data DIR` with the real binary ([`crate::taxi_fiscal_bin`]):
    /// (passed, stdout + stderr). Run it after [`InProcServer::stop`], so the anchor written at
    /// shutdown is the chain's head.
    pub fn audit_verify(&self) -> (bool, String) {
        let out = Command::new(crate::taxi_fiscal_bin())
            .args(["audit", "verify", "--data"])
            .arg(&self.data)
            .env(
                "TAXI_FISCAL_LOG",
                std::env::var("TAXI_FISCAL_LOG").unwrap_or_else(|_| "error".into()),
            )
            .output()
            .unwrap();
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }
}

impl Drop for InProcServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let (Some(task), Some(rt)) = (self.task.take(), self.runtime.as_ref()) {
            let _ = rt.block_on(async { tokio::time::timeout(SHUTDOWN_DEADLINE, task).await });
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(SHUTDOWN_DEADLINE);
        }
    }
}
