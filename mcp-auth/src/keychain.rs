//! The OS keychain as a token store, the choice between it and the file
//! store, and moving entries from one store to another.
//!
//! [`KeychainTokenStore`] keeps one keychain entry per [`StoreKey`] under a
//! service name (the application's by default), plus one index entry that
//! lists the keys (resource, issuer, account: no secret), because no
//! keychain can list its entries portably. The keychain itself is reached
//! through a [`KeychainBackend`]: `OsKeychain` (feature `keychain`: macOS
//! Keychain, Windows Credential Manager, the Secret Service on Linux through
//! the `keyring` crate), or one the host supplies.
//!
//! [`choose_store`] turns a [`StoreKind`] from the configuration into a
//! store: `file`, `keychain` (an error when the keychain cannot be used) or
//! `auto` (the keychain, else the file store with a warning that says
//! why). [`migrate`] moves every entry of one store into another.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::store::{StoreKey, StoredAuth, TokenStore, decode_entry, encode_entry};

/// Why the keychain could not be used. Messages say which keychain
/// (its service name) and what to do; they never carry a token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeychainError {
    /// The keychain (or the collection the entries go to) is locked and
    /// could not be unlocked without the user.
    Locked {
        /// The service name the entries are kept under.
        service: String,
    },
    /// There is no keychain to talk to: no Secret Service on the session
    /// bus, no session bus, or a build without the `keychain` feature.
    Absent {
        /// What is missing, in the platform's words (capped).
        reason: String,
    },
    /// The keychain refused access (the user declined, or the program is
    /// not allowed).
    Denied {
        /// The service name the entries are kept under.
        service: String,
    },
    /// The keychain did not answer within the bound (a prompt nobody can
    /// see, a hung daemon).
    TimedOut {
        /// The service name the entries are kept under.
        service: String,
        /// The bound.
        after: Duration,
    },
    /// Anything else the keychain reported (capped; never a secret).
    Other {
        /// The service name the entries are kept under.
        service: String,
        /// The platform's words.
        reason: String,
    },
}

impl fmt::Display for KeychainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeychainError::Locked { service } => write!(
                f,
                "the keychain is locked (service `{service}`): unlock it, or keep tokens in files \
                 (token_store = \"file\")"
            ),
            KeychainError::Absent { reason } => write!(f, "no keychain is available: {reason}"),
            KeychainError::Denied { service } => {
                write!(f, "access to the keychain was denied (service `{service}`)")
            }
            KeychainError::TimedOut { service, after } => write!(
                f,
                "the keychain did not answer within {} s (service `{service}`; locked, waiting \
                 for an unlock prompt?)",
                after.as_secs()
            ),
            KeychainError::Other { service, reason } => {
                write!(f, "the keychain failed (service `{service}`): {reason}")
            }
        }
    }
}

impl std::error::Error for KeychainError {}

/// The most characters of a platform's message kept in a [`KeychainError`].
const MAX_REASON: usize = 200;

/// A platform's message, cut to [`MAX_REASON`] characters.
pub(crate) fn capped(reason: &str) -> String {
    let mut out: String = reason.chars().take(MAX_REASON).collect();
    if reason.chars().count() > MAX_REASON {
        out.push('…');
    }
    out
}

/// The access to a keychain: secrets by service and name. Implementations
/// bound every call in time and never log a value.
pub trait KeychainBackend: Send + Sync + fmt::Debug {
    /// The secret stored under `service` and `name`, `None` when there is
    /// none.
    fn get(&self, service: &str, name: &str) -> Result<Option<Vec<u8>>, KeychainError>;
    /// Stores `value` under `service` and `name`, replacing what was there.
    fn set(&self, service: &str, name: &str, value: &[u8]) -> Result<(), KeychainError>;
    /// Forgets the secret under `service` and `name` (none there is fine).
    fn delete(&self, service: &str, name: &str) -> Result<(), KeychainError>;
}

/// The name of the index entry (no secret: the keys of the entries).
pub const INDEX_ENTRY: &str = "index";
/// The most keys the index holds.
pub const MAX_KEYS: usize = 4096;
/// The largest entry read back (index or tokens).
pub const MAX_ENTRY: usize = 1024 * 1024;
/// How long one keychain call may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// One key as the index lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct IndexedKey {
    resource: String,
    issuer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    account: Option<String>,
}

