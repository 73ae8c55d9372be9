//! Behaviour tests every [`Store`] backend must pass, written only against the trait and the
//! public types of this crate, so that the SQLite backend and the PostgreSQL one to come
//! are held to the same contract (as matrix-rust-sdk's `statestore_integration_tests!` does
//! for its state stores).
//!
//! A backend crate takes this crate as a dev-dependency with the `conformance` feature.
//!
//! Flow: each test is a `pub async fn` here taking a fresh, empty `Arc<dyn Store>`;
//! [`store_conformance_tests!`] expands, in the backend's own test module, to one
//! `#[tokio::test]` per function, inside a nested `mod store_conformance`, each opening its
//! own store with the expression it is given and calling the function. A backend runs the
//! whole suite in a few lines:
//!
//! ```ignore
//! #[cfg(test)]
//! mod conformance_tests {
//!     use std::sync::Arc;
//!
//!     use taxi_fiscal_store::Store;
//!
//!     use super::SqliteStore;
//!
//!     taxi_fiscal_store::conformance::store_conformance_tests!(async {
//!         let dir = tempfile::tempdir().unwrap();
//!         let store = SqliteStore::open(&dir.path().join("t.db")).unwrap();
//!         // The guard (here the directory) lives as long as the test.
//!         (Arc::new(store) as Arc<dyn Store>, dir)
//!     });
//! }
//! ```
//!
//! The expression is evaluated once per test, inside the nested module (which has
//! `use super::*`, so the calling module's names are in scope; write other paths from
//! `crate::`), and yields either an `Arc<dyn Store>` or a pair of it and a guard kept alive
//! until the test ends (a temporary directory, a database to drop): see [`FreshStore`].
//!
//! Each test sets up what it needs through the trait itself (users, devices, registry
//! versions, records synced with real Automerge documents built by `sync_core::records`), so
//! the suite assumes nothing of a backend's tables. Everything acts at the fixed instant
//! [`t0`], passed to the store explicitly. A new test is its function here and its name in
//! the macro's list; no backend changes.

// Test code: a failed step is a failed test, so panicking on it is what it should do.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_debug_implementations
)]

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use sync_core::domain::{
    DriverRole, IndexedRegistry, Plate, Registry, ServiceKind, Stand, StandSchedule,
};
use sync_core::feed;
use sync_core::records::{
    Agent, EventKind, InfractionDraft, LegalBasis, PersonRef, RecordDoc as Doc, Signature,
};
use sync_core::rules::RuleId;
use sync_core::rules::selection::{Edital, Vacancy};
use sync_core::sync::{
    Bytes, NewRecord, PROTOCOL_VERSION, RejectionCode, ServerSync, SyncError, SyncRequest,
    SyncResponse, device_uuid,
};
use uuid::Uuid;

use crate::records::{
    Caller, EventJob, EventOutcome, RecordFilter, RecordOrder, RecordRow, RecordSort, SearchWord,
    SyncJob, SyncOutcome, record_role,
};
use crate::selection::{EditalSave, EditalSaved};
use crate::{
    Actor, ChangesSince, CodePurpose, CodeRefusal, KeyRegistration, NewAccountCode, NewDevice,
    PhotoMeta, PutPhoto, RefreshTokenRow, RegistryCommit, Role, RotateOutcome, Store, StoreError,
    UserRow,
};

/// Expands to one `#[tokio::test]` per conformance test, in a nested `mod store_conformance`,
/// each running on the store `$open` yields (see the module doc).
#[macro_export]
macro_rules! store_conformance_tests {
    ($open:expr) => {
        $crate::conformance::store_conformance_tests!(@tests $open;
            registry_commits_bump_the_version_and_refuse_a_stale_base,
            users_are_created_found_and_a_taken_username_is_refused,
            refresh_tokens_rotate_and_a_replayed_one_revokes_its_family,
            a_refresh_whose_answer_was_lost_is_repeated_within_the_interval_only,
            user_roles_and_deactivation_are_stored_and_end_logins,
            a_password_change_compares_the_old_hash_and_ends_other_logins,
            one_time_codes_are_live_until_replaced_expired_or_spent,
            devices_are_registered_once_and_revocation_ends_them,
            device_keys_are_bound_to_one_device,
            number_leases_are_disjoint_and_bounded_per_device,
            photos_are_stored_once_and_found_by_hash,
            the_audit_chain_links_every_audited_write,
            registry_changes_since_a_version_lead_to_the_current_one,
            a_synced_record_is_projected_audited_and_a_replay_changes_nothing,
            a_change_the_senders_role_may_not_make_is_quarantined_and_stores_nothing,
            an_exchange_refused_as_a_whole_writes_nothing,
            records_reach_only_the_devices_that_may_see_them,
            auto_numbers_come_from_the_devices_blocks_and_are_unique,
            record_pages_are_ordered_cut_and_counted,
            record_filters_leave_out_what_does_not_match,
            the_inbox_filters_by_rule_and_counts_statuses,
            office_events_are_vetted_projected_and_reach_the_device,
            office_jobs_store_every_step_and_effect_or_nothing,
            duplicate_candidates_share_a_plate_across_devices_within_the_window,
            parallel_exchanges_lose_nothing_and_pass_no_change_by,
            editais_are_created_once_and_saved_under_their_version,
            an_edital_saved_with_a_registry_version_writes_both_or_neither,
            editais_are_listed_newest_first_and_bounded,
            an_edital_opened_on_a_stale_read_is_a_conflict,
            notifications_are_numbered_sealed_and_created_once,
            observed_persons_are_replaced_erased_once_and_merges_listed,
            login_pairs_lock_after_max_failures_for_the_window,
            a_locked_out_address_leaves_the_user_open_elsewhere,
            the_username_ceiling_locks_everywhere_with_a_doubling_lockout_up_to_the_max,
            login_attempts_still_running_count_against_the_budget,
            a_refunded_login_attempt_is_given_back,
            expired_login_rows_are_pruned_a_bounded_batch_per_reserve,
            web_sessions_expire_at_their_edges_and_flash_once,
            web_sessions_end_per_user_and_are_capped_and_swept_at_open,
        );
    };
    (@tests $open:expr; $($name:ident),* $(,)?) => {
        #[allow(clippy::unwrap_used, clippy::expect_used)]
        mod store_conformance {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    let fresh = $crate::conformance::FreshStore::from($open.await);
                    $crate::conformance::$name(fresh.store()).await;
                }
            )*
        }
    };
}
pub use crate::store_conformance_tests;

/// A fresh, empty store for one test, and whatever must outlive it (dropped after the store).
pub struct FreshStore {
    store: Arc<dyn Store>,
    _guard: Option<Box<dyn std::any::Any + Send>>,
}

impl FreshStore {
    pub fn store(&self) -> Arc<dyn Store> {
        self.store.clone()
    }
}

impl From<Arc<dyn Store>> for FreshStore {
    fn from(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            _guard: None,
        }
    }
}

impl<G: Send + 'static> From<(Arc<dyn Store>, G)> for FreshStore {
    fn from((store, guard): (Arc<dyn Store>, G)) -> Self {
        Self {
            store,
            _guard: Some(Box::new(guard)),
        }
    }
}

// ----- fixtures -----------------------------------------------------------------------------

/// The instant the tests act at (a fixed day, so that time checks are reproducible).
pub fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T15:00:00Z")
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

fn cli() -> Actor {
    Actor::cli(t0())
}

fn user_row(id: &str, username: &str, role: Role, stand_id: Option<&str>) -> UserRow {
    UserRow {
        id: id.to_owned(),
        username: username.to_owned(),
        display_name: format!("Usuário {username}"),
        role,
        stand_id: stand_id.map(String::from),
        password_hash: format!("hash-de-{username}"),
        active: true,
        created_at: t0(),
    }
}

/// A user and one device of theirs, registered through the store.
async fn user_with_device(store: &dyn Store, username: &str, role: Role, device: &str) -> UserRow {
    let user = store
        .create_user(
            user_row(&format!("u-{username}"), username, role, None),
            cli(),
        )
        .await
        .unwrap();
    store
        .register_device(
            crate::NewDevice {
                id: device.to_owned(),
                user_id: user.id.clone(),
                label: format!("Aparelho {device}"),
            },
            cli(),
        )
        .await
        .unwrap();
    user
}

fn refresh(hash: &str, family: &str, user: &UserRow, device: &str) -> RefreshTokenRow {
    RefreshTokenRow {
        token_hash: hash.to_owned(),
        family_id: family.to_owned(),
        user_id: user.id.clone(),
        device_id: device.to_owned(),
        issued_at: t0(),
        expires_at: t0() + Duration::days(30),
    }
}

fn stand(id: &str) -> Stand {
    Stand {
        id: id.to_owned(),
        name: format!("Ponto {id}"),
        address: format!("Rua do ponto {id}, Americana"),
        schedule: StandSchedule::Day,
        service: ServiceKind::Common,
        vacancies: 4,
        coordinator_id: None,
        latitude: None,
        longitude: None,
    }
}

/// The commit that takes `base` to a registry holding exactly `stands`, as the registry
/// service computes it (`registry::commit`: sorted, diffed, version and time set).
fn commit_of(base: &Registry, stands: Vec<Stand>, subject: &str) -> RegistryCommit {
    let version = base.version + 1;
    let at = t0() + Duration::minutes(i64::try_from(version).unwrap_or(0));
    let next = feed::sorted(Registry {
        version,
        generated_at: Some(at),
        stands,
        ..base.clone()
    });
    RegistryCommit {
        expected_version: base.version,
        changes: feed::diff(base, &next),
        registry: Arc::new(next),
        action: String::from("registry.stand.edit"),
        subject: subject.to_owned(),
        actor: Actor::cli(at),
    }
}

fn stand_ids(reg: &Registry) -> Vec<String> {
    reg.stands.iter().map(|s| s.id.clone()).collect()
}

// ----- registry -----------------------------------------------------------------------------

/// A fresh store is at version 0; a commit from the current version bumps it by one and is
/// what `registry()` then returns, with one audit row; a commit computed from a version that
/// is no longer current fails with `VersionConflict` (naming both versions) and writes
/// nothing, neither entities nor audit row.
pub async fn registry_commits_bump_the_version_and_refuse_a_stale_base(store: Arc<dyn Store>) {
    let empty = store.registry().await.unwrap();
    assert_eq!(empty.version, 0);
    assert!(empty.stands.is_empty() && empty.permits.is_empty());
    let head0 = store.audit_head().await.unwrap();

    let commit = commit_of(&empty, vec![stand("S01")], "stand:S01");
    let made = commit.changes.changes.clone();
    let committed = store.commit_registry(commit).await.unwrap();
    assert_eq!(committed.version, 1);
    assert_eq!(
        committed.changes, made,
        "the commit's changes are handed back"
    );
    let v1 = store.registry().await.unwrap();
    assert_eq!(v1.version, 1);
    assert_eq!(stand_ids(&v1), ["S01"]);
    assert_eq!(v1.stands[0], stand("S01"));
    assert_eq!(store.audit_head().await.unwrap().seq, head0.seq + 1);

    // Computed from version 0 by a writer that lost the race.
    match store
        .commit_registry(commit_of(&empty, vec![stand("S09")], "stand:S09"))
        .await
    {
        Err(StoreError::VersionConflict { expected, found }) => {
            assert_eq!((expected, found), (0, 1));
        }
        other => panic!("expected a version conflict, got {other:?}"),
    }
    let still = store.registry().await.unwrap();
    assert_eq!(still.version, 1);
    assert_eq!(stand_ids(&still), ["S01"]);
    assert_eq!(store.audit_head().await.unwrap().seq, head0.seq + 1);

    // Retried from the current version, as the registry service does: accepted.
    let v = store
        .commit_registry(commit_of(
            &v1,
            vec![stand("S01"), stand("S09")],
            "stand:S09",
        ))
        .await
        .unwrap()
        .version;
    assert_eq!(v, 2);
    let v2 = store.registry().await.unwrap();
    assert_eq!(v2.version, 2);
    assert_eq!(stand_ids(&v2), ["S01", "S09"]);
    assert_eq!(store.audit_head().await.unwrap().seq, head0.seq + 2);
}

// ----- accounts -----------------------------------------------------------------------------

/// Users are counted, found by username and id and listed; a second user with a taken
/// username is `Duplicate` and is not stored; unknown names and ids are `None`.
pub async fn users_are_created_found_and_a_taken_username_is_refused(store: Arc<dyn Store>) {
    assert_eq!(store.count_users().await.unwrap(), 0);
    let ana = user_row("u-ana", "ana", Role::Officer, None);
    let created = store.create_user(ana.clone(), cli()).await.unwrap();
    assert_eq!(created, ana);
    let bia = user_row("u-bia", "bia", Role::Coordinator, Some("S01"));
    store.create_user(bia.clone(), cli()).await.unwrap();
    assert_eq!(store.count_users().await.unwrap(), 2);

    assert_eq!(
        store.user_by_username("ana".into()).await.unwrap(),
        Some(ana.clone())
    );
    assert_eq!(
        store.user_by_id("u-bia".into()).await.unwrap(),
        Some(bia.clone())
    );
    assert_eq!(store.user_by_username("caio".into()).await.unwrap(), None);
    assert_eq!(store.user_by_id("u-caio".into()).await.unwrap(), None);

    let audit = store.audit_head().await.unwrap();
    let taken = user_row("u-outra-ana", "ana", Role::Admin, None);
    match store.create_user(taken, cli()).await {
        Err(StoreError::Duplicate { .. }) => {}
        other => panic!("expected Duplicate, got {other:?}"),
    }
    assert_eq!(store.count_users().await.unwrap(), 2);
    assert_eq!(store.user_by_id("u-outra-ana".into()).await.unwrap(), None);
    assert_eq!(
        store
            .user_by_username("ana".into())
            .await
            .unwrap()
            .map(|u| u.role),
        Some(Role::Officer)
    );
    assert_eq!(
        store.audit_head().await.unwrap(),
        audit,
        "a refused write leaves no row"
    );

    let mut listed: Vec<String> = store
        .list_users()
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.username)
        .collect();
    listed.sort();
    assert_eq!(listed, ["ana", "bia"]);
}

// ----- sessions -----------------------------------------------------------------------------

/// A refresh token is spent by its rotation and replaced in its family; presenting a spent
/// one again is `Reused` and revokes the whole family (its live token no longer rotates and
/// `session` reports the family dead), while another login of the same user lives on.
/// Unknown and expired tokens are told apart.
pub async fn refresh_tokens_rotate_and_a_replayed_one_revokes_its_family(store: Arc<dyn Store>) {
    let ana = user_with_device(&*store, "ana", Role::Officer, "tablet-ana").await;
    store
        .insert_refresh_token(refresh("t1", "fam-a", &ana, "tablet-ana"))
        .await
        .unwrap();
    store
        .insert_refresh_token(refresh("g1", "fam-b", &ana, "tablet-ana"))
        .await
        .unwrap();
    let live = |family: &str| {
        let store = store.clone();
        let family = family.to_owned();
        async move {
            store
                .session("u-ana".into(), "tablet-ana".into(), Some(family))
                .await
                .unwrap()
                .unwrap()
                .family_live
        }
    };
    assert!(live("fam-a").await);

    let later = t0() + Duration::minutes(10);
    match store
        .rotate_refresh_token("t1".into(), "t2".into(), later + Duration::days(30), later)
        .await
        .unwrap()
    {
        RotateOutcome::Rotated {
            user,
            device_id,
            family_id,
        } => {
            assert_eq!(user.id, ana.id);
            assert_eq!(device_id, "tablet-ana");
            assert_eq!(family_id, "fam-a");
        }
        other => panic!("expected a rotation, got {other:?}"),
    }
    // The replacement rotates in turn.
    assert!(matches!(
        store
            .rotate_refresh_token("t2".into(), "t3".into(), later + Duration::days(30), later)
            .await
            .unwrap(),
        RotateOutcome::Rotated { .. }
    ));
    assert!(live("fam-a").await);

    // t1 presented again: a replay. The family ends, t3 included.
    assert_eq!(
        store
            .rotate_refresh_token("t1".into(), "t9".into(), later + Duration::days(30), later)
            .await
            .unwrap(),
        RotateOutcome::Reused
    );
    assert!(!live("fam-a").await);
    assert!(!matches!(
        store
            .rotate_refresh_token("t3".into(), "t4".into(), later + Duration::days(30), later)
            .await
            .unwrap(),
        RotateOutcome::Rotated { .. }
    ));
    // The other login is untouched.
    assert!(live("fam-b").await);
    assert!(matches!(
        store
            .rotate_refresh_token("g1".into(), "g2".into(), later + Duration::days(30), later)
            .await
            .unwrap(),
        RotateOutcome::Rotated { .. }
    ));

    assert_eq!(
        store
            .rotate_refresh_token("nunca".into(), "x".into(), later, later)
            .await
            .unwrap(),
        RotateOutcome::Unknown
    );
    let past = t0() + Duration::days(31);
    assert_eq!(
        store
            .rotate_refresh_token("g2".into(), "g3".into(), past + Duration::days(30), past)
            .await
            .unwrap(),
        RotateOutcome::Expired
    );
}

