//! Domain model: registry types and Brazilian document normalisation.
//!
//! Everything here is plain data plus parsing. Parsing is where bad input is caught: a plate,
//! CPF, CNH number or RENAVAM that reaches the rules engine has already been normalised, so the
//! engine compares canonical forms only.

mod documents;
mod driver_id;
mod plate;
mod registry;

pub use documents::{CnhNumber, Cpf, Renavam};
pub use driver_id::DriverId;
pub use plate::{Plate, PlateFormat};
pub use registry::*;

/// Why a piece of domain input was refused. Messages are in Portuguese: they reach officers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    #[error("placa inválida: {input:?} (formatos aceitos: ABC-1234 ou ABC1C34)")]
    Plate { input: String },
    #[error("CPF inválido: {reason}")]
    Cpf { reason: &'static str },
    #[error("número da CNH inválido: {reason}")]
    Cnh { reason: &'static str },
    #[error("RENAVAM inválido: {reason}")]
    Renavam { reason: &'static str },
    #[error("identificação do condutor inválida: {reason}")]
    Driver { reason: String },
    #[error("cadastro inválido: {reason}")]
    Fixture { reason: String },
}
