//! The server side of the command line: `serve`, `demo`, `import`, `audit verify`, `admin`,
//! `backup`, `restore`.
//!
//! `serve` and `demo` read their settings (flags, then the environment, then `--config FILE`),
//! build a multi-threaded tokio runtime, open the data directory
//! (`taxi_fiscal_server::AppState::open`), print where they listen on stdout (first line:
//! `… http://ADDR`, or `https://` with built-in TLS) and serve until SIGINT or SIGTERM, letting
//! requests in flight finish. `backup` copies the live database and checks the copy before
//! keeping it; `restore` checks a backup before putting it where no database is.
//! `demo` first writes the demo's rules configuration (art. 14 at 1:2,000) if the directory has
//! none, and seeds the demo registry and users once. `import`, `audit verify` and `admin` work on
//! the database directly, without a server, and print JSON; `import` and `admin` anchor the audit
//! chain's new head (`DIR/audit-anchor.json`) like the server does, and `audit verify` checks the
//! chain, every anchor, and the derived tables (`store::sqlite::consistency`).

use std::io::BufRead;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde::Serialize;
use taxi_fiscal_server::audit::{self, ChainHead};
use taxi_fiscal_server::auth::Role;
use taxi_fiscal_server::auth::password::Passwords;
use taxi_fiscal_server::config::{self, Config};
use taxi_fiscal_server::registry::{self, Ctx};
use taxi_fiscal_server::service::ServiceError;
use taxi_fiscal_server::store::consistency::ConsistencyReport;
use taxi_fiscal_server::store::sqlite::SqliteStore;
use taxi_fiscal_server::store::{Actor, NewDevice, Store, UserRow};
use taxi_fiscal_server::{AppState, Clock, demo};

use super::print_json;

/// Default data directory of `demo`.
const DEMO_DATA: &str = "./taxi-fiscal-demo";

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Data directory (database, JWT secret, rules-config.json). Env: TAXI_FISCAL_DATA.
    #[arg(long)]
    data: Option<PathBuf>,
    /// Address to listen on, e.g. 127.0.0.1:8080 (port 0: any free port). Env: TAXI_FISCAL_LISTEN.
    #[arg(long)]
    listen: Option<String>,
    #[command(flatten)]
    tls: TlsArgs,
    /// A TOML file with the settings of the environment variables (keys without the
    /// TAXI_FISCAL_ prefix, in lower case); the environment wins over it. Env:
    /// TAXI_FISCAL_CONFIG.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

/// Built-in TLS: both files, or neither (plain HTTP, e.g. behind a proxy that terminates TLS).
#[derive(Debug, Args)]
pub(crate) struct TlsArgs {
    /// PEM certificate chain to serve HTTPS with (the server's certificate first). Env:
    /// TAXI_FISCAL_TLS_CERT.
    #[arg(long, value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// PEM private key of that certificate. Env: TAXI_FISCAL_TLS_KEY.
    #[arg(long, value_name = "FILE")]
    tls_key: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Address to listen on (default 127.0.0.1:8080; port 0: any free port).
    #[arg(long)]
    listen: Option<String>,
    /// Data directory, created if missing (default ./taxi-fiscal-demo).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Do not seed the sample field records (a duplicate pair and a record with a conflict,
    /// synced in from sample devices) into a server that has none.
    #[arg(long)]
    no_sample_records: bool,
    #[command(flatten)]
    tls: TlsArgs,
    /// A TOML file of settings, as for `serve`. Env: TAXI_FISCAL_CONFIG.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// Data directory of the server (created if missing).
    #[arg(long)]
    data: PathBuf,
    /// CSV file, one row per permit (docs/registry-csv.md).
    file: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    #[command(subcommand)]
    command: AuditCommand,
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Check the hash chain of the audit log (fails at the first broken row), that it still
    /// holds the anchored head (DIR/audit-anchor.json, --anchor, --expect-head), and that the
    /// records' and registry's tables agree with their documents and history.
    Verify {
        /// Data directory of the server.
        #[arg(long)]
        data: PathBuf,
        /// A head written down earlier (`audit head`, a backup label, the server log): SEQ:HASH.
        #[arg(long, value_name = "SEQ:HASH")]
        expect_head: Vec<String>,
        /// An anchor file kept elsewhere (a copy of DIR/audit-anchor.json).
        #[arg(long, value_name = "FILE")]
        anchor: Vec<PathBuf>,
    },
    /// Print the chain's head (seq and hash of its last row) as JSON, to write down as an anchor.
    Head {
        /// Data directory of the server.
        #[arg(long)]
        data: PathBuf,
    },
}