/// A spent token presented again into the same, unused successor within
/// `REFRESH_REUSE_INTERVAL_SECS` is `Repeated`: nothing written, the successor stands and
/// rotates later. The edge of the interval still repeats; one second past it, another
/// successor, or a successor already used is a replay that ends the family.
pub async fn a_refresh_whose_answer_was_lost_is_repeated_within_the_interval_only(
    store: Arc<dyn Store>,
) {
    let window = Duration::seconds(crate::limits::REFRESH_REUSE_INTERVAL_SECS);
    let ana = user_with_device(&*store, "ana", Role::Officer, "tablet-ana").await;
    for (token, family) in [
        ("a1", "fam-a"),
        ("b1", "fam-b"),
        ("c1", "fam-c"),
        ("d1", "fam-d"),
    ] {
        store
            .insert_refresh_token(refresh(token, family, &ana, "tablet-ana"))
            .await
            .unwrap();
    }
    let at = t0() + Duration::minutes(10);
    let expires = at + Duration::days(30);
    let rotate = |presented: &'static str, next: &'static str, now| {
        let store = store.clone();
        async move {
            store
                .rotate_refresh_token(presented.into(), next.into(), expires, now)
                .await
                .unwrap()
        }
    };
    let live = |family: &'static str| {
        let store = store.clone();
        async move {
            store
                .session("u-ana".into(), "tablet-ana".into(), Some(family.into()))
                .await
                .unwrap()
                .unwrap()
                .family_live
        }
    };

    // Answer lost: the same request again at the edge of the interval gets the same successor.
    assert!(matches!(
        rotate("a1", "a2", at).await,
        RotateOutcome::Rotated { .. }
    ));
    match rotate("a1", "a2", at + window).await {
        RotateOutcome::Repeated {
            family_id,
            device_id,
            next_expires_at,
            ..
        } => {
            assert_eq!(family_id, "fam-a");
            assert_eq!(device_id, "tablet-ana");
            assert_eq!(next_expires_at, expires);
        }
        other => panic!("expected a repeat, got {other:?}"),
    }
    assert!(live("fam-a").await);
    assert!(matches!(
        rotate("a2", "a3", at + window).await,
        RotateOutcome::Rotated { .. }
    ));
    // Once the successor was used, the old token is a replay.
    assert_eq!(rotate("a1", "a2", at + window).await, RotateOutcome::Reused);
    assert!(!live("fam-a").await);

    // One second past the interval: a replay.
    assert!(matches!(
        rotate("b1", "b2", at).await,
        RotateOutcome::Rotated { .. }
    ));
    assert_eq!(
        rotate("b1", "b2", at + window + Duration::seconds(1)).await,
        RotateOutcome::Reused
    );
    assert!(!live("fam-b").await);

    // Within the interval but into another successor: a replay.
    assert!(matches!(
        rotate("c1", "c2", at).await,
        RotateOutcome::Rotated { .. }
    ));
    assert_eq!(rotate("c1", "cX", at).await, RotateOutcome::Reused);
    assert!(!live("fam-c").await);

    // A repeat for a device revoked meanwhile says so.
    assert!(matches!(
        rotate("d1", "d2", at).await,
        RotateOutcome::Rotated { .. }
    ));
    store
        .revoke_device("tablet-ana".into(), Actor::cli(at))
        .await
        .unwrap();
    assert_eq!(rotate("d1", "d2", at).await, RotateOutcome::DeviceRevoked);
}

/// A role change is stored and seen by `session`; an unknown user is `NotFound`.
/// Deactivating ends every login of the user for good (its refresh tokens are revoked, not
/// just refused while inactive: they stay dead after reactivation) and is audited only when it
/// changes something; an inactive user's token is `UserInactive`.
pub async fn user_roles_and_deactivation_are_stored_and_end_logins(store: Arc<dyn Store>) {
    let ana = user_with_device(&*store, "ana", Role::Officer, "tablet-ana").await;
    store
        .insert_refresh_token(refresh("t1", "fam-a", &ana, "tablet-ana"))
        .await
        .unwrap();

    let changed = store
        .set_user_role(ana.id.clone(), Role::Coordinator, Some("S01".into()), cli())
        .await
        .unwrap();
    assert_eq!(
        (changed.role, changed.stand_id.as_deref()),
        (Role::Coordinator, Some("S01"))
    );
    assert_eq!(
        store.user_by_id(ana.id.clone()).await.unwrap(),
        Some(changed)
    );
    let session = store
        .session(ana.id.clone(), "tablet-ana".into(), None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (session.role, session.stand_id.as_deref()),
        (Role::Coordinator, Some("S01"))
    );
    assert!(session.user_active && !session.device_revoked && session.family_live);
    assert_eq!(session.device_user_id, ana.id);
    match store
        .set_user_role("u-ninguem".into(), Role::Office, None, cli())
        .await
    {
        Err(StoreError::NotFound { .. }) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }

    let off = store
        .set_user_active(ana.id.clone(), false, cli())
        .await
        .unwrap();
    assert!(!off.active);
    assert!(
        !store
            .user_by_id(ana.id.clone())
            .await
            .unwrap()
            .unwrap()
            .active
    );
    let session = store
        .session(ana.id.clone(), "tablet-ana".into(), Some("fam-a".into()))
        .await
        .unwrap()
        .unwrap();
    assert!(!session.user_active && !session.family_live);
    // Deactivating again changes nothing and writes no audit row.
    let audit = store.audit_head().await.unwrap();
    assert!(
        !store
            .set_user_active(ana.id.clone(), false, cli())
            .await
            .unwrap()
            .active
    );
    assert_eq!(store.audit_head().await.unwrap(), audit);
    // A token issued while inactive is refused for that reason.
    store
        .insert_refresh_token(refresh("t-inativo", "fam-c", &ana, "tablet-ana"))
        .await
        .unwrap();
    assert_eq!(
        store
            .rotate_refresh_token(
                "t-inativo".into(),
                "x".into(),
                t0() + Duration::days(1),
                t0()
            )
            .await
            .unwrap(),
        RotateOutcome::UserInactive
    );

    let on = store
        .set_user_active(ana.id.clone(), true, cli())
        .await
        .unwrap();
    assert!(on.active);
    assert_eq!(store.audit_head().await.unwrap().seq, audit.seq + 1);
    assert!(
        store
            .session(ana.id.clone(), "tablet-ana".into(), None)
            .await
            .unwrap()
            .unwrap()
            .user_active
    );
    // The login from before the deactivation stays ended.
    assert!(!matches!(
        store
            .rotate_refresh_token("t1".into(), "t2".into(), t0() + Duration::days(1), t0())
            .await
            .unwrap(),
        RotateOutcome::Rotated { .. }
    ));
    match store
        .set_user_active("u-ninguem".into(), false, cli())
        .await
    {
        Err(StoreError::NotFound { .. }) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }
}

/// A password change writes only over the hash it was verified against (a stale one writes
/// nothing, returns false) and ends every other login of the user, keeping the caller's.
pub async fn a_password_change_compares_the_old_hash_and_ends_other_logins(store: Arc<dyn Store>) {
    let ana = user_with_device(&*store, "ana", Role::Officer, "tablet-ana").await;
    for (hash, family) in [("keep-1", "fam-keep"), ("other-1", "fam-other")] {
        store
            .insert_refresh_token(refresh(hash, family, &ana, "tablet-ana"))
            .await
            .unwrap();
    }
    let audit = store.audit_head().await.unwrap();
    assert!(
        !store
            .change_password(
                ana.id.clone(),
                "hash-que-nao-e".into(),
                "novo".into(),
                Some("fam-keep".into()),
                cli(),
            )
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .user_by_id(ana.id.clone())
            .await
            .unwrap()
            .unwrap()
            .password_hash,
        ana.password_hash
    );
    assert_eq!(store.audit_head().await.unwrap(), audit);

    assert!(
        store
            .change_password(
                ana.id.clone(),
                ana.password_hash.clone(),
                "novo".into(),
                Some("fam-keep".into()),
                cli(),
            )
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .user_by_id(ana.id.clone())
            .await
            .unwrap()
            .unwrap()
            .password_hash,
        "novo"
    );
    assert_eq!(store.audit_head().await.unwrap().seq, audit.seq + 1);
    let later = t0() + Duration::minutes(1);
    let rotate = |hash: &str| {
        let (store, hash) = (store.clone(), hash.to_owned());
        async move {
            store
                .rotate_refresh_token(
                    hash,
                    format!("next-{later}"),
                    later + Duration::days(1),
                    later,
                )
                .await
                .unwrap()
        }
    };
    assert!(!matches!(
        rotate("other-1").await,
        RotateOutcome::Rotated { .. }
    ));
    assert!(matches!(
        rotate("keep-1").await,
        RotateOutcome::Rotated { .. }
    ));
    // The old hash no longer matches: a second change racing the first writes nothing.
    assert!(
        !store
            .change_password(
                ana.id.clone(),
                ana.password_hash.clone(),
                "outro".into(),
                None,
                cli()
            )
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .user_by_id(ana.id.clone())
            .await
            .unwrap()
            .unwrap()
            .password_hash,
        "novo"
    );
}

/// A one-time code's stored form: the SHA-256 (hex) of the code `name`.
fn code_hash(name: &str) -> String {
    sync_core::store::sha256_hex(name.as_bytes())
}

fn code(name: &str, purpose: CodePurpose, user: &UserRow) -> NewAccountCode {
    NewAccountCode {
        code_hash: code_hash(name),
        purpose,
        user_id: user.id.clone(),
        expires_at: t0() + Duration::hours(1),
    }
}

/// Only the newest code of a purpose is live; codes are unknown under the other purpose,
/// expire, and are spent once: a password reset sets the hash and ends every login, an
/// enrolment registers the device for the code's user. A deactivated user's code is refused.
pub async fn one_time_codes_are_live_until_replaced_expired_or_spent(store: Arc<dyn Store>) {
    use CodePurpose::{DeviceEnrolment, PasswordReset};
    let ana = user_with_device(&*store, "ana", Role::Officer, "tablet-ana").await;
    let check = |name: &str, purpose: CodePurpose, now: DateTime<Utc>| {
        let (store, hash) = (store.clone(), code_hash(name));
        async move {
            store
                .account_code(hash, purpose, now)
                .await
                .unwrap()
                .map(|u| u.id)
        }
    };
    store
        .create_account_code(code("r1", PasswordReset, &ana), cli())
        .await
        .unwrap();
    assert_eq!(check("r1", PasswordReset, t0()).await, Ok(ana.id.clone()));
    assert_eq!(
        check("r1", DeviceEnrolment, t0()).await,
        Err(CodeRefusal::Unknown)
    );
    assert_eq!(
        check("r0", PasswordReset, t0()).await,
        Err(CodeRefusal::Unknown)
    );
    store
        .create_account_code(code("r2", PasswordReset, &ana), cli())
        .await
        .unwrap();
    assert_eq!(
        check("r1", PasswordReset, t0()).await,
        Err(CodeRefusal::Used)
    );
    assert_eq!(check("r2", PasswordReset, t0()).await, Ok(ana.id.clone()));
    assert_eq!(
        check("r2", PasswordReset, t0() + Duration::hours(2)).await,
        Err(CodeRefusal::Expired)
    );
    match store
        .create_account_code(
            code(
                "r3",
                PasswordReset,
                &user_row("u-x", "x", Role::Officer, None),
            ),
            cli(),
        )
        .await
    {
        Err(StoreError::NotFound { .. }) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }

    store
        .insert_refresh_token(refresh("t1", "fam-a", &ana, "tablet-ana"))
        .await
        .unwrap();
    let at = t0() + Duration::minutes(5);
    let reset = store
        .reset_password_with_code(code_hash("r2"), "redefinida".into(), at)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reset.password_hash, "redefinida");
    assert_eq!(
        store
            .user_by_id(ana.id.clone())
            .await
            .unwrap()
            .unwrap()
            .password_hash,
        "redefinida"
    );
    assert!(!matches!(
        store
            .rotate_refresh_token("t1".into(), "t2".into(), at + Duration::days(1), at)
            .await
            .unwrap(),
        RotateOutcome::Rotated { .. }
    ));
    assert_eq!(
        store
            .reset_password_with_code(code_hash("r2"), "de-novo".into(), at)
            .await
            .unwrap()
            .map(|u| u.id),
        Err(CodeRefusal::Used)
    );

    store
        .create_account_code(code("e1", DeviceEnrolment, &ana), cli())
        .await
        .unwrap();
    let device = store
        .enrol_device(
            code_hash("e1"),
            "celular-ana".into(),
            "Celular da Ana".into(),
            at,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            device.id.as_str(),
            device.user_id.as_str(),
            device.label.as_str()
        ),
        ("celular-ana", ana.id.as_str(), "Celular da Ana")
    );
    assert_eq!(
        store.device("celular-ana".into()).await.unwrap(),
        Some(device)
    );
    assert_eq!(
        store
            .enrol_device(code_hash("e1"), "outro".into(), "Outro".into(), at)
            .await
            .unwrap()
            .map(|d| d.id),
        Err(CodeRefusal::Used)
    );
    assert_eq!(store.device("outro".into()).await.unwrap(), None);

    store
        .create_account_code(code("e2", DeviceEnrolment, &ana), cli())
        .await
        .unwrap();
    store
        .set_user_active(ana.id.clone(), false, cli())
        .await
        .unwrap();
    assert_eq!(
        check("e2", DeviceEnrolment, t0()).await,
        Err(CodeRefusal::UserInactive)
    );
}

// ----- devices ------------------------------------------------------------------------------

/// A device is registered once, for an existing user, under an id that is not another
/// device's on the wire; revoking it is idempotent, ends its logins (`DeviceRevoked`), shows
/// in `session`, and refuses it number blocks (`DeviceNotActive`).
pub async fn devices_are_registered_once_and_revocation_ends_them(store: Arc<dyn Store>) {
    let new = |id: &str, user: &str| NewDevice {
        id: id.to_owned(),
        user_id: user.to_owned(),
        label: format!("Aparelho {id}"),
    };
    match store
        .register_device(new("tablet-x", "u-ninguem"), cli())
        .await
    {
        Err(StoreError::NotFound { .. }) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }
    let ana = user_with_device(&*store, "ana", Role::Officer, "tablet-ana").await;
    let admin = store
        .create_user(user_row("u-adm", "adm", Role::Admin, None), cli())
        .await
        .unwrap();
    let row = store.device("tablet-ana".into()).await.unwrap().unwrap();
    assert_eq!(
        (row.user_id.as_str(), row.registered_at, row.revoked_at),
        (ana.id.as_str(), t0(), None)
    );
    match store
        .register_device(new("tablet-ana", &ana.id), cli())
        .await
    {
        Err(StoreError::Duplicate { .. }) => {}
        other => panic!("expected Duplicate, got {other:?}"),
    }
    // The same UUID in another spelling would write as the first device.
    let id = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
    store
        .register_device(new(id, &ana.id), cli())
        .await
        .unwrap();
    match store
        .register_device(new(&id.to_uppercase(), &ana.id), cli())
        .await
    {
        Err(StoreError::DeviceIdCollision { existing, .. }) => assert_eq!(existing, id),
        other => panic!("expected DeviceIdCollision, got {other:?}"),
    }
    let mut ids: Vec<String> = store
        .list_devices()
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.id)
        .collect();
    ids.sort();
    assert_eq!(ids, [id, "tablet-ana"]);

    store
        .insert_refresh_token(refresh("t1", "fam-a", &ana, "tablet-ana"))
        .await
        .unwrap();
    let at = t0() + Duration::minutes(3);
    let by_admin = Actor {
        user_id: Some(admin.id.clone()),
        device_id: None,
        at,
    };
    let revoked = store
        .revoke_device("tablet-ana".into(), by_admin.clone())
        .await
        .unwrap();
    assert_eq!(revoked.revoked_at, Some(at));
    assert_eq!(revoked.revoked_by.as_deref(), Some(admin.id.as_str()));
    // Again: the first revocation stands, nothing is written.
    let audit = store.audit_head().await.unwrap();
    let again = store
        .revoke_device(
            "tablet-ana".into(),
            Actor {
                at: at + Duration::hours(1),
                ..by_admin
            },
        )
        .await
        .unwrap();
    assert_eq!(again.revoked_at, Some(at));
    assert_eq!(store.audit_head().await.unwrap(), audit);
    assert_eq!(
        store.device("tablet-ana".into()).await.unwrap(),
        Some(revoked)
    );
    match store.revoke_device("tablet-x".into(), cli()).await {
        Err(StoreError::NotFound { .. }) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }

    let session = store
        .session(ana.id.clone(), "tablet-ana".into(), Some("fam-a".into()))
        .await
        .unwrap()
        .unwrap();
    assert!(session.device_revoked && !session.family_live && session.user_active);
    assert_eq!(
        store
            .rotate_refresh_token("t1".into(), "t2".into(), at + Duration::days(1), at)
            .await
            .unwrap(),
        RotateOutcome::DeviceRevoked
    );
    match store.lease_numbers("tablet-ana".into(), 10, cli()).await {
        Err(StoreError::DeviceNotActive) => {}
        other => panic!("expected DeviceNotActive, got {other:?}"),
    }
    assert_eq!(
        store
            .session(ana.id.clone(), "tablet-x".into(), None)
            .await
            .unwrap(),
        None
    );
}

