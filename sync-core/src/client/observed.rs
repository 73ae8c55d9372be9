//! Observed persons' identity and contact, sent after the records: for each record whose
//! observed people changed since the server last confirmed them (`observed_people.uploaded_at`
//! NULL: a new witness, or one erased on this device), the whole set the device still holds
//! goes as one `PUT /v1/records/{id}/observed-persons`, then its rows are marked. The `PUT`
//! replaces the server's set, so a repeat after a lost answer stores nothing new.
//!
//! Answers: 200 marks the rows; 409 `observed_persons_erased` (the office erased them when the
//! case ended) marks them too — the server will never take them again, and asking every sync
//! would be pointless; 404 (the record has not reached the server: refused, or still to sync)
//! and other refusals of this record are reported and the rows stay pending for the next sync.

use serde::Serialize;

use super::{ClientError, Method, SyncClient, http_error, json_request};
use crate::store::Store;
use crate::sync::{ObservedIdentity, ObservedPersonsUpload, check_upload};

/// A record whose observed persons could not be sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObservedIssue {
    pub record_id: String,
    /// Portuguese, ready to show.
    pub message: String,
}

/// What the upload of observed persons did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ObservedUpload {
    /// Records whose set the server confirmed now.
    pub records: u64,
    /// Persons in those sets.
    pub persons: u64,
    /// Records the office had already erased the persons of (nothing sent again).
    pub erased_on_server: u64,
    pub issues: Vec<ObservedIssue>,
}

impl SyncClient {
    /// Sends the observed persons of every record whose set changed (module docs).
    pub fn upload_observed_persons(
        &self,
        store: &mut Store,
    ) -> Result<ObservedUpload, ClientError> {
        let mut out = ObservedUpload::default();
        for record_id in store.records_with_pending_observed()? {
            if self.cancel.is_cancelled() {
                return Err(ClientError::Cancelled);
            }
            let rows = store.observed_people_of_record(&record_id)?;
            let ids: Vec<String> = rows.iter().map(|(id, _)| id.clone()).collect();
            let persons: Vec<ObservedIdentity> = rows
                .iter()
                .filter_map(|(id, p)| ObservedIdentity::from_store(id, p))
                .collect();
            let upload = ObservedPersonsUpload { persons };
            // The server's check, run here first: what it would refuse is reported, not sent.
            let view = match store.record_summary(&record_id)? {
                Some(_) => crate::field::load(store, &record_id)?
                    .view()
                    .map_err(crate::field::FieldError::from)?,
                None => continue,
            };
            let upload = match check_upload(&view, upload) {
                Ok(persons) => ObservedPersonsUpload { persons },
                Err(e) => {
                    out.issues.push(ObservedIssue {
                        record_id,
                        message: e.0,
                    });
                    continue;
                }
            };
            let count = upload.persons.len() as u64;
            let request = json_request(
                Method::Put,
                format!("/v1/records/{record_id}/observed-persons"),
                &upload,
            )?;
            let response = self.call(store, request, true)?;
            match response.status {
                200 | 201 => {
                    store.mark_observed_uploaded(&record_id, &ids, self.clock.now())?;
                    out.records += 1;
                    out.persons += count;
                }
                409 => {
                    store.mark_observed_uploaded(&record_id, &ids, self.clock.now())?;
                    out.erased_on_server += 1;
                }
                400..=499 => out.issues.push(ObservedIssue {
                    record_id,
                    message: http_error("as testemunhas do registro", &response).to_string(),
                }),
                _ => return Err(http_error("o envio das testemunhas", &response)),
            }
        }
        Ok(out)
    }
}