impl From<&StoreKey> for IndexedKey {
    fn from(k: &StoreKey) -> Self {
        IndexedKey {
            resource: k.resource.clone(),
            issuer: k.issuer.clone(),
            account: k.account.clone(),
        }
    }
}

impl From<IndexedKey> for StoreKey {
    fn from(k: IndexedKey) -> Self {
        StoreKey::new(k.resource, k.issuer).with_account(k.account)
    }
}

/// The index entry: the keys that have an entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Index {
    version: u32,
    keys: Vec<IndexedKey>,
}

/// Tokens in the OS keychain: one entry per key, named `token-<hash>`
/// (the hash of [`StoreKey::file_name`], so no URL reaches the keychain's
/// names), holding the same JSON as a token file; and the index entry
/// ([`INDEX_ENTRY`]) listing the keys for [`keys`](TokenStore::keys). All
/// under one service name.
///
/// An entry is written before the index names it and removed before the
/// index forgets it; an entry whose key the index lacks (an interrupted
/// save) is still loaded, and saved again on the next refresh. Two
/// processes that save new keys at the same moment may each write the
/// index without the other's key: that key still loads, but is not listed
/// until it is saved again.
pub struct KeychainTokenStore {
    backend: Arc<dyn KeychainBackend>,
    service: String,
    /// Serialises this process's index updates.
    index_lock: Mutex<()>,
}

impl fmt::Debug for KeychainTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeychainTokenStore")
            .field("service", &self.service)
            .field("backend", &self.backend)
            .finish()
    }
}

fn store_err(e: KeychainError) -> Error {
    Error::Keychain(e)
}

impl KeychainTokenStore {
    /// A store on `backend` under `service`, without touching the keychain.
    pub fn with_backend(backend: Arc<dyn KeychainBackend>, service: impl Into<String>) -> Self {
        KeychainTokenStore { backend, service: service.into(), index_lock: Mutex::new(()) }
    }

    /// The OS keychain under `service`, checked for use: the index is read,
    /// and written (empty) when there is none, so a keychain that is
    /// locked, absent or refuses access is found now, not at the first
    /// login. Without the `keychain` feature: [`KeychainError::Absent`].
    pub fn open(service: &str) -> Result<Self, KeychainError> {
        #[cfg(feature = "keychain")]
        {
            let store = Self::with_backend(Arc::new(OsKeychain::new(DEFAULT_TIMEOUT)), service);
            store.check()?;
            Ok(store)
        }
        #[cfg(not(feature = "keychain"))]
        {
            let _ = service;
            Err(KeychainError::Absent {
                reason: "this program was built without keychain support (feature `keychain`)"
                    .into(),
            })
        }
    }

    /// Reads the index and writes an empty one when there is none.
    pub fn check(&self) -> Result<(), KeychainError> {
        let _guard = self.index_lock.lock().unwrap_or_else(|p| p.into_inner());
        if self.read_index()?.is_none() {
            self.write_index(&Index { version: 1, keys: Vec::new() })?;
        }
        Ok(())
    }

    /// The service name the entries are kept under.
    pub fn service(&self) -> &str {
        &self.service
    }

    /// The name of the entry that holds `key`.
    pub fn entry_name(key: &StoreKey) -> String {
        let file = key.file_name();
        format!("token-{}", file.trim_end_matches(".json"))
    }

    fn other(&self, reason: impl Into<String>) -> KeychainError {
        KeychainError::Other { service: self.service.clone(), reason: reason.into() }
    }

    fn get_capped(&self, name: &str) -> Result<Option<Vec<u8>>, KeychainError> {
        match self.backend.get(&self.service, name)? {
            Some(v) if v.len() > MAX_ENTRY => {
                Err(self.other(format!("entry `{name}` is too large")))
            }
            other => Ok(other),
        }
    }

    fn read_index(&self) -> Result<Option<Index>, KeychainError> {
        let Some(bytes) = self.get_capped(INDEX_ENTRY)? else { return Ok(None) };
        let index: Index = serde_json::from_slice(&bytes)
            .map_err(|_| self.other(format!("entry `{INDEX_ENTRY}` is not an index")))?;
        if index.keys.len() > MAX_KEYS {
            return Err(self.other(format!("the index lists more than {MAX_KEYS} keys")));
        }
        Ok(Some(index))
    }

