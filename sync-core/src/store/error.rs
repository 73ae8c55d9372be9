//! Errors of the device store. What an officer may read is in Portuguese; the wrapped SQLite
//! error, when there is one, stays as SQLite wrote it (it is for whoever fixes the device).

use std::path::PathBuf;

use crate::domain::DomainError;
use crate::feed::FeedError;

/// Everything the device store can refuse or fail at.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Not an SQLite file at all (or an SQLite file too damaged to read). Never written to.
    #[error(
        "o arquivo {path} não é um banco de dados do taxi-fiscal legível (corrompido ou de outro \
         tipo: {detail}); ele não foi alterado"
    )]
    Corrupt { path: PathBuf, detail: String },
    /// An SQLite file that belongs to someone else. Never written to.
    #[error(
        "o arquivo {path} é um banco SQLite de outro aplicativo ({detail}); ele não foi alterado"
    )]
    Foreign { path: PathBuf, detail: String },
    /// Written by a newer version of the app: reading it with older code could lose data.
    #[error(
        "o banco {path} está na versão {found} do esquema, mais nova que a {supported} que este \
         aplicativo conhece: atualize o aplicativo"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("não foi possível abrir {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("não foi possível ler {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Encrypted with another key than the vault's (or not a store at all). Never written to.
    #[error(
        "a chave guardada neste aparelho não abre o banco {path} (cifrado com outra chave, ou \
         não é um banco do taxi-fiscal); ele não foi alterado"
    )]
    WrongKey { path: PathBuf },
    /// An encrypted file whose key is not in the vault (the app's keystore was wiped). Never
    /// written to: the data cannot be read without the key.
    #[error(
        "o banco {path} está cifrado e a chave dele não está no cofre do aparelho; ele não foi \
         alterado"
    )]
    KeyMissing { path: PathBuf },
    /// This build's SQLite is not SQLCipher: an encrypted open is refused rather than storing
    /// plain text.
    #[error("este aplicativo foi compilado sem cifragem do banco (SQLCipher): recusado")]
    EncryptionUnavailable,
    /// The platform keystore failed (`name`: the vault entry).
    #[error("o cofre de chaves do aparelho falhou ({name}): {reason}")]
    Vault { name: &'static str, reason: String },
    /// Another connection holds the file while it was to be encrypted in place.
    #[error("o banco {path} está em uso por outra conexão; feche-a e abra de novo")]
    Busy { path: PathBuf },
    #[error("o banco não aceitou a configuração {pragma} (obtido {got:?})")]
    Pragma { pragma: &'static str, got: String },
    #[error("a migração {version} do banco falhou: {source}")]
    Migration {
        version: i64,
        #[source]
        source: rusqlite::Error,
    },
    #[error("a migração {version} deixaria referências quebradas no banco; nada foi alterado")]
    MigrationIntegrity { version: i64 },

    // Registry replica.
    #[error("nenhum cadastro carregado neste aparelho: carregue um snapshot primeiro")]
    NoRegistry,
    #[error(
        "o snapshot é da versão {snapshot} do cadastro, anterior à versão {current} que o aparelho \
         já tem: recusado para não desfazer alterações"
    )]
    StaleSnapshot { current: u64, snapshot: u64 },
    #[error(transparent)]
    Feed(#[from] FeedError),
    #[error("cadastro recusado: {0}")]
    Registry(#[from] DomainError),
    /// A batch that would leave a reference dangling or a key duplicated; nothing was applied.
    #[error(
        "o lote deixaria o cadastro inconsistente ({detail}); nada foi aplicado e o aparelho \
         continua na versão {version}"
    )]
    Integrity { version: u64, detail: String },

    // Field records.
    #[error("registro {0} não encontrado neste aparelho")]
    RecordNotFound(String),
    #[error("o registro {id} é do tipo {stored:?} e não pode ser gravado como {given:?}")]
    RecordKind {
        id: String,
        stored: String,
        given: String,
    },
    #[error("falha ao preparar o registro {id}: {detail}")]
    RecordWrite { id: String, detail: String },
    #[error("bloco de numeração inválido {first}–{last}: {reason}")]
    NumberBlockInvalid {
        first: u64,
        last: u64,
        reason: &'static str,
    },
    #[error(
        "bloco de numeração {first}–{last} sobrepõe o bloco {other_first}–{other_last} já \
         recebido; recusado para que nenhum número se repita"
    )]
    NumberBlockOverlap {
        first: u64,
        last: u64,
        other_first: u64,
        other_last: u64,
    },
    #[error("hash de foto inválido {0:?} (esperado SHA-256 em 64 dígitos hexadecimais)")]
    PhotoHash(String),

    // Device identity.
    #[error("identificação do aparelho inválida: {reason}")]
    IdentityInvalid { reason: String },
    #[error("chave de assinatura do aparelho: {0}")]
    DeviceKey(#[from] crate::records::SealError),
    #[error(
        "este aparelho já gravou {records} registro(s) como {old}; trocar o identificador para \
         {new} faria o mesmo aparelho assinar com dois identificadores: recusado"
    )]
    DeviceIdChange {
        old: String,
        new: String,
        records: i64,
    },

    /// A stored value that does not decode: the file was damaged or edited by hand.
    #[error("dado armazenado ilegível em {table} ({key}): {detail}")]
    Decode {
        table: &'static str,
        key: String,
        detail: String,
    },
    #[error("erro do banco de dados: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// Result of the store.
pub type StoreResult<T> = Result<T, StoreError>;