/// A device key is registered for one device: again for it is `Known` (no audit row), for
/// another device `OtherDevice`; a device may register a second key.
pub async fn device_keys_are_bound_to_one_device(store: Arc<dyn Store>) {
    user_with_device(&*store, "ana", Role::Officer, "tablet-ana").await;
    user_with_device(&*store, "bia", Role::Officer, "tablet-bia").await;
    let (k1, k2) = ("11".repeat(32), "22".repeat(32));
    let head = store.audit_head().await.unwrap().seq;
    let register = |device: &str, key: &str| {
        let (store, device, key) = (store.clone(), device.to_owned(), key.to_owned());
        async move { store.register_device_key(device, key, t0()).await.unwrap() }
    };
    assert_eq!(
        register("tablet-ana", &k1).await,
        KeyRegistration::Registered
    );
    assert_eq!(store.audit_head().await.unwrap().seq, head + 1);
    assert_eq!(register("tablet-ana", &k1).await, KeyRegistration::Known);
    assert_eq!(
        register("tablet-bia", &k1).await,
        KeyRegistration::OtherDevice
    );
    assert_eq!(store.audit_head().await.unwrap().seq, head + 1);
    assert_eq!(
        register("tablet-ana", &k2).await,
        KeyRegistration::Registered
    );
    assert_eq!(
        register("tablet-bia", &k2).await,
        KeyRegistration::OtherDevice
    );
}

// ----- field support ------------------------------------------------------------------------

/// Leases follow one another without overlap, across devices, each audited; an unknown
/// device is `NotFound`; a device holding `MAX_UNUSED_NUMBERS_PER_DEVICE` unused numbers gets
/// no new block (`QuotaExceeded`, nothing written) while another device still does.
pub async fn number_leases_are_disjoint_and_bounded_per_device(store: Arc<dyn Store>) {
    use crate::limits::MAX_UNUSED_NUMBERS_PER_DEVICE;
    user_with_device(&*store, "ana", Role::Officer, "tablet-ana").await;
    user_with_device(&*store, "bia", Role::Officer, "tablet-bia").await;
    let head = store.audit_head().await.unwrap().seq;
    let at = t0() + Duration::minutes(1);
    let lease = |device: &str, size: u64| {
        let (store, device) = (store.clone(), device.to_owned());
        async move { store.lease_numbers(device, size, Actor::cli(at)).await }
    };
    let a = lease("tablet-ana", 50).await.unwrap();
    assert!(a.start >= 1);
    assert_eq!(
        (a.end - a.start + 1, a.device_id.as_str(), a.leased_at),
        (50, "tablet-ana", at)
    );
    let b = lease("tablet-bia", 20).await.unwrap();
    assert_eq!((b.start, b.end), (a.end + 1, a.end + 20));
    let c = lease("tablet-ana", 10).await.unwrap();
    assert_eq!((c.start, c.end), (b.end + 1, b.end + 10));
    assert_eq!(store.audit_head().await.unwrap().seq, head + 3);

    match lease("tablet-x", 10).await {
        Err(StoreError::NotFound { .. }) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }
    // bia holds 20 unused numbers: up to the quota, then refused.
    let d = lease("tablet-bia", MAX_UNUSED_NUMBERS_PER_DEVICE - 20)
        .await
        .unwrap();
    assert_eq!(d.start, c.end + 1);
    let audit = store.audit_head().await.unwrap();
    match lease("tablet-bia", 1).await {
        Err(StoreError::QuotaExceeded { message, .. }) => assert!(!message.is_empty()),
        other => panic!("expected QuotaExceeded, got {other:?}"),
    }
    assert_eq!(store.audit_head().await.unwrap(), audit);
    let e = lease("tablet-ana", 1).await.unwrap();
    assert_eq!(e.start, d.end + 1, "the refused lease took no numbers");
}

fn photo_meta(bytes: &[u8], device: &str, user: &str, at: DateTime<Utc>) -> PhotoMeta {
    PhotoMeta {
        sha256: sync_core::store::sha256_hex(bytes),
        size: bytes.len() as u64,
        content_type: String::from("image/jpeg"),
        uploaded_at: at,
        user_id: user.to_owned(),
        device_id: device.to_owned(),
        record_id: None,
    }
}

/// A photo is stored with its bytes once: storing it again is `AlreadyStored` with the first
/// metadata and writes nothing; `photos_present` answers exactly the stored hashes asked for.
pub async fn photos_are_stored_once_and_found_by_hash(store: Arc<dyn Store>) {
    let ana = user_with_device(&*store, "ana", Role::Officer, "tablet-ana").await;
    let bia = user_with_device(&*store, "bia", Role::Officer, "tablet-bia").await;
    let (one, two) = (b"\xff\xd8 foto um".to_vec(), b"\xff\xd8 foto dois".to_vec());
    let meta = photo_meta(&one, "tablet-ana", &ana.id, t0());
    let head = store.audit_head().await.unwrap().seq;
    assert_eq!(
        store
            .put_photo(meta.clone(), one.clone(), cli())
            .await
            .unwrap(),
        PutPhoto::Stored(meta.clone())
    );
    assert_eq!(store.audit_head().await.unwrap().seq, head + 1);
    assert_eq!(
        store.photo(meta.sha256.clone()).await.unwrap(),
        Some((meta.clone(), one.clone()))
    );

    let later = photo_meta(&one, "tablet-bia", &bia.id, t0() + Duration::hours(1));
    assert_eq!(
        store.put_photo(later, one.clone(), cli()).await.unwrap(),
        PutPhoto::AlreadyStored(meta.clone())
    );
    assert_eq!(store.audit_head().await.unwrap().seq, head + 1);
    assert_eq!(
        store
            .photo(meta.sha256.clone())
            .await
            .unwrap()
            .map(|(m, _)| m),
        Some(meta.clone())
    );

    let absent = sync_core::store::sha256_hex(&two);
    assert_eq!(store.photo(absent.clone()).await.unwrap(), None);
    assert_eq!(
        store
            .photos_present(vec![absent.clone(), meta.sha256.clone()])
            .await
            .unwrap(),
        vec![meta.sha256.clone()]
    );
    assert!(store.photos_present(vec![absent]).await.unwrap().is_empty());
}

// ----- audit --------------------------------------------------------------------------------

/// An empty chain verifies with no rows at the genesis head; each audited write appends one
/// row, the chain still verifies, its head is the last row, and `audit_row_hash` answers the
/// rows there are (each hash its own) and nothing past the head.
pub async fn the_audit_chain_links_every_audited_write(store: Arc<dyn Store>) {
    let empty = store.verify_audit().await.unwrap();
    assert!(empty.ok && empty.first_broken.is_none());
    assert_eq!((empty.rows, empty.head), (0, None));
    assert_eq!(
        store.audit_head().await.unwrap(),
        crate::audit::ChainHead::genesis()
    );
    assert_eq!(store.audit_row_hash(1).await.unwrap(), None);

    // Four audited writes of four kinds.
    user_with_device(&*store, "ana", Role::Officer, "tablet-ana").await;
    store
        .lease_numbers("tablet-ana".into(), 5, cli())
        .await
        .unwrap();
    let reg = store.registry().await.unwrap();
    store
        .commit_registry(commit_of(&reg, vec![stand("S01")], "stand:S01"))
        .await
        .unwrap();

    let report = store.verify_audit().await.unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(report.rows, 4);
    let head = store.audit_head().await.unwrap();
    assert_eq!(head.seq, 4);
    assert_eq!(report.head.as_deref(), Some(head.hash.as_str()));
    assert_ne!(head, crate::audit::ChainHead::genesis());
    assert_eq!(
        store.audit_row_hash(4).await.unwrap(),
        Some(head.hash.clone())
    );
    let mut hashes = Vec::new();
    for seq in 1..=4 {
        hashes.push(store.audit_row_hash(seq).await.unwrap().unwrap());
    }
    hashes.sort();
    hashes.dedup();
    assert_eq!(hashes.len(), 4, "every row has its own hash");
    assert_eq!(store.audit_row_hash(5).await.unwrap(), None);
}

// ----- registry changes ---------------------------------------------------------------------

/// `registry_changes(since)` gives what turns version `since` into the current one (applied
/// to that version it yields the current registry), nothing at the current version, `Unknown`
/// past it, and `TooOld` beyond `max_span`.
pub async fn registry_changes_since_a_version_lead_to_the_current_one(store: Arc<dyn Store>) {
    let v0 = store.registry().await.unwrap();
    store
        .commit_registry(commit_of(
            &v0,
            vec![stand("S01"), stand("S02")],
            "stand:S01",
        ))
        .await
        .unwrap();
    let v1 = store.registry().await.unwrap();
    let mut renamed = stand("S02");
    renamed.name = String::from("Ponto do Terminal Rodoviário");
    store
        .commit_registry(commit_of(&v1, vec![renamed, stand("S03")], "stand:S03"))
        .await
        .unwrap();
    let v2 = store.registry().await.unwrap();
    assert_eq!(v2.version, 2);

    for (since, base) in [(0, &v0), (1, &v1)] {
        match store.registry_changes(since, 100).await.unwrap() {
            ChangesSince::Changes(changes) => {
                assert_eq!((changes.from_version, changes.to_version), (since, 2));
                assert!(!changes.changes.is_empty());
                let mut replica = (**base).clone();
                feed::apply(&mut replica, &changes).unwrap();
                assert_eq!(feed::sorted(replica), *v2, "since {since}");
            }
            other => panic!("since {since}: {other:?}"),
        }
    }
    match store.registry_changes(2, 100).await.unwrap() {
        ChangesSince::Changes(changes) => {
            assert_eq!((changes.from_version, changes.to_version), (2, 2));
            assert!(changes.changes.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        store.registry_changes(3, 100).await.unwrap(),
        ChangesSince::Unknown {
            since: 3,
            current: 2
        }
    );
    assert_eq!(
        store.registry_changes(0, 1).await.unwrap(),
        ChangesSince::TooOld {
            since: 0,
            current: 2
        }
    );
}

// ----- field records ------------------------------------------------------------------------

/// A field user as the record sync sees them: the authenticated caller, and the Automerge
/// agent their records are written as.
pub struct FieldUser {
    pub caller: Caller,
    pub agent: Agent,
}

/// A user of `role` (a coordinator of `stand`) with one device, registered through the store.
pub async fn field_user(
    store: &dyn Store,
    username: &str,
    role: Role,
    stand: Option<&str>,
    device: &str,
) -> FieldUser {
    let user = store
        .create_user(
            user_row(&format!("u-{username}"), username, role, stand),
            cli(),
        )
        .await
        .unwrap();
    let field = field_on(&user, device);
    store
        .register_device(
            NewDevice {
                id: device.to_owned(),
                user_id: user.id,
                label: format!("Aparelho {device}"),
            },
            cli(),
        )
        .await
        .unwrap();
    field
}

/// The same user on `device` (registered or not).
fn field_on(user: &UserRow, device: &str) -> FieldUser {
    let role = record_role(user.role, None).unwrap();
    FieldUser {
        caller: Caller {
            user_id: user.id.clone(),
            role: user.role,
            stand_id: user.stand_id.clone(),
            device_id: device.to_owned(),
        },
        agent: Agent::new(user.id.clone(), role, device_uuid(device)),
    }
}

/// What a record of the tests is about.
#[derive(Clone)]
pub struct About {
    plate: &'static str,
    /// Its occurrence, this long before `t0`.
    minutes_ago: i64,
    rules: Vec<RuleId>,
    stand: Option<&'static str>,
    number: Option<String>,
}

impl About {
    pub fn plate(plate: &'static str, minutes_ago: i64) -> Self {
        Self {
            plate,
            minutes_ago,
            rules: vec![RuleId::R01],
            stand: Some("S02"),
            number: None,
        }
    }
}

/// A draft auto de infração by `agent`.
fn draft_record(agent: &Agent, about: &About) -> Doc {
    let draft = InfractionDraft {
        id: Uuid::now_v7(),
        number: about.number.clone(),
        issuing_body: String::from("Guarda Municipal de Americana"),
        occurred_at: t0() - Duration::minutes(about.minutes_ago),
        monotonic: 7,
        position: None,
        stand_id: about.stand.map(String::from),
        plate: Plate::parse(about.plate).unwrap(),
        driver: PersonRef::Observed(String::from("obs-1")),
        driver_role: DriverRole::Unauthorised,
        permit_number: None,
        holder_id: None,
        facts: String::from("Transporte remunerado de passageiro sem alvará."),
        legal_basis: about.rules.iter().map(|r| LegalBasis::of(*r)).collect(),
        verdict: None,
        witnesses: Vec::new(),
        photos: Vec::new(),
    };
    Doc::new_infraction(draft, agent).unwrap()
}

/// The same auto, issued (without a device seal: the test devices register no key).
pub fn issued_record(agent: &Agent, about: &About) -> Doc {
    let mut doc = draft_record(agent, about);
    let at = t0() - Duration::minutes(about.minutes_ago);
    doc.confirm_vehicle(agent, at + Duration::minutes(1))
        .unwrap();
    doc.issue_unsealed(
        agent,
        at + Duration::minutes(2),
        Signature::Missing {
            reason: String::from("condutor ausente"),
        },
    )
    .unwrap();
    doc
}

/// A request carrying `docs` whole, as a device sends records the server never acknowledged.
pub fn request_of(user: &FieldUser, docs: &mut [&mut Doc], cursor: u64) -> SyncRequest {
    SyncRequest {
        protocol: PROTOCOL_VERSION,
        device_id: user.agent.device_id,
        cursor,
        new_records: docs
            .iter_mut()
            .map(|d| NewRecord {
                record_id: d.id(),
                doc: Bytes(d.save()),
            })
            .collect(),
        messages: Vec::new(),
        device_clock: None,
    }
}

/// One exchange through `Store::sync_records`, as `POST /v1/sync` runs it.
async fn sync(store: &dyn Store, user: &FieldUser, request: SyncRequest) -> SyncOutcome {
    let job = job_of(store, user, request).await;
    store.sync_records(job).await.unwrap()
}

/// The job `POST /v1/sync` hands the store for `request`.
pub async fn job_of(store: &dyn Store, user: &FieldUser, request: SyncRequest) -> SyncJob {
    SyncJob {
        caller: user.caller.clone(),
        request,
        registry: Arc::new(IndexedRegistry::new(store.registry().await.unwrap())),
        logic: ServerSync {
            workers: 1,
            ..ServerSync::default()
        },
        now: t0(),
        server_key: Arc::new(crate::receipts::ServerKey::ephemeral().unwrap()),
    }
}

/// Pushes `docs` whole and returns the response (the exchange must not fail as a whole).
async fn push(store: &dyn Store, user: &FieldUser, docs: &mut [&mut Doc]) -> SyncResponse {
    sync(store, user, request_of(user, docs, 0)).await.unwrap()
}

/// Pushes `docs`, which must all be accepted; their ids.
async fn push_ok(store: &dyn Store, user: &FieldUser, docs: &mut [&mut Doc]) -> Vec<String> {
    let response = push(store, user, docs).await;
    assert!(response.rejections.is_empty(), "{:?}", response.rejections);
    assert_eq!(response.accepted.len(), docs.len());
    docs.iter().map(|d| d.id().to_string()).collect()
}

/// Appends an event with no local check, as a faulty or hostile client could.
fn raw_event(doc: &mut Doc, agent: &Agent, at: DateTime<Utc>, kind: &str) {
    use automerge::transaction::Transactable;
    use automerge::{ObjType, ROOT, ReadDoc, ScalarValue};
    let am = doc.automerge_mut();
    am.set_actor(agent.actor_id());
    let (_, list) = am.get(ROOT, "events").unwrap().unwrap();
    let len = am.length(&list);
    let o = am.insert_object(&list, len, ObjType::Map).unwrap();
    am.put(&o, "id", Uuid::now_v7().to_string()).unwrap();
    am.put(&o, "kind", kind).unwrap();
    am.put(&o, "at", ScalarValue::Timestamp(at.timestamp_millis()))
        .unwrap();
    am.put(&o, "user_id", agent.user_id.as_str()).unwrap();
    am.put(&o, "role", agent.role.as_str()).unwrap();
    am.put(&o, "device_id", agent.device_id.to_string())
        .unwrap();
    am.commit();
}

/// What a refused change must leave as it was: the stored document, its row, its audit rows,
/// and the chain's head.
#[derive(Debug, PartialEq)]
struct Footprint {
    doc: Option<(Vec<String>, RecordRow)>,
    audit: Vec<crate::audit::AuditRow>,
    head: crate::audit::ChainHead,
}

async fn footprint(store: &dyn Store, id: &str) -> Footprint {
    Footprint {
        doc: store
            .record(id.to_owned())
            .await
            .unwrap()
            .map(|d| (d.heads, d.row)),
        audit: store.record_audit(id.to_owned()).await.unwrap(),
        head: store.audit_head().await.unwrap(),
    }
}

/// An accepted record is stored with its projection and one audit row; replaying the very
/// same request (the device never heard the answer) gives the same acknowledgement and
/// changes nothing: no audit row, same heads, same row.
pub async fn a_synced_record_is_projected_audited_and_a_replay_changes_nothing(
    store: Arc<dyn Store>,
) {
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let mut doc = issued_record(&ana.agent, &About::plate("abc-1d23", 30));
    let id = doc.id().to_string();
    let head = store.audit_head().await.unwrap();
    let request = request_of(&ana, &mut [&mut doc], 0);
    let first = sync(&*store, &ana, request.clone()).await.unwrap();
    assert!(first.rejections.is_empty(), "{:?}", first.rejections);
    assert_eq!(first.accepted.len(), 1);
    assert_eq!(first.accepted[0].record_id, doc.id());
    assert!(first.cursor > 0);

    let stored = store.record(id.clone()).await.unwrap().unwrap();
    assert_eq!(first.accepted[0].heads, stored.heads);
    let row = &stored.row;
    assert_eq!(
        (
            row.id.as_str(),
            row.kind.as_str(),
            row.status.as_str(),
            row.plate.as_deref(),
            row.stand_id.as_deref(),
            row.author_user_id.as_str(),
        ),
        (
            id.as_str(),
            "infraction",
            "issued",
            Some("ABC1D23"),
            Some("S02"),
            "u-ana"
        )
    );
    assert_eq!(row.occurred_at, t0() - Duration::minutes(30));
    assert_eq!((row.number.as_deref(), row.conflicts), (None, 0));
    let view = crate::records::view_of(&stored).unwrap();
    assert_eq!(
        view.facts,
        "Transporte remunerado de passageiro sem alvará."
    );
    let audit = store.record_audit(id.clone()).await.unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].action, "record.sync.create");
    assert_eq!(audit[0].device_id.as_deref(), Some("tablet-ana"));
    assert_eq!(store.audit_head().await.unwrap().seq, head.seq + 1);
    assert!(store.verify_audit().await.unwrap().ok);
    assert!(
        store
            .record_quarantine(id.clone())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.devices_last_received().await.unwrap(),
        [(String::from("tablet-ana"), t0())]
    );

    let before = footprint(&*store, &id).await;
    let again = sync(&*store, &ana, request).await.unwrap();
    assert_eq!(again.accepted, first.accepted);
    assert!(again.rejections.is_empty());
    assert_eq!(footprint(&*store, &id).await, before);
    assert_eq!(store.list_records(page(10)).await.unwrap().total, 1);
}

