//! Auto-number top-up: when fewer than `number_low_water` numbers are left on the device, lease
//! a block from the server (`POST /v1/devices/{id}/number-blocks`), store it, and number the
//! records that were saved while none was left.
//!
//! Repeating is harmless: a block whose answer was lost is never used (a gap in the numbering,
//! which the law does not forbid; numbers are never reused), and a block delivered twice is
//! refused by the store as overlapping and ignored here.

use serde::{Deserialize, Serialize};

use super::{ClientError, HttpRequest, Method, SyncClient, http_error, json_body, json_request};
use crate::field::FieldRecords;
use crate::store::{Store, StoreError};

#[derive(Debug, Serialize)]
struct NumberBlockRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct NumberBlockView {
    start: u64,
    end: u64,
}

/// What a top-up did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NumberTopUp {
    pub start: u64,
    pub end: u64,
    /// Records that were waiting and got a number from it.
    pub numbered: Vec<(String, u64)>,
    pub numbers_left: u64,
}

impl SyncClient {
    /// Leases a block if the device runs low; `None` when it had enough.
    pub fn top_up_numbers(&self, store: &mut Store) -> Result<Option<NumberTopUp>, ClientError> {
        if store.numbers_left()? >= self.options.number_low_water {
            return Ok(None);
        }
        let session = store.client_session()?.ok_or_else(|| {
            ClientError::LoginRequired(String::from("nenhuma sessão neste aparelho"))
        })?;
        let path = format!(
            "/v1/devices/{}/number-blocks",
            utf8_percent_encode(&session.server_device_id)
        );
        let request: HttpRequest = json_request(
            Method::Post,
            path,
            &NumberBlockRequest {
                size: self.options.number_block_size,
            },
        )?;
        let response = self.call(store, request, true)?;
        if response.status != 201 && response.status != 200 {
            return Err(http_error("o pedido de numeração", &response));
        }
        let block: NumberBlockView = json_body("o pedido de numeração", &response)?;
        match store.add_number_block(block.start, block.end) {
            Ok(()) | Err(StoreError::NumberBlockOverlap { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        let numbered = match FieldRecords::open(store) {
            Ok(mut field) => field.assign_pending_numbers(self.clock.now())?,
            // No identity yet: no record can be waiting either.
            Err(crate::field::FieldError::NoIdentity) => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        Ok(Some(NumberTopUp {
            start: block.start,
            end: block.end,
            numbered,
            numbers_left: store.numbers_left()?,
        }))
    }
}

/// Percent-encodes a path segment (device ids are `[A-Za-z0-9._-]` on the server; anything
/// else is escaped rather than trusted).
pub(super) fn utf8_percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
