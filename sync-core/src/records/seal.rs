//! Device-signed evidence: what issuing a record seals, its canonical bytes, and the seal.
//!
//! # Flow
//!
//! 1. Every device store holds one Ed25519 key ([`DeviceKey`], created on the device, never
//!    exported); its public key is registered with the server at login.
//! 2. `RecordDoc::issue` computes [`canonical_evidence`] of the record as it is issued, signs
//!    it with the device key and writes the [`EvidenceSeal`] (JSON in the root `seal` field)
//!    in the same change as the `issued` event. The seal travels in the document.
//! 3. The server, vetting the issuing change, checks the seal ([`verify_seal`]) on the
//!    sender's own copy of the record with the keys registered to the sending device, then
//!    countersigns a receipt. The auto's verification code is derived from the device
//!    signature ([`EvidenceSeal::verification_code`]), so a device offline prints the same code
//!    the server indexes on receipt.
//!
//! # Canonical encoding (version 1)
//!
//! `EVIDENCE_DOMAIN`, then one entry per field in the fixed order of [`canonical_evidence`]:
//! `u32 BE length ‖ name ‖ u32 BE length ‖ value`. Strings are UTF-8, integers 8 bytes BE,
//! instants the milliseconds since the epoch as i64 BE, floats their IEEE-754 bits BE, a
//! nested structure is its own entries as the value, a list is `u32 BE count` then each item
//! length-prefixed. Everything is length-prefixed and named, so the encoding is injective, and
//! an absent optional field is left out: a new optional field (one line in
//! `canonical_evidence`) leaves the bytes of records without it unchanged.
//!
//! Witnesses and photos may be appended after issue, and a merge may interleave concurrent
//! appends anywhere in the list, so the seal does not rely on a list prefix: it lists the
//! photo hashes and witness digests ([`witness_digest`]) it covers, those lists are what is
//! encoded, and verification checks that each is present in the record. The number likewise:
//! a record may be issued before it has one, so the seal holds the number as it was sealed.

use std::fmt;

use chrono::{DateTime, Utc};
use ed25519_dalek::{Signature as EdSignature, Signer, SigningKey, VerifyingKey};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::model::{Agent, DriverRef, LegalBasis, PersonRef, RecordView, Signature, Witness};

/// Version of the seal and of its canonical encoding.
pub const SEAL_VERSION: u64 = 1;
/// The one signature algorithm of version 1.
pub const SEAL_ALG: &str = "ed25519";
/// Prefix of the canonical evidence bytes: a signature over them means nothing else.
pub const EVIDENCE_DOMAIN: &[u8] = b"taxi-fiscal/evidence/v1\n";
/// Domain of an auto's verification code (`documents::VerificationCode::derive`).
pub const AUTO_CODE_DOMAIN: &[u8] = b"taxi-fiscal/auto/v1";
/// Bytes of an Ed25519 public key.
pub const PUBLIC_KEY_BYTES: usize = 32;
/// Bytes of an Ed25519 signature.
pub const SIGNATURE_BYTES: usize = 64;

/// Why a key or a seal was refused. Portuguese: the server shows it to the officer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    #[error("o registro foi emitido sem a assinatura do aparelho")]
    Missing,
    #[error("a assinatura do aparelho está ilegível: {0}")]
    Malformed(String),
    #[error("a assinatura do aparelho foi feita por outro aparelho, não pelo autor do registro")]
    WrongDevice,
    #[error(
        "a chave que assinou o registro não está registrada para este aparelho; entre de novo com a senha"
    )]
    UnknownKey,
    #[error(
        "a assinatura do aparelho não confere com a prova do registro (prova alterada ou assinatura falsa)"
    )]
    BadSignature,
    #[error("a assinatura do aparelho cobre uma foto ou testemunha que não está no registro")]
    MissingEvidence,
    #[error("o número do auto foi alterado depois da emissão")]
    NumberChanged,
    #[error("não foi possível gerar a chave do aparelho: {0}")]
    KeyGeneration(String),
}

/// The device's signing key. The secret never leaves the device store: there is no getter for
/// it outside this crate, and `Debug` shows only the public key.
pub struct DeviceKey(SigningKey);

impl fmt::Debug for DeviceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceKey")
            .field("public_key", &hex::encode(self.public_key()))
            .finish_non_exhaustive()
    }
}