    fn write_index(&self, index: &Index) -> Result<(), KeychainError> {
        let bytes = serde_json::to_vec(index).map_err(|_| self.other("cannot encode the index"))?;
        self.backend.set(&self.service, INDEX_ENTRY, &bytes)
    }

    /// Applies `change` to the index (read, change, write back when it
    /// changed).
    fn update_index(&self, change: impl FnOnce(&mut Vec<IndexedKey>)) -> Result<(), KeychainError> {
        let _guard = self.index_lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut index = self.read_index()?.unwrap_or(Index { version: 1, keys: Vec::new() });
        let before = index.keys.clone();
        change(&mut index.keys);
        if index.keys.len() > MAX_KEYS {
            return Err(self.other(format!("the index would list more than {MAX_KEYS} keys")));
        }
        if index.keys != before {
            self.write_index(&index)?;
        }
        Ok(())
    }
}

impl TokenStore for KeychainTokenStore {
    fn load(&self, key: &StoreKey) -> Result<Option<StoredAuth>, Error> {
        let name = Self::entry_name(key);
        let Some(bytes) = self.get_capped(&name).map_err(store_err)? else { return Ok(None) };
        decode_entry(&bytes, key)
            .map_err(|()| store_err(self.other(format!("entry `{name}` does not hold tokens"))))
    }

    fn save(&self, key: &StoreKey, value: &StoredAuth) -> Result<(), Error> {
        let bytes = encode_entry(key, value, false)?;
        self.backend.set(&self.service, &Self::entry_name(key), &bytes).map_err(store_err)?;
        let indexed = IndexedKey::from(key);
        self.update_index(|keys| {
            if !keys.contains(&indexed) {
                keys.push(indexed);
            }
        })
        .map_err(store_err)
    }

    fn remove(&self, key: &StoreKey) -> Result<(), Error> {
        self.backend.delete(&self.service, &Self::entry_name(key)).map_err(store_err)?;
        let indexed = IndexedKey::from(key);
        self.update_index(|keys| keys.retain(|k| *k != indexed)).map_err(store_err)
    }

    /// The keys the index lists.
    fn keys(&self) -> Result<Vec<StoreKey>, Error> {
        let index = self.read_index().map_err(store_err)?.unwrap_or_default();
        Ok(index.keys.into_iter().map(StoreKey::from).collect())
    }
}

/// Where tokens are kept, as the configuration says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreKind {
    /// `file`: the `0600` file store (the default).
    #[default]
    File,
    /// `keychain`: the OS keychain; an error when it cannot be used.
    Keychain,
    /// `auto`: the OS keychain, else the file store with a warning that
    /// says why.
    Auto,
}

impl StoreKind {
    /// The configuration's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::File => "file",
            StoreKind::Keychain => "keychain",
            StoreKind::Auto => "auto",
        }
    }
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A store kind that is none of `file`, `keychain`, `auto`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStoreKind(pub String);

impl fmt::Display for UnknownStoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown token store `{}` (expected file, keychain or auto)", capped(&self.0))
    }
}

impl std::error::Error for UnknownStoreKind {}

impl FromStr for StoreKind {
    type Err = UnknownStoreKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "file" => Ok(StoreKind::File),
            "keychain" => Ok(StoreKind::Keychain),
            "auto" => Ok(StoreKind::Auto),
            other => Err(UnknownStoreKind(other.to_owned())),
        }
    }
}

/// The store [`choose_store`] picked.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ChosenStore {
    /// The store.
    pub store: Arc<dyn TokenStore>,
    /// What it is: [`StoreKind::File`] or [`StoreKind::Keychain`].
    pub kind: StoreKind,
    /// Why `auto` fell back to the file store, when it did.
    pub fallback: Option<KeychainError>,
}

