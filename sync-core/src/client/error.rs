//! Errors of the sync client, in Portuguese for the officer, each with a `kind` the app can
//! branch on (show "sem sinal" and retry later, ask for the password, tell the office).

use serde::Serialize;

use super::transport::TransportError;
use crate::field::FieldError;
use crate::store::StoreError;
use crate::sync::SyncError;

/// Everything the client can fail at.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No (complete) answer after every retry: offline, server down, connection cut.
    #[error("{0}")]
    Transport(#[from] TransportError),
    /// The server answered with an error (after retries, for 5xx).
    #[error("o servidor recusou {what} (HTTP {status}, {code}): {message}")]
    Http {
        what: &'static str,
        status: u16,
        code: String,
        message: String,
    },
    /// No session, the refresh token expired or was refused, or the device was revoked.
    #[error("é preciso entrar de novo com usuário e senha: {0}")]
    LoginRequired(String),
    /// The administrator revoked this device: what the server already had was deleted from it
    /// (`Store::purge_after_revocation`); what it did not have is kept on the device, for the
    /// office to collect (a revoked device sends nothing more).
    #[error("{}", revoked_message(.0))]
    DeviceRevoked(crate::store::PurgeReport),
    #[error("sincronização cancelada")]
    Cancelled,
    /// The server's answer does not decode.
    #[error("resposta inválida do servidor em {what}: {detail}")]
    BadResponse { what: &'static str, detail: String },
    #[error("endereço do servidor inválido: {0:?}")]
    BadUrl(String),
    /// The certificate authority the app passed could not be used.
    #[error(transparent)]
    Tls(#[from] super::tls::TlsError),
    /// Which device to log in on is unknown (no `--device`, no identity in the store).
    #[error(
        "informe o identificador do aparelho registrado no servidor (nenhum está guardado neste \
         aparelho)"
    )]
    NoDevice,
    #[error("a sincronização dos registros não terminou após {0} rodadas; tente de novo")]
    NotConverged(usize),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Sync(#[from] SyncError),
    #[error(transparent)]
    Field(#[from] FieldError),
}

/// What kind of failure, for the app and the JSON summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Try again later; nothing is lost.
    Offline,
    /// Ask the user for the password.
    LoginRequired,
    Cancelled,
    /// The server refused this step (4xx) or failed (5xx).
    Server,
    /// A problem of this device (its database, its configuration).
    Device,
    /// The server's TLS certificate is not trusted: not a matter of signal, never retried;
    /// the city's IT must look at the address or the CA the app was given.
    Untrusted,
    /// The device was revoked and purged of what the server already had: tell the officer;
    /// what it kept is for the office to collect.
    Revoked,
}

/// What the officer reads when the device was revoked, with what was deleted and kept.
fn revoked_message(p: &crate::store::PurgeReport) -> String {
    use crate::text::plural_pt;
    let kept = if p.records_kept == 0 {
        String::from("nenhum registro ficou pendente")
    } else {
        format!(
            "{} ainda não {} ao servidor {} no aparelho: leve-o à Unidade de Transportes",
            plural_pt(p.records_kept, "registro", "registros"),
            if p.records_kept == 1 {
                "enviado"
            } else {
                "enviados"
            },
            if p.records_kept == 1 {
                "ficou"
            } else {
                "ficaram"
            },
        )
    };
    format!(
        "Este aparelho foi revogado pela administração: o cadastro e {} já {} ao servidor \
         foram apagados dele; {kept}.",
        plural_pt(p.records_removed, "registro", "registros"),
        if p.records_removed == 1 {
            "enviado"
        } else {
            "enviados"
        },
    )
}

impl ClientError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Transport(t) if t.kind == super::TransportErrorKind::Certificate => {
                ErrorKind::Untrusted
            }
            Self::Transport(_) => ErrorKind::Offline,
            Self::LoginRequired(_) | Self::NoDevice => ErrorKind::LoginRequired,
            Self::DeviceRevoked(_) => ErrorKind::Revoked,
            Self::Cancelled => ErrorKind::Cancelled,
            Self::Http { .. } | Self::BadResponse { .. } | Self::NotConverged(_) => {
                ErrorKind::Server
            }
            Self::BadUrl(_) | Self::Tls(_) | Self::Store(_) | Self::Sync(_) | Self::Field(_) => {
                ErrorKind::Device
            }
        }
    }

    /// Whether the remaining steps of a sync are pointless after this error (they would fail
    /// the same way, or the user asked to stop).
    pub fn stops_sync(&self) -> bool {
        !matches!(self.kind(), ErrorKind::Server)
    }
}
