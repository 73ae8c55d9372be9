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
    // Without the sample field records: the first test counts the audit rows.
    start_demo_with(data, &["--no-sample-records"])
}

fn start_demo_with(data: &Path, extra: &[&str]) -> Server {
    let mut child = bin()
        .args(["demo", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .args(extra)
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
    let client = reqwest::Client::builder()
        .tls_backend_preconfigured(sync_core::client::tls::client_config(None).unwrap())
        .build()
        .unwrap();

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

/// `serve` on `data`; its exit status and stderr (it must fail before listening: one still
/// running after 20 s has started a server, and is stopped).
fn serve_fails(data: &Path) -> (Option<i32>, String) {
    let mut child = bin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .env("TAXI_FISCAL_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return (None, String::from("the server started"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[cfg(unix)]
#[test]
fn an_existing_file_that_is_not_a_server_database_is_refused_never_initialised() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("dados");
    // Private, as the server makes it (a shared one is warned about on stderr).
    std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
        .create(&data)
        .unwrap();
    let db = data.join("taxi-fiscal.db");
    let verify = |data: &Path| {
        let out = bin()
            .args(["audit", "verify", "--data"])
            .arg(data)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    };

    // Zero bytes: a failed copy or a full disk, not a new deployment.
    std::fs::write(&db, b"").unwrap();
    let (code, stderr) = serve_fails(&data);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.starts_with("erro: "), "{stderr}");
    assert!(stderr.contains("está vazio"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let (code, stderr) = verify(&data);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("está vazio"), "{stderr}");
    assert_eq!(std::fs::metadata(&db).unwrap().len(), 0, "left untouched");

    // Not SQLite at all.
    std::fs::write(&db, b"id,nome\n1,Fulano\n".repeat(100)).unwrap();
    let (code, stderr) = serve_fails(&data);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("não é um banco de dados SQLite"),
        "{stderr}"
    );

    // SQLite, but nobody's schema (what the old code would have migrated into a new server).
    std::fs::remove_file(&db).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA user_version = 0;")
        .unwrap();
    drop(conn);
    let (code, stderr) = serve_fails(&data);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("não tem o esquema do servidor"), "{stderr}");

    // A real database cut short (a truncated copy).
    std::fs::remove_dir_all(&data).unwrap();
    let csv = dir.path().join("cadastro.csv");
    let mut reg = sync_core::testkit::sample_registry();
    reg.stands[0].coordinator_id = Some("P01".into());
    std::fs::write(
        &csv,
        taxi_fiscal_server::registry::csv::export(&reg).unwrap(),
    )
    .unwrap();
    let out = bin()
        .args(["import", "--data"])
        .arg(&data)
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, stderr) = verify(&data);
    assert_eq!(code, Some(0), "{stderr}");
    let full = std::fs::read(&db).unwrap();
    assert!(full.len() > 8192, "{}", full.len());
    std::fs::write(&db, &full[..full.len() / 2]).unwrap();
    let (code, stderr) = serve_fails(&data);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("está truncado"), "{stderr}");
    let (code, stderr) = verify(&data);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("está truncado"), "{stderr}");

    // Only a path that does not exist is created.
    std::fs::remove_file(&db).unwrap();
    let out = bin()
        .args(["import", "--data"])
        .arg(&data)
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!data.join("taxi-fiscal.db.creating").exists());
}

#[cfg(unix)]
#[test]
fn the_data_directory_and_database_files_are_private_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("nova").join("dados");
    // umask 000: whatever the file modes are, they come from the program, not the shell.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("umask 000; exec \"$0\" demo --listen 127.0.0.1:0 --no-sample-records --data \"$1\"")
        .arg(env!("CARGO_BIN_EXE_taxi-fiscal"))
        .arg(&data)
        .env_remove("TAXI_FISCAL_JWT_SECRET")
        .env("TAXI_FISCAL_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("http://"), "{first:?}");
    let server = Server {
        child,
        url: String::new(),
    };
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700, "data directory");
    for f in [
        "taxi-fiscal.db",
        "taxi-fiscal.db-wal",
        "taxi-fiscal.db-shm",
        "jwt-secret",
    ] {
        assert_eq!(mode(&data.join(f)), 0o600, "{f}");
    }
    assert_eq!(stop(server).code(), Some(0));

    // A database left readable by others (an old version, a careless copy) is narrowed at
    // start.
    let db = data.join("taxi-fiscal.db");
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let server = start_demo(&data);
    assert_eq!(mode(&db), 0o600);
    assert_eq!(stop(server).code(), Some(0));
}