/// The store for `kind`: `file` is `file`; `keychain` is
/// [`KeychainTokenStore::open`]`(service)` or its error; `auto` is the
/// keychain when it opens, else `file`, with a `tracing` warning and
/// [`ChosenStore::fallback`] saying why.
pub fn choose_store(
    kind: StoreKind,
    file: Arc<dyn TokenStore>,
    service: &str,
) -> Result<ChosenStore, Error> {
    choose_store_with(kind, file, || KeychainTokenStore::open(service))
}

/// [`choose_store`] with the keychain opened by `open` (a host's own
/// backend, or a test's).
pub fn choose_store_with(
    kind: StoreKind,
    file: Arc<dyn TokenStore>,
    open: impl FnOnce() -> Result<KeychainTokenStore, KeychainError>,
) -> Result<ChosenStore, Error> {
    match kind {
        StoreKind::File => Ok(ChosenStore { store: file, kind: StoreKind::File, fallback: None }),
        StoreKind::Keychain => Ok(ChosenStore {
            store: Arc::new(open().map_err(Error::Keychain)?),
            kind: StoreKind::Keychain,
            fallback: None,
        }),
        StoreKind::Auto => match open() {
            Ok(store) => Ok(ChosenStore {
                store: Arc::new(store),
                kind: StoreKind::Keychain,
                fallback: None,
            }),
            Err(e) => {
                tracing::warn!(reason = %e, "token_store = \"auto\": the keychain cannot be used, tokens are kept in files");
                Ok(ChosenStore { store: file, kind: StoreKind::File, fallback: Some(e) })
            }
        },
    }
}

/// What [`migrate`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Migration {
    /// Entries written to the target and then removed from the source.
    pub moved: usize,
    /// Entries the target already held as they were (removed from the
    /// source).
    pub already: usize,
}

/// Moves every entry of `from` into `to`: each is saved to the target,
/// read back from it, and only then removed from the source, so an
/// interrupted migration leaves every entry in one store or both, never
/// in neither. Running it again finishes the work (entries the target
/// already holds as they are are only removed from the source); an empty
/// source moves nothing. An entry the target holds with other values is
/// replaced by the source's.
pub fn migrate(from: &dyn TokenStore, to: &dyn TokenStore) -> Result<Migration, Error> {
    let mut done = Migration::default();
    for key in from.keys()? {
        let Some(value) = from.load(&key)? else { continue };
        if to.load(&key)?.as_ref() == Some(&value) {
            done.already += 1;
        } else {
            to.save(&key, &value)?;
            if to.load(&key)?.as_ref() != Some(&value) {
                return Err(Error::Store(
                    "the target store did not keep an entry; the source keeps it".into(),
                ));
            }
            done.moved += 1;
        }
        from.remove(&key)?;
    }
    Ok(done)
}

/// The OS keychain through the `keyring` crate (feature `keychain`):
/// macOS Keychain, Windows Credential Manager, the Secret Service on Linux
/// and the BSDs. Each call runs on its own thread and is given up after the
/// bound ([`KeychainError::TimedOut`]; the thread is left to finish).
#[cfg(feature = "keychain")]
#[derive(Debug, Clone)]
pub struct OsKeychain {
    timeout: Duration,
}

#[cfg(feature = "keychain")]
impl OsKeychain {
    /// The OS keychain, each call bounded by `timeout`.
    pub fn new(timeout: Duration) -> Self {
        OsKeychain { timeout }
    }

    fn call<T: Send + 'static>(
        &self,
        service: &str,
        name: &str,
        op: impl FnOnce(&keyring::Entry) -> Result<T, keyring::Error> + Send + 'static,
    ) -> Result<T, KeychainError> {
        let (s, n) = (service.to_owned(), name.to_owned());
        let run = move || keyring::Entry::new(&s, &n).and_then(|entry| op(&entry));
        bounded(service, self.timeout, run)?.map_err(|e| classify(service, &e))
    }
}

/// Runs `op` on a thread of its own and waits at most `timeout` for it
/// ([`KeychainError::TimedOut`]; the thread is left to finish on its own).
#[cfg_attr(not(feature = "keychain"), allow(dead_code))]
pub(crate) fn bounded<T: Send + 'static>(
    service: &str,
    timeout: Duration,
    op: impl FnOnce() -> T + Send + 'static,
) -> Result<T, KeychainError> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("mcp-auth-keychain".into())
        .spawn(move || {
            let _ = tx.send(op());
        })
        .map_err(|e| KeychainError::Other {
            service: service.to_owned(),
            reason: format!("cannot start a thread: {e}"),
        })?;
    rx.recv_timeout(timeout)
        .map_err(|_| KeychainError::TimedOut { service: service.to_owned(), after: timeout })
}

