//! The token store in a real OS keychain: on Linux, gnome-keyring's Secret
//! Service on a private session bus. `cargo xtask keychain` installs
//! gnome-keyring and dbus when missing and runs these (feature
//! `keychain-tests`) twice, each time in a new session bus with an
//! unlocked login keyring: the `usable::` tests in parallel, then the
//! `locked::` tests (which lock the keyring); and the `absent::` tests
//! with no session bus at all.
#![cfg(feature = "keychain-tests")]

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use mcp_auth::{
    AccessToken, ClientRegistration, Error, FileTokenStore, KeychainError, KeychainTokenStore,
    RefreshToken, StoreKey, StoreKind, StoredAuth, TokenSet, TokenStore, choose_store, migrate,
};
use mcp_test_support::LogCapture;

/// A service name of its own for each test (the tests share one keyring).
fn service(test: &str) -> String {
    format!("mcp-auth-test-{test}-{}", std::process::id())
}

fn sample(access: &str, refresh: &str) -> StoredAuth {
    let mut tokens = TokenSet::new(AccessToken::new(access));
    tokens.refresh_token = Some(RefreshToken::new(refresh));
    tokens.expires_at = Some(4_000_000_000);
    tokens.scopes = vec!["mcp".into()];
    let mut value = StoredAuth::default();
    value.client = Some(ClientRegistration::public("client-id"));
    value.tokens = Some(tokens);
    value
}