#[derive(Debug, Args)]
pub(crate) struct BackupArgs {
    /// Data directory of the server (it may be running).
    #[arg(long)]
    data: PathBuf,
    /// The backup file to write; it must not exist (a backup never overwrites one).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct RestoreArgs {
    /// A file written by `taxi-fiscal backup`.
    #[arg(long, value_name = "FILE")]
    from: PathBuf,
    /// Data directory to restore into; it must hold no database (move an old one aside first).
    #[arg(long)]
    data: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct AdminArgs {
    #[command(subcommand)]
    command: AdminCommand,
}

#[derive(Debug, Subcommand)]
enum AdminCommand {
    /// Create a user and register its first device (bootstraps a fresh `serve`). The password
    /// is read from TAXI_FISCAL_PASSWORD or the first line of stdin.
    AddUser {
        #[arg(long)]
        data: PathBuf,
        #[arg(long)]
        username: String,
        /// officer, coordinator, office or admin.
        #[arg(long)]
        role: String,
        /// The coordinator's stand.
        #[arg(long)]
        stand: Option<String>,
        #[arg(long)]
        display_name: Option<String>,
        /// Id of the device to register for the user.
        #[arg(long)]
        device: String,
    },
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("iniciando o runtime assíncrono")
}

/// Logs on stderr: human lines, or with `TAXI_FISCAL_LOG_FORMAT=json` one JSON object a line
/// (for journald's or a collector's parser), each with its span's fields (`client`, `path`,
/// `request_id` of the access log). The level is `TAXI_FISCAL_LOG` (default `info`).
fn init_tracing(src: &config::Sources<'_>) -> anyhow::Result<()> {
    use tracing_subscriber::EnvFilter;
    let filter = src
        .get("TAXI_FISCAL_LOG")
        .and_then(|l| EnvFilter::try_new(l).ok())
        .or_else(|| EnvFilter::try_from_default_env().ok())
        .unwrap_or_else(|| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let format = src.get("TAXI_FISCAL_LOG_FORMAT").unwrap_or_default();
    let _ = match format.trim() {
        "" | "text" => builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .try_init(),
        "json" => builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
        other => bail!("TAXI_FISCAL_LOG_FORMAT deve ser text ou json (recebido {other:?})"),
    };
    Ok(())
}

/// SIGINT (Ctrl-C) or SIGTERM. The handlers are installed when this is called, not when the
/// future is first polled: call it before announcing the address, so that a SIGTERM sent as
/// soon as the first line is read still shuts down gracefully (and anchors the audit chain)
/// instead of killing the process.
fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let term = {
        use tokio::signal::unix::{SignalKind, signal};
        signal(SignalKind::terminate()).ok()
    };
    #[cfg(unix)]
    let int = {
        use tokio::signal::unix::{SignalKind, signal};
        signal(SignalKind::interrupt()).ok()
    };
    async move {
        #[cfg(unix)]
        {
            let wait = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(term) => {},
                () = wait(int) => {},
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("sinal recebido: encerrando");
    }
}

fn data_dir(
    flag: Option<PathBuf>,
    default: Option<&str>,
    src: &config::Sources<'_>,
) -> anyhow::Result<PathBuf> {
    if let Some(d) = flag {
        return Ok(d);
    }
    if let Some(d) = src.get("TAXI_FISCAL_DATA") {
        return Ok(PathBuf::from(d));
    }
    match default {
        Some(d) => Ok(PathBuf::from(d)),
        None => bail!("informe o diretório de dados com --data DIR (ou TAXI_FISCAL_DATA)"),
    }
}

pub(crate) fn serve(a: ServeArgs) -> anyhow::Result<()> {
    let src = config::Sources::from_process(a.config)?;
    let dir = data_dir(a.data, None, &src)?;
    let mut config = Config::resolve_from(dir.clone(), a.listen.as_deref(), &src)?;
    config.tls = config::TlsFiles::resolve(a.tls.tls_cert, a.tls.tls_key, &src)?;
    runtime()?.block_on(async move {
        init_tracing(&src)?;
        let listen = config.listen;
        let open = opener(&config);
        let state = AppState::open(config, open).await?;
        if state.store().count_users().await? == 0 {
            tracing::warn!(
                "nenhum usuário: crie um administrador com `taxi-fiscal admin add-user --data {} …`",
                dir.display()
            );
        }
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("não foi possível escutar em {listen}"))?;
        let addr = listener.local_addr()?;
        let shutdown = shutdown_signal();
        println!(
            "taxi-fiscal no ar: {}://{addr} (dados: {})",
            state.scheme(),
            dir.display()
        );
        taxi_fiscal_server::launch_with_state(listener, state, shutdown).await?;
        Ok(())
    })
}

pub(crate) fn demo(a: DemoArgs) -> anyhow::Result<()> {
    let sample_records = !a.no_sample_records;
    let src = config::Sources::from_process(a.config)?;
    let dir = data_dir(a.data, Some(DEMO_DATA), &src)?;
    taxi_fiscal_server::server::create_data_dir(&dir)?;
    let mut config = Config::resolve_from(dir.clone(), a.listen.as_deref(), &src)?;
    config.tls = config::TlsFiles::resolve(a.tls.tls_cert, a.tls.tls_key, &src)?;
    runtime()?.block_on(async move {
        init_tracing(&src)?;
        let listen = config.listen;
        let open = opener(&config);
        let state = AppState::open(config, open).await?;
        let seeded = demo::seed(&state)
            .await
            .map_err(|e| anyhow::anyhow!(e.message))?;
        if sample_records {
            demo::seed_records(&state)
                .await
                .map_err(|e| anyhow::anyhow!(e.message))?;
        }
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("não foi possível escutar em {listen}"))?;
        let addr = listener.local_addr()?;
        let version = state.store().registry().await?.version;
        let year = chrono::Datelike::year(&state.clock().today());
        let shutdown = shutdown_signal();
        print_banner(state.scheme(), addr, &dir, version, seeded.is_some(), year);
        taxi_fiscal_server::launch_with_state(listener, state, shutdown).await?;
        Ok(())
    })
}

