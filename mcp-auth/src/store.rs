//! Token storage: a trait, an in-memory store and a file store.

use std::collections::HashMap;
use std::fmt;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::dpop::DpopKey;
use crate::error::Error;
use crate::token::{ClientRegistration, TokenSet};

/// Which tokens: those of one MCP server (its `resource`) from one
/// authorization server (its issuer), for one account (a label the host
/// gives, such as `work`; `None`: the default account). A token is never
/// used for another server, taken from another issuer or lent to another
/// account.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct StoreKey {
    /// The MCP server's resource identifier.
    pub resource: String,
    /// The authorization server's issuer.
    pub issuer: String,
    /// The account label; `None`: the default account.
    pub account: Option<String>,
}

impl StoreKey {
    /// A key of the default account.
    pub fn new(resource: impl Into<String>, issuer: impl Into<String>) -> Self {
        StoreKey { resource: resource.into(), issuer: issuer.into(), account: None }
    }

    /// The same key for `account` (`None`: the default account).
    pub fn with_account(mut self, account: Option<String>) -> Self {
        self.account = account;
        self
    }

    /// A stable file name for the key: the hex SHA-256 of its parts
    /// (so no URL characters reach the file system), `.json`. The default
    /// account's name is that of a key without accounts.
    pub fn file_name(&self) -> String {
        let mut input = Vec::with_capacity(self.resource.len() + self.issuer.len() + 1);
        input.extend_from_slice(self.resource.as_bytes());
        input.push(0);
        input.extend_from_slice(self.issuer.as_bytes());
        if let Some(account) = &self.account {
            input.push(0);
            input.extend_from_slice(account.as_bytes());
        }
        let digest = ring::digest::digest(&ring::digest::SHA256, &input);
        let hex: String = digest.as_ref()[..16].iter().map(|b| format!("{b:02x}")).collect();
        format!("{hex}.json")
    }
}

/// What is kept per key: the client registration (so a dynamically
/// registered client is reused) and the tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredAuth {
    /// The client registration used with this issuer, if any was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRegistration>,
    /// The tokens, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenSet>,
    /// The DPoP key the tokens are bound to (RFC 9449), if they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<DpopKey>,
}

/// Where tokens live between runs. Implementations must keep values from
/// other users of the machine and out of logs.
///
/// Methods are synchronous and small (one file at most); the orchestrator
/// calls them outside of any lock it holds across awaits.
pub trait TokenStore: Send + Sync + fmt::Debug {
    /// The stored value for `key`, if any.
    fn load(&self, key: &StoreKey) -> Result<Option<StoredAuth>, Error>;
    /// Replaces the stored value for `key`.
    fn save(&self, key: &StoreKey, value: &StoredAuth) -> Result<(), Error>;
    /// Forgets `key`.
    fn remove(&self, key: &StoreKey) -> Result<(), Error>;
    /// The keys of the stored entries, so that a server's entries are
    /// found without asking it for its issuer (a logout while it is
    /// unreachable). The default lists none; the stores of this crate list
    /// theirs.
    fn keys(&self) -> Result<Vec<StoreKey>, Error> {
        Ok(Vec::new())
    }
}

/// Keeps everything in memory, for one process.
#[derive(Default)]
pub struct MemoryTokenStore {
    map: Mutex<HashMap<StoreKey, StoredAuth>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl fmt::Debug for MemoryTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.map.lock().map(|m| m.len()).unwrap_or(0);
        f.debug_struct("MemoryTokenStore").field("entries", &n).finish()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, key: &StoreKey) -> Result<Option<StoredAuth>, Error> {
        Ok(self.map.lock().map_err(|_| Error::Store("poisoned".into()))?.get(key).cloned())
    }

    fn save(&self, key: &StoreKey, value: &StoredAuth) -> Result<(), Error> {
        self.map
            .lock()
            .map_err(|_| Error::Store("poisoned".into()))?
            .insert(key.clone(), value.clone());
        Ok(())
    }

    fn remove(&self, key: &StoreKey) -> Result<(), Error> {
        self.map.lock().map_err(|_| Error::Store("poisoned".into()))?.remove(key);
        Ok(())
    }

    fn keys(&self) -> Result<Vec<StoreKey>, Error> {
        Ok(self.map.lock().map_err(|_| Error::Store("poisoned".into()))?.keys().cloned().collect())
    }
}