impl DeviceKey {
    /// A new key from the operating system's CSPRNG.
    pub fn generate() -> Result<Self, SealError> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| SealError::KeyGeneration(e.to_string()))?;
        Ok(Self(SigningKey::from_bytes(&secret)))
    }

    /// The key the device store persisted.
    pub(crate) fn from_secret(secret: &[u8; 32]) -> Self {
        Self(SigningKey::from_bytes(secret))
    }

    /// For the device store to persist, and nothing else.
    pub(crate) fn secret(&self) -> [u8; 32] {
        self.0.to_bytes()
    }

    pub fn public_key(&self) -> [u8; PUBLIC_KEY_BYTES] {
        self.0.verifying_key().to_bytes()
    }

    fn sign(&self, message: &[u8]) -> [u8; SIGNATURE_BYTES] {
        self.0.sign(message).to_bytes()
    }
}

/// Parses a public key as it travels: 64 hex digits or standard base64 of 32 bytes, and a
/// valid curve point. The error says which in Portuguese.
pub fn parse_public_key(input: &str) -> Result<[u8; PUBLIC_KEY_BYTES], String> {
    use base64::Engine;
    let s = input.trim();
    let bytes = if s.len() == 2 * PUBLIC_KEY_BYTES && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        hex::decode(s).map_err(|e| e.to_string())?
    } else {
        base64::engine::general_purpose::STANDARD
            .decode(s)
            .map_err(|_| {
                String::from(
                    "a chave pública do aparelho deve ter 32 bytes em hexadecimal (64 dígitos) ou base64",
                )
            })?
    };
    let key: [u8; PUBLIC_KEY_BYTES] = bytes.try_into().map_err(|b: Vec<u8>| {
        format!(
            "a chave pública do aparelho deve ter 32 bytes, não {}",
            b.len()
        )
    })?;
    VerifyingKey::from_bytes(&key)
        .map_err(|_| String::from("a chave pública do aparelho não é uma chave Ed25519 válida"))?;
    Ok(key)
}

/// Verifies an Ed25519 signature (strict: no malleable or small-order forms).
pub fn verify_signature(
    public_key: &[u8; PUBLIC_KEY_BYTES],
    message: &[u8],
    signature: &[u8; SIGNATURE_BYTES],
) -> bool {
    let Ok(key) = VerifyingKey::from_bytes(public_key) else {
        return false;
    };
    key.verify_strict(message, &EdSignature::from_bytes(signature))
        .is_ok()
}

/// The seal written at issue (root `seal`, JSON). See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvidenceSeal {
    /// `SEAL_VERSION`.
    pub v: u64,
    /// `SEAL_ALG`.
    pub alg: String,
    /// The device's public key, hex.
    pub public_key: String,
    /// The device that sealed (the author's).
    #[schemars(with = "String")]
    pub device_id: Uuid,
    /// SHA-256 (hex) of the canonical evidence bytes.
    pub evidence_sha256: String,
    /// Ed25519 signature (hex) over the canonical evidence bytes.
    pub signature: String,
    /// The auto number as sealed; `None`: issued before it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
    /// SHA-256 of the photos present at issue, in their order then.
    #[serde(default)]
    pub photos: Vec<String>,
    /// `witness_digest` of the witnesses present at issue, in their order then.
    #[serde(default)]
    pub witnesses: Vec<String>,
}

impl EvidenceSeal {
    /// The signature's 64 bytes.
    pub fn signature_bytes(&self) -> Result<[u8; SIGNATURE_BYTES], SealError> {
        let bytes = hex::decode(&self.signature)
            .map_err(|_| SealError::Malformed(String::from("assinatura não hexadecimal")))?;
        bytes
            .try_into()
            .map_err(|_| SealError::Malformed(String::from("assinatura sem 64 bytes")))
    }

    /// The public key's 32 bytes.
    pub fn public_key_bytes(&self) -> Result<[u8; PUBLIC_KEY_BYTES], SealError> {
        let bytes = hex::decode(&self.public_key)
            .map_err(|_| SealError::Malformed(String::from("chave não hexadecimal")))?;
        bytes
            .try_into()
            .map_err(|_| SealError::Malformed(String::from("chave sem 32 bytes")))
    }

    /// The auto's verification code: derived from the device signature, so it binds the paper
    /// to the sealed evidence and is known offline.
    pub fn verification_code(&self) -> Result<documents::VerificationCode, SealError> {
        Ok(documents::VerificationCode::derive(
            AUTO_CODE_DOMAIN,
            &self.signature_bytes()?,
        ))
    }
}

/// Builder of the canonical encoding (see the module docs). Public so that the server encodes
/// its receipts the same way.
#[derive(Debug, Clone, Default)]
pub struct Canon(Vec<u8>);

impl Canon {
    /// An encoding that starts with `domain` (written as is, not length-prefixed).
    pub fn new(domain: &[u8]) -> Self {
        Self(domain.to_vec())
    }