fn print_banner(scheme: &str, addr: SocketAddr, dir: &Path, version: u64, seeded: bool, year: i32) {
    let url = format!("{scheme}://{addr}");
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(format!("taxi-fiscal demo no ar: {url}"));
    line(format!(
        "dados: {} (cadastro versão {version}{})",
        dir.display(),
        if seeded { ", recém-criado" } else { "" }
    ));
    line(String::new());
    line(format!("  saúde:    {url}/health"));
    line(format!("  OpenAPI:  {url}/openapi.json"));
    line(String::new());
    line(String::from("usuários (senha, dispositivo):"));
    for u in demo::USERS {
        let stand = u
            .stand_id
            .map(|s| format!(", ponto {s}"))
            .unwrap_or_default();
        line(format!(
            "  {:<12} {:<18} {:<26} perfil {}{stand}",
            u.username,
            u.password,
            u.device_id,
            u.role.as_str()
        ));
    }
    line(String::new());
    line(String::from("alvarás para ver cada situação:"));
    for (n, what) in demo::CASES {
        line(format!("  {n}  {what}"));
    }
    line(String::new());
    line(String::from("experimente:"));
    line(format!(
        "  TOKEN=$(curl -s -X POST {url}/v1/auth/login -H 'content-type: application/json' \\\n    \
         -d '{{\"username\":\"escritorio\",\"password\":\"escritorio-demo\",\"device_id\":\"desktop-escritorio\"}}' \\\n    \
         | sed -E 's/.*\"access_token\":\"([^\"]+)\".*/\\1/')"
    ));
    line(format!(
        "  curl -s {url}/v1/permits/0007 -H \"authorization: Bearer $TOKEN\""
    ));
    line(format!(
        "  curl -s {url}/v1/registry/status -H \"authorization: Bearer $TOKEN\""
    ));
    line(format!(
        "  curl -s --compressed {url}/v1/registry/snapshot -H \"authorization: Bearer $TOKEN\" | head -c 400"
    ));
    line(format!(
        "  curl -s -X POST {url}/v1/permits/0019/renewal -H \"authorization: Bearer $TOKEN\" \\\n    \
         -H 'content-type: application/json' -d '{{\"year\": {year}}}'      # 422: multa não paga (R27)"
    ));
    line(format!(
        "  curl -s -X POST {url}/v1/permits/0003/auxiliaries -H \"authorization: Bearer $TOKEN\" \\\n    \
         -H 'content-type: application/json' -d '{{\"person_id\":\"P0002\",\"licence_number\":\"0003-A3\"}}'   # 422: art. 8º (R13)"
    ));
    line(String::from("Ctrl-C encerra."));
    print!("{out}");
}