/// An office-only event sent by an officer is refused (`role_forbidden`, with the server's
/// document to reset to), kept in quarantine with who sent it and the refused change hashes,
/// and leaves the stored record, its row and the audit chain as they were; a replay of the
/// refused push adds no second quarantine row.
pub async fn a_change_the_senders_role_may_not_make_is_quarantined_and_stores_nothing(
    store: Arc<dyn Store>,
) {
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let mut doc = issued_record(&ana.agent, &About::plate("ABC1D23", 30));
    let id = push_ok(&*store, &ana, &mut [&mut doc]).await.remove(0);
    let before = footprint(&*store, &id).await;

    raw_event(
        &mut doc,
        &ana.agent,
        t0() - Duration::minutes(5),
        "reviewed",
    );
    let request = request_of(&ana, &mut [&mut doc], 0);
    let response = sync(&*store, &ana, request.clone()).await.unwrap();
    assert_eq!(response.rejections.len(), 1, "{response:?}");
    let rejection = &response.rejections[0];
    assert_eq!(rejection.record_id, doc.id());
    assert_eq!(rejection.code, RejectionCode::RoleForbidden);
    assert!(!rejection.message.is_empty());
    assert_eq!(rejection.change_hashes.len(), 1);
    let server_doc = rejection.server_doc.as_ref().expect("the server's copy");
    let mut server_doc = Doc::load(server_doc.as_slice()).unwrap();
    let mut server_heads = sync_core::sync::heads_to_hex(&server_doc.heads());
    server_heads.sort();
    assert_eq!(
        server_heads,
        before.doc.as_ref().unwrap().0,
        "the document to reset to is the stored one"
    );
    assert_eq!(footprint(&*store, &id).await, before, "nothing stored");

    let quarantine = store.record_quarantine(id.clone()).await.unwrap();
    assert_eq!(quarantine.len(), 1);
    let q = &quarantine[0];
    assert_eq!(
        (
            q.record_id.as_str(),
            q.code.as_str(),
            q.user_id.as_str(),
            q.role.as_str(),
        ),
        (id.as_str(), "role_forbidden", "u-ana", "guarda_municipal")
    );
    assert_eq!(q.device_uuid, device_uuid("tablet-ana").to_string());
    assert_eq!(q.change_hashes, rejection.change_hashes);
    assert!(q.size > 0);

    let replay = sync(&*store, &ana, request).await.unwrap();
    assert_eq!(replay.rejections.len(), 1);
    assert_eq!(store.record_quarantine(id.clone()).await.unwrap().len(), 1);
    assert_eq!(footprint(&*store, &id).await, before);
}

/// An exchange refused as a whole (another device's request, an unsupported protocol, a
/// record twice) writes nothing: no record, no quarantine, no audit row; the same records sent
/// properly are then accepted.
pub async fn an_exchange_refused_as_a_whole_writes_nothing(store: Arc<dyn Store>) {
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let mut a = issued_record(&ana.agent, &About::plate("ABC1D23", 30));
    let mut b = issued_record(&ana.agent, &About::plate("DEF4G56", 20));
    let head = store.audit_head().await.unwrap();

    let mut other_device = request_of(&ana, &mut [&mut a, &mut b], 0);
    other_device.device_id = device_uuid("celular-de-outro");
    let mut old_protocol = request_of(&ana, &mut [&mut a, &mut b], 0);
    old_protocol.protocol = PROTOCOL_VERSION + 1;
    let mut twice = request_of(&ana, &mut [&mut a, &mut b], 0);
    let again = twice.new_records[0].clone();
    twice.new_records.push(again);
    for (request, what) in [
        (other_device, "device"),
        (old_protocol, "protocol"),
        (twice, "twice"),
    ] {
        match (sync(&*store, &ana, request).await, what) {
            (Err(SyncError::DeviceMismatch { .. }), "device")
            | (Err(SyncError::Protocol { .. }), "protocol")
            | (Err(SyncError::DuplicateRecord(_)), "twice") => {}
            (other, _) => panic!("{what}: {other:?}"),
        }
        for doc in [&a, &b] {
            assert_eq!(store.record(doc.id().to_string()).await.unwrap(), None);
            assert!(
                store
                    .record_quarantine(doc.id().to_string())
                    .await
                    .unwrap()
                    .is_empty()
            );
        }
        assert_eq!(store.audit_head().await.unwrap(), head, "{what}");
        assert_eq!(store.list_records(page(10)).await.unwrap().total, 0);
    }
    push_ok(&*store, &ana, &mut [&mut a, &mut b]).await;
    assert_eq!(store.list_records(page(10)).await.unwrap().total, 2);
}

/// The server pushes a record to the devices that may see it and do not have it (the author's
/// other device, the office), once; another officer gets nothing, and sending it is refused
/// unseen (`not_visible`, no server document).
pub async fn records_reach_only_the_devices_that_may_see_them(store: Arc<dyn Store>) {
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let bia = field_user(&*store, "bia", Role::Officer, None, "tablet-bia").await;
    let office = field_user(&*store, "escritorio", Role::Office, None, "desktop").await;
    let ana_user = store.user_by_id("u-ana".into()).await.unwrap().unwrap();
    store
        .register_device(
            NewDevice {
                id: "celular-ana".into(),
                user_id: ana_user.id.clone(),
                label: "Celular da Ana".into(),
            },
            cli(),
        )
        .await
        .unwrap();
    let ana_phone = field_on(&ana_user, "celular-ana");

    let mut doc = issued_record(&ana.agent, &About::plate("ABC1D23", 30));
    let id = doc.id();
    push_ok(&*store, &ana, &mut [&mut doc]).await;

    for (user, sees) in [(&ana_phone, true), (&office, true), (&bia, false)] {
        let first = sync(&*store, user, request_of(user, &mut [], 0))
            .await
            .unwrap();
        let got: Vec<_> = first.new_records.iter().map(|r| r.record_id).collect();
        if sees {
            assert_eq!(got, [id], "{}", user.caller.device_id);
            let pushed = Doc::load(first.new_records[0].doc.as_slice()).unwrap();
            assert_eq!(pushed.view().unwrap(), doc.view().unwrap());
        } else {
            assert!(got.is_empty() && first.messages.is_empty(), "{first:?}");
        }
        // Once the device shows it applied that answer, the record is not sent again.
        let next = sync(&*store, user, request_of(user, &mut [], first.cursor))
            .await
            .unwrap();
        assert!(
            next.new_records.is_empty() && next.messages.is_empty(),
            "{next:?}"
        );
    }

    let before = footprint(&*store, &id.to_string()).await;
    let mut copy = Doc::load(&doc.save()).unwrap();
    let refused = push(&*store, &bia, &mut [&mut copy]).await;
    assert_eq!(refused.rejections.len(), 1);
    assert_eq!(refused.rejections[0].code, RejectionCode::NotVisible);
    assert!(refused.rejections[0].server_doc.is_none());
    assert_eq!(footprint(&*store, &id.to_string()).await, before);
}

/// An auto number must lie in a block leased to the sending device and belong to no other
/// record (`number_not_leased`, `number_taken`: nothing stored, the refusal quarantined); a
/// number a stored record holds no longer counts as unused toward the lease quota.
pub async fn auto_numbers_come_from_the_devices_blocks_and_are_unique(store: Arc<dyn Store>) {
    use crate::limits::MAX_UNUSED_NUMBERS_PER_DEVICE;
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let bia = field_user(&*store, "bia", Role::Officer, None, "tablet-bia").await;
    let block = store
        .lease_numbers("tablet-ana".into(), 10, cli())
        .await
        .unwrap();
    let numbered = |user: &FieldUser, n: u64, minutes_ago: i64| {
        let mut about = About::plate("ABC1D23", minutes_ago);
        about.number = Some(n.to_string());
        draft_record(&user.agent, &about)
    };
    let mut first = numbered(&ana, block.start, 50);
    let mut outside = numbered(&ana, block.end + 1, 40);
    let response = push(&*store, &ana, &mut [&mut first, &mut outside]).await;
    let code = |response: &SyncResponse, doc: &Doc| {
        response
            .rejections
            .iter()
            .find(|r| r.record_id == doc.id())
            .map(|r| r.code)
    };
    assert_eq!(code(&response, &first), None, "{response:?}");
    assert_eq!(
        code(&response, &outside),
        Some(RejectionCode::NumberNotLeased)
    );
    let stored = store.record(first.id().to_string()).await.unwrap().unwrap();
    assert_eq!(stored.row.number, Some(block.start.to_string()));
    assert_eq!(store.record(outside.id().to_string()).await.unwrap(), None);
    assert_eq!(
        store
            .record_quarantine(outside.id().to_string())
            .await
            .unwrap()
            .len(),
        1
    );

    // The same number again, from its device: taken. From another device: not its block.
    let mut twice = numbered(&ana, block.start, 30);
    let mut foreign = numbered(&bia, block.start + 1, 20);
    let response = push(&*store, &ana, &mut [&mut twice]).await;
    assert_eq!(code(&response, &twice), Some(RejectionCode::NumberTaken));
    let response = push(&*store, &bia, &mut [&mut foreign]).await;
    assert_eq!(
        code(&response, &foreign),
        Some(RejectionCode::NumberNotLeased)
    );
    for doc in [&twice, &foreign] {
        assert_eq!(store.record(doc.id().to_string()).await.unwrap(), None);
    }
    let listed = store
        .list_records(RecordFilter {
            plate: Some("ABC1D23".into()),
            ..page(10)
        })
        .await
        .unwrap();
    assert_eq!(listed.total, 1);
    assert_eq!(listed.items[0].id, first.id().to_string());

    // 9 of the 10 numbers unused: a block that brings them to one under the quota, one more
    // (only because the stored record's number counts as used), then refused.
    store
        .lease_numbers(
            "tablet-ana".into(),
            MAX_UNUSED_NUMBERS_PER_DEVICE - 10,
            cli(),
        )
        .await
        .unwrap();
    store
        .lease_numbers("tablet-ana".into(), 1, cli())
        .await
        .unwrap();
    match store.lease_numbers("tablet-ana".into(), 1, cli()).await {
        Err(StoreError::QuotaExceeded { .. }) => {}
        other => panic!("expected QuotaExceeded, got {other:?}"),
    }
}

/// Exchanges of many devices at once lose nothing: every record is stored once with its own
/// sequence number, the audit chain holds, and the office's device, syncing all along and
/// then until current, receives every record — its cursor never passed a change it did not
/// get, however the exchanges interleaved.
pub async fn parallel_exchanges_lose_nothing_and_pass_no_change_by(store: Arc<dyn Store>) {
    const DEVICES: usize = 6;
    const RECORDS: usize = 5;
    let office = field_user(&*store, "mesa", Role::Office, None, "mesa-escritorio").await;
    let mut officers = Vec::new();
    for i in 0..DEVICES {
        let name = format!("fiscal{i}");
        officers
            .push(field_user(&*store, &name, Role::Officer, None, &format!("tablet-{i}")).await);
    }
    let mut tasks = Vec::new();
    for (i, officer) in officers.into_iter().enumerate() {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for k in 0..RECORDS {
                let about = About::plate("ABC1D23", i64::try_from(10 * i + k).unwrap());
                let mut doc = issued_record(&officer.agent, &about);
                ids.extend(push_ok(&*store, &officer, &mut [&mut doc]).await);
            }
            ids
        }));
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut cursor = 0;
    let exchange = |response: SyncResponse, seen: &mut std::collections::BTreeSet<String>| {
        seen.extend(response.new_records.iter().map(|r| r.record_id.to_string()));
        seen.extend(response.messages.iter().map(|m| m.record_id.to_string()));
        response
    };
    while !tasks.iter().all(|t| t.is_finished()) {
        let r = sync(&*store, &office, request_of(&office, &mut [], cursor))
            .await
            .unwrap();
        cursor = exchange(r, &mut seen).cursor;
        tokio::task::yield_now().await;
    }
    let mut all = std::collections::BTreeSet::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    assert_eq!(all.len(), DEVICES * RECORDS);
    loop {
        let r = sync(&*store, &office, request_of(&office, &mut [], cursor))
            .await
            .unwrap();
        let more = r.more;
        cursor = exchange(r, &mut seen).cursor;
        if !more {
            break;
        }
    }
    assert_eq!(seen, all, "the office's device got every record");
    let page = store.list_records(page(500)).await.unwrap();
    assert_eq!(page.total, u64::try_from(all.len()).unwrap());
    let audit = store.verify_audit().await.unwrap();
    assert!(audit.ok, "{audit:?}");
}

