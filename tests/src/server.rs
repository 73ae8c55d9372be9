//! The real server process.
//!
//! The binary is `$TAXI_FISCAL_BIN`, else `taxi-fiscal` in the target directory of the running
//! test or bench executable (`target/debug/deps/e2e-…` → `target/debug/taxi-fiscal`). Under
//! `cargo test --workspace` cargo builds it before any test runs (the server package's own
//! integration tests need it); `./scripts/test` also builds it first explicitly.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to answer `/health` after it printed its address (debug build,
/// two busy cores).
const READY_DEADLINE: Duration = Duration::from_secs(30);

/// The `taxi-fiscal` binary to run.
pub fn taxi_fiscal_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("TAXI_FISCAL_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/deps/<test> → target/<profile>/taxi-fiscal
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test executable inside target/<profile>/deps");
    let name = format!("taxi-fiscal{}", std::env::consts::EXE_SUFFIX);
    let candidate = profile_dir.join(&name);
    assert!(
        candidate.exists(),
        "{} not found: build it first (`cargo build -p taxi-fiscal-server --bin taxi-fiscal`, \
         with --release for the bench) or set TAXI_FISCAL_BIN",
        candidate.display()
    );
    candidate
}

/// A running `taxi-fiscal demo`. Killed on drop.
#[derive(Debug)]
pub struct Server {
    child: Option<Child>,
    pub url: String,
    pub addr: SocketAddr,
    pub data: PathBuf,
    bin: PathBuf,
    /// Extra arguments of `demo` and environment variables (kept for `restart`).
    demo_args: Vec<&'static str>,
    env: Vec<(&'static str, String)>,
    /// The CA the server's certificate is from, when it serves HTTPS.
    pub ca_pem: Option<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Server {
    /// `taxi-fiscal demo` on a free port (the OS picks it) and `data`, without the demo's
    /// sample field records: these tests count and compare every record on the server.
    pub fn start_demo(data: &Path) -> Self {
        Self::start_demo_with(data, vec!["--no-sample-records"], Vec::new())
    }

    /// `start_demo` with environment variables for the server (e.g. `TAXI_FISCAL_BODY_LIMIT`).
    pub fn start_demo_with_env(data: &Path, env: Vec<(&'static str, String)>) -> Self {
        Self::start_demo_with(data, vec!["--no-sample-records"], env)
    }

    /// `taxi-fiscal demo` as a user starts it: with the sample records (a duplicate pair and a
    /// record with a conflict) synced in from sample devices on first start.
    pub fn start_demo_with_samples(data: &Path) -> Self {
        Self::start_demo_with(data, Vec::new(), Vec::new())
    }

    /// `start_demo` on the PostgreSQL database at `database_url` (see [`crate::pg`]), with
    /// `env` besides.
    pub fn start_demo_pg(
        data: &Path,
        database_url: &str,
        mut env: Vec<(&'static str, String)>,
    ) -> Self {
        env.push(("TAXI_FISCAL_DATABASE_URL", database_url.to_owned()));
        Self::start_demo_with(data, vec!["--no-sample-records"], env)
    }

    /// `start_demo` serving HTTPS with the certificate of `ca` (built-in TLS).
    pub fn start_demo_tls(data: &Path, ca: &crate::TestCa) -> Self {
        Self::start(
            data,
            vec!["--no-sample-records"],
            ca.server_env(),
            Some(ca.ca_pem.clone()),
        )
    }

    fn start_demo_with(
        data: &Path,
        demo_args: Vec<&'static str>,
        env: Vec<(&'static str, String)>,
    ) -> Self {
        Self::start(data, demo_args, env, None)
    }

    fn start(
        data: &Path,
        demo_args: Vec<&'static str>,
        env: Vec<(&'static str, String)>,
        ca_pem: Option<String>,
    ) -> Self {
        let bin = taxi_fiscal_bin();
        let (child, addr) = spawn(&bin, data, "127.0.0.1:0", &demo_args, &env);
        let scheme = if ca_pem.is_some() { "https" } else { "http" };
        let server = Self {
            child: Some(child),
            url: format!("{scheme}://{addr}"),
            addr,
            data: data.to_owned(),
            bin,
            demo_args,
            env,
            ca_pem,
        };
        server.wait_ready();
        server
    }

    /// SIGKILL: no shutdown, no flush beyond what SQLite already committed.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The server process's id while it runs (the load bench reads its memory in /proc).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Starts the server again on the same data directory and port.
    pub fn restart(&mut self) {
        self.kill();
        // The port was ours a moment ago; binding it again may race only with the kernel
        // releasing it, so a few bounded attempts.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (mut child, addr) = spawn_checked(
                &self.bin,
                &self.data,
                &self.addr.to_string(),
                &self.demo_args,
                &self.env,
            );
            match addr {
                Some(a) => {
                    assert_eq!(a, self.addr);
                    self.child = Some(child);
                    break;
                }
                None => {
                    let _ = child.kill();
                    let _ = child.wait();
                    assert!(
                        Instant::now() < deadline,
                        "could not bind {} again",
                        self.addr
                    );
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
        self.wait_ready();
    }

    /// Polls `/health` until it answers 200, within a deadline.
    fn wait_ready(&self) {
        let http = crate::tls::http(self.ca_pem.as_deref())
            .timeout(Duration::from_secs(2))
            .build()
            .unwrap();
        let deadline = Instant::now() + READY_DEADLINE;
        loop {
            if let Ok(r) = http.get(format!("{}/health", self.url)).send()
                && r.status() == 200
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "server at {} not ready",
                self.url
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `taxi-fiscal audit verify --data DIR`: (passed, stdout + stderr).
    pub fn audit_verify(&self) -> (bool, String) {
        // With the server's own settings (its database among them).
        let out = Command::new(&self.bin)
            .args(["audit", "verify", "--data"])
            .arg(&self.data)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
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

    /// Any other command of the binary (e.g. `import`), with the data directory appended.
    pub fn cli(&self, args: &[&str]) -> std::process::Output {
        Command::new(&self.bin)
            .args(args)
            .arg("--data")
            .arg(&self.data)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap()
    }

    pub fn bin(&self) -> &Path {
        &self.bin
    }
}

fn spawn(
    bin: &Path,
    data: &Path,
    listen: &str,
    extra: &[&str],
    env: &[(&'static str, String)],
) -> (Child, SocketAddr) {
    let (child, addr) = spawn_checked(bin, data, listen, extra, env);
    (child, addr.expect("server printed no address"))
}

/// Starts `demo`; returns the child and the address from its first line (`None` if it exited
/// without one, e.g. the port was taken). The rest of stdout is drained by a thread so the
/// banner can never block the server on a full pipe.
fn spawn_checked(
    bin: &Path,
    data: &Path,
    listen: &str,
    extra: &[&str],
    env: &[(&'static str, String)],
) -> (Child, Option<SocketAddr>) {
    let mut child = Command::new(bin)
        .args(["demo", "--listen", listen, "--data"])
        .arg(data)
        .args(extra)
        .env_remove("TAXI_FISCAL_JWT_SECRET")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env(
            "TAXI_FISCAL_LOG",
            std::env::var("TAXI_FISCAL_LOG").unwrap_or_else(|_| "error".into()),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut reader = BufReader::new(stdout);
    let mut first = String::new();
    let _ = reader.read_line(&mut first);
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = reader.read_to_end(&mut sink);
    });
    let addr = first
        .split_whitespace()
        .find_map(|w| {
            w.strip_prefix("http://")
                .or_else(|| w.strip_prefix("https://"))
        })
        .and_then(|a| a.trim_end_matches('/').parse().ok());
    (child, addr)
}
