//! The real binary: `taxi-fiscal demo` on a temporary data directory, used over HTTP like a
//! device would (reqwest), stopped with SIGTERM, restarted on the same directory; then
//! `audit verify`, `import` and `serve` from the command line.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_taxi-fiscal"))
}

/// A running server; killed on drop if the test did not stop it.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_demo(data: &Path) -> Server {
    let mut child = bin()
        .args(["demo", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        // Without the sample field records: this test counts the audit rows.
        .arg("--no-sample-records")
        .env_remove("TAXI_FISCAL_JWT_SECRET")
        .env("TAXI_FISCAL_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut first = String::new();
    BufReader::new(stdout).read_line(&mut first).unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_owned();
    Server { child, url }
}

/// SIGTERM, then the exit status (graceful shutdown exits 0).
fn stop(mut s: Server) -> std::process::ExitStatus {
    let pid = s.child.id().to_string();
    let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "server did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn login(
    client: &reqwest::Client,
    url: &str,
    user: &str,
    password: &str,
    device: &str,
) -> Value {
    let r = client
        .post(format!("{url}/v1/auth/login"))
        .json(&json!({"username": user, "password": password, "device_id": device}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

async fn snapshot(client: &reqwest::Client, url: &str, token: &str) -> sync_core::domain::Registry {
    let r = client
        .get(format!("{url}/v1/registry/snapshot"))
        .bearer_auth(token)
        .header("accept-encoding", "zstd")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-encoding"], "zstd");
    let compressed = r.bytes().await.unwrap();
    let json = zstd::decode_all(&compressed[..]).unwrap();
    sync_core::feed::snapshot_from_json(std::str::from_utf8(&json).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_serves_restarts_on_the_same_data_and_keeps_its_chain() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("dados");
    let client = reqwest::Client::new();

    let server = start_demo(&data);
    let url = server.url.clone();
    let health: Value = client
        .get(format!("{url}/health"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok");
    let session = login(&client, &url, "fiscal", "fiscal-demo", "tablet-fiscal-01").await;
    let token = session["access_token"].as_str().unwrap().to_owned();
    let reg = snapshot(&client, &url, &token).await;
    assert_eq!(reg.version, 1);
    assert_eq!(reg.permits.len(), 121);

    // One change by the office, so the restart has something to keep.
    let office = login(
        &client,
        &url,
        "escritorio",
        "escritorio-demo",
        "desktop-escritorio",
    )
    .await;
    let r = client
        .post(format!("{url}/v1/fines"))
        .bearer_auth(office["access_token"].as_str().unwrap())
        .json(&json!({"permit_number": "0011", "amount": "240.00"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    // A refusal over the wire: 422 with the rule and the article.
    let r = client
        .post(format!("{url}/v1/permits/0003/auxiliaries"))
        .bearer_auth(office["access_token"].as_str().unwrap())
        .json(&json!({"person_id": "P0002", "licence_number": "0003-A3"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["details"]["findings"][0]["rule_id"], "R13");
    assert_eq!(stop(server).code(), Some(0), "graceful shutdown exits 0");

    // Restart on the same directory: no reseeding, same version, the old token still valid
    // (the JWT secret was kept in the data directory).
    let server = start_demo(&data);
    let url = server.url.clone();
    let reg = snapshot(&client, &url, &token).await;
    assert_eq!(reg.version, 2);
    assert_eq!(reg.fines.len(), 3);
    assert_eq!(stop(server).code(), Some(0));

    let out = bin()
        .args(["audit", "verify", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["rows"], 10);

    // Tamper with the chain: `audit verify` fails and names the row.
    let conn = rusqlite::Connection::open(data.join("taxi-fiscal.db")).unwrap();
    conn.execute_batch(
        "DROP TRIGGER audit_log_no_update; UPDATE audit_log SET action = 'x' WHERE seq = 4;",
    )
    .unwrap();
    drop(conn);
    let out = bin()
        .args(["audit", "verify", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("erro: cadeia de auditoria rompida na linha 4"),
        "{stderr}"
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["first_broken"]["seq"], 4);
}

#[test]
fn import_from_the_command_line_reports_every_bad_row() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("dados");
    let mut reg = sync_core::testkit::sample_registry();
    // The sample's coordinator holds no permit, so is in no row: into an empty registry, the
    // coordinator must be one of the file's people.
    reg.stands[0].coordinator_id = Some("P01".into());
    let csv = taxi_fiscal_server::registry::csv::export(&reg).unwrap();
    let good = dir.path().join("cadastro.csv");
    std::fs::write(&good, &csv).unwrap();
    let out = bin()
        .args(["import", "--data"])
        .arg(&data)
        .arg(&good)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["version"].as_u64(), v["permits"].as_u64()),
        (Some(1), Some(5))
    );

    // Line 3 gets a bad CPF: nothing is imported, every error is listed with its line.
    let text = String::from_utf8(csv)
        .unwrap()
        .replace("86840102130", "86840102131");
    let bad = dir.path().join("ruim.csv");
    std::fs::write(&bad, text).unwrap();
    let out = bin()
        .args(["import", "--data"])
        .arg(&data)
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("nada foi importado"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = v["errors"].as_array().unwrap();
    assert!(
        errors
            .iter()
            .any(|e| e["line"] == 3 && e["column"] == "holder_cpf"),
        "{v:#}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("86840102131"));

    let out = bin()
        .args(["audit", "verify", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rows"], 1, "only the good import is in the chain");
}

#[test]
fn command_line_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .arg("serve")
        .env_remove("TAXI_FISCAL_DATA")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--data"));
    let out = bin()
        .args(["audit", "verify", "--data"])
        .arg(dir.path().join("nada"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !dir.path().join("nada").exists(),
        "verify must not create a database"
    );
    let out = bin()
        .args(["serve", "--listen", "nao-e-endereco", "--data"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("endereço de escuta inválido"));
}
