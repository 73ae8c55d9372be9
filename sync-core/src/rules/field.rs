//! Field check: plate or permit + driver + instant (+ observations) → Verdict.
//! (Being written; see issue 2.)

use super::{CheckInput, RulesConfig, Verdict};
use crate::domain::RegistryIndex;

/// Evaluates every enabled field rule.
pub fn check(_index: &RegistryIndex<'_>, _input: &CheckInput, _config: &RulesConfig) -> Verdict {
    todo!()
}