    fn len(out: &mut Vec<u8>, n: usize) {
        out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_be_bytes());
    }

    /// One entry: name and value, both length-prefixed.
    pub fn bytes(&mut self, name: &str, value: &[u8]) -> &mut Self {
        Self::len(&mut self.0, name.len());
        self.0.extend_from_slice(name.as_bytes());
        Self::len(&mut self.0, value.len());
        self.0.extend_from_slice(value);
        self
    }

    pub fn str(&mut self, name: &str, value: &str) -> &mut Self {
        self.bytes(name, value.as_bytes())
    }

    /// Left out when `None`.
    pub fn opt_str(&mut self, name: &str, value: Option<&str>) -> &mut Self {
        if let Some(v) = value {
            self.str(name, v);
        }
        self
    }

    pub fn u64(&mut self, name: &str, value: u64) -> &mut Self {
        self.bytes(name, &value.to_be_bytes())
    }

    pub fn i64(&mut self, name: &str, value: i64) -> &mut Self {
        self.bytes(name, &value.to_be_bytes())
    }

    pub fn f64(&mut self, name: &str, value: f64) -> &mut Self {
        self.bytes(name, &value.to_bits().to_be_bytes())
    }

    /// Milliseconds since the epoch, as documents store instants.
    pub fn time(&mut self, name: &str, value: DateTime<Utc>) -> &mut Self {
        self.i64(name, value.timestamp_millis())
    }

    /// A nested structure: its own entries (no domain) as the value.
    pub fn nested(&mut self, name: &str, f: impl FnOnce(&mut Canon)) -> &mut Self {
        let mut inner = Canon::default();
        f(&mut inner);
        self.bytes(name, &inner.0)
    }

    /// A list of strings: count, then each one length-prefixed.
    pub fn str_list<'a>(
        &mut self,
        name: &str,
        items: impl ExactSizeIterator<Item = &'a str>,
    ) -> &mut Self {
        let mut v = Vec::new();
        Self::len(&mut v, items.len());
        for s in items {
            Self::len(&mut v, s.len());
            v.extend_from_slice(s.as_bytes());
        }
        self.bytes(name, &v)
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

fn agent(c: &mut Canon, a: &Agent) {
    c.str("user_id", &a.user_id)
        .str("role", a.role.as_str())
        .str("device_id", &a.device_id.to_string());
}

fn driver(c: &mut Canon, d: &DriverRef) {
    let role = serde_json::to_value(d.role)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    c.str("person", &d.person.encode()).str("role", &role);
}

fn basis(c: &mut Canon, basis: &[LegalBasis]) {
    c.u64("count", basis.len() as u64);
    for b in basis {
        c.nested("basis", |c| {
            c.str("rule_id", &b.rule_id).str("citation", &b.citation);
        });
    }
}

fn signature(c: &mut Canon, s: &Signature) {
    match s {
        Signature::Signed { sha256 } => c.str("state", "signed").str("sha256", sha256),
        Signature::Missing { reason } => c.str("state", "missing").str("reason", reason),
    };
}

/// SHA-256 (hex) of a witness's canonical entries: what a seal lists for it.
pub fn witness_digest(w: &Witness) -> String {
    let mut c = Canon::new(b"taxi-fiscal/witness/v1\n");
    c.str("person", &w.person.encode())
        .str("statement", &w.statement)
        .time("at", w.added_at)
        .str("by", &w.added_by);
    hex::encode(Sha256::digest(c.into_bytes()))
}

/// What a seal covers besides the record's own fields: the number, photos and witnesses as
/// they were at issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Covered<'a> {
    pub number: Option<&'a str>,
    pub photos: &'a [String],
    pub witnesses: &'a [String],
}

