//! Photo upload, resumable at photo granularity: the photos whose `uploaded_at` is NULL are
//! asked about in one `POST /v1/photos/have` (the server answers which of those hashes it
//! already holds — an upload whose confirmation was lost, or a photo another path brought);
//! those are marked at once; the rest go one by one as `PUT /v1/photos/{sha256}`, each marked
//! as soon as the server confirms it. An interruption costs at most the photo in flight, and
//! the server's `PUT` is idempotent anyway.
//!
//! Each photo is re-hashed before it leaves: bytes that no longer match their hash (damaged
//! storage) are reported, not sent — the server would refuse them as `hash_mismatch`.
//!
//! Progress (`super::Progress`): the photos pending and their sizes as the step starts, the
//! ones the server already held at once, then each photo as it is dealt with. A photo goes
//! as one request body, so there is nothing finer to tell.

use serde::{Deserialize, Serialize};

use super::{
    ClientError, HttpRequest, Method, Reporter, SyncClient, http_error, json_body, json_request,
};
use crate::store::{Store, sha256_hex};

/// Hashes per `have` question (a request of ~65 KB).
const HAVE_BATCH: usize = 1000;

#[derive(Debug, Serialize)]
struct HaveRequest<'a> {
    hashes: &'a [String],
}

#[derive(Debug, Deserialize)]
struct HaveResponse {
    have: Vec<String>,
}

/// A photo that could not be uploaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhotoIssue {
    pub hash: String,
    pub message: String,
}

/// What a photo upload did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PhotoUpload {
    /// Sent now.
    pub uploaded: u64,
    pub uploaded_bytes: u64,
    /// The server already had them (confirmed without sending).
    pub already_on_server: u64,
    pub issues: Vec<PhotoIssue>,
}

impl SyncClient {
    /// Uploads every photo the server has not confirmed.
    pub fn upload_photos(&self, store: &mut Store) -> Result<PhotoUpload, ClientError> {
        self.upload_photos_reporting(store, &mut Reporter::new(self, None))
    }

    /// `upload_photos`, telling `progress` as it starts, after the `have` question and after
    /// each photo.
    pub(crate) fn upload_photos_reporting(
        &self,
        store: &mut Store,
        progress: &mut Reporter<'_>,
    ) -> Result<PhotoUpload, ClientError> {
        let mut out = PhotoUpload::default();
        // Hashes apart from sizes: the `have` question takes a slice of hashes as they are.
        let (hashes, sizes): (Vec<String>, Vec<u64>) = store
            .pending_photos()?
            .into_iter()
            .map(|p| (p.hash, p.size))
            .unzip();
        let p = progress.progress();
        p.photos_total = hashes.len() as u64;
        p.photo_bytes_total = sizes.iter().sum();
        progress.emit();
        if hashes.is_empty() {
            return Ok(out);
        }
        let mut present: Vec<String> = Vec::new();
        for batch in hashes.chunks(HAVE_BATCH) {
            present.extend(self.server_has(store, batch)?);
        }
        if !present.is_empty() {
            out.already_on_server = store.mark_photos_uploaded(&present, self.clock.now())? as u64;
            let p = progress.progress();
            for (_, size) in hashes
                .iter()
                .zip(&sizes)
                .filter(|(h, _)| present.contains(h))
            {
                p.photos_done += 1;
                p.photo_bytes_done += size;
            }
            progress.emit();
        }
        for (hash, size) in hashes.iter().zip(&sizes) {
            if present.contains(hash) {
                continue;
            }
            if self.cancel.is_cancelled() {
                return Err(ClientError::Cancelled);
            }
            self.upload_photo(store, hash, &mut out)?;
            // Dealt with, sent or not (`out` says which): the bar moves on either way.
            let p = progress.progress();
            p.photos_done += 1;
            p.photo_bytes_done += size;
            progress.emit();
        }
        Ok(out)
    }

    /// Sends one photo, noting in `out` whether it went or why not; returns the errors that
    /// stop the step.
    fn upload_photo(
        &self,
        store: &mut Store,
        hash: &String,
        out: &mut PhotoUpload,
    ) -> Result<(), ClientError> {
        let Some(bytes) = store.photo(hash)? else {
            return Ok(());
        };
        if sha256_hex(&bytes) != *hash {
            out.issues.push(PhotoIssue {
                hash: hash.clone(),
                message: String::from(
                    "a foto guardada neste aparelho não confere mais com o seu hash (dano no \
                     armazenamento) e não foi enviada",
                ),
            });
            return Ok(());
        }
        let size = bytes.len() as u64;
        let request = HttpRequest::new(Method::Put, format!("/v1/photos/{hash}"))
            .header("content-type", "application/octet-stream")
            .header("accept", "application/json")
            .body(bytes);
        let response = self.call(store, request, true)?;
        match response.status {
            200 | 201 => {
                store.mark_photos_uploaded(std::slice::from_ref(hash), self.clock.now())?;
                out.uploaded += 1;
                out.uploaded_bytes += size;
            }
            // Refused for this photo only (too large, bytes changed in flight): report it
            // and go on with the others.
            413 | 422 => out.issues.push(PhotoIssue {
                hash: hash.clone(),
                message: http_error("a foto", &response).to_string(),
            }),
            _ => return Err(http_error("o envio de fotos", &response)),
        }
        Ok(())
    }

    /// Which of `hashes` the server holds. A server without the `have` route (404/405) is
    /// treated as holding none: every photo is then sent, which its idempotent `PUT` accepts.
    fn server_has(&self, store: &mut Store, hashes: &[String]) -> Result<Vec<String>, ClientError> {
        let request = json_request(Method::Post, "/v1/photos/have", &HaveRequest { hashes })?;
        let response = self.call(store, request, true)?;
        match response.status {
            200 => {
                let have: HaveResponse = json_body("a consulta de fotos", &response)?;
                // Only hashes asked about count (a confused server cannot mark other photos).
                Ok(have
                    .have
                    .into_iter()
                    .map(|h| h.to_ascii_lowercase())
                    .filter(|h| hashes.contains(h))
                    .collect())
            }
            404 | 405 => Ok(Vec::new()),
            _ => Err(http_error("a consulta de fotos", &response)),
        }
    }
}
