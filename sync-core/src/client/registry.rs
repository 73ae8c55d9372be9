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
                let body = decoded_body(&response).map_err(bad)?;
                let text = String::from_utf8(body).map_err(|e| bad(e.to_string()))?;
                let snapshot = feed::snapshot_from_json(&text).map_err(|e| bad(e.to_string()))?;
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

fn bad(detail: String) -> ClientError {
    ClientError::BadResponse {
        what: "o cadastro",
        detail,
    }
}
