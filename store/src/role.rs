//! A user's role, as the store keeps it with the account and the services and handlers reason
//! about it. It lives with the store's types (not in `auth`, which is HTTP: extractors, tokens)
//! so that the store trait depends on nothing above it; the server's `auth` module re-exports it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Who a user is to the system.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Guarda Municipal officer or Secretaria inspector (art. 36): field checks and autos.
    Officer,
    /// Coordinator of one stand (art. 17): reports on drivers at that stand.
    Coordinator,
    /// Central office (Unidade de Transportes): the registry and the decisions.
    Office,
    /// Accounts and devices.
    Admin,
}

impl Role {
    /// As stored and serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Officer => "officer",
            Role::Coordinator => "coordinator",
            Role::Office => "office",
            Role::Admin => "admin",
        }
    }

    /// From the stored form.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "officer" => Some(Role::Officer),
            "coordinator" => Some(Role::Coordinator),
            "office" => Some(Role::Office),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }

    /// Name in Portuguese, for messages.
    pub fn label(self) -> &'static str {
        match self {
            Role::Officer => "fiscal",
            Role::Coordinator => "coordenador de ponto",
            Role::Office => "Unidade de Transportes",
            Role::Admin => "administrador",
        }
    }
}
