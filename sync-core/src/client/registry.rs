//! Registry pull (`crate::feed`): a device that holds version V asks for the changes since V
//! (`GET /v1/registry/changes?since=V`) — usually nothing, one small answer. A device with no
//! registry, or one the server answers 410 `snapshot_required` (V too old or unknown, e.g. a
//! restored server), downloads the whole snapshot (`GET /v1/registry/snapshot`,
//! `Accept-Encoding: zstd`, `If-None-Match` of the version it holds). Either is applied in one
//! store transaction, so the replica is always a version the office really published; a batch
//! that does not fit the replica falls back to the snapshot.

use serde::Serialize;

use super::{ClientError, HttpRequest, Method, SyncClient, decoded_body, http_error};
use crate::feed::{self, FeedError, RegistryChanges};
use crate::store::{Store, StoreError};

/// How the registry was brought up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegistryMode {
    /// It was current.
    Current,
    /// A batch of changes.
    Changes,
    /// The whole registry.
    Snapshot,
}

/// What a registry pull did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegistryPull {
    pub mode: RegistryMode,
    pub from_version: Option<u64>,
    pub version: u64,
    /// Changes applied, or entities in the snapshot.
    pub rows: usize,
    /// Body bytes received for it (compressed).
    pub bytes: u64,
}