#[cfg(feature = "keychain")]
impl KeychainBackend for OsKeychain {
    fn get(&self, service: &str, name: &str) -> Result<Option<Vec<u8>>, KeychainError> {
        self.call(service, name, |e| match e.get_secret() {
            Ok(v) => Ok(Some(v)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(err) => Err(err),
        })
    }

    fn set(&self, service: &str, name: &str, value: &[u8]) -> Result<(), KeychainError> {
        let value = value.to_vec();
        self.call(service, name, move |e| e.set_secret(&value))
    }

    fn delete(&self, service: &str, name: &str) -> Result<(), KeychainError> {
        self.call(service, name, |e| match e.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(err) => Err(err),
        })
    }
}

/// Which [`KeychainError`] a `keyring` error is.
#[cfg(feature = "keychain")]
fn classify(service: &str, e: &keyring::Error) -> KeychainError {
    let service = service.to_owned();
    match e {
        keyring::Error::NoStorageAccess(inner) => classify_no_access(service, &inner.to_string()),
        keyring::Error::PlatformFailure(inner) => {
            let mut text = inner.to_string();
            if let Some(source) = inner.source().map(|s| s.to_string())
                && !text.contains(&source)
            {
                text = format!("{text}: {source}");
            }
            classify_failure(service, &text)
        }
        keyring::Error::TooLong(what, max) => {
            KeychainError::Other { service, reason: format!("the {what} is over {max} bytes") }
        }
        other => KeychainError::Other { service, reason: capped(&other.to_string()) },
    }
}

/// A refused access: on the Secret Service it only comes from a locked
/// collection or item (or its unlock prompt dismissed); elsewhere, locked
/// when the platform says so, else denied.
#[cfg_attr(not(feature = "keychain"), allow(dead_code))]
pub(crate) fn classify_no_access(service: String, text: &str) -> KeychainError {
    let secret_service =
        cfg!(any(target_os = "linux", target_os = "freebsd", target_os = "openbsd"));
    if secret_service || text.to_ascii_lowercase().contains("lock") {
        KeychainError::Locked { service }
    } else {
        KeychainError::Denied { service }
    }
}

