//! `taxi-fiscal device --db FILE enrol …`, `… login …` and `… sync …`: the sync client of `sync_core::client`
//! from the command line, exactly as the app drives it — the session is stored in the device
//! file, so `sync` needs only the file (and optionally the server's address).
//!
//! `enrol` exchanges the administrator's one-time enrolment code for the device's registration
//! and keeps the device id the server gave, so `login` needs no `--device` after it.
//!
//! All print JSON on stdout: `enrol` the registration, `login` the session (never the tokens), `sync` the whole
//! `SyncSummary` (what each step did, wire bytes, the status after it). A sync in which a step
//! failed still prints its summary, then fails with that step's error (exit status 2).
//!
//! HTTPS servers are checked against the public roots the library carries; a server with a
//! certificate from the city's own authority needs that CA's PEM file in `TAXI_FISCAL_CA_FILE`.

use std::path::Path;

use anyhow::{Context, bail};
use clap::Args;
use sync_core::client::{SyncClient, Timeouts};
use sync_core::store::Store;

use super::print_json;

#[derive(Debug, Args)]
pub(crate) struct LoginArgs {
    /// Server address, e.g. http://127.0.0.1:8080.
    #[arg(long)]
    server: String,
    #[arg(long)]
    user: String,
    /// Password (default: the environment variable TAXI_FISCAL_PASSWORD, which keeps it out of
    /// the process list).
    #[arg(long)]
    password: Option<String>,
    /// The device's id on the server (default: the one stored by a previous login, else this
    /// file's device identity).
    #[arg(long)]
    device: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct EnrolArgs {
    /// Server address, e.g. http://127.0.0.1:8080.
    #[arg(long)]
    server: String,
    /// The enrolment code shown on the administrator's devices page.
    #[arg(long)]
    code: String,
    /// How the device is called on the devices page.
    #[arg(long)]
    name: String,
}

#[derive(Debug, Args)]
pub(crate) struct SyncArgs {
    /// Server address (default: the one of the stored session).
    #[arg(long)]
    server: Option<String>,
    /// Seconds a request may take before it is abandoned and retried.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// Only print the sync status (pending records and photos, last sync, registry age, last
    /// error), without contacting the server.
    #[arg(long)]
    status: bool,
}

/// A PEM file of a certificate authority the device trusts besides the public ones.
const CA_ENV: &str = "TAXI_FISCAL_CA_FILE";

fn client(server: &str, timeout: u64) -> anyhow::Result<SyncClient> {
    let timeouts = Timeouts {
        request: std::time::Duration::from_secs(timeout.max(1)),
        ..Timeouts::default()
    };
    // A city's private CA, for a server whose certificate is not from a public one.
    let ca = match std::env::var_os(CA_ENV) {
        Some(path) => Some(
            std::fs::read_to_string(&path)
                .with_context(|| format!("lendo {CA_ENV}={}", Path::new(&path).display()))?,
        ),
        None => None,
    };
    let transport = sync_core::client::HttpTransport::with_ca(server, timeouts, ca.as_deref())?;
    Ok(SyncClient::with_transport(std::sync::Arc::new(transport)))
}

pub(crate) fn login(store: &mut Store, a: LoginArgs) -> anyhow::Result<()> {
    let password = match a.password {
        Some(p) => p,
        None => std::env::var("TAXI_FISCAL_PASSWORD")
            .context("informe --password ou a variável TAXI_FISCAL_PASSWORD")?,
    };
    let client = client(&a.server, 60)?;
    let summary = client.login(store, &a.user, &password, a.device.as_deref())?;
    print_json(&summary)
}

pub(crate) fn enrol(store: &mut Store, a: EnrolArgs) -> anyhow::Result<()> {
    let client = client(&a.server, 60)?;
    let summary = client.enrol(store, &a.code, &a.name)?;
    print_json(&summary)
}

pub(crate) fn sync(store: &mut Store, a: SyncArgs) -> anyhow::Result<()> {
    if a.status {
        return print_json(&store.sync_status(chrono::Utc::now())?);
    }
    let server = match a.server {
        Some(s) => s,
        None => match store.client_session()? {
            Some(s) => s.server_url,
            None => bail!("informe --server (nenhuma sessão guardada: faça `device login` antes)"),
        },
    };
    let client = client(&server, a.timeout)?;
    let summary = client.sync(store)?;
    print_json(&summary)?;
    if let Some(e) = summary.errors.first() {
        bail!("{}", e.message);
    }
    Ok(())
}