/// The current registry of the server's database in `dir` (which must exist).
pub(crate) fn registry_of(dir: &Path) -> anyhow::Result<sync_core::domain::Registry> {
    runtime()?.block_on(async {
        let store = open_store(dir, true).await?;
        let reg = store.registry().await?;
        Ok((*reg).clone())
    })
}

/// The store the command line works on: the PostgreSQL database of `TAXI_FISCAL_DATABASE_URL`
/// (or the configuration file's `database_url`) when one is named, as `serve` would open;
/// otherwise the SQLite file of `dir`, which must exist when `must_exist`.
async fn open_store(dir: &Path, must_exist: bool) -> anyhow::Result<Arc<dyn Store>> {
    if let Some(url) = database_url()? {
        let store = taxi_fiscal_server::store::postgres::PgStore::open(&url)
            .await
            .context("abrindo o banco de dados")?;
        return Ok(Arc::new(store));
    }
    let path = dir.join(config::DB_FILE);
    if must_exist && !path.exists() {
        bail!("não há banco de dados do servidor em {}", dir.display());
    }
    taxi_fiscal_server::server::create_data_dir(dir)?;
    let store = tokio::task::spawn_blocking(move || SqliteStore::open(&path))
        .await
        .context("abrindo o banco de dados")??;
    Ok(Arc::new(store))
}

/// The PostgreSQL database the settings name, if any (the environment, then the file of
/// `TAXI_FISCAL_CONFIG`).
fn database_url() -> anyhow::Result<Option<String>> {
    let src = config::Sources::from_process(None)?;
    Ok(Config::resolve_from(PathBuf::new(), Some("127.0.0.1:0"), &src)?.database_url)
}

/// The backend a configuration names, chosen here once: the SQLite file in the data directory,
/// or PostgreSQL when `TAXI_FISCAL_DATABASE_URL` is set. The server library only ever sees
/// `Arc<dyn Store>`.
fn opener(config: &Config) -> taxi_fiscal_server::server::StoreOpener {
    if config.database_url.is_some() {
        taxi_fiscal_server::store::postgres::open
    } else {
        taxi_fiscal_server::store::sqlite::open
    }
}

/// `backup` and `restore` copy the SQLite file; a PostgreSQL database is saved with its own
/// tools.
fn sqlite_only(command: &str) -> anyhow::Result<()> {
    if database_url()?.is_some() {
        bail!(
            "`taxi-fiscal {command}` copia o arquivo SQLite; com TAXI_FISCAL_DATABASE_URL use \
             pg_dump e pg_restore (veja \"Em produção\" no README)"
        );
    }
    Ok(())
}

#[derive(Debug, Serialize)]
struct ImportOut {
    version: u64,
    changed: bool,
    changes: usize,
    permits: usize,
    people: usize,
}

