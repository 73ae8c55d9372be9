//! Behaviour tests every [`Store`] backend must pass, written only against the trait and the
//! public types of [`crate::store`], so that the SQLite backend and the PostgreSQL one to come
//! are held to the same contract (as matrix-rust-sdk's `statestore_integration_tests!` does
//! for its state stores).
//!
//! Flow: each test is a `pub(crate) async fn` here taking a fresh, empty `Arc<dyn Store>`;
//! [`store_conformance_tests!`] expands, in the backend's own test module, to one
//! `#[tokio::test]` per function, inside a nested `mod store_conformance`, each opening its
//! own store with the expression it is given and calling the function. A backend runs the
//! whole suite in a few lines:
//!
//! ```ignore
//! #[cfg(test)]
//! mod conformance_tests {
//!     crate::store::conformance::store_conformance_tests!(async {
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
//! the suite assumes nothing of a backend's tables. A new test goes in three places: its
//! function here, its name in the macro's list, and nothing else.

// Without the SQLite backend no module runs the suite; the functions still compile.
#![cfg_attr(
    not(feature = "sqlite"),
    allow(dead_code, unused_imports, unused_macros)
)]

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use sync_core::domain::{Registry, ServiceKind, Stand, StandSchedule};
use sync_core::feed;

use crate::store::{
    Actor, ChangesSince, CodePurpose, CodeRefusal, KeyRegistration, NewAccountCode, NewDevice,
    PhotoMeta, PutPhoto, RefreshTokenRow, RegistryCommit, Role, RotateOutcome, Store, StoreError,
    UserRow,
};

/// Expands to one `#[tokio::test]` per conformance test, in a nested `mod store_conformance`,
/// each running on the store `$open` yields (see the module doc).
macro_rules! store_conformance_tests {
    ($open:expr) => {
        $crate::store::conformance::store_conformance_tests!(@tests $open;
            registry_commits_bump_the_version_and_refuse_a_stale_base,
            users_are_created_found_and_a_taken_username_is_refused,
            refresh_tokens_rotate_and_a_replayed_one_revokes_its_family,
            user_roles_and_deactivation_are_stored_and_end_logins,
            a_password_change_compares_the_old_hash_and_ends_other_logins,
            one_time_codes_are_live_until_replaced_expired_or_spent,
            devices_are_registered_once_and_revocation_ends_them,
            device_keys_are_bound_to_one_device,
            number_leases_are_disjoint_and_bounded_per_device,
            photos_are_stored_once_and_found_by_hash,
            the_audit_chain_links_every_audited_write,
            registry_changes_since_a_version_lead_to_the_current_one,
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
                    let fresh = $crate::store::conformance::FreshStore::from($open.await);
                    $crate::store::conformance::$name(fresh.store()).await;
                }
            )*
        }
    };
}
pub(crate) use store_conformance_tests;

/// A fresh, empty store for one test, and whatever must outlive it (dropped after the store).
pub(crate) struct FreshStore {
    store: Arc<dyn Store>,
    _guard: Option<Box<dyn std::any::Any + Send>>,
}

impl FreshStore {
    pub(crate) fn store(&self) -> Arc<dyn Store> {
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
pub(crate) fn t0() -> DateTime<Utc> {
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
            crate::store::NewDevice {
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
pub(crate) async fn registry_commits_bump_the_version_and_refuse_a_stale_base(
    store: Arc<dyn Store>,
) {
    let empty = store.registry().await.unwrap();
    assert_eq!(empty.version, 0);
    assert!(empty.stands.is_empty() && empty.permits.is_empty());
    let head0 = store.audit_head().await.unwrap();

    let v = store
        .commit_registry(commit_of(&empty, vec![stand("S01")], "stand:S01"))
        .await
        .unwrap();
    assert_eq!(v, 1);
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
        .unwrap();
    assert_eq!(v, 2);
    let v2 = store.registry().await.unwrap();
    assert_eq!(v2.version, 2);
    assert_eq!(stand_ids(&v2), ["S01", "S09"]);
    assert_eq!(store.audit_head().await.unwrap().seq, head0.seq + 2);
}

// ----- accounts -----------------------------------------------------------------------------

/// Users are counted, found by username and id and listed; a second user with a taken
/// username is `Duplicate` and is not stored; unknown names and ids are `None`.
pub(crate) async fn users_are_created_found_and_a_taken_username_is_refused(store: Arc<dyn Store>) {
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
pub(crate) async fn refresh_tokens_rotate_and_a_replayed_one_revokes_its_family(
    store: Arc<dyn Store>,
) {
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

/// A role change is stored and seen by `session`; an unknown user is `NotFound`.
/// Deactivating ends every login of the user for good (its refresh tokens are revoked, not
/// just refused while inactive: they stay dead after reactivation) and is audited only when it
/// changes something; an inactive user's token is `UserInactive`.
pub(crate) async fn user_roles_and_deactivation_are_stored_and_end_logins(store: Arc<dyn Store>) {
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
pub(crate) async fn a_password_change_compares_the_old_hash_and_ends_other_logins(
    store: Arc<dyn Store>,
) {
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
pub(crate) async fn one_time_codes_are_live_until_replaced_expired_or_spent(store: Arc<dyn Store>) {
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
pub(crate) async fn devices_are_registered_once_and_revocation_ends_them(store: Arc<dyn Store>) {
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
pub(crate) async fn device_keys_are_bound_to_one_device(store: Arc<dyn Store>) {
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
pub(crate) async fn number_leases_are_disjoint_and_bounded_per_device(store: Arc<dyn Store>) {
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
pub(crate) async fn photos_are_stored_once_and_found_by_hash(store: Arc<dyn Store>) {
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
pub(crate) async fn the_audit_chain_links_every_audited_write(store: Arc<dyn Store>) {
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
pub(crate) async fn registry_changes_since_a_version_lead_to_the_current_one(
    store: Arc<dyn Store>,
) {
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