fn key(account: Option<&str>) -> StoreKey {
    StoreKey::new("https://mcp.example/mcp", "https://as.example")
        .with_account(account.map(str::to_owned))
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mcp-auth-keychain-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn sorted(mut keys: Vec<StoreKey>) -> Vec<StoreKey> {
    keys.sort_by(|a, b| a.account.cmp(&b.account));
    keys
}

mod usable {
    use super::*;

    /// Save, load, list and remove, with two accounts of one server; a
    /// second store on the same service sees the same entries (they live
    /// in the keyring, not in the process); another service sees none.
    #[test]
    fn round_trip_with_two_accounts() {
        let svc = service("round-trip");
        let store = KeychainTokenStore::open(&svc).expect("the keychain opens");
        assert!(store.keys().unwrap().is_empty());
        let (work, home) = (key(Some("work")), key(Some("home")));
        assert_eq!(store.load(&work).unwrap(), None);
        store.save(&work, &sample("at-work-secret", "rt-work-secret")).unwrap();
        store.save(&home, &sample("at-home-secret", "rt-home-secret")).unwrap();
        store.save(&work, &sample("at-work-secret-2", "rt-work-secret-2")).unwrap();

        let again = KeychainTokenStore::open(&svc).unwrap();
        assert_eq!(
            again.load(&work).unwrap(),
            Some(sample("at-work-secret-2", "rt-work-secret-2"))
        );
        assert_eq!(again.load(&home).unwrap(), Some(sample("at-home-secret", "rt-home-secret")));
        assert_eq!(again.load(&key(None)).unwrap(), None);
        assert_eq!(sorted(again.keys().unwrap()), [home.clone(), work.clone()]);

        let other = KeychainTokenStore::open(&service("round-trip-other")).unwrap();
        assert_eq!(other.load(&work).unwrap(), None);
        assert!(other.keys().unwrap().is_empty());

        store.remove(&work).unwrap();
        store.remove(&work).unwrap();
        assert_eq!(again.load(&work).unwrap(), None);
        assert_eq!(again.keys().unwrap(), std::slice::from_ref(&home));
        store.remove(&home).unwrap();
        assert!(again.keys().unwrap().is_empty());
    }

    /// Every entry of the file store moves into the keychain (and the
    /// files go), a second run moves nothing, and everything comes back.
    #[test]
    fn migration_both_ways() {
        let dir = temp_dir("migrate");
        let file = FileTokenStore::new(&dir);
        let keys = [key(None), key(Some("work"))];
        for (i, k) in keys.iter().enumerate() {
            file.save(k, &sample(&format!("at-{i}-secret"), &format!("rt-{i}-secret"))).unwrap();
        }
        let chain = KeychainTokenStore::open(&service("migrate")).unwrap();
        let done = migrate(&file, &chain).unwrap();
        assert_eq!((done.moved, done.already), (2, 0));
        assert!(file.keys().unwrap().is_empty());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no token file is left");
        assert_eq!(sorted(chain.keys().unwrap()), sorted(keys.to_vec()));
        assert_eq!(chain.load(&keys[1]).unwrap(), Some(sample("at-1-secret", "rt-1-secret")));
        let again = migrate(&file, &chain).unwrap();
        assert_eq!((again.moved, again.already), (0, 0));

        let back = migrate(&chain, &file).unwrap();
        assert_eq!(back.moved, 2);
        assert!(chain.keys().unwrap().is_empty());
        assert_eq!(chain.load(&keys[0]).unwrap(), None);
        assert_eq!(file.load(&keys[0]).unwrap(), Some(sample("at-0-secret", "rt-0-secret")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `keychain` and `auto` both give the keychain when it is unlocked.
    #[test]
    fn the_chooser_takes_an_unlocked_keychain() {
        let file: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(temp_dir("chooser")));
        for kind in [StoreKind::Keychain, StoreKind::Auto] {
            let chosen = choose_store(kind, file.clone(), &service("chooser")).unwrap();
            assert_eq!(chosen.kind, StoreKind::Keychain);
            assert!(chosen.fallback.is_none());
            chosen.store.save(&key(None), &sample("at-secret", "rt-secret")).unwrap();
            assert!(chosen.store.load(&key(None)).unwrap().is_some());
            chosen.store.remove(&key(None)).unwrap();
        }
    }

    /// Nothing the store does, migration included, writes a token to the
    /// log (captured at TRACE, everything).
    #[test]
    fn no_token_reaches_a_log_line() {
        let capture = LogCapture::start(tracing::Level::TRACE);
        let dir = temp_dir("logs");
        let file = FileTokenStore::new(&dir);
        file.save(&key(None), &sample("at-LOGGED-secret", "rt-LOGGED-secret")).unwrap();
        let chain = KeychainTokenStore::open(&service("logs")).unwrap();
        migrate(&file, &chain).unwrap();
        let loaded = chain.load(&key(None)).unwrap().unwrap();
        let _ = format!("{chain:?} {:?}", loaded.tokens.as_ref().map(|t| &t.access_token));
        migrate(&chain, &file).unwrap();
        let text = capture.text();
        assert!(!text.contains("LOGGED-secret"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Run after the others, in a session bus of their own: they lock the
/// keyring.
mod locked {
    use super::*;

    /// Locks the login collection through the Secret Service API (as a
    /// screen lock does); gnome-keyring needs no prompt for that.
    fn lock_login_keyring() {
        let status = Command::new("dbus-send")
            .args([
                "--session",
                "--print-reply",
                "--dest=org.freedesktop.secrets",
                "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service.Lock",
                "array:objpath:/org/freedesktop/secrets/collection/login",
            ])
            .stdout(std::process::Stdio::null())
            .status()
            .expect("dbus-send runs");
        assert!(status.success(), "locking the login keyring failed");
    }

    /// A locked keyring: opening a keychain store, an existing store's
    /// load, `keychain` and `auto` each say so (`auto` falls back to the
    /// file store with a warning that says why); no token in any message.
    #[test]
    fn a_locked_keyring_is_reported_and_auto_falls_back() {
        let svc = service("locked");
        let store = KeychainTokenStore::open(&svc).unwrap();
        store.save(&key(None), &sample("at-LOCKED-secret", "rt-LOCKED-secret")).unwrap();
        lock_login_keyring();

        let is_locked = |e: &KeychainError| {
            matches!(e, KeychainError::Locked { .. } | KeychainError::TimedOut { .. })
        };
        let err = store.load(&key(None)).unwrap_err();
        let Error::Keychain(inner) = &err else { panic!("{err:?}") };
        assert!(is_locked(inner), "{err:?}");
        assert!(!err.to_string().contains("LOCKED-secret"));

        let fresh = KeychainTokenStore::open(&service("locked-fresh")).unwrap_err();
        assert!(is_locked(&fresh), "{fresh:?}");
        assert!(fresh.to_string().contains("locked"), "{fresh}");

        let dir = temp_dir("locked");
        let file: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(&dir));
        let err = choose_store(StoreKind::Keychain, file.clone(), &svc).unwrap_err();
        assert!(matches!(&err, Error::Keychain(e) if is_locked(e)), "{err:?}");

        let capture = LogCapture::start(tracing::Level::WARN);
        let chosen = choose_store(StoreKind::Auto, file.clone(), &svc).unwrap();
        assert_eq!(chosen.kind, StoreKind::File);
        assert!(chosen.fallback.as_ref().is_some_and(is_locked), "{:?}", chosen.fallback);
        assert!(Arc::ptr_eq(&chosen.store, &file));
        let warned = capture.lines_with("tokens are kept in files");
        assert_eq!(warned.len(), 1, "{}", capture.text());
        assert!(warned[0].contains("locked"), "{warned:?}");
        assert!(!capture.text().contains("LOCKED-secret"));
        // The fallback works.
        chosen.store.save(&key(None), &sample("at", "rt")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Run with `DBUS_SESSION_BUS_ADDRESS` naming a bus that is not there.
mod absent {
    use super::*;

    /// No session bus, so no Secret Service: absent, said so, and `auto`
    /// falls back to the file store.
    #[test]
    fn an_absent_keychain_is_reported_and_auto_falls_back() {
        let err = KeychainTokenStore::open(&service("absent")).unwrap_err();
        assert!(matches!(err, KeychainError::Absent { .. }), "{err:?}");
        assert!(err.to_string().starts_with("no keychain is available"), "{err}");
        let dir = temp_dir("absent");
        let file: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(&dir));
        let err = choose_store(StoreKind::Keychain, file.clone(), &service("absent")).unwrap_err();
        assert!(matches!(err, Error::Keychain(KeychainError::Absent { .. })), "{err:?}");
        let chosen = choose_store(StoreKind::Auto, file, &service("absent")).unwrap();
        assert_eq!(chosen.kind, StoreKind::File);
        assert!(matches!(chosen.fallback, Some(KeychainError::Absent { .. })));
        chosen.store.save(&key(None), &sample("at", "rt")).unwrap();
        assert!(chosen.store.load(&key(None)).unwrap().is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