fn page(limit: u32) -> RecordFilter {
    RecordFilter {
        limit,
        ..RecordFilter::default()
    }
}

fn ids_of(page: &crate::records::RecordPage) -> Vec<String> {
    page.items.iter().map(|r| r.id.clone()).collect()
}

/// Pages of `list_records` are newest first by default (oldest first when asked), cut by
/// `limit` and `offset`, each with the total of all pages; together they hold every record
/// once; past the end a page is empty with the same total.
pub async fn record_pages_are_ordered_cut_and_counted(store: Arc<dyn Store>) {
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let mut docs: Vec<Doc> = [50, 10, 40, 20, 30]
        .into_iter()
        .map(|m| issued_record(&ana.agent, &About::plate("ABC1D23", m)))
        .collect();
    let mut refs: Vec<&mut Doc> = docs.iter_mut().collect();
    let ids = push_ok(&*store, &ana, &mut refs).await;
    // By occurrence, newest first: 10, 20, 30, 40, 50 minutes ago.
    let newest_first: Vec<String> = [1, 3, 4, 2, 0].iter().map(|&i| ids[i].clone()).collect();

    let mut seen = Vec::new();
    for offset in [0, 2, 4] {
        let got = store
            .list_records(RecordFilter { offset, ..page(2) })
            .await
            .unwrap();
        assert_eq!(got.total, 5);
        assert_eq!(got.items.len(), if offset == 4 { 1 } else { 2 });
        seen.extend(ids_of(&got));
    }
    assert_eq!(seen, newest_first);
    let oldest = store
        .list_records(RecordFilter {
            order: RecordOrder {
                by: RecordSort::Occurred,
                desc: false,
            },
            ..page(2)
        })
        .await
        .unwrap();
    assert_eq!(ids_of(&oldest), [ids[0].clone(), ids[2].clone()]);
    let past = store
        .list_records(RecordFilter {
            offset: 5,
            ..page(2)
        })
        .await
        .unwrap();
    assert_eq!((past.total, past.items.len()), (5, 0));
}

/// Each filter of `list_records` keeps what matches and leaves out the rest: plate, status
/// (one, a list, an exclusion), author, kind, stand, time window (`to` exclusive), free text.
pub async fn record_filters_leave_out_what_does_not_match(store: Arc<dyn Store>) {
    use std::collections::BTreeSet;
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let bia = field_user(&*store, "bia", Role::Officer, None, "tablet-bia").await;
    let mut a = issued_record(&ana.agent, &About::plate("ABC1D23", 50));
    let mut b = draft_record(&ana.agent, &About::plate("DEF4G56", 40));
    let mut c = issued_record(
        &bia.agent,
        &About {
            stand: None,
            ..About::plate("ABC1D23", 30)
        },
    );
    push_ok(&*store, &ana, &mut [&mut a, &mut b]).await;
    push_ok(&*store, &bia, &mut [&mut c]).await;
    let (a, b, c) = (a.id().to_string(), b.id().to_string(), c.id().to_string());
    let all = BTreeSet::from([a.clone(), b.clone(), c.clone()]);
    let cases: Vec<(RecordFilter, BTreeSet<String>)> = vec![
        (RecordFilter::default(), all.clone()),
        (
            RecordFilter {
                plate: Some("ABC1D23".into()),
                ..Default::default()
            },
            BTreeSet::from([a.clone(), c.clone()]),
        ),
        (
            RecordFilter {
                status: Some("draft".into()),
                ..Default::default()
            },
            BTreeSet::from([b.clone()]),
        ),
        (
            RecordFilter {
                statuses: vec!["issued".into()],
                ..Default::default()
            },
            BTreeSet::from([a.clone(), c.clone()]),
        ),
        (
            RecordFilter {
                not_statuses: vec!["issued".into()],
                ..Default::default()
            },
            BTreeSet::from([b.clone()]),
        ),
        (
            RecordFilter {
                officer: Some("u-bia".into()),
                ..Default::default()
            },
            BTreeSet::from([c.clone()]),
        ),
        (
            RecordFilter {
                officer: Some("u-ana".into()),
                plate: Some("ABC1D23".into()),
                ..Default::default()
            },
            BTreeSet::from([a.clone()]),
        ),
        (
            RecordFilter {
                kind: Some("transgression".into()),
                ..Default::default()
            },
            BTreeSet::new(),
        ),
        (
            RecordFilter {
                kind: Some("infraction".into()),
                ..Default::default()
            },
            all.clone(),
        ),
        (
            RecordFilter {
                stand_id: Some("S02".into()),
                ..Default::default()
            },
            BTreeSet::from([a.clone(), b.clone()]),
        ),
        (
            RecordFilter {
                from: Some(t0() - Duration::minutes(45)),
                ..Default::default()
            },
            BTreeSet::from([b.clone(), c.clone()]),
        ),
        (
            RecordFilter {
                to: Some(t0() - Duration::minutes(40)),
                ..Default::default()
            },
            BTreeSet::from([a.clone()]),
        ),
        (
            RecordFilter {
                search: vec![SearchWord {
                    text: "DEF4".into(),
                    ..Default::default()
                }],
                ..Default::default()
            },
            BTreeSet::from([b.clone()]),
        ),
    ];
    for (filter, want) in cases {
        let got = store
            .list_records(RecordFilter {
                limit: 10,
                ..filter.clone()
            })
            .await
            .unwrap();
        let ids: BTreeSet<String> = ids_of(&got).into_iter().collect();
        assert_eq!(ids, want, "{filter:?}");
        assert_eq!(got.total, want.len() as u64, "{filter:?}");
    }
}

/// The inbox filters by the rules a record is classified under (a rule id is its own key:
/// `R2` is not `R24`), alone or with status, plate and pagination; its counts per status are
/// over every filter but the status; each row lists its rules.
pub async fn the_inbox_filters_by_rule_and_counts_statuses(store: Arc<dyn Store>) {
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let about = |plate, minutes_ago, rules: Vec<RuleId>| About {
        rules,
        ..About::plate(plate, minutes_ago)
    };
    let mut a = issued_record(&ana.agent, &about("ABC1D23", 50, vec![RuleId::R01]));
    let mut b = issued_record(&ana.agent, &about("ABC1D23", 40, vec![RuleId::R24]));
    let mut c = draft_record(&ana.agent, &about("DEF4G56", 30, vec![RuleId::R24]));
    let mut d = issued_record(
        &ana.agent,
        &about("DEF4G56", 20, vec![RuleId::R01, RuleId::R24]),
    );
    let ids = push_ok(&*store, &ana, &mut [&mut a, &mut b, &mut c, &mut d]).await;
    let (a, b, c, d) = (&ids[0], &ids[1], &ids[2], &ids[3]);
    let inbox = |filter: RecordFilter| {
        let store = store.clone();
        async move { store.office_inbox(filter).await.unwrap() }
    };
    let rule = |r: &str| RecordFilter {
        rule: Some(r.into()),
        ..page(10)
    };
    let ids = |p: &crate::office::InboxPage| -> Vec<String> {
        p.items.iter().map(|r| r.row.id.clone()).collect()
    };
    let counts = |p: &crate::office::InboxPage| -> Vec<(String, u64)> {
        let mut c = p.counts.clone();
        c.sort();
        c
    };
    let want = |pairs: &[(&str, u64)]| -> Vec<(String, u64)> {
        pairs.iter().map(|(s, n)| ((*s).to_owned(), *n)).collect()
    };

    let all = inbox(page(10)).await;
    assert_eq!(
        (all.total, ids(&all)),
        (4, vec![d.clone(), c.clone(), b.clone(), a.clone()])
    );
    assert_eq!(counts(&all), want(&[("draft", 1), ("issued", 3)]));

    let r24 = inbox(rule("R24")).await;
    assert_eq!(
        (r24.total, ids(&r24)),
        (3, vec![d.clone(), c.clone(), b.clone()])
    );
    assert_eq!(counts(&r24), want(&[("draft", 1), ("issued", 2)]));
    let rules_of_d = &r24.items[0].rules;
    assert!(
        rules_of_d.contains(&"R01".to_owned()) && rules_of_d.contains(&"R24".to_owned()),
        "{rules_of_d:?}"
    );
    let r01 = inbox(rule("R01")).await;
    assert_eq!(ids(&r01), [d.clone(), a.clone()]);
    assert_eq!(inbox(rule("R2")).await.total, 0);

    // With the status: the page narrows, the counts do not.
    let issued = inbox(RecordFilter {
        status: Some("issued".into()),
        ..rule("R24")
    })
    .await;
    assert_eq!(
        (issued.total, ids(&issued)),
        (2, vec![d.clone(), b.clone()])
    );
    assert_eq!(counts(&issued), want(&[("draft", 1), ("issued", 2)]));
    // With a plate (answered another way than by the rule alone).
    let plate = inbox(RecordFilter {
        plate: Some("ABC1D23".into()),
        ..rule("R24")
    })
    .await;
    assert_eq!((plate.total, ids(&plate)), (1, vec![b.clone()]));
    // Pages.
    let first = inbox(RecordFilter {
        limit: 2,
        ..rule("R24")
    })
    .await;
    let second = inbox(RecordFilter {
        limit: 2,
        offset: 2,
        ..rule("R24")
    })
    .await;
    assert_eq!((first.total, second.total), (3, 3));
    assert_eq!(ids(&first), [d.clone(), c.clone()]);
    assert_eq!(ids(&second), vec![b.clone()]);
}

