//! The sync client's TLS: rustls over the `ring` provider, verifying servers against the Mozilla
//! root store the library carries (`webpki-roots`) and, when the app passes one, the city's own
//! certificate authority (a PEM text, e.g. a private CA of the city's data centre).
//!
//! Why not the platform's verifier: on Android it must be initialised through JNI with the app's
//! context before the first connection, and an app that forgets fails at the first login in the
//! street. A root store compiled in needs no set-up on any platform; a private CA is one more
//! string in the session's options. Why `ring` and not `aws-lc-rs` (reqwest's default): it
//! builds for every Android and iOS target without CMake, and compiles in a fraction of the time.
//!
//! A bad CA text is refused when the session is made, with a sentence that says what was wrong,
//! never at the first sync in the street.

use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// Largest CA text accepted: a bundle of a few dozen certificates fits many times over; a
/// larger text is a wrong file, not a CA.
pub const MAX_EXTRA_CA_PEM_BYTES: usize = 256 * 1024;

/// Why the TLS configuration could not be made (the app's CA, as it was passed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsError {
    #[error("o certificado da autoridade certificadora informado não é um texto PEM válido: {0}")]
    BadPem(String),
    #[error(
        "o texto da autoridade certificadora não contém nenhum certificado \
         (esperado -----BEGIN CERTIFICATE-----)"
    )]
    NoCertificate,
    #[error(
        "o texto da autoridade certificadora tem {0} bytes, mais que o limite de {limit}",
        limit = MAX_EXTRA_CA_PEM_BYTES
    )]
    TooLarge(usize),
    #[error("o certificado da autoridade certificadora foi recusado: {0}")]
    Rejected(String),
    #[error("configuração TLS: {0}")]
    Config(String),
}

/// The certificates of a PEM text, refused whole when any block is broken or none is there.
pub fn parse_ca_pem(pem: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    if pem.len() > MAX_EXTRA_CA_PEM_BYTES {
        return Err(TlsError::TooLarge(pem.len()));
    }
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::BadPem(e.to_string()))?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate);
    }
    Ok(certs)
}

/// The TLS configuration of every sync client connection: Mozilla's roots, plus the
/// certificates of `extra_ca_pem` when given. Also what the project's test clients hand to
/// reqwest (`tls_backend_preconfigured`), which has no provider of its own.
pub fn client_config(extra_ca_pem: Option<&str>) -> Result<rustls::ClientConfig, TlsError> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(pem) = extra_ca_pem {
        for cert in parse_ca_pem(pem)? {
            roots
                .add(cert)
                .map_err(|e| TlsError::Rejected(e.to_string()))?;
        }
    }
    Ok(rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| TlsError::Config(e.to_string()))?
    .with_root_certificates(roots)
    .with_no_client_auth())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A real self-signed CA certificate (P-256), as `openssl req -x509` writes it.
    const CA: &str = "-----BEGIN CERTIFICATE-----
MIIBfDCCASGgAwIBAgIUEptlkLh/UNxAjowxP7kn1BYyGQ0wCgYIKoZIzj0EAwIw
EzERMA8GA1UEAwwIdGVzdGUtY2EwHhcNMjYxMjA3MDUxMzAyWhcNMzYxMjA0MDUx
MzAyWjATMREwDwYDVQQDDAh0ZXN0ZS1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEH
A0IABAgiZcFIXYki4ytYJnAIfCHcVQhnEmdC7awcDMiE6/8NXxGIAWeSuT72lYcj
7o8SGCH2Hp9yARHmRJLOUQWZZaqjUzBRMB0GA1UdDgQWBBRbT/L0BVHzPilZGRWe
IrqJZZrZrTAfBgNVHSMEGDAWgBRbT/L0BVHzPilZGRWeIrqJZZrZrTAPBgNVHRMB
Af8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQDzPEfV7Q03gfeWNOMxjGDTtX9p
hZpmXG20qC3Jxhn6yAIhAKnsiSkMs9ic3KXkLDcZ1ZzabSsZ4//xdsFw5vvywbMD
-----END CERTIFICATE-----
";

    #[test]
    fn the_configuration_carries_the_root_store() {
        let config = client_config(None).unwrap();
        assert!(webpki_roots::TLS_SERVER_ROOTS.len() > 100);
        assert!(config.crypto_provider().cipher_suites.len() >= 3);
    }

    #[test]
    fn a_ca_text_is_parsed_into_its_certificates() {
        let certs = parse_ca_pem(CA).unwrap();
        assert_eq!(certs.len(), 1);
        let two = format!("{CA}{CA}");
        assert_eq!(parse_ca_pem(&two).unwrap().len(), 2);
    }

    #[test]
    fn a_text_without_a_certificate_is_refused_with_a_reason() {
        for text in ["", "não é um certificado", "-----BEGIN PRIVATE KEY-----\n"] {
            let e = client_config(Some(text)).unwrap_err();
            assert!(
                matches!(e, TlsError::NoCertificate | TlsError::BadPem(_)),
                "{text:?}: {e:?}"
            );
            assert!(e.to_string().contains("autoridade certificadora"), "{e}");
        }
        let broken = CA.replace("MIIB", "!!!!");
        assert!(matches!(
            parse_ca_pem(&broken).unwrap_err(),
            TlsError::BadPem(_)
        ));
    }

    #[test]
    fn the_size_limit_holds_at_its_edge() {
        // Padding outside the PEM blocks is ignored by the parser, so the edge is the length.
        let at = format!("{CA}{}", " ".repeat(MAX_EXTRA_CA_PEM_BYTES - CA.len()));
        assert_eq!(at.len(), MAX_EXTRA_CA_PEM_BYTES);
        assert_eq!(parse_ca_pem(&at).unwrap().len(), 1);
        let over = format!("{at} ");
        assert_eq!(
            parse_ca_pem(&over).unwrap_err(),
            TlsError::TooLarge(MAX_EXTRA_CA_PEM_BYTES + 1)
        );
    }
}