/// The largest token file read back.
const MAX_FILE: u64 = 1024 * 1024;
/// The most directory entries [`FileTokenStore::keys`] looks at.
const MAX_ENTRIES: usize = 4096;

/// One JSON file per server and issuer in a directory. Files are written
/// atomically (a temporary file in the same directory, then a rename, then
/// the directory synced) with permissions `0600` on Unix (the directory is
/// created `0700`, or made so when it existed with a looser mode). A token
/// file other users can read or write is not used:
/// [`Error::InsecureTokenFile`]. On other
/// platforms the files get the directory's default permissions. Contents
/// are never logged; errors name the file only.
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    dir: PathBuf,
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::Store(format!("{what} {}: {e}", path.display()))
}

impl FileTokenStore {
    /// A store in `dir` (created on first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileTokenStore { dir: dir.into() }
    }

    /// The file that holds `key`.
    pub fn path(&self, key: &StoreKey) -> PathBuf {
        self.dir.join(key.file_name())
    }

    fn create_dir(&self) -> Result<(), Error> {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt as _;
            b.mode(0o700);
        }
        b.create(&self.dir).map_err(|e| io_err("cannot create", &self.dir, e))?;
        // A directory that existed already keeps its mode: make it private.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let meta =
                std::fs::metadata(&self.dir).map_err(|e| io_err("cannot inspect", &self.dir, e))?;
            if meta.permissions().mode() & 0o077 != 0 {
                std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
                    .map_err(|e| io_err("cannot make private", &self.dir, e))?;
            }
        }
        Ok(())
    }

    /// Makes the rename that replaced a token file durable (best effort:
    /// some file systems cannot sync a directory).
    fn sync_dir(&self) {
        #[cfg(unix)]
        if let Err(e) = std::fs::File::open(&self.dir).and_then(|d| d.sync_all()) {
            tracing::debug!(error = %e, "the token directory could not be synced");
        }
    }
}

/// The key a token file says it holds (`resource` and `issuer` are written
/// beside the stored value).
pub(crate) fn key_in(doc: &serde_json::Value) -> Option<StoreKey> {
    let account = doc.get("account").and_then(serde_json::Value::as_str).map(str::to_owned);
    Some(StoreKey::new(doc["resource"].as_str()?, doc["issuer"].as_str()?).with_account(account))
}

impl FileTokenStore {
    /// The bytes of a token file, `None` when there is none; refused when
    /// others could read it or it is over the size cap.
    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>, Error> {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err("cannot open", path, e)),
        };
        // Tokens others could read (or have planted) are not used.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = file
                .metadata()
                .map_err(|e| io_err("cannot inspect", path, e))?
                .permissions()
                .mode()
                & 0o777;
            if mode & 0o077 != 0 {
                return Err(Error::InsecureTokenFile { path: path.to_owned(), mode });
            }
        }
        let mut buf = Vec::new();
        file.take(MAX_FILE + 1)
            .read_to_end(&mut buf)
            .map_err(|e| io_err("cannot read", path, e))?;
        if buf.len() as u64 > MAX_FILE {
            return Err(Error::Store(format!("{} is too large", path.display())));
        }
        Ok(Some(buf))
    }
}

/// A stored value with the key it is for written beside it (`resource`,
/// `issuer`, `account`), as the file and keychain stores keep it.
pub(crate) fn encode_entry(
    key: &StoreKey,
    value: &StoredAuth,
    pretty: bool,
) -> Result<Vec<u8>, Error> {
    let mut doc =
        serde_json::to_value(value).map_err(|_| Error::Store("cannot encode tokens".into()))?;
    doc["resource"] = serde_json::Value::String(key.resource.clone());
    doc["issuer"] = serde_json::Value::String(key.issuer.clone());
    if let Some(account) = &key.account {
        doc["account"] = serde_json::Value::String(account.clone());
    }
    let bytes = if pretty { serde_json::to_vec_pretty(&doc) } else { serde_json::to_vec(&doc) };
    bytes.map_err(|_| Error::Store("cannot encode tokens".into()))
}