pub(crate) fn import(a: ImportArgs) -> anyhow::Result<()> {
    // Read as a stream, within the command line's own limits: memory follows the rows kept,
    // not the file's text. The rows are dropped once judged, before the commit computes its
    // changes (a city's registry is held several times over otherwise); if the commit must
    // retry because the registry changed meanwhile, the file is read again.
    let read_file = || -> Result<registry::csv::ReadRows, registry::EditError> {
        let file = std::fs::File::open(&a.file).map_err(|e| {
            registry::EditError::Csv(vec![registry::csv::RowError {
                line: None,
                column: None,
                message: format!("não foi possível ler {}: {e}", a.file.display()),
            }])
        })?;
        registry::csv::read(file, &registry::csv::CLI_LIMITS)
    };
    let mut rows = match read_file() {
        Ok(rows) => Some(rows),
        Err(e) => return import_failed(e.into()),
    };
    runtime()?.block_on(async move {
        let store = open_store(&a.data, false).await?;
        let clock = Clock::system();
        let today = clock.today();
        let result = registry::commit(
            store.as_ref(),
            Actor::cli(clock.now()),
            "registry.import",
            "registry",
            // Judged under the registry's own law parameters.
            |reg| {
                let rows = match rows.take() {
                    Some(rows) => rows,
                    None => read_file()?,
                };
                registry::csv::apply(
                    reg,
                    &rows,
                    &Ctx {
                        today,
                        rules: &reg.law().rules,
                    },
                )
            },
        )
        .await;
        let update = match result {
            Ok(u) => u,
            Err(e) => return import_failed(e),
        };
        anchor(&store, &a.data).await;
        let reg = store.registry().await?;
        print_json(&ImportOut {
            version: update.version,
            changed: update.changed,
            changes: update.changes.len(),
            permits: reg.permits.len(),
            people: reg.people.len(),
        })
    })
}

/// A refused import: every bad row is data (stdout); the summary is the one error line.
fn import_failed(e: ServiceError) -> anyhow::Result<()> {
    let e = taxi_fiscal_server::AppError::from(e);
    if let Some(rows) = e.details.as_ref().and_then(|d| d.get("errors")) {
        print_json(&serde_json::json!({ "errors": rows }))?;
    }
    bail!("{}", e.message)
}

/// One anchor `audit verify` compared the chain with.
#[derive(Debug, Serialize)]
struct AnchorCheck {
    /// Where it came from: a file, or `--expect-head`.
    source: String,
    seq: u64,
    hash: String,
    /// Why the chain does not hold it; absent when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
}