impl SyncClient {
    /// Brings the replica to the server's version.
    pub fn pull_registry(&self, store: &mut Store) -> Result<RegistryPull, ClientError> {
        let have = store.replica_info()?;
        if let Some(info) = &have {
            let request = HttpRequest::new(
                Method::Get,
                format!("/v1/registry/changes?since={}", info.version),
            )
            .header("accept", "application/json")
            .header("accept-encoding", "zstd");
            let response = self.call(store, request, true)?;
            match response.status {
                200 => {
                    let body = decoded_body(&response).map_err(bad)?;
                    let text = String::from_utf8(body).map_err(|e| bad(e.to_string()))?;
                    let changes =
                        RegistryChanges::from_json(&text).map_err(|e| bad(e.to_string()))?;
                    match store.apply_changes(&changes, self.clock.now()) {
                        Ok(report) => {
                            return Ok(RegistryPull {
                                mode: if changes.to_version == info.version {
                                    RegistryMode::Current
                                } else {
                                    RegistryMode::Changes
                                },
                                from_version: Some(info.version),
                                version: report.version,
                                rows: report.rows,
                                bytes: response.body.len() as u64,
                            });
                        }
                        // The batch does not fit this replica: take the whole registry.
                        Err(StoreError::Feed(FeedError::OutOfOrder { .. }))
                        | Err(StoreError::Integrity { .. }) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                410 => {}
                _ => return Err(http_error("o cadastro (alterações)", &response)),
            }
        }
        self.pull_snapshot(store, have.map(|i| i.version))
    }

    fn pull_snapshot(
        &self,
        store: &mut Store,
        have: Option<u64>,
    ) -> Result<RegistryPull, ClientError> {
        let mut request = HttpRequest::new(Method::Get, "/v1/registry/snapshot")
            .header("accept", "application/json")
            .header("accept-encoding", "zstd");
        if let Some(v) = have {
            request.set_header("if-none-match", format!("\"registry-{v}\""));
        }
        let response = self.call(store, request, true)?;
        match response.status {
            304 => {
                // Same version: an empty batch records that the replica was confirmed current.
                let v = have.unwrap_or_default();
                let report = store.apply_changes(
                    &RegistryChanges {
                        from_version: v,
                        to_version: v,
                        generated_at: None,
                        changes: Vec::new(),
                    },
                    self.clock.now(),
                )?;
                Ok(RegistryPull {
                    mode: RegistryMode::Current,
                    from_version: have,
                    version: report.version,
                    rows: 0,
                    bytes: 0,
                })
            }
            200 => {
                let snapshot = snapshot_of(&response)?;
                let report = store.apply_snapshot(&snapshot, self.clock.now())?;
                Ok(RegistryPull {
                    mode: RegistryMode::Snapshot,
                    from_version: have,
                    version: report.version,
                    rows: report.rows,
                    bytes: response.body.len() as u64,
                })
            }
            _ => Err(http_error("o cadastro (snapshot)", &response)),
        }
    }
}

/// The snapshot in a 200 response, decoded and parsed as a stream within
/// [`MAX_SNAPSHOT_DECODED_BYTES`](super::MAX_SNAPSHOT_DECODED_BYTES).
fn snapshot_of(response: &super::HttpResponse) -> Result<feed::RegistrySnapshot, ClientError> {
    snapshot_within(response, super::MAX_SNAPSHOT_DECODED_BYTES)
}

/// [`snapshot_of`] within `limit` decoded bytes.
fn snapshot_within(
    response: &super::HttpResponse,
    limit: u64,
) -> Result<feed::RegistrySnapshot, ClientError> {
    let body = response.body.as_slice();
    let parse = |input: &mut dyn std::io::Read| {
        let mut bounded = crate::limits::BoundedReader::new(input, limit);
        let parsed = feed::snapshot_from_reader(&mut bounded);
        match parsed {
            Err(_) if bounded.exceeded() => Err(bad(format!(
                "o cadastro descompactado passa de {limit} bytes, o máximo aceito"
            ))),
            other => other.map_err(|e| bad(e.to_string())),
        }
    };
    match response.header("content-encoding").map(str::trim) {
        None | Some("") | Some("identity") => parse(&mut &*body),
        Some(c) if c.eq_ignore_ascii_case("zstd") => {
            let mut decoder =
                zstd::stream::read::Decoder::new(body).map_err(|e| bad(format!("zstd: {e}")))?;
            parse(&mut decoder)
        }
        Some(other) => Err(bad(format!("codificação {other:?} não pedida"))),
    }
}

fn bad(detail: String) -> ClientError {
    ClientError::BadResponse {
        what: "o cadastro",
        detail,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod snapshot_bound_tests {
    use std::io::Read;

    use super::super::{HttpResponse, MAX_SNAPSHOT_DECODED_BYTES};
    use super::{snapshot_of, snapshot_within};

    /// A zstd body whose text is the sample registry followed by `pad` spaces, compressed as
    /// a stream (the padding is never held), and the text's length.
    fn padded(pad: u64) -> (HttpResponse, u64) {
        let json = serde_json::to_vec(&crate::testkit::sample_registry()).unwrap();
        let len = json.len() as u64 + pad;
        let text = json.as_slice().chain(std::io::repeat(b' ').take(pad));
        let body = zstd::stream::encode_all(text, 3).unwrap();
        let response = HttpResponse {
            status: 200,
            headers: vec![("content-encoding".into(), "zstd".into())],
            body,
        };
        (response, len)
    }

    /// The snapshot is parsed as it is decompressed: exactly the bound is read, one byte more
    /// is refused with the reason, without holding the text. Judged at a bound of 16 MiB of
    /// decoded text (the client's own, [`MAX_SNAPSHOT_DECODED_BYTES`], is the same code with a
    /// larger number; decoding 320 MiB twice in a debug test would cost half a minute).
    #[test]
    fn a_snapshot_at_the_bound_is_read_and_one_byte_more_is_refused() {
        let (response, limit) = padded(16 * 1024 * 1024);
        assert_eq!(
            snapshot_within(&response, limit).unwrap(),
            crate::testkit::sample_registry()
        );
        assert!(response.body.len() < 64 * 1024, "{}", response.body.len());
        let e = snapshot_within(&response, limit - 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("passa de {}", limit - 1)), "{e}");
        // Under the client's own bound; a body cut short, or one that is not zstd, is an error.
        assert!(limit < MAX_SNAPSHOT_DECODED_BYTES);
        assert!(snapshot_of(&response).is_ok());
        let mut cut = response.clone();
        cut.body.truncate(cut.body.len() / 2);
        assert!(snapshot_of(&cut).is_err());
        let mut plain = response;
        plain.body = b"not zstd".to_vec();
        assert!(snapshot_of(&plain).is_err());
    }
}
