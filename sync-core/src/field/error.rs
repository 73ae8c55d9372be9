//! Errors of the field-records layer. Officers and coordinators read these: Portuguese.

use std::path::PathBuf;

use crate::records::RecordError;
use crate::store::StoreError;

/// Why a field-record operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum FieldError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(
        "este aparelho ainda não foi configurado: falta a identificação (aparelho, usuário e \
         perfil; `device init`)"
    )]
    NoIdentity,
    #[error("o alvará {permit} não consta do cadastro deste aparelho: informe a placa do veículo")]
    PermitUnknown { permit: String },
    #[error("nenhum alvará cadastrado para a placa {plate}")]
    NoPermitForPlate { plate: String },
    #[error(
        "o condutor {document} não consta do cadastro: a comunicação de transgressão (art. 17) é \
         só para titulares e auxiliares do ponto"
    )]
    DriverNotRegistered { document: String },
    #[error(
        "este aparelho é do coordenador do ponto {device_stand}; não pode comunicar transgressão \
         pelo ponto {given} (art. 17)"
    )]
    StandMismatch { device_stand: String, given: String },
    #[error("informe o ponto do coordenador")]
    StandRequired,
    #[error("já existe um registro {id} neste aparelho")]
    AlreadyExists { id: String },
    #[error("dado do cadastro inválido: {0}")]
    Registry(String),
    #[error("não foi possível ler {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