/// The canonical bytes of a record's sealed evidence: every field fixed at issue, one line
/// each, in this order (see the module docs for the encoding). Adding a sealed field is one
/// line here; an optional one (e.g. the officer's confirmation of the vehicle) is left out when
/// absent, so older records keep their bytes.
pub fn canonical_evidence(view: &RecordView, covered: &Covered<'_>) -> Vec<u8> {
    let mut c = Canon::new(EVIDENCE_DOMAIN);
    c.u64("schema_version", view.schema_version)
        .str("id", &view.id.to_string())
        .str("kind", view.kind.as_str())
        .opt_str("number", covered.number)
        .str("issuing_body", &view.issuing_body)
        .nested("author", |c| agent(c, &view.author))
        .time("occurred_at", view.occurred_at)
        .u64("monotonic", view.monotonic);
    if let Some(p) = &view.position {
        c.nested("position", |c| {
            c.f64("lat", p.lat)
                .f64("lon", p.lon)
                .f64("accuracy_m", p.accuracy_m);
        });
    }
    c.opt_str("stand_id", view.stand_id.as_deref());
    if let Some(v) = &view.vehicle {
        c.nested("vehicle", |c| {
            c.str("plate_raw", &v.plate_raw).str("plate", &v.plate);
        });
    }
    if let Some(v) = &view.vehicle_confirmation {
        c.nested("vehicle_confirmation", |c| {
            c.str("user_id", &v.user_id)
                .str("device_id", &v.device_id.to_string())
                .time("at", v.at)
                .str("plate", &v.plate);
        });
    }
    c.nested("driver", |c| driver(c, &view.driver))
        .opt_str("permit_number", view.permit_number.as_deref())
        .opt_str("holder_id", view.holder_id.as_deref())
        .str_list(
            "charged",
            view.charged
                .iter()
                .map(PersonRef::encode)
                .collect::<Vec<_>>()
                .iter()
                .map(String::as_str),
        )
        .opt_str("gravity", view.gravity.map(|g| g.as_str()))
        .str("facts", &view.facts)
        .nested("legal_basis", |c| basis(c, &view.legal_basis))
        .opt_str("verdict", view.verdict.as_deref());
    if let Some(s) = &view.signature {
        c.nested("signature", |c| signature(c, s));
    }
    c.str_list("photos", covered.photos.iter().map(String::as_str))
        .str_list("witnesses", covered.witnesses.iter().map(String::as_str));
    c.into_bytes()
}

/// Seals `view` (the record as it is being issued, signature included) with `key`.
pub(crate) fn seal(view: &RecordView, key: &DeviceKey) -> EvidenceSeal {
    let witnesses: Vec<String> = view.witnesses.iter().map(witness_digest).collect();
    let covered = Covered {
        number: view.number.as_deref(),
        photos: &view.photos,
        witnesses: &witnesses,
    };
    let bytes = canonical_evidence(view, &covered);
    EvidenceSeal {
        v: SEAL_VERSION,
        alg: SEAL_ALG.to_owned(),
        public_key: hex::encode(key.public_key()),
        device_id: view.author.device_id,
        evidence_sha256: hex::encode(Sha256::digest(&bytes)),
        signature: hex::encode(key.sign(&bytes)),
        number: view.number.clone(),
        photos: view.photos.clone(),
        witnesses,
    }
}

/// What a verified seal establishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedSeal {
    pub public_key: [u8; PUBLIC_KEY_BYTES],
    pub signature: [u8; SIGNATURE_BYTES],
    pub evidence_sha256: String,
}

/// Checks `view`'s seal: well formed, written by the author's device, its number, photos and
/// witnesses present in the record, its digest and signature over the canonical evidence
/// valid. The caller checks that the key is one registered to that device.
pub fn verify_seal(view: &RecordView) -> Result<VerifiedSeal, SealError> {
    let seal = view.seal.as_ref().ok_or(SealError::Missing)?;
    if seal.v != SEAL_VERSION || seal.alg != SEAL_ALG {
        return Err(SealError::Malformed(format!(
            "versão {} / algoritmo {:?} desconhecidos",
            seal.v, seal.alg
        )));
    }
    if seal.device_id != view.author.device_id {
        return Err(SealError::WrongDevice);
    }
    let public_key = seal.public_key_bytes()?;
    let signature = seal.signature_bytes()?;
    if seal.number.is_some() && seal.number != view.number {
        return Err(SealError::NumberChanged);
    }
    if seal.photos.iter().any(|p| !view.photos.contains(p)) {
        return Err(SealError::MissingEvidence);
    }
    let present: Vec<String> = view.witnesses.iter().map(witness_digest).collect();
    let mut used = vec![false; present.len()];
    for w in &seal.witnesses {
        match present
            .iter()
            .enumerate()
            .find(|(i, p)| !used[*i] && *p == w)
        {
            Some((i, _)) => used[i] = true,
            None => return Err(SealError::MissingEvidence),
        }
    }
    let bytes = canonical_evidence(
        view,
        &Covered {
            number: seal.number.as_deref(),
            photos: &seal.photos,
            witnesses: &seal.witnesses,
        },
    );
    let digest = hex::encode(Sha256::digest(&bytes));
    if digest != seal.evidence_sha256 || !verify_signature(&public_key, &bytes, &signature) {
        return Err(SealError::BadSignature);
    }
    Ok(VerifiedSeal {
        public_key,
        signature,
        evidence_sha256: digest,
    })
}