/// An office event goes through the same vetting as a device's change: applied with its
/// projection (status, rules) and audit row, and sent to the author's device at its next
/// sync; refused for a role that may not write it, with nothing stored; `NotFound` for an
/// unknown record.
pub async fn office_events_are_vetted_projected_and_reach_the_device(store: Arc<dyn Store>) {
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let office = field_user(&*store, "escritorio", Role::Office, None, "desktop").await;
    let mut doc = issued_record(&ana.agent, &About::plate("ABC1D23", 30));
    let request = request_of(&ana, &mut [&mut doc], 0);
    let synced = sync(&*store, &ana, request).await.unwrap();
    let id = doc.id().to_string();
    let event = |user: &FieldUser, record: &str, event: EventKind, minutes_ago: i64| {
        let store = store.clone();
        let job = EventJob {
            caller: user.caller.clone(),
            record_id: record.to_owned(),
            event,
            at: t0() - Duration::minutes(minutes_ago),
            registry: Arc::new(IndexedRegistry::new(Arc::default())),
            now: t0(),
        };
        async move { store.record_event(job).await.unwrap() }
    };

    // An officer may not review.
    let before = footprint(&*store, &id).await;
    match event(&ana, &id, EventKind::Reviewed { note: None }, 10).await {
        EventOutcome::Refused { code, message } => {
            assert_eq!(code, RejectionCode::RoleForbidden);
            assert!(!message.is_empty());
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(footprint(&*store, &id).await, before);

    match event(&office, &id, EventKind::Reviewed { note: None }, 10).await {
        EventOutcome::Applied(doc) => assert_eq!(doc.row.status, "under_review"),
        other => panic!("expected the event applied, got {other:?}"),
    }
    assert_eq!(store.record_audit(id.clone()).await.unwrap().len(), 2);
    let classified = EventKind::Classified {
        legal_basis: vec![LegalBasis::of(RuleId::R24)],
    };
    assert!(matches!(
        event(&office, &id, classified, 5).await,
        EventOutcome::Applied(_)
    ));
    let row = store.record(id.clone()).await.unwrap().unwrap().row;
    assert_eq!(row.status, "under_review");
    assert!(row.seq > before.doc.as_ref().unwrap().1.seq);
    let listed = store
        .list_records(RecordFilter {
            status: Some("under_review".into()),
            ..page(10)
        })
        .await
        .unwrap();
    assert_eq!(ids_of(&listed), vec![id.clone()]);
    // The office's classification replaces the author's legal basis for the rule filter.
    let by_rule = |r: &str| RecordFilter {
        rule: Some(r.into()),
        ..page(10)
    };
    assert_eq!(store.office_inbox(by_rule("R24")).await.unwrap().total, 1);
    assert_eq!(store.office_inbox(by_rule("R01")).await.unwrap().total, 0);
    assert!(store.verify_audit().await.unwrap().ok);

    // The author's device gets the office's changes.
    let next = sync(&*store, &ana, request_of(&ana, &mut [], synced.cursor))
        .await
        .unwrap();
    assert!(
        next.messages.iter().any(|m| m.record_id == doc.id()),
        "{next:?}"
    );

    let unknown = Uuid::now_v7().to_string();
    assert!(matches!(
        event(&office, &unknown, EventKind::Reviewed { note: None }, 1).await,
        EventOutcome::NotFound
    ));
}

/// An office job is all or nothing: its steps and its registry effect are stored together
/// (records, their audit rows and a new registry version), while a job whose effect is refused
/// or whose later step names an unknown record stores nothing of its earlier steps; an effect
/// that changes nothing writes no registry version.
pub async fn office_jobs_store_every_step_and_effect_or_nothing(store: Arc<dyn Store>) {
    use crate::office::{
        EffectFn, EffectRefusal, OfficeJob, OfficeOutcome, OfficeStep, RegistryEdit,
    };
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let office = field_user(&*store, "escritorio", Role::Office, None, "desktop").await;
    let mut a = issued_record(&ana.agent, &About::plate("ABC1D23", 30));
    let mut b = issued_record(&ana.agent, &About::plate("DEF4G56", 20));
    let ids = push_ok(&*store, &ana, &mut [&mut a, &mut b]).await;
    let (a, b) = (ids[0].clone(), ids[1].clone());
    let review = |id: &str| OfficeStep {
        record_id: id.to_owned(),
        event: EventKind::Reviewed { note: None },
        at: t0() - Duration::minutes(5),
    };
    let job = |steps: Vec<OfficeStep>, effect: Option<(String, EffectFn)>| OfficeJob {
        caller: office.caller.clone(),
        steps,
        effect,
        registry: Arc::new(IndexedRegistry::new(Arc::default())),
        now: t0(),
    };
    let add_stand: EffectFn = Arc::new(|view, registry| {
        // The effect sees the record as the steps left it.
        if view.status.as_str() != "under_review" {
            return Err(EffectRefusal {
                code: "not_under_review",
                message: format!("o efeito viu o registro em {}", view.status.as_str()),
            });
        }
        let mut next = registry.clone();
        next.stands.push(stand("S07"));
        Ok(Some(RegistryEdit {
            registry: next,
            action: String::from("office.effect.test"),
            subject: String::from("stand:S07"),
        }))
    });
    let refuse: EffectFn = Arc::new(|_, _| {
        Err(EffectRefusal {
            code: "effect_refused",
            message: String::from("efeito recusado no teste"),
        })
    });
    let nothing: EffectFn = Arc::new(|_, _| Ok(None));
    let (fa, fb) = (footprint(&*store, &a).await, footprint(&*store, &b).await);
    let version = store.registry().await.unwrap().version;

    match store
        .office_apply(job(vec![review(&a)], Some((a.clone(), refuse))))
        .await
        .unwrap()
    {
        OfficeOutcome::EffectRefused(r) => assert_eq!(r.code, "effect_refused"),
        other => panic!("expected the effect refused, got {other:?}"),
    }
    let unknown = Uuid::now_v7().to_string();
    match store
        .office_apply(job(vec![review(&a), review(&unknown)], None))
        .await
        .unwrap()
    {
        OfficeOutcome::NotFound { record_id } => assert_eq!(record_id, unknown),
        other => panic!("expected NotFound, got {other:?}"),
    }
    assert_eq!(
        footprint(&*store, &a).await,
        fa,
        "nothing of the refused jobs"
    );
    assert_eq!(store.registry().await.unwrap().version, version);

    match store
        .office_apply(job(vec![review(&b)], Some((b.clone(), nothing))))
        .await
        .unwrap()
    {
        OfficeOutcome::Applied { docs, registry } => {
            assert_eq!(docs.len(), 1);
            assert_eq!(docs[0].row.status, "under_review");
            assert_eq!(registry, None);
        }
        other => panic!("expected the job applied, got {other:?}"),
    }
    assert_eq!(store.registry().await.unwrap().version, version);
    assert_eq!(
        store.record_audit(b.clone()).await.unwrap().len(),
        fb.audit.len() + 1
    );

    let head = store.audit_head().await.unwrap().seq;
    let changes = match store
        .office_apply(job(vec![review(&a)], Some((a.clone(), add_stand))))
        .await
        .unwrap()
    {
        OfficeOutcome::Applied { docs, registry } => {
            assert_eq!(docs.len(), 1);
            assert_eq!(docs[0].row.id, a);
            assert_eq!(docs[0].row.status, "under_review");
            let applied = registry.expect("a registry version");
            assert_eq!(applied.version, version + 1);
            assert_eq!(applied.changes.len(), 1);
            applied.changes
        }
        other => panic!("expected the job applied, got {other:?}"),
    };
    let registry = store.registry().await.unwrap();
    assert_eq!(registry.version, version + 1);
    assert_eq!(stand_ids(&registry), ["S07"]);
    assert_eq!(
        store.audit_head().await.unwrap().seq,
        head + 2,
        "event and registry"
    );
    match store.registry_changes(version, 10).await.unwrap() {
        ChangesSince::Changes(logged) => assert_eq!(logged.changes, changes),
        other => panic!("{other:?}"),
    }
    assert!(store.verify_audit().await.unwrap().ok);
}

/// Duplicate candidates share a plate with an open record of another device made within
/// `DUPLICATE_WINDOW_MINUTES`; drafts, other plates and records further apart are left out. They
/// are kept as records arrive — a new record can make an older one a candidate — and read a
/// page of plates at a time, newest occurrence first.
pub async fn duplicate_candidates_share_a_plate_across_devices_within_the_window(
    store: Arc<dyn Store>,
) {
    use std::collections::BTreeSet;

    use crate::office::{CandidatePage, CandidateQuery};
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let bia = field_user(&*store, "bia", Role::Officer, None, "tablet-bia").await;
    let mut a = issued_record(&ana.agent, &About::plate("ABC1D23", 30));
    let mut b = issued_record(&bia.agent, &About::plate("ABC1D23", 26));
    let mut draft = draft_record(&bia.agent, &About::plate("ABC1D23", 29));
    let mut long_before = issued_record(&bia.agent, &About::plate("ABC1D23", 200));
    let mut other_plate = issued_record(&bia.agent, &About::plate("DEF4G56", 40));
    push_ok(&*store, &ana, &mut [&mut a]).await;
    push_ok(
        &*store,
        &bia,
        &mut [&mut b, &mut draft, &mut long_before, &mut other_plate],
    )
    .await;
    let read = |plate: Option<&str>, offset: u32, limit: u32, max_records: u32| {
        let store = store.clone();
        let query = CandidateQuery {
            plate: plate.map(str::to_owned),
            offset,
            limit,
            max_records,
        };
        async move { store.duplicate_candidates(query).await.unwrap() }
    };
    let ids = |page: &CandidatePage| -> BTreeSet<String> {
        page.docs.iter().map(|d| d.row.id.clone()).collect()
    };
    let id = |r: &sync_core::records::RecordDoc| r.id().to_string();
    let all = read(None, 0, 10, 100).await;
    assert_eq!(ids(&all), BTreeSet::from([id(&a), id(&b)]));
    assert_eq!((all.plates, all.complete), (1, true));

    // Ana's record 150 minutes ago is within the window of Bia's 200 minutes ago: both become
    // candidates, the older one by the newer's arrival. A pair on another plate, older.
    let mut later = issued_record(&ana.agent, &About::plate("ABC1D23", 150));
    let mut pair = issued_record(&ana.agent, &About::plate("DEF4G56", 45));
    push_ok(&*store, &ana, &mut [&mut later, &mut pair]).await;
    let abc = BTreeSet::from([id(&a), id(&b), id(&later), id(&long_before)]);
    let def = BTreeSet::from([id(&other_plate), id(&pair)]);
    let all = read(None, 0, 10, 100).await;
    assert_eq!(all.plates, 2);
    assert_eq!(ids(&all), abc.union(&def).cloned().collect());
    // Pages of plates, the newest occurrence first; one plate; the record bound.
    assert_eq!(ids(&read(None, 0, 1, 100).await), abc);
    assert_eq!(ids(&read(None, 1, 1, 100).await), def);
    assert!(read(None, 2, 1, 100).await.docs.is_empty());
    assert_eq!(ids(&read(Some("DEF4G56"), 0, 1, 100).await), def);
    assert_eq!(read(Some("DEF4G56"), 0, 1, 100).await.plates, 1);
    let cut = read(None, 0, 2, 5).await;
    assert_eq!((ids(&cut), cut.complete), (abc.clone(), false));
    let first_only = read(None, 0, 2, 3).await;
    assert_eq!(
        first_only.docs.len(),
        3,
        "a plate alone is cut at the bound"
    );
    assert!(!first_only.complete);
    assert!(read(Some("GHI7J89"), 0, 10, 100).await.docs.is_empty());
}

// ----- editais de chamamento ----------------------------------------------------------------

/// An edital as the kernel's `selection::open` makes it (built here so that the suite needs no
/// registry): places at stand S01, dates of December 2026.
fn edital_of(id: &str) -> Edital {
    let d = |y, m, day| chrono::NaiveDate::from_ymd_opt(y, m, day).unwrap();
    Edital {
        id: id.to_owned(),
        number: format!("{id}/2026"),
        opened_on: d(2026, 11, 30),
        published_on: d(2026, 12, 1),
        applications_from: d(2026, 12, 21),
        applications_until: d(2026, 12, 31),
        reference_date: d(2026, 12, 31),
        seed_source: String::from("os prêmios da Loteria Federal de 09/01/2027"),
        draw_on: d(2027, 1, 9),
        vacancies: vec![Vacancy {
            stand_id: String::from("S01"),
            places: 2,
        }],
        documents: vec![String::from("Cédula de Identidade")],
        criteria: String::from("art. 3º"),
        certificate_validity_days: 90,
        candidates: Vec::new(),
        list: None,
        draw: None,
        result: None,
        appeals: Vec::new(),
        grants: Vec::new(),
    }
}

fn save_of(edital: Edital, expected_version: Option<u64>, action: &str) -> EditalSave {
    EditalSave {
        subject: format!("edital:{}", edital.id),
        expected_version,
        edital,
        action: action.to_owned(),
        actor: cli(),
        registry: None,
        read: None,
    }
}

/// An edital is created once (`Duplicate` for its id again); a save from its current version
/// bumps it and is what `edital` then reads, with one audit row; a save from a stale version is
/// `VersionConflict` (both versions named) and writes nothing, nor does a save of an unknown
/// edital (`NotFound`); the chain verifies after it all.
pub async fn editais_are_created_once_and_saved_under_their_version(store: Arc<dyn Store>) {
    assert_eq!(store.edital("2026-01".into()).await.unwrap(), None);
    let head0 = store.audit_head().await.unwrap();
    let first = edital_of("2026-01");
    let saved = store
        .save_edital(save_of(first.clone(), None, "edital.open"))
        .await
        .unwrap();
    assert_eq!(
        saved,
        EditalSaved {
            version: 1,
            registry: None
        }
    );
    let row = store.edital("2026-01".into()).await.unwrap().unwrap();
    assert_eq!((row.id.as_str(), row.version), ("2026-01", 1));
    assert_eq!(row.edital, first);
    assert_eq!(row.updated_at, t0());
    assert_eq!(store.audit_head().await.unwrap().seq, head0.seq + 1);

    match store
        .save_edital(save_of(edital_of("2026-01"), None, "edital.open"))
        .await
    {
        Err(StoreError::Duplicate { .. }) => {}
        other => panic!("expected a duplicate, got {other:?}"),
    }

    let mut next = first.clone();
    next.number = String::from("001/2026");
    let saved = store
        .save_edital(save_of(next.clone(), Some(1), "edital.candidate.register"))
        .await
        .unwrap();
    assert_eq!(saved.version, 2);
    let row = store.edital("2026-01".into()).await.unwrap().unwrap();
    assert_eq!((row.version, &row.edital), (2, &next));
    let head2 = store.audit_head().await.unwrap();
    assert_eq!(head2.seq, head0.seq + 2);

    // Computed from version 1 by a writer that lost the race.
    let mut stale = first.clone();
    stale.number = String::from("999/2026");
    match store
        .save_edital(save_of(stale, Some(1), "edital.candidate.register"))
        .await
    {
        Err(StoreError::VersionConflict { expected, found }) => {
            assert_eq!((expected, found), (1, 2));
        }
        other => panic!("expected a version conflict, got {other:?}"),
    }
    match store
        .save_edital(save_of(edital_of("2026-09"), Some(1), "edital.draw"))
        .await
    {
        Err(StoreError::NotFound { .. }) => {}
        other => panic!("expected not found, got {other:?}"),
    }
    let row = store.edital("2026-01".into()).await.unwrap().unwrap();
    assert_eq!((row.version, &row.edital), (2, &next));
    assert_eq!(store.edital("2026-09".into()).await.unwrap(), None);
    assert_eq!(store.audit_head().await.unwrap(), head2);
    let report = store.verify_audit().await.unwrap();
    assert!(report.ok, "{report:?}");
}

/// A save carrying a registry version (a grant) commits both, each with its audit row, and
/// hands the registry commit back; when the registry moved meanwhile, or the edital did, the
/// save is `VersionConflict` and neither is written.
pub async fn an_edital_saved_with_a_registry_version_writes_both_or_neither(store: Arc<dyn Store>) {
    let v0 = store.registry().await.unwrap();
    store
        .commit_registry(commit_of(&v0, vec![stand("S01")], "stand:S01"))
        .await
        .unwrap();
    let v1 = store.registry().await.unwrap();
    store
        .save_edital(save_of(edital_of("2026-01"), None, "edital.open"))
        .await
        .unwrap();
    let head = store.audit_head().await.unwrap();

    let mut granted = edital_of("2026-01");
    granted.number = String::from("granted");
    let commit = commit_of(&v1, vec![stand("S01"), stand("S02")], "stand:S02");
    let made = commit.changes.changes.clone();
    let saved = store
        .save_edital(EditalSave {
            registry: Some(commit),
            read: None,
            ..save_of(granted.clone(), Some(1), "edital.grant")
        })
        .await
        .unwrap();
    assert_eq!(saved.version, 2);
    let committed = saved.registry.unwrap();
    assert_eq!((committed.version, &committed.changes), (2, &made));
    let v2 = store.registry().await.unwrap();
    assert_eq!(
        (v2.version, stand_ids(&v2)),
        (2, vec!["S01".into(), "S02".into()])
    );
    assert_eq!(
        store
            .edital("2026-01".into())
            .await
            .unwrap()
            .unwrap()
            .edital,
        granted
    );
    let head2 = store.audit_head().await.unwrap();
    assert_eq!(
        head2.seq,
        head.seq + 2,
        "the registry's row and the edital's"
    );

    // The registry moved since version 1: nothing of the save is written.
    let mut lost = granted.clone();
    lost.number = String::from("lost");
    match store
        .save_edital(EditalSave {
            registry: Some(commit_of(&v1, vec![stand("S09")], "stand:S09")),
            read: None,
            ..save_of(lost.clone(), Some(2), "edital.grant")
        })
        .await
    {
        Err(StoreError::VersionConflict { expected, found }) => {
            assert_eq!((expected, found), (1, 2));
        }
        other => panic!("expected a version conflict, got {other:?}"),
    }
    // The edital moved: the registry commit is not written either.
    match store
        .save_edital(EditalSave {
            registry: Some(commit_of(&v2, vec![stand("S09")], "stand:S09")),
            read: None,
            ..save_of(lost, Some(1), "edital.grant")
        })
        .await
    {
        Err(StoreError::VersionConflict { expected, found }) => {
            assert_eq!((expected, found), (1, 2));
        }
        other => panic!("expected a version conflict, got {other:?}"),
    }
    let row = store.edital("2026-01".into()).await.unwrap().unwrap();
    assert_eq!((row.version, &row.edital), (2, &granted));
    let still = store.registry().await.unwrap();
    assert_eq!(
        (still.version, stand_ids(&still)),
        (2, vec!["S01".into(), "S02".into()])
    );
    assert_eq!(store.audit_head().await.unwrap(), head2);
    let report = store.verify_audit().await.unwrap();
    assert!(report.ok, "{report:?}");
}

/// The list is newest first (by creation, however recently an older one was saved) and holds
/// at most `MAX_EDITAIS_LISTED`, leaving the oldest out.
pub async fn editais_are_listed_newest_first_and_bounded(store: Arc<dyn Store>) {
    assert!(store.list_editais().await.unwrap().is_empty());
    let n = crate::selection::MAX_EDITAIS_LISTED + 1;
    for i in 0..n {
        let mut save = save_of(edital_of(&format!("E{i:04}")), None, "edital.open");
        save.actor = Actor::cli(t0() + Duration::minutes(i64::try_from(i).unwrap()));
        store.save_edital(save).await.unwrap();
    }
    // The oldest saved again, later than all: still listed by creation.
    let mut again = save_of(edital_of("E0001"), Some(1), "edital.candidate.register");
    again.actor = Actor::cli(t0() + Duration::days(30));
    store.save_edital(again).await.unwrap();
    let listed = store.list_editais().await.unwrap();
    assert_eq!(listed.len(), crate::selection::MAX_EDITAIS_LISTED);
    let ids: Vec<&str> = listed.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.first(), Some(&format!("E{:04}", n - 1).as_str()));
    assert_eq!(ids.last(), Some(&"E0001"), "E0000, the oldest, is left out");
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first");
    assert_eq!(listed.last().unwrap().version, 2);
}

/// Opening an edital carries what its places were counted on: the save is `VersionConflict`
/// and writes nothing when the registry moved or another edital was opened or saved since the
/// read; with the read still current it is written.
pub async fn an_edital_opened_on_a_stale_read_is_a_conflict(store: Arc<dyn Store>) {
    use crate::selection::ReadSet;
    let v0 = store.registry().await.unwrap();
    let opened = |id: &str, read: ReadSet| EditalSave {
        read: Some(read),
        ..save_of(edital_of(id), None, "edital.open")
    };
    let read0 = ReadSet {
        registry_version: v0.version,
        editais: Vec::new(),
    };
    store
        .save_edital(opened("2026-01", read0.clone()))
        .await
        .unwrap();
    // Another edital was opened after the read: conflict, nothing written.
    match store.save_edital(opened("2026-02", read0.clone())).await {
        Err(StoreError::VersionConflict { .. }) => {}
        other => panic!("expected a version conflict, got {other:?}"),
    }
    assert!(store.edital("2026-02".into()).await.unwrap().is_none());
    // That edital was saved again after the read: conflict.
    let first = store.edital("2026-01".into()).await.unwrap().unwrap();
    store
        .save_edital(save_of(
            first.edital.clone(),
            Some(1),
            "edital.candidate.register",
        ))
        .await
        .unwrap();
    let stale = ReadSet {
        registry_version: v0.version,
        editais: vec![("2026-01".into(), 1)],
    };
    match store.save_edital(opened("2026-02", stale)).await {
        Err(StoreError::VersionConflict { .. }) => {}
        other => panic!("expected a version conflict, got {other:?}"),
    }
    // The registry moved after the read: conflict.
    store
        .commit_registry(commit_of(&v0, vec![stand("S01")], "stand:S01"))
        .await
        .unwrap();
    let stale = ReadSet {
        registry_version: v0.version,
        editais: vec![("2026-01".into(), 2)],
    };
    match store.save_edital(opened("2026-02", stale)).await {
        Err(StoreError::VersionConflict { .. }) => {}
        other => panic!("expected a version conflict, got {other:?}"),
    }
    assert!(store.edital("2026-02".into()).await.unwrap().is_none());
    // Read again: written.
    let current = ReadSet {
        registry_version: v0.version + 1,
        editais: vec![("2026-01".into(), 2)],
    };
    let saved = store.save_edital(opened("2026-02", current)).await.unwrap();
    assert_eq!(saved.version, 1);
    let report = store.verify_audit().await.unwrap();
    assert!(report.ok, "{report:?}");
}

// ----- notifications and verification codes -------------------------------------------------

/// A notification to `person` of the decision `decision` on record `record_id`, as the office
/// drafts it (number and code are placeholders the store replaces).
fn notification_draft(
    record_id: &str,
    person: &str,
    decision: &str,
) -> crate::notifications::NewNotification {
    use documents::{DecisionLine, NotificationContent, Party, Verification};
    crate::notifications::NewNotification {
        record_id: record_id.to_owned(),
        person: person.to_owned(),
        decision_event_id: decision.to_owned(),
        content: NotificationContent {
            number: String::new(),
            authority: String::from("Prefeitura Municipal de Americana"),
            issued_at: t0() - Duration::days(3),
            addressee: Party {
                name: format!("Titular {person}"),
                role: String::from("titular do alvará"),
                document: None,
            },
            addressee_address: Some(String::from("Rua das Paineiras, 120")),
            autos: Vec::new(),
            decision: DecisionLine {
                penalty: String::from("Advertência por escrito"),
                citation: String::from("Lei 4.019/2004, art. 32, I"),
                decided_on: chrono::NaiveDate::from_ymd_opt(2026, 11, 29).unwrap(),
                decided_by: String::from("Chefe da Unidade de Transportes"),
            },
            amount: None,
            filing_place: String::from("protocolo da Unidade de Transportes"),
            appeal_days: 10,
            verification: Verification {
                code: crate::notifications::unsealed_code(),
                base_url: String::from("https://fiscal.example"),
            },
        },
    }
}

/// Notifications are numbered per year in the order they are created, sealed with the audit
/// row that records each (their code, found again by `verification_code`), and read back as
/// stored; a second notification of the same decision to the same person is `Duplicate` and
/// nothing of its batch is kept. An auto's printed code names its record, once.
pub async fn notifications_are_numbered_sealed_and_created_once(store: Arc<dyn Store>) {
    use crate::notifications::{CodeTarget, code_of, content_digest};
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let mut a = issued_record(&ana.agent, &About::plate("ABC1D23", 30));
    let mut b = issued_record(&ana.agent, &About::plate("DEF4G56", 20));
    let ids = push_ok(&*store, &ana, &mut [&mut a, &mut b]).await;
    let (a, b) = (ids[0].clone(), ids[1].clone());
    let clerk = Actor {
        user_id: Some(String::from("u-escritorio")),
        device_id: Some(String::from("desktop")),
        at: t0(),
    };

    let rows = store
        .create_notifications(
            vec![
                notification_draft(&a, "registry:P01", "ev-1"),
                notification_draft(&a, "registry:P02", "ev-1"),
            ],
            clerk.clone(),
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].number, "NP-2026-000001");
    assert_eq!(rows[1].number, "NP-2026-000002");
    let head = store.audit_head().await.unwrap();
    assert_eq!(rows[1].audit_seq, head.seq);
    assert_eq!(rows[0].audit_seq + 1, rows[1].audit_seq);
    for row in &rows {
        assert_eq!(row.content.number, row.number);
        assert_eq!(row.content.issued_at, t0());
        assert_eq!(row.content.verification.code, row.code);
        assert_eq!(
            row.content_sha256,
            hex::encode(content_digest(&row.content))
        );
        assert_eq!(
            (row.created_at, row.created_by.as_str()),
            (t0(), "u-escritorio")
        );
        let audit_hash = store.audit_row_hash(row.audit_seq).await.unwrap().unwrap();
        assert_eq!(
            row.code,
            code_of(&content_digest(&row.content), &audit_hash),
            "the code binds the content to its audit row"
        );
    }
    assert_ne!(rows[0].code, rows[1].code);

    // Read back as stored: by record (oldest first), by id, by code.
    assert_eq!(store.record_notifications(a.clone()).await.unwrap(), rows);
    assert!(
        store
            .record_notifications(b.clone())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.notification(rows[1].id.clone()).await.unwrap(),
        Some(rows[1].clone())
    );
    assert_eq!(
        store.notification(String::from("nenhuma")).await.unwrap(),
        None
    );
    assert_eq!(
        store.verification_code(rows[0].code.clone()).await.unwrap(),
        Some(CodeTarget::Notification(Box::new(rows[0].clone())))
    );
    let unknown = documents::VerificationCode::derive(b"taxi-fiscal/test", b"unknown");
    assert_eq!(
        store.verification_code(unknown.clone()).await.unwrap(),
        None
    );

    // The same decision to the same person again, after a new one in the same batch: nothing.
    match store
        .create_notifications(
            vec![
                notification_draft(&b, "registry:P03", "ev-2"),
                notification_draft(&a, "registry:P02", "ev-1"),
            ],
            clerk.clone(),
        )
        .await
    {
        Err(StoreError::Duplicate { .. }) => {}
        other => panic!("expected Duplicate, got {other:?}"),
    }
    assert!(
        store
            .record_notifications(b.clone())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.audit_head().await.unwrap(), head);
    // The numbering goes on after the refused batch.
    let next = store
        .create_notifications(vec![notification_draft(&b, "registry:P03", "ev-2")], clerk)
        .await
        .unwrap();
    assert_eq!(next[0].number, "NP-2026-000003");

    // An auto's printed code: registered once, again for the same record (no change), refused
    // for another record.
    let auto = documents::VerificationCode::derive(b"taxi-fiscal/test", b"auto-a");
    assert_eq!(store.record_auto_code(a.clone()).await.unwrap(), None);
    for _ in 0..2 {
        store
            .register_auto_code(auto.clone(), a.clone(), t0())
            .await
            .unwrap();
    }
    assert_eq!(
        store.verification_code(auto.clone()).await.unwrap(),
        Some(CodeTarget::Auto {
            record_id: a.clone()
        })
    );
    assert_eq!(
        store.record_auto_code(a.clone()).await.unwrap(),
        Some(auto.clone())
    );
    match store.register_auto_code(auto, b.clone(), t0()).await {
        Err(StoreError::Duplicate { .. }) => {}
        other => panic!("expected Duplicate, got {other:?}"),
    }
    assert_eq!(store.record_auto_code(b).await.unwrap(), None);
    assert!(store.verify_audit().await.unwrap().ok);
}