/// What `audit verify` prints.
#[derive(Debug, Serialize)]
struct VerifyOut {
    /// Chain rows read.
    rows: u64,
    /// Every check passed.
    ok: bool,
    head: Option<String>,
    first_broken: Option<taxi_fiscal_server::audit::BrokenRow>,
    anchors: Vec<AnchorCheck>,
    consistency: ConsistencyReport,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

pub(crate) fn audit(a: AuditArgs) -> anyhow::Result<()> {
    match a.command {
        AuditCommand::Head { data } => runtime()?.block_on(async move {
            let store = open_store(&data, true).await?;
            let head = store.audit_head().await?;
            print_json(&serde_json::json!({
                "seq": head.seq,
                "hash": head.hash,
                "anchor": head.to_string(),
            }))
        }),
        AuditCommand::Verify {
            data,
            expect_head,
            anchor,
        } => verify(&data, &expect_head, &anchor),
    }
}

/// The checks of `audit verify` on an open store: the chain, each anchor, the derived tables.
async fn check_store(
    store: &dyn Store,
    anchors: Vec<(String, ChainHead)>,
    warnings: Vec<String>,
) -> anyhow::Result<VerifyOut> {
    let chain = store.verify_audit().await?;
    let mut checks = Vec::new();
    for (source, head) in anchors {
        let problem = store.audit_anchor_problem(head.clone()).await?;
        checks.push(AnchorCheck {
            source,
            seq: head.seq,
            hash: head.hash,
            problem,
        });
    }
    let consistency = store.check_consistency().await?;
    Ok(VerifyOut {
        rows: chain.rows,
        ok: chain.ok
            && checks.iter().all(|c| c.problem.is_none())
            && consistency.mismatches.is_empty(),
        head: chain.head,
        first_broken: chain.first_broken,
        anchors: checks,
        consistency,
        warnings,
    })
}

/// Opens the copy at `path`, checks it, and closes it before answering (so it can be renamed).
fn check_copy(path: &Path, anchors: Vec<(String, ChainHead)>) -> anyhow::Result<VerifyOut> {
    let path = path.to_owned();
    runtime()?.block_on(async move {
        let opened = path.clone();
        let store = tokio::task::spawn_blocking(move || SqliteStore::open(&opened))
            .await
            .context("abrindo a cópia")??;
        let out = check_store(&store, anchors, Vec::new()).await;
        drop(store);
        out
    })
}

/// [`check_copy`] of a copy not yet in place; a copy that cannot be checked, or fails, is
/// deleted (its report printed) and `refused` is the error.
fn checked_or_discarded(
    copy: &Path,
    anchors: Vec<(String, ChainHead)>,
    refused: &str,
) -> anyhow::Result<VerifyOut> {
    use taxi_fiscal_server::store::sqlite::backup as file;
    let checked = match check_copy(copy, anchors) {
        Ok(out) => out,
        Err(e) => {
            file::discard(copy)?;
            return Err(e.context("verificando a cópia"));
        }
    };
    if !checked.ok {
        file::discard(copy)?;
        print_json(&checked)?;
        bail!("{refused}");
    }
    Ok(checked)
}

#[derive(Debug, Serialize)]
struct BackupOut {
    file: String,
    bytes: u64,
    /// Rows of the audit chain in the copy, and the hash of its last row (to write down).
    audit_rows: u64,
    head: Option<String>,
    verified: bool,
}

pub(crate) fn backup(a: BackupArgs) -> anyhow::Result<()> {
    use taxi_fiscal_server::store::sqlite::backup as file;
    sqlite_only("backup")?;
    let db = a.data.join(config::DB_FILE);
    let bytes = file::backup_file(&db, &a.out)?;
    let partial = file::partial_path(&a.out);
    // The copy was taken after the server's last anchor, so it must hold it.
    let mut anchors = Vec::new();
    let own = a.data.join(audit::ANCHOR_FILE);
    if let Some(h) = audit::read_anchor(&own).map_err(anyhow::Error::msg)? {
        anchors.push((own.display().to_string(), h));
    }
    let refused = format!(
        "a cópia não passou na verificação da auditoria e não foi guardada; rode `taxi-fiscal \
         audit verify --data {}`",
        a.data.display()
    );
    let checked = checked_or_discarded(&partial, anchors, &refused)?;
    file::publish(&partial, &a.out)?;
    print_json(&BackupOut {
        file: a.out.display().to_string(),
        bytes,
        audit_rows: checked.rows,
        head: checked.head,
        verified: true,
    })
}

#[derive(Debug, Serialize)]
struct RestoreOut {
    data: String,
    bytes: u64,
    audit_rows: u64,
    head: Option<String>,
    verified: bool,
}

pub(crate) fn restore(a: RestoreArgs) -> anyhow::Result<()> {
    use taxi_fiscal_server::store::sqlite::backup as file;
    sqlite_only("restore")?;
    taxi_fiscal_server::server::create_data_dir(&a.data)?;
    let db = a.data.join(config::DB_FILE);
    let bytes = file::restore_file(&a.from, &db)?;
    let tmp = file::restoring_path(&db);
    let checked = checked_or_discarded(
        &tmp,
        Vec::new(),
        "o backup não passou na verificação da auditoria; nada foi restaurado",
    )?;
    file::publish(&tmp, &db)?;
    // An anchor left in the directory names a head the restored chain may not reach: it is kept
    // aside as evidence (`audit-anchor.json.broken-SEQ`) and the restored head anchored, as a
    // server start would do.
    let data = a.data.clone();
    runtime()?.block_on(async move {
        let store = open_store(&data, true).await?;
        taxi_fiscal_server::server::keep_broken_anchor(store.as_ref(), &data).await;
        anchor(&store, &data).await;
        anyhow::Ok(())
    })?;
    print_json(&RestoreOut {
        data: a.data.display().to_string(),
        bytes,
        audit_rows: checked.rows,
        head: checked.head,
        verified: true,
    })
}

fn verify(data: &Path, expect_head: &[String], anchor_files: &[PathBuf]) -> anyhow::Result<()> {
    // The anchors to compare with, read before the database is opened.
    let mut anchors: Vec<(String, ChainHead)> = Vec::new();
    let mut warnings = Vec::new();
    let own = data.join(audit::ANCHOR_FILE);
    match audit::read_anchor(&own).map_err(anyhow::Error::msg)? {
        Some(h) => anchors.push((own.display().to_string(), h)),
        None => warnings.push(format!(
            "{} não existe: o fim da cadeia não pôde ser conferido com a âncora do servidor",
            own.display()
        )),
    }
    for f in anchor_files {
        let head = audit::read_anchor(f)
            .map_err(anyhow::Error::msg)?
            .with_context(|| format!("a âncora {} não existe", f.display()))?;
        anchors.push((f.display().to_string(), head));
    }
    for e in expect_head {
        let head = ChainHead::parse(e).with_context(|| {
            format!("--expect-head {e:?} inválido: use SEQ:HASH (`audit head`)")
        })?;
        anchors.push((String::from("--expect-head"), head));
    }
    runtime()?.block_on(async move {
        let store = open_store(data, true).await?;
        let out = check_store(store.as_ref(), anchors, warnings).await?;
        print_json(&out)?;
        if let Some(b) = &out.first_broken {
            bail!(
                "cadeia de auditoria rompida na linha {}: {}",
                b.seq,
                b.reason
            );
        }
        if let Some(c) = out.anchors.iter().find(|c| c.problem.is_some()) {
            bail!(
                "a cadeia de auditoria não contém a âncora {} ({}:{}): {}",
                c.source,
                c.seq,
                c.hash,
                c.problem.as_deref().unwrap_or_default()
            );
        }
        if let Some(m) = out.consistency.mismatches.first() {
            bail!(
                "{} com a origem; o primeiro: {}, coluna {}: {}",
                sync_core::text::plural_pt(
                    out.consistency.mismatches.len() as u64,
                    "dado derivado não confere",
                    "dados derivados não conferem"
                ),
                m.subject,
                m.column,
                m.reason
            );
        }
        Ok(())
    })
}

/// After a change from the command line: anchors the new head like the server does.
async fn anchor(store: &Arc<dyn Store>, data: &Path) {
    taxi_fiscal_server::server::anchor_audit_head(store.as_ref(), data, "cli", None).await;
}

fn read_password() -> anyhow::Result<String> {
    if let Ok(p) = std::env::var("TAXI_FISCAL_PASSWORD") {
        return Ok(p);
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("lendo a senha da entrada padrão")?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

pub(crate) fn admin(a: AdminArgs) -> anyhow::Result<()> {
    let AdminCommand::AddUser {
        data,
        username,
        role,
        stand,
        display_name,
        device,
    } = a.command;
    let role = Role::parse(&role).with_context(|| {
        format!("perfil {role:?} inválido: officer, coordinator, office ou admin")
    })?;
    if (role == Role::Coordinator) != stand.is_some() {
        bail!("--stand é obrigatório para coordinator e proibido para os outros perfis");
    }
    let password = read_password()?;
    if taxi_fiscal_server::auth::password::check_new_password(&password).is_err() {
        bail!(
            "a senha deve ter ao menos {} caracteres",
            taxi_fiscal_server::auth::password::MIN_PASSWORD_LEN
        );
    }
    let username = username.trim().to_lowercase();
    runtime()?.block_on(async move {
        let store = open_store(&data, false).await?;
        let passwords = Passwords::new(Config::new(&data).password_params)
            .map_err(|e| anyhow::anyhow!(e.to_string()))?;
        let hash = passwords
            .hash(&password)
            .map_err(|e| anyhow::anyhow!(e.message))?;
        let now = Clock::system().now();
        let user = store
            .create_user(
                UserRow {
                    id: format!("u-{username}"),
                    display_name: display_name.unwrap_or_else(|| username.clone()),
                    username,
                    role,
                    stand_id: stand,
                    password_hash: hash,
                    active: true,
                    created_at: now,
                },
                Actor::cli(now),
            )
            .await?;
        let device = store
            .register_device(
                NewDevice {
                    id: device,
                    user_id: user.id.clone(),
                    label: String::from("registrado pela linha de comando"),
                },
                Actor::cli(now),
            )
            .await?;
        anchor(&store, &data).await;
        print_json(&serde_json::json!({
            "user": { "id": user.id, "username": user.username, "role": user.role },
            "device": device,
        }))
    })
}