/// `audit verify` on `data` with `extra` arguments: exit code, stdout JSON, stderr.
fn verify_with(data: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    let out = bin()
        .args(["audit", "verify", "--data"])
        .arg(data)
        .args(extra)
        .output()
        .unwrap();
    let stdout = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code(),
        stdout,
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Edits the database behind the server's back, as someone with the file would (no foreign key
/// checks to stop them).
fn sql(data: &Path, batch: &str) {
    let conn = rusqlite::Connection::open(data.join("taxi-fiscal.db")).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = OFF;").unwrap();
    conn.execute_batch(batch).unwrap();
}

#[test]
fn verify_checks_the_anchored_head_and_the_tables_derived_from_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("dados");
    // With the sample field records: records whose projections can be checked.
    let server = start_demo_with(&data, &[]);
    assert_eq!(stop(server).code(), Some(0));

    // Untouched: the chain, the server's anchor and every derived row agree.
    let (code, v, stderr) = verify_with(&data, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(v["ok"], true);
    assert!(v["consistency"]["records"].as_u64().unwrap() > 0, "{v:#}");
    assert!(
        v["consistency"]["registry_versions"].as_u64().unwrap() >= 1,
        "{v:#}"
    );
    assert_eq!(v["consistency"]["mismatches"], json!([]));
    let anchors = v["anchors"].as_array().unwrap();
    assert_eq!(anchors.len(), 1, "{v:#}");
    assert!(anchors[0]["problem"].is_null(), "{v:#}");

    // `audit head` is the last row, and is what the server anchored at shutdown.
    let out = bin()
        .args(["audit", "head", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success());
    let head: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(head["seq"], v["rows"]);
    assert_eq!(head["hash"], v["head"]);
    let anchored: Value =
        serde_json::from_slice(&std::fs::read(data.join("audit-anchor.json")).unwrap()).unwrap();
    assert_eq!(
        (&anchored["seq"], &anchored["hash"]),
        (&head["seq"], &head["hash"])
    );
    let expect = head["anchor"].as_str().unwrap().to_owned();
    let (code, _, stderr) = verify_with(&data, &["--expect-head", &expect]);
    assert_eq!(code, Some(0), "{stderr}");

    let pristine = std::fs::read(data.join("taxi-fiscal.db")).unwrap();

    // A projection column edited behind the server's back: found, by record and column.
    let record: String = rusqlite::Connection::open(data.join("taxi-fiscal.db"))
        .unwrap()
        .query_row("SELECT id FROM records ORDER BY id LIMIT 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    sql(
        &data,
        &format!("UPDATE records SET plate = 'ZZZ9Z99' WHERE id = '{record}'"),
    );
    let (code, v, stderr) = verify_with(&data, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(v["ok"], false);
    assert!(
        stderr.contains(&format!("record:{record}, coluna plate")),
        "{stderr}"
    );
    assert!(
        !stderr.contains("ZZZ9Z99"),
        "no value in the message: {stderr}"
    );
    let m = &v["consistency"]["mismatches"];
    assert_eq!(m.as_array().unwrap().len(), 1, "{m:#}");
    assert_eq!(m[0]["column"], "plate");

    // A registry entity edited: found too.
    std::fs::write(data.join("taxi-fiscal.db"), &pristine).unwrap();
    sql(
        &data,
        "UPDATE registry_entities SET body = json_set(body, '$.name', 'Outro Nome') \
         WHERE kind = 'person' AND key = (SELECT min(key) FROM registry_entities \
         WHERE kind = 'person')",
    );
    let (code, v, stderr) = verify_with(&data, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("registry:person:"), "{stderr}");
    assert_eq!(v["consistency"]["mismatches"][0]["column"], "body");

    // The chain's last rows cut off: what is left still links, the anchor does not.
    std::fs::write(data.join("taxi-fiscal.db"), &pristine).unwrap();
    let rows = head["seq"].as_u64().unwrap();
    sql(
        &data,
        &format!(
            "DROP TRIGGER audit_log_no_delete; DELETE FROM audit_log WHERE seq > {};",
            rows - 2
        ),
    );
    let (code, v, stderr) = verify_with(&data, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        v["first_broken"].is_null(),
        "the chain itself still links: {v:#}"
    );
    assert!(
        stderr.contains(&format!(
            "termina na linha {}, antes da linha {rows}",
            rows - 2
        )),
        "{stderr}"
    );
    // A restart on the cut chain keeps the old anchor aside (the new start anchors the new
    // head) and logs it: the evidence survives for `--anchor`.
    let server = start_demo_with(&data, &[]);
    assert_eq!(stop(server).code(), Some(0));
    let kept = data.join(format!("audit-anchor.json.broken-{rows}"));
    assert!(kept.exists(), "old anchor not kept");
    let (code, _, stderr) = verify_with(&data, &["--anchor", kept.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("broken-"), "{stderr}");

    // Without the anchor file (deleted with the rows), the head written down elsewhere still
    // catches it.
    std::fs::remove_file(data.join("audit-anchor.json")).unwrap();
    let (code, v, stderr) = verify_with(&data, &["--expect-head", &expect]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--expect-head"), "{stderr}");
    assert!(!v["warnings"].as_array().unwrap().is_empty(), "{v:#}");

    // A chain emptied, on a deployment that has data: the registry history has no audit rows.
    std::fs::write(data.join("taxi-fiscal.db"), &pristine).unwrap();
    sql(
        &data,
        "DROP TRIGGER audit_log_no_delete; DELETE FROM audit_log;",
    );
    let (code, v, stderr) = verify_with(&data, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(v["rows"], 0);
    assert!(
        v["consistency"]["mismatches"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["subject"] == "registry_log:1"),
        "{v:#}"
    );
}

/// `TAXI_FISCAL_LOG_FORMAT=json`: every log line on stderr is one JSON object, and the access
/// log's line carries the request's span (client address, method, path, request id). Another
/// value stops the start with one line naming the variable.
#[test]
fn logs_are_json_lines_on_request_with_the_client_of_each_request() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let mut child = bin()
        .args([
            "demo",
            "--no-sample-records",
            "--listen",
            "127.0.0.1:0",
            "--data",
        ])
        .arg(dir.path().join("dados"))
        .env_remove("TAXI_FISCAL_JWT_SECRET")
        .env("TAXI_FISCAL_LOG", "info")
        .env("TAXI_FISCAL_LOG_FORMAT", "json")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = std::sync::mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let stdout = child.stdout.take().unwrap();
    let mut first = String::new();
    BufReader::new(stdout).read_line(&mut first).unwrap();
    let server = Server {
        child,
        url: first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_owned(),
    };
    let addr = server.url.trim_start_matches("http://").to_owned();
    let mut tcp = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        tcp,
        "GET /health HTTP/1.1\r\nHost: {addr}\r\nx-request-id: pedido-json-1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    let deadline = Instant::now() + Duration::from_secs(30);
    let mut access = None;
    while access.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .expect("the access log line within the deadline");
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not one JSON object a line ({e}): {line}"));
        assert!(v["level"].is_string() && v["timestamp"].is_string(), "{v}");
        if v["span"]["request_id"] == "pedido-json-1" {
            access = Some(v);
        }
    }
    let access = access.unwrap();
    assert_eq!(access["span"]["client"], "127.0.0.1", "{access}");
    assert_eq!(access["span"]["path"], "/health", "{access}");
    assert_eq!(access["span"]["method"], "GET", "{access}");
    drop(server);

    let out = bin()
        .args(["demo", "--listen", "127.0.0.1:0", "--data"])
        .arg(dir.path().join("outro"))
        .env("TAXI_FISCAL_LOG_FORMAT", "xml")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("TAXI_FISCAL_LOG_FORMAT"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// `--config FILE`: the settings of the environment from a TOML file (here the log format);
/// an unknown key stops the start naming it, and the environment wins over the file.
#[test]
fn a_configuration_file_sets_what_the_environment_does_and_names_a_wrong_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("taxi-fiscal.toml");
    std::fs::write(&file, "log = \"info\"\nlog_format = \"json\"\n").unwrap();
    let start = |env_format: Option<&str>| {
        let mut cmd = bin();
        cmd.args([
            "demo",
            "--no-sample-records",
            "--listen",
            "127.0.0.1:0",
            "--config",
        ])
        .arg(&file)
        .arg("--data")
        .arg(dir.path().join("dados"))
        .env_remove("TAXI_FISCAL_JWT_SECRET")
        .env_remove("TAXI_FISCAL_LOG")
        .env_remove("TAXI_FISCAL_LOG_FORMAT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        if let Some(f) = env_format {
            cmd.env("TAXI_FISCAL_LOG_FORMAT", f);
        }
        let mut child = cmd.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut first = String::new();
        BufReader::new(stderr).read_line(&mut first).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        first
    };
    let line = start(None);
    let v: Value = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("the file's log_format is json ({e}): {line}"));
    assert!(v["level"].is_string(), "{v}");
    let line = start(Some("text"));
    assert!(
        serde_json::from_str::<Value>(&line).is_err(),
        "the environment wins over the file: {line}"
    );

    std::fs::write(&file, "lisen = \"127.0.0.1:9\"\n").unwrap();
    let out = bin()
        .args(["demo", "--listen", "127.0.0.1:0", "--config"])
        .arg(&file)
        .arg("--data")
        .arg(dir.path().join("outro"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("chave desconhecida \"lisen\""), "{err}");
}