// ----- observed persons and merged duplicates -----------------------------------------------

/// An observed person as the author's device uploads it.
fn observed(id: &str, name: &str) -> sync_core::sync::ObservedIdentity {
    sync_core::sync::ObservedIdentity {
        id: id.to_owned(),
        name: Some(name.to_owned()),
        cpf: None,
        cnh: Some(String::from("01234567890")),
        document: None,
        phone: Some(String::from("(19) 99999-0000")),
        address: None,
    }
}

/// A record's observed persons are replaced by each upload that changes them (in the order
/// sent, with an audit row) and left alone by the same set again; the office's erasure deletes
/// them once and for all (idempotent; later uploads store nothing). A record merged as a
/// duplicate is listed under the record it was merged into.
pub async fn observed_persons_are_replaced_erased_once_and_merges_listed(store: Arc<dyn Store>) {
    use crate::observed::PutObserved;
    let ana = field_user(&*store, "ana", Role::Officer, None, "tablet-ana").await;
    let office = field_user(&*store, "escritorio", Role::Office, None, "desktop").await;
    let mut a = issued_record(&ana.agent, &About::plate("ABC1D23", 30));
    let mut b = issued_record(&ana.agent, &About::plate("ABC1D23", 25));
    let ids = push_ok(&*store, &ana, &mut [&mut a, &mut b]).await;
    let (a, b) = (ids[0].clone(), ids[1].clone());
    let device = Actor {
        user_id: Some(ana.caller.user_id.clone()),
        device_id: Some(ana.caller.device_id.clone()),
        at: t0(),
    };
    let empty = store.observed_persons(a.clone()).await.unwrap();
    assert!(empty.persons.is_empty() && empty.erasure.is_none());

    // Sent in this order (not that of the ids): kept in it.
    let first = vec![observed("obs-2", "Maria"), observed("obs-1", "José")];
    assert_eq!(
        store
            .put_observed_persons(a.clone(), first.clone(), device.clone())
            .await
            .unwrap(),
        PutObserved::Stored {
            persons: 2,
            changed: true
        }
    );
    let held = store.observed_persons(a.clone()).await.unwrap();
    let ids_of = |held: &crate::observed::ObservedPersons| -> Vec<String> {
        held.persons.iter().map(|p| p.person_id.clone()).collect()
    };
    assert_eq!(ids_of(&held), ["obs-2", "obs-1"]);
    let maria = &held.persons[0];
    assert_eq!(maria.name.as_deref(), Some("Maria"));
    assert_eq!(maria.cnh.as_deref(), Some("01234567890"));
    assert_eq!(maria.cpf, None);
    assert_eq!(maria.uploaded_at, t0());
    assert_eq!(maria.uploaded_by, ana.caller.user_id);
    assert_eq!(maria.device_id.as_deref(), Some("tablet-ana"));
    let audited = store.audit_head().await.unwrap();

    // The same set again: nothing written.
    assert_eq!(
        store
            .put_observed_persons(a.clone(), first, device.clone())
            .await
            .unwrap(),
        PutObserved::Stored {
            persons: 2,
            changed: false
        }
    );
    assert_eq!(store.audit_head().await.unwrap(), audited);

    // A changed set replaces the whole.
    let second = vec![
        observed("obs-3", "Pedro"),
        observed("obs-1", "José Carlos"),
        observed("obs-0", "Ana"),
    ];
    assert_eq!(
        store
            .put_observed_persons(a.clone(), second, device.clone())
            .await
            .unwrap(),
        PutObserved::Stored {
            persons: 3,
            changed: true
        }
    );
    let held = store.observed_persons(a.clone()).await.unwrap();
    assert_eq!(ids_of(&held), ["obs-3", "obs-1", "obs-0"]);
    assert_eq!(held.persons[1].name.as_deref(), Some("José Carlos"));
    assert_eq!(store.audit_head().await.unwrap().seq, audited.seq + 1);

    // Erased: once, with its audit row; again, the same erasure; an upload stores nothing.
    let clerk = Actor {
        user_id: Some(office.caller.user_id.clone()),
        device_id: Some(office.caller.device_id.clone()),
        at: t0() + Duration::minutes(5),
    };
    let erasure = store
        .erase_observed_persons(a.clone(), clerk.clone())
        .await
        .unwrap();
    assert_eq!(erasure.persons, 3);
    assert_eq!(erasure.erased_by, office.caller.user_id);
    assert_eq!(erasure.erased_at, t0() + Duration::minutes(5));
    assert_eq!(erasure.audit_seq, store.audit_head().await.unwrap().seq);
    let held = store.observed_persons(a.clone()).await.unwrap();
    assert!(held.persons.is_empty());
    assert_eq!(held.erasure.as_ref(), Some(&erasure));
    let head = store.audit_head().await.unwrap();
    assert_eq!(
        store
            .erase_observed_persons(a.clone(), clerk)
            .await
            .unwrap(),
        erasure
    );
    assert_eq!(
        store
            .put_observed_persons(a.clone(), vec![observed("obs-9", "Rui")], device)
            .await
            .unwrap(),
        PutObserved::Erased(erasure)
    );
    assert_eq!(store.audit_head().await.unwrap(), head);
    assert!(
        store
            .observed_persons(a.clone())
            .await
            .unwrap()
            .persons
            .is_empty()
    );

    // Merged duplicates: b merged into a is listed under a.
    assert!(store.merged_into(a.clone()).await.unwrap().is_empty());
    let merged = store
        .record_event(EventJob {
            caller: office.caller.clone(),
            record_id: b.clone(),
            event: EventKind::DuplicateMerged {
                into_record_id: a.clone(),
            },
            at: t0() - Duration::minutes(1),
            registry: Arc::new(IndexedRegistry::new(Arc::default())),
            now: t0(),
        })
        .await
        .unwrap();
    assert!(matches!(merged, EventOutcome::Applied(_)), "{merged:?}");
    assert!(store.merged_into(b.clone()).await.unwrap().is_empty());
    assert_eq!(store.merged_into(a).await.unwrap(), [b]);
    assert!(store.verify_audit().await.unwrap().ok);
}

// ----- login failure budgets (`logins`) -----------------------------------------------------

use crate::logins::{LoginCounts, LoginKey, PRUNE_BATCH, Policies, Settle};

/// The login window of these tests: ten minutes.
const LOGIN_WINDOW_SECS: i64 = 600;

/// `max` failures per pair and `per_username` per username per window, lockouts of the username
/// doubling up to `max_backoff_secs`.
fn login_policies(max: u32, per_username: u32, max_backoff_secs: i64) -> Policies {
    Policies::new(
        max,
        Duration::seconds(LOGIN_WINDOW_SECS),
        per_username,
        Duration::seconds(max_backoff_secs),
    )
}

/// The budgets of `username` from the address `203.0.113.{address}`.
fn login_key(username: &str, address: u8) -> LoginKey {
    LoginKey {
        username: username.to_owned(),
        address: format!("203.0.113.{address}"),
    }
}

async fn login_reserve(
    store: &dyn Store,
    key: &LoginKey,
    policies: Policies,
    at: DateTime<Utc>,
) -> Result<(), u64> {
    store
        .login_reserve(key.clone(), policies, at)
        .await
        .unwrap()
}

async fn login_settle(
    store: &dyn Store,
    key: &LoginKey,
    outcome: Settle,
    policies: Policies,
    at: DateTime<Utc>,
) -> Option<u64> {
    store
        .login_settle(key.clone(), outcome, policies, at)
        .await
        .unwrap()
}

/// One attempt reserved and failed at `at`: `Err` when refused, else whether it locked.
async fn login_fail(
    store: &dyn Store,
    key: &LoginKey,
    policies: Policies,
    at: DateTime<Utc>,
) -> Result<Option<u64>, u64> {
    login_reserve(store, key, policies, at).await?;
    Ok(login_settle(store, key, Settle::Fail, policies, at).await)
}

async fn login_counts(store: &dyn Store, key: &LoginKey) -> LoginCounts {
    store.login_counts(key.clone()).await.unwrap()
}

/// The pair's budget: the failure that spends it locks the pair for one window from then, to the
/// microsecond; other usernames from the address are not locked; after the lockout the count
/// starts afresh, and a success clears the pair.
pub async fn login_pairs_lock_after_max_failures_for_the_window(store: Arc<dyn Store>) {
    let s = &*store;
    let p = login_policies(3, 50, 24 * 3600);
    let ana = login_key("ana", 1);
    assert_eq!(login_fail(s, &ana, p, t0()).await, Ok(None));
    assert_eq!(login_fail(s, &ana, p, t0()).await, Ok(None));
    // The third failure spends the budget: locked for the window from now.
    assert_eq!(login_fail(s, &ana, p, t0()).await, Ok(Some(600)));
    assert_eq!(
        login_reserve(s, &ana, p, t0() + Duration::seconds(100)).await,
        Err(500)
    );
    assert_eq!(
        login_counts(s, &ana).await,
        LoginCounts {
            pair: 3,
            username: 3,
            pairs_tracked: 1,
            usernames_tracked: 1
        }
    );
    let bia = login_key("bia", 1);
    assert_eq!(login_reserve(s, &bia, p, t0()).await, Ok(()));
    // Exactly at the lockout's end it is open again, with a fresh count; a microsecond before,
    // not.
    let end = t0() + Duration::seconds(LOGIN_WINDOW_SECS);
    assert_eq!(
        login_reserve(s, &ana, p, end - Duration::microseconds(1)).await,
        Err(1)
    );
    assert_eq!(login_fail(s, &ana, p, end).await, Ok(None));
    assert_eq!(login_counts(s, &ana).await.pair, 1);
    assert_eq!(login_reserve(s, &ana, p, end).await, Ok(()));
    assert_eq!(login_settle(s, &ana, Settle::Succeed, p, end).await, None);
    assert_eq!(login_counts(s, &ana).await.pair, 0);
    assert_eq!(login_fail(s, &ana, p, end).await, Ok(None));
    assert_eq!(login_fail(s, &ana, p, end).await, Ok(None));
    assert_eq!(login_fail(s, &ana, p, end).await, Ok(Some(600)));
}

/// Bad attempts from one address lock that address out only: the user logs in from another,
/// and the success gives the username its attempt back without clearing the others' count.
pub async fn a_locked_out_address_leaves_the_user_open_elsewhere(store: Arc<dyn Store>) {
    let s = &*store;
    let p = login_policies(5, 50, 24 * 3600);
    let guesser = login_key("admin", 66);
    for _ in 0..4 {
        assert_eq!(login_fail(s, &guesser, p, t0()).await, Ok(None));
    }
    assert_eq!(login_fail(s, &guesser, p, t0()).await, Ok(Some(600)));
    assert_eq!(login_reserve(s, &guesser, p, t0()).await, Err(600));
    // The office, from its own address, still logs in.
    let office = login_key("admin", 10);
    assert_eq!(login_reserve(s, &office, p, t0()).await, Ok(()));
    assert_eq!(
        login_settle(s, &office, Settle::Succeed, p, t0()).await,
        None
    );
    let counts = login_counts(s, &office).await;
    assert_eq!((counts.pair, counts.username), (0, 5));
    assert_eq!(counts.pairs_tracked, 1, "the success cleared its pair");
}