/// The stored value of an entry written by [`encode_entry`]: `Err(())` when
/// it is not one, `Ok(None)` when it is for another key (a hash collision or
/// a copied entry must never hand a token to another server).
pub(crate) fn decode_entry(buf: &[u8], key: &StoreKey) -> Result<Option<StoredAuth>, ()> {
    let value: StoredAuth = serde_json::from_slice(buf).map_err(|_| ())?;
    match serde_json::from_slice::<serde_json::Value>(buf) {
        Ok(v) if key_in(&v).as_ref() == Some(key) => Ok(Some(value)),
        _ => Ok(None),
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, key: &StoreKey) -> Result<Option<StoredAuth>, Error> {
        let path = self.path(key);
        let Some(buf) = self.read(&path)? else { return Ok(None) };
        decode_entry(&buf, key)
            .map_err(|()| Error::Store(format!("{} is not a token file", path.display())))
    }

    /// The keys of the token files in the directory (at most the first
    /// 4096 entries): each file's own `resource` and `issuer`, when the file
    /// is the one [`load`](TokenStore::load) reads for them. Files that
    /// cannot be read, or that others could read, are left out.
    fn keys(&self) -> Result<Vec<StoreKey>, Error> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err("cannot list", &self.dir, e)),
        };
        let mut keys = Vec::new();
        for entry in entries.take(MAX_ENTRIES).flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str().filter(|n| n.ends_with(".json")) else { continue };
            let doc = match self.read(&entry.path()) {
                Ok(Some(buf)) => serde_json::from_slice::<serde_json::Value>(&buf).ok(),
                Ok(None) => None,
                Err(e) => {
                    tracing::debug!(error = %e, "a token file was left out");
                    None
                }
            };
            if let Some(key) = doc.as_ref().and_then(key_in).filter(|k| k.file_name() == name) {
                keys.push(key);
            }
        }
        Ok(keys)
    }

    fn save(&self, key: &StoreKey, value: &StoredAuth) -> Result<(), Error> {
        self.create_dir()?;
        let path = self.path(key);
        let bytes = encode_entry(key, value, true)?;
        let suffix = crate::pkce::random_b64(6)?;
        let tmp = self.dir.join(format!(".{}.{suffix}.tmp", key.file_name()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            opts.mode(0o600);
        }
        let result = (|| {
            let mut f = opts.open(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
            f.write_all(&bytes).map_err(|e| io_err("cannot write", &tmp, e))?;
            f.sync_all().map_err(|e| io_err("cannot sync", &tmp, e))?;
            drop(f);
            std::fs::rename(&tmp, &path).map_err(|e| io_err("cannot replace", &path, e))
        })();
        match result {
            Ok(()) => {
                self.sync_dir();
                Ok(())
            }
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    }

    fn remove(&self, key: &StoreKey) -> Result<(), Error> {
        let path = self.path(key);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err("cannot remove", &path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::{AccessToken, RefreshToken};

    fn sample() -> StoredAuth {
        let mut t = TokenSet::new(AccessToken::new("at-secret"));
        t.refresh_token = Some(RefreshToken::new("rt-secret"));
        t.expires_at = Some(42);
        t.scopes = vec!["a".into()];
        StoredAuth {
            client: Some(ClientRegistration::public("cid")),
            tokens: Some(t),
            dpop_key: None,
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir()
            .join(format!("mcp-auth-test-{name}-{}", crate::pkce::random_b64(6).unwrap()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// A token file of exactly the size cap is read (padded with
    /// whitespace after the JSON), one byte more is refused; a store whose
    /// directory is a regular file fails instead of reading as empty; the
    /// memory store's `Debug` counts entries.
    #[test]
    fn size_cap_other_io_errors_and_debug() {
        assert_eq!(MAX_FILE, 1 << 20);
        let dir = temp_dir("cap");
        let store = FileTokenStore::new(&dir);
        let key = StoreKey::new("https://mcp.example/mcp", "https://as.example");
        store.save(&key, &sample()).unwrap();
        let path = store.path(&key);
        let mut text = std::fs::read(&path).unwrap();
        text.resize(MAX_FILE as usize, b' ');
        std::fs::write(&path, &text).unwrap();
        assert_eq!(store.load(&key).unwrap(), Some(sample()));
        text.push(b' ');
        std::fs::write(&path, &text).unwrap();
        let err = store.load(&key).unwrap_err();
        assert!(err.to_string().contains("too large"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();

        let file = temp_dir("not-a-dir");
        std::fs::write(&file, b"x").unwrap();
        let broken = FileTokenStore::new(&file);
        assert!(broken.load(&key).is_err());
        assert!(broken.keys().is_err());
        assert!(broken.remove(&key).is_err());
        std::fs::remove_file(&file).unwrap();

        let memory = MemoryTokenStore::new();
        memory.save(&key, &sample()).unwrap();
        assert_eq!(format!("{memory:?}"), "MemoryTokenStore { entries: 1 }");
    }

    fn round_trip(store: &dyn TokenStore) {
        let k1 = StoreKey::new("https://mcp.example/mcp", "https://as.example");
        let k2 = StoreKey::new("https://mcp.example/mcp", "https://other-as.example");
        assert_eq!(store.load(&k1).unwrap(), None);
        store.save(&k1, &sample()).unwrap();
        assert_eq!(store.load(&k1).unwrap(), Some(sample()));
        assert_eq!(store.load(&k2).unwrap(), None);
        assert_eq!(store.keys().unwrap(), std::slice::from_ref(&k1));
        let mut updated = sample();
        updated.tokens.as_mut().unwrap().refresh_token = Some(RefreshToken::new("rotated"));
        store.save(&k1, &updated).unwrap();
        assert_eq!(store.load(&k1).unwrap(), Some(updated));
        store.remove(&k1).unwrap();
        assert_eq!(store.load(&k1).unwrap(), None);
        assert!(store.keys().unwrap().is_empty());
        store.remove(&k1).unwrap();
        assert!(!format!("{store:?}").contains("secret"));

        // Accounts are kept apart: one server and issuer, two users.
        let work = k1.clone().with_account(Some("work".into()));
        let home = k1.clone().with_account(Some("home".into()));
        store.save(&work, &sample()).unwrap();
        assert_eq!(store.load(&k1).unwrap(), None);
        assert_eq!(store.load(&home).unwrap(), None);
        assert_eq!(store.load(&work).unwrap(), Some(sample()));
        store.save(&home, &updated_sample()).unwrap();
        let mut keys = store.keys().unwrap();
        keys.sort_by(|a, b| a.account.cmp(&b.account));
        assert_eq!(keys, [home.clone(), work.clone()]);
        store.remove(&work).unwrap();
        assert_eq!(store.load(&home).unwrap(), Some(updated_sample()));
        store.remove(&home).unwrap();
    }

    fn updated_sample() -> StoredAuth {
        let mut s = sample();
        s.tokens.as_mut().unwrap().refresh_token = Some(RefreshToken::new("another"));
        s
    }

    #[test]
    fn the_default_account_keeps_the_file_name_of_keys_without_accounts() {
        let key = StoreKey::new("https://mcp.example/mcp", "https://as.example");
        let named = key.clone().with_account(Some("work".into()));
        assert_ne!(key.file_name(), named.file_name());
        // What it was before accounts existed: the first 16 bytes of the
        // SHA-256 of `resource \0 issuer`, in hex.
        let digest = ring::digest::digest(
            &ring::digest::SHA256,
            b"https://mcp.example/mcp\0https://as.example",
        );
        let hex: String = digest.as_ref()[..16].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(key.file_name(), format!("{hex}.json"));
    }

    #[test]
    fn memory_store() {
        round_trip(&MemoryTokenStore::new());
    }

    #[test]
    fn file_store() {
        let dir = temp_dir("roundtrip");
        round_trip(&FileTokenStore::new(&dir));
        // No temporary files are left behind.
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn file_store_permissions() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = temp_dir("perms");
        let store = FileTokenStore::new(&dir);
        let key = StoreKey::new("https://mcp.example/mcp", "https://as.example");
        store.save(&key, &sample()).unwrap();
        let mode = std::fs::metadata(store.path(&key)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dmode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(dmode, 0o700);
        // One file per server and issuer.
        store
            .save(&StoreKey::new("https://mcp.example/mcp", "https://b.example"), &sample())
            .unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn file_store_keys_come_from_the_files_it_would_load() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = temp_dir("keys");
        let store = FileTokenStore::new(&dir);
        assert!(store.keys().unwrap().is_empty(), "no directory yet");
        let k1 = StoreKey::new("https://mcp.example/mcp", "https://as.example");
        let k2 = StoreKey::new("https://mcp.example/mcp", "https://b.example");
        let k3 = StoreKey::new("https://other.example/mcp", "https://as.example");
        for k in [&k1, &k2, &k3] {
            store.save(k, &sample()).unwrap();
        }
        // Left out: a copy under another name, a file others can read, and
        // what is not a token file.
        std::fs::copy(store.path(&k1), dir.join("0123456789abcdef0123456789abcdef.json")).unwrap();
        std::fs::set_permissions(store.path(&k3), std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(dir.join("notes.txt"), "{}").unwrap();
        std::fs::write(dir.join("broken.json"), "{").unwrap();
        let mut keys = store.keys().unwrap();
        keys.sort_by(|a, b| a.issuer.cmp(&b.issuer));
        assert_eq!(keys, [k1, k2]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_loose_directory_is_made_private_and_a_loose_file_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = temp_dir("loose");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let store = FileTokenStore::new(&dir);
        let key = StoreKey::new("https://mcp.example/mcp", "https://as.example");
        store.save(&key, &sample()).unwrap();
        let dmode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(dmode, 0o700);
        assert_eq!(store.load(&key).unwrap(), Some(sample()));
        for mode in [0o644, 0o640, 0o604, 0o660, 0o666] {
            std::fs::set_permissions(store.path(&key), std::fs::Permissions::from_mode(mode))
                .unwrap();
            match store.load(&key) {
                Err(Error::InsecureTokenFile { mode: m, .. }) => assert_eq!(m, mode),
                other => panic!("{mode:o}: {other:?}"),
            }
        }
        // A private file is used again.
        std::fs::set_permissions(store.path(&key), std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(store.load(&key).unwrap(), Some(sample()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A directory already closed to group and others keeps its own mode
    /// (here read-only for its owner): only a loose one is changed.
    #[cfg(unix)]
    #[test]
    fn a_private_directory_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = temp_dir("private");
        std::fs::create_dir_all(&dir).unwrap();
        let mode = |m| std::fs::Permissions::from_mode(m);
        std::fs::set_permissions(&dir, mode(0o500)).unwrap();
        FileTokenStore::new(&dir).create_dir().unwrap();
        let dmode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        std::fs::set_permissions(&dir, mode(0o700)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(dmode, 0o500);
    }

    #[test]
    fn file_store_refuses_foreign_and_bad_files() {
        let dir = temp_dir("foreign");
        let store = FileTokenStore::new(&dir);
        let a = StoreKey::new("https://a.example/mcp", "https://as.example");
        let b = StoreKey::new("https://b.example/mcp", "https://as.example");
        store.save(&a, &sample()).unwrap();
        // A file copied under another key's name is not handed out.
        std::fs::copy(store.path(&a), store.path(&b)).unwrap();
        assert_eq!(store.load(&b).unwrap(), None);
        std::fs::write(store.path(&a), b"garbage").unwrap();
        let err = store.load(&a).unwrap_err();
        assert!(!err.to_string().contains("secret"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