/// A platform failure: no keychain to talk to, or another failure.
#[cfg_attr(not(feature = "keychain"), allow(dead_code))]
pub(crate) fn classify_failure(service: String, text: &str) -> KeychainError {
    const ABSENT: [&str; 7] = [
        "No DBus session or Secret Service provider found",
        "Failed to connect to socket",
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.secrets was not provided",
        "DBUS_SESSION_BUS_ADDRESS",
        "org.freedesktop.DBus.Error.NoServer",
        "org.freedesktop.DBus.Error.FileNotFound",
    ];
    if ABSENT.iter().any(|m| text.contains(m)) {
        KeychainError::Absent {
            reason: format!("no session bus, or no Secret Service on it ({})", capped(text)),
        }
    } else if text.to_ascii_lowercase().contains("locked") {
        KeychainError::Locked { service }
    } else {
        KeychainError::Other { service, reason: capped(text) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryTokenStore;
    use crate::token::{AccessToken, RefreshToken, TokenSet};
    use std::collections::HashMap;

    /// A keychain in memory that can be locked, taken away or made to
    /// refuse, and that counts its writes.
    #[derive(Debug, Default)]
    struct FakeKeychain {
        entries: Mutex<HashMap<(String, String), Vec<u8>>>,
        fail: Mutex<Option<KeychainError>>,
        /// Fails every `set` of this entry name.
        fail_set_of: Mutex<Option<String>>,
        writes: Mutex<usize>,
    }

    impl FakeKeychain {
        fn failing(&self) -> Result<(), KeychainError> {
            match self.fail.lock().unwrap().clone() {
                Some(e) => Err(e),
                None => Ok(()),
            }
        }
        fn names(&self) -> Vec<String> {
            let mut v: Vec<_> =
                self.entries.lock().unwrap().keys().map(|(_, n)| n.clone()).collect();
            v.sort();
            v
        }
    }

    impl KeychainBackend for FakeKeychain {
        fn get(&self, service: &str, name: &str) -> Result<Option<Vec<u8>>, KeychainError> {
            self.failing()?;
            Ok(self.entries.lock().unwrap().get(&(service.into(), name.into())).cloned())
        }
        fn set(&self, service: &str, name: &str, value: &[u8]) -> Result<(), KeychainError> {
            self.failing()?;
            if self.fail_set_of.lock().unwrap().as_deref() == Some(name) {
                return Err(KeychainError::Other {
                    service: service.into(),
                    reason: "full".into(),
                });
            }
            *self.writes.lock().unwrap() += 1;
            self.entries.lock().unwrap().insert((service.into(), name.into()), value.to_vec());
            Ok(())
        }
        fn delete(&self, service: &str, name: &str) -> Result<(), KeychainError> {
            self.failing()?;
            self.entries.lock().unwrap().remove(&(service.into(), name.into()));
            Ok(())
        }
    }

    fn sample(rt: &str) -> StoredAuth {
        let mut t = TokenSet::new(AccessToken::new("at-secret-value"));
        t.refresh_token = Some(RefreshToken::new(rt));
        StoredAuth { tokens: Some(t), ..StoredAuth::default() }
    }

    fn key(account: Option<&str>) -> StoreKey {
        StoreKey::new("https://mcp.example/mcp", "https://as.example")
            .with_account(account.map(str::to_owned))
    }

    fn store(fake: &Arc<FakeKeychain>, service: &str) -> KeychainTokenStore {
        KeychainTokenStore::with_backend(fake.clone(), service)
    }

    #[test]
    fn entries_and_index_round_trip_under_the_service() {
        let fake = Arc::new(FakeKeychain::default());
        let s = store(&fake, "app");
        s.check().unwrap();
        assert_eq!(fake.names(), ["index"]);
        assert!(s.keys().unwrap().is_empty());
        let (work, home) = (key(Some("work")), key(Some("home")));
        s.save(&work, &sample("rt-work")).unwrap();
        s.save(&home, &sample("rt-home")).unwrap();
        s.save(&work, &sample("rt-work-2")).unwrap();
        assert_eq!(s.load(&work).unwrap(), Some(sample("rt-work-2")));
        assert_eq!(s.load(&home).unwrap(), Some(sample("rt-home")));
        assert_eq!(s.load(&key(None)).unwrap(), None);
        assert_eq!(s.keys().unwrap(), [work.clone(), home.clone()]);
        // The index holds no secret; entry names hold no URL.
        let index = fake.entries.lock().unwrap()[&("app".to_owned(), "index".to_owned())].clone();
        let index = String::from_utf8(index).unwrap();
        assert!(!index.contains("secret") && !index.contains("rt-"), "{index}");
        for name in fake.names() {
            assert!(name == "index" || name.starts_with("token-") && !name.contains('/'), "{name}");
        }
        // Another service sees nothing of these.
        let other = store(&fake, "other-app");
        assert_eq!(other.load(&work).unwrap(), None);
        assert!(other.keys().unwrap().is_empty());
        s.remove(&work).unwrap();
        s.remove(&work).unwrap();
        assert_eq!(s.keys().unwrap(), std::slice::from_ref(&home));
        assert_eq!(s.load(&work).unwrap(), None);
        assert!(!format!("{s:?}").contains("secret"));
    }

    #[test]
    fn an_entry_for_another_key_or_not_tokens_is_not_handed_out() {
        let fake = Arc::new(FakeKeychain::default());
        let s = store(&fake, "app");
        let (a, b) = (key(Some("a")), key(Some("b")));
        s.save(&a, &sample("rt")).unwrap();
        let bytes = fake.get("app", &KeychainTokenStore::entry_name(&a)).unwrap().unwrap();
        fake.set("app", &KeychainTokenStore::entry_name(&b), &bytes).unwrap();
        assert_eq!(s.load(&b).unwrap(), None);
        fake.set("app", &KeychainTokenStore::entry_name(&b), b"garbage").unwrap();
        let err = s.load(&b).unwrap_err();
        assert!(matches!(err, Error::Keychain(KeychainError::Other { .. })), "{err:?}");
        fake.set("app", INDEX_ENTRY, b"[not an index").unwrap();
        let err = s.keys().unwrap_err().to_string();
        assert!(err.contains("not an index") && err.contains("`app`"), "{err}");
        fake.set("app", INDEX_ENTRY, &vec![b' '; MAX_ENTRY + 1]).unwrap();
        assert!(s.keys().unwrap_err().to_string().contains("too large"));
    }

    #[test]
    fn the_index_is_written_only_when_it_changes_and_is_capped() {
        let fake = Arc::new(FakeKeychain::default());
        let s = store(&fake, "app");
        s.save(&key(None), &sample("1")).unwrap();
        let writes = *fake.writes.lock().unwrap();
        assert_eq!(writes, 2, "the entry and the index");
        s.save(&key(None), &sample("2")).unwrap();
        assert_eq!(*fake.writes.lock().unwrap(), writes + 1, "the entry only");
        let full = Index {
            version: 1,
            keys: (0..MAX_KEYS).map(|i| IndexedKey::from(&key(Some(&i.to_string())))).collect(),
        };
        fake.set("app", INDEX_ENTRY, &serde_json::to_vec(&full).unwrap()).unwrap();
        let err = s.save(&key(Some("one more")), &sample("x")).unwrap_err().to_string();
        assert!(err.contains("more than 4096"), "{err}");
    }

    /// A save whose index update fails reports it; the entry it wrote
    /// still loads.
    #[test]
    fn an_interrupted_save_keeps_the_entry_loadable() {
        let fake = Arc::new(FakeKeychain::default());
        let s = store(&fake, "app");
        *fake.fail_set_of.lock().unwrap() = Some(INDEX_ENTRY.into());
        assert!(s.save(&key(None), &sample("rt")).is_err());
        assert_eq!(s.load(&key(None)).unwrap(), Some(sample("rt")));
        assert!(s.keys().unwrap().is_empty());
        *fake.fail_set_of.lock().unwrap() = None;
        s.save(&key(None), &sample("rt")).unwrap();
        assert_eq!(s.keys().unwrap(), [key(None)]);
    }

    #[test]
    fn store_kinds_parse_from_the_configuration_words() {
        for kind in [StoreKind::File, StoreKind::Keychain, StoreKind::Auto] {
            assert_eq!(kind.as_str().parse::<StoreKind>().unwrap(), kind);
        }
        assert_eq!(StoreKind::default(), StoreKind::File);
        let err = "Keychain".parse::<StoreKind>().unwrap_err().to_string();
        assert_eq!(err, "unknown token store `Keychain` (expected file, keychain or auto)");
    }

    fn locked() -> KeychainError {
        KeychainError::Locked { service: "app".into() }
    }

    #[test]
    fn the_chooser_follows_the_kind_and_says_why_it_fell_back() {
        let file: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::new());
        let fake = Arc::new(FakeKeychain::default());
        let ok = || Ok(store(&fake, "app"));
        let chosen =
            choose_store_with(StoreKind::File, file.clone(), || panic!("not opened")).unwrap();
        assert_eq!((chosen.kind, chosen.fallback), (StoreKind::File, None));
        let chosen = choose_store_with(StoreKind::Keychain, file.clone(), ok).unwrap();
        assert_eq!(chosen.kind, StoreKind::Keychain);
        assert!(format!("{:?}", chosen.store).contains("KeychainTokenStore"));
        let chosen = choose_store_with(StoreKind::Auto, file.clone(), ok).unwrap();
        assert_eq!((chosen.kind, chosen.fallback), (StoreKind::Keychain, None));

        let err =
            choose_store_with(StoreKind::Keychain, file.clone(), || Err(locked())).unwrap_err();
        assert_eq!(err, Error::Keychain(locked()));
        assert!(err.to_string().contains("locked (service `app`)"), "{err}");
        let chosen = choose_store_with(StoreKind::Auto, file.clone(), || Err(locked())).unwrap();
        assert_eq!((chosen.kind, chosen.fallback), (StoreKind::File, Some(locked())));
        assert!(Arc::ptr_eq(&chosen.store, &file));
    }

    /// Opening checks the keychain: a locked one is found at once.
    #[test]
    fn check_reports_a_locked_or_absent_keychain() {
        let fake = Arc::new(FakeKeychain::default());
        *fake.fail.lock().unwrap() = Some(locked());
        assert_eq!(store(&fake, "app").check(), Err(locked()));
        let absent = KeychainError::Absent { reason: "no bus".into() };
        *fake.fail.lock().unwrap() = Some(absent.clone());
        assert_eq!(store(&fake, "app").check(), Err(absent));
    }

    #[cfg(not(feature = "keychain"))]
    #[test]
    fn without_the_feature_the_keychain_is_absent_and_auto_falls_back() {
        let err = KeychainTokenStore::open("app").unwrap_err();
        assert!(err.to_string().contains("feature `keychain`"), "{err}");
        let file: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::new());
        let chosen = choose_store(StoreKind::Auto, file, "app").unwrap();
        assert_eq!(chosen.kind, StoreKind::File);
        assert!(matches!(chosen.fallback, Some(KeychainError::Absent { .. })));
    }

    #[test]
    fn migration_moves_everything_once_and_only_after_the_target_has_it() {
        let file = MemoryTokenStore::new();
        let fake = Arc::new(FakeKeychain::default());
        let chain = store(&fake, "app");
        let keys = [key(None), key(Some("work"))];
        for (i, k) in keys.iter().enumerate() {
            file.save(k, &sample(&format!("rt{i}"))).unwrap();
        }
        // The target cannot keep entries: nothing leaves the source.
        *fake.fail.lock().unwrap() = Some(locked());
        assert_eq!(migrate(&file, &chain), Err(Error::Keychain(locked())));
        assert_eq!(file.keys().unwrap().len(), 2);
        *fake.fail.lock().unwrap() = None;
        // One entry already there (an interrupted run).
        chain.save(&keys[1], &sample("rt1")).unwrap();
        let done = migrate(&file, &chain).unwrap();
        assert_eq!((done.moved, done.already), (1, 1));
        assert!(file.keys().unwrap().is_empty());
        assert_eq!(chain.load(&keys[0]).unwrap(), Some(sample("rt0")));
        // Idempotent.
        assert_eq!(migrate(&file, &chain).unwrap(), Migration::default());
        // And back.
        let done = migrate(&chain, &file).unwrap();
        assert_eq!(done.moved, 2);
        assert!(chain.keys().unwrap().is_empty());
        assert_eq!(file.load(&keys[1]).unwrap(), Some(sample("rt1")));
    }

    /// A keychain call that does not come back (a prompt nobody sees) is
    /// given up after the bound; one that does is answered.
    #[test]
    fn calls_are_bounded_in_time() {
        let bound = Duration::from_millis(100);
        let started = std::time::Instant::now();
        let err = bounded("app", bound, || std::thread::sleep(Duration::from_secs(5))).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        assert_eq!(err, KeychainError::TimedOut { service: "app".into(), after: bound });
        assert_eq!(bounded("app", Duration::from_secs(5), || 7).unwrap(), 7);
    }

    #[test]
    fn platform_messages_are_classified_and_capped() {
        let absent =
            classify_failure("app".into(), "No DBus session or Secret Service provider found");
        assert!(matches!(absent, KeychainError::Absent { .. }), "{absent:?}");
        let unknown = classify_failure(
            "app".into(),
            "DBus error: The name org.freedesktop.secrets was not provided by any .service files",
        );
        assert!(matches!(unknown, KeychainError::Absent { .. }), "{unknown:?}");
        let other = classify_failure("app".into(), &"x".repeat(1000));
        let KeychainError::Other { reason, .. } = &other else { panic!("{other:?}") };
        assert_eq!(reason.chars().count(), MAX_REASON + 1);
        assert!(matches!(
            classify_no_access("app".into(), "Secret Service: object locked"),
            KeychainError::Locked { .. }
        ));
        let timed = KeychainError::TimedOut { service: "app".into(), after: DEFAULT_TIMEOUT };
        assert!(timed.to_string().contains("within 10 s"), "{timed}");
    }
}