/// The username's budget bounds guesses spread over many addresses: exactly at the ceiling the
/// username locks everywhere; each lockout in a row doubles, up to the maximum; a window that
/// ends without a lockout ends the backoff.
pub async fn the_username_ceiling_locks_everywhere_with_a_doubling_lockout_up_to_the_max(
    store: Arc<dyn Store>,
) {
    let s = &*store;
    // 2 per address, 6 per username, lockouts of 600, 1200, then 1800 at most.
    let p = login_policies(2, 6, 1800);
    let mut at = t0();
    // Six failures from fresh addresses starting at `first`: what the last one answered.
    for (round, (first, lockout)) in [(0_u8, 600), (40, 1200), (80, 1800), (120, 1800)]
        .into_iter()
        .enumerate()
    {
        let mut failed = 0;
        let mut locked = None;
        for a in first..first + 20 {
            match login_fail(s, &login_key("admin", a), p, at).await {
                Ok(l) => {
                    failed += 1;
                    locked = l.or(locked);
                }
                Err(_) => break,
            }
        }
        // Exactly at the ceiling: six hashes ran, the sixth locked the username everywhere.
        assert_eq!(failed, 6, "round {round}");
        assert_eq!(locked, Some(lockout), "round {round}");
        assert_eq!(
            login_reserve(s, &login_key("admin", 200), p, at).await,
            Err(lockout),
            "round {round}"
        );
        at += Duration::seconds(i64::try_from(lockout).unwrap());
    }
    // Open again: one success, then a whole window without a lockout ends the backoff.
    let office = login_key("admin", 250);
    assert_eq!(login_reserve(s, &office, p, at).await, Ok(()));
    login_settle(s, &office, Settle::Succeed, p, at).await;
    at += Duration::seconds(LOGIN_WINDOW_SECS);
    let mut locked = None;
    for a in 160..166 {
        locked = login_fail(s, &login_key("admin", a), p, at).await.unwrap();
    }
    assert_eq!(locked, Some(600));
}

/// An attempt is counted when reserved, before its password is checked: reservations still
/// running take the budget, so concurrent logins cannot race past it.
pub async fn login_attempts_still_running_count_against_the_budget(store: Arc<dyn Store>) {
    let s = &*store;
    let p = login_policies(5, 50, 24 * 3600);
    let fiscal = login_key("fiscal", 7);
    for _ in 0..5 {
        assert_eq!(login_reserve(s, &fiscal, p, t0()).await, Ok(()));
    }
    assert_eq!(
        login_reserve(s, &fiscal, p, t0() + Duration::seconds(60)).await,
        Err(540)
    );
    let counts = login_counts(s, &fiscal).await;
    assert_eq!((counts.pair, counts.username), (5, 5));

    // Forty at once, each in its own task and transaction: exactly five admitted.
    let racer = login_key("coordenador", 8);
    let tasks: Vec<_> = (0..40)
        .map(|_| {
            let store = Arc::clone(&store);
            let key = racer.clone();
            tokio::spawn(async move { store.login_reserve(key, p, t0()).await.unwrap() })
        })
        .collect();
    let mut admitted = 0;
    for t in tasks {
        if t.await.unwrap().is_ok() {
            admitted += 1;
        }
    }
    assert_eq!(admitted, 5);
    let counts = login_counts(s, &racer).await;
    assert_eq!((counts.pair, counts.username), (5, 5));
}

/// A refund (no password was checked) gives the attempt back to both budgets.
pub async fn a_refunded_login_attempt_is_given_back(store: Arc<dyn Store>) {
    let s = &*store;
    let p = login_policies(1, 1, 24 * 3600);
    let ana = login_key("ana", 1);
    assert_eq!(login_reserve(s, &ana, p, t0()).await, Ok(()));
    assert_eq!(login_reserve(s, &ana, p, t0()).await, Err(600));
    assert_eq!(login_settle(s, &ana, Settle::Refund, p, t0()).await, None);
    let counts = login_counts(s, &ana).await;
    assert_eq!((counts.pair, counts.username), (0, 0));
    assert_eq!(login_reserve(s, &ana, p, t0()).await, Ok(()));
    assert_eq!(login_settle(s, &ana, Settle::Succeed, p, t0()).await, None);
    // Settling what is not there (nothing reserved, or long pruned) changes nothing.
    let nobody = login_key("ninguem", 1);
    assert_eq!(login_settle(s, &nobody, Settle::Fail, p, t0()).await, None);
    let counts = login_counts(s, &nobody).await;
    assert_eq!((counts.pairs_tracked, counts.usernames_tracked), (0, 1));
}

/// Each reserve prunes at most `PRUNE_BATCH` expired rows of each table, and only expired
/// ones: a row whose window is not over, or whose backoff is still remembered, stays.
pub async fn expired_login_rows_are_pruned_a_bounded_batch_per_reserve(store: Arc<dyn Store>) {
    let s = &*store;
    let p = login_policies(2, 2, 3600);
    let batch = usize::try_from(PRUNE_BATCH).unwrap();
    // `batch` made-up names failing once (rows expiring with the window), and one username
    // locked (its backoff remembered for an hour).
    for i in 0..batch {
        assert_eq!(
            login_fail(s, &login_key(&format!("u{i}"), 1), p, t0()).await,
            Ok(None)
        );
    }
    let alvo = login_key("alvo", 1);
    assert_eq!(login_fail(s, &alvo, p, t0()).await, Ok(None));
    assert_eq!(login_fail(s, &alvo, p, t0()).await, Ok(Some(600)));
    let tracked = |c: LoginCounts| (c.pairs_tracked, c.usernames_tracked);
    let all = PRUNE_BATCH + 1;
    assert_eq!(tracked(login_counts(s, &alvo).await), (all, all));

    // A microsecond before the window's end nothing has expired.
    let end = t0() + Duration::seconds(LOGIN_WINDOW_SECS);
    let early = login_key("cedo", 2);
    assert_eq!(
        login_reserve(s, &early, p, end - Duration::microseconds(1)).await,
        Ok(())
    );
    assert_eq!(tracked(login_counts(s, &early).await), (all + 1, all + 1));
    // At its end one reserve prunes one batch of each table: of the pairs, one expired row is
    // left; of the usernames, only the one whose backoff is remembered.
    let late = login_key("tarde", 2);
    assert_eq!(login_reserve(s, &late, p, end).await, Ok(()));
    assert_eq!(tracked(login_counts(s, &late).await), (3, 3));
    // The next reserve prunes the last expired pair.
    assert_eq!(login_reserve(s, &late, p, end).await, Ok(()));
    assert_eq!(tracked(login_counts(s, &late).await), (2, 3));
    let gone = login_counts(s, &login_key("u0", 1)).await;
    assert_eq!((gone.pair, gone.username), (0, 0));
    // The remembered backoff doubles the next lockout.
    let other = login_key("alvo", 3);
    assert_eq!(login_fail(s, &other, p, end).await, Ok(None));
    assert_eq!(login_fail(s, &other, p, end).await, Ok(Some(1200)));
}

// ----- office browser sessions ---------------------------------------------------------------

/// The server's timeouts, as `web::session` passes them.
const WEB_TIMEOUTS: crate::web_sessions::Timeouts = crate::web_sessions::Timeouts {
    idle: Duration::minutes(60),
    absolute: Duration::hours(10),
};

/// A session of `user` on `device` opened at `at`, keyed `key`.
fn web_session(
    key: &str,
    user: &UserRow,
    device: &str,
    at: DateTime<Utc>,
) -> crate::web_sessions::WebSessionRow {
    crate::web_sessions::WebSessionRow {
        key: key.to_owned(),
        user_id: user.id.clone(),
        username: user.username.clone(),
        device_id: device.to_owned(),
        display_name: user.display_name.clone(),
        csrf: format!("csrf-{key}"),
        created_at: at,
        last_seen: at,
        flash: None,
    }
}

async fn web_open(store: &dyn Store, session: crate::web_sessions::WebSessionRow) {
    store.open_web_session(session, WEB_TIMEOUTS).await.unwrap();
}

/// The live session of `key` at `now` (touched).
async fn web_touch(
    store: &dyn Store,
    key: &str,
    now: DateTime<Utc>,
) -> Option<crate::web_sessions::WebSessionRow> {
    store
        .touch_web_session(key.to_owned(), now, WEB_TIMEOUTS)
        .await
        .unwrap()
}

pub async fn web_sessions_expire_at_their_edges_and_flash_once(store: Arc<dyn Store>) {
    use crate::web_sessions::{Flash, TOUCH_INTERVAL};
    let s = &*store;
    let us = Duration::microseconds(1);
    let user = user_with_device(s, "escritorio", Role::Office, "desktop-1").await;
    let opened = web_session("k-idle", &user, "desktop-1", t0());
    web_open(s, opened.clone()).await;
    assert_eq!(web_touch(s, "k-idle", t0()).await, Some(opened.clone()));
    assert_eq!(web_touch(s, "nobody", t0()).await, None);
    // The same key again: refused, the first one unchanged.
    let again = s
        .open_web_session(
            web_session("k-idle", &user, "desktop-1", t0()),
            WEB_TIMEOUTS,
        )
        .await;
    assert!(
        matches!(again, Err(StoreError::Duplicate { .. })),
        "{again:?}"
    );

    // Within the touch interval nothing is written; at it, `last_seen` moves.
    let seen = web_touch(s, "k-idle", t0() + TOUCH_INTERVAL - us)
        .await
        .unwrap();
    assert_eq!(seen.last_seen, t0());
    assert_eq!(
        web_touch(s, "k-idle", t0() + TOUCH_INTERVAL - us)
            .await
            .unwrap()
            .last_seen,
        t0(),
        "a touch within the interval wrote last_seen"
    );
    let t1 = t0() + TOUCH_INTERVAL;
    assert_eq!(web_touch(s, "k-idle", t1).await.unwrap().last_seen, t1);
    assert_eq!(
        web_touch(s, "k-idle", t1 + Duration::seconds(1))
            .await
            .unwrap()
            .last_seen,
        t1,
        "the refreshed last_seen was not stored"
    );
    // Idle: live at exactly the timeout after the stored last_seen, ended just past it.
    let t2 = t1 + WEB_TIMEOUTS.idle;
    assert_eq!(web_touch(s, "k-idle", t2).await.unwrap().last_seen, t2);
    assert_eq!(
        web_touch(s, "k-idle", t2 + WEB_TIMEOUTS.idle + us).await,
        None
    );
    // Deleted, not only refused: a touch at a time it would have been live finds nothing.
    assert_eq!(
        web_touch(s, "k-idle", t2 + Duration::seconds(1)).await,
        None
    );

    // Absolute: kept alive by use, live at exactly the limit, ended just past it.
    web_open(s, web_session("k-day", &user, "desktop-1", t0())).await;
    let step = Duration::minutes(50);
    let mut t = t0();
    while t + step <= t0() + WEB_TIMEOUTS.absolute {
        t += step;
        assert!(web_touch(s, "k-day", t).await.is_some(), "{t}");
    }
    assert_eq!(t, t0() + WEB_TIMEOUTS.absolute);
    assert_eq!(web_touch(s, "k-day", t + us).await, None);
    assert_eq!(web_touch(s, "k-day", t - step).await, None);

    // A flash is kept in the session until taken, and taken once.
    web_open(s, web_session("k-flash", &user, "desktop-1", t0())).await;
    assert_eq!(s.take_web_flash("k-flash".into()).await.unwrap(), None);
    let done = Flash {
        ok: true,
        message: String::from("Feito."),
    };
    let warned = Flash {
        ok: false,
        message: String::from("Nada foi gravado."),
    };
    assert!(s.set_web_flash("k-flash".into(), done).await.unwrap());
    // The newer replaces the pending one.
    assert!(
        s.set_web_flash("k-flash".into(), warned.clone())
            .await
            .unwrap()
    );
    assert_eq!(
        web_touch(s, "k-flash", t0()).await.unwrap().flash,
        Some(warned.clone()),
        "a touch shows the pending flash without taking it"
    );
    assert_eq!(
        s.take_web_flash("k-flash".into()).await.unwrap(),
        Some(warned.clone())
    );
    assert_eq!(s.take_web_flash("k-flash".into()).await.unwrap(), None);
    assert_eq!(web_touch(s, "k-flash", t0()).await.unwrap().flash, None);
    assert!(!s.set_web_flash("nobody".into(), warned).await.unwrap());
    assert_eq!(s.take_web_flash("nobody".into()).await.unwrap(), None);

    // Ending one: gone, and ending it again finds nothing.
    assert!(s.end_web_session("k-flash".into()).await.unwrap());
    assert_eq!(web_touch(s, "k-flash", t0()).await, None);
    assert!(!s.end_web_session("k-flash".into()).await.unwrap());
}

pub async fn web_sessions_end_per_user_and_are_capped_and_swept_at_open(store: Arc<dyn Store>) {
    use crate::web_sessions::MAX_WEB_SESSIONS_PER_USER;
    let s = &*store;
    let a = user_with_device(s, "ana", Role::Office, "desktop-a").await;
    let b = user_with_device(s, "bia", Role::Admin, "desktop-b").await;
    for key in ["a1", "a2", "a3"] {
        web_open(s, web_session(key, &a, "desktop-a", t0())).await;
    }
    web_open(s, web_session("b1", &b, "desktop-b", t0())).await;
    // A changed password: every other session of the user ends, the caller's and others' stay.
    let ended = s
        .end_user_web_sessions(a.id.clone(), Some("a2".into()))
        .await
        .unwrap();
    assert_eq!(ended, 2);
    assert_eq!(web_touch(s, "a1", t0()).await, None);
    assert_eq!(web_touch(s, "a3", t0()).await, None);
    assert!(web_touch(s, "a2", t0()).await.is_some());
    assert!(web_touch(s, "b1", t0()).await.is_some());
    // A deactivated account: all of them.
    assert_eq!(
        s.end_user_web_sessions(a.id.clone(), None).await.unwrap(),
        1
    );
    assert_eq!(web_touch(s, "a2", t0()).await, None);
    assert_eq!(
        s.end_user_web_sessions(b.id.clone(), Some("not-b1".into()))
            .await
            .unwrap(),
        1
    );
    assert_eq!(s.count_web_sessions().await.unwrap(), 0);

    // The per-user cap: at it every session is live; one more ends the oldest only.
    let key = |i: usize| format!("cap-{i:02}");
    let at = |i: usize| t0() + Duration::seconds(i64::try_from(i).unwrap());
    for i in 0..MAX_WEB_SESSIONS_PER_USER {
        web_open(s, web_session(&key(i), &a, "desktop-a", at(i))).await;
    }
    web_open(s, web_session("b2", &b, "desktop-b", t0())).await;
    let now = at(MAX_WEB_SESSIONS_PER_USER);
    for i in 0..MAX_WEB_SESSIONS_PER_USER {
        assert!(web_touch(s, &key(i), now).await.is_some(), "{}", key(i));
    }
    let cap = u64::try_from(MAX_WEB_SESSIONS_PER_USER).unwrap();
    assert_eq!(s.count_web_sessions().await.unwrap(), cap + 1);
    let newest = key(MAX_WEB_SESSIONS_PER_USER);
    web_open(s, web_session(&newest, &a, "desktop-a", now)).await;
    assert_eq!(web_touch(s, &key(0), now).await, None, "the oldest stayed");
    for i in 1..=MAX_WEB_SESSIONS_PER_USER {
        assert!(web_touch(s, &key(i), now).await.is_some(), "{}", key(i));
    }
    assert!(
        web_touch(s, "b2", now).await.is_some(),
        "another user's session was trimmed"
    );
    assert_eq!(s.count_web_sessions().await.unwrap(), cap + 1);

    // Opening a session deletes the expired ones, anybody's, and nothing live.
    let later = now + WEB_TIMEOUTS.idle + Duration::seconds(30);
    web_open(s, web_session("b3", &b, "desktop-b", later)).await;
    assert_eq!(
        s.count_web_sessions().await.unwrap(),
        1,
        "expired sessions were left behind"
    );
    assert!(web_touch(s, "b3", later).await.is_some());
}
