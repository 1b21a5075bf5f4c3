//! The one shape of the trust records (consent, kept answers): a JSON file
//! `{"version": 1, FIELD: {KEY: VALUE}}`, read under the size cap, written
//! whole, atomically and owner-only ([`private_file`]); a file that cannot
//! be read or parsed is an error naming it, and nothing is written over it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::private_file;
use crate::trust::TrustError;

/// The records' current format.
const VERSION: u64 = 1;

/// One record file.
#[derive(Debug)]
pub(crate) struct RecordFile {
    path: PathBuf,
    /// One read-change-write at a time in this process.
    write: Mutex<()>,
}

impl RecordFile {
    pub(crate) fn new(path: PathBuf) -> Self {
        RecordFile { path, write: Mutex::new(()) }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn corrupt(&self, message: impl Into<String>) -> TrustError {
        TrustError::Corrupt { path: self.path.clone(), message: message.into() }
    }

    /// The records under `field` (none when the file does not exist).
    pub(crate) fn read<K, V>(&self, field: &str) -> Result<BTreeMap<K, V>, TrustError>
    where
        K: Ord + DeserializeOwned,
        V: DeserializeOwned,
    {
        let text = private_file::read_capped(&self.path)
            .map_err(|source| TrustError::Io { path: self.path.clone(), source })?;
        let Some(text) = text else { return Ok(BTreeMap::new()) };
        let root: Value = serde_json::from_str(&text).map_err(|e| {
            self.corrupt(format!("not JSON (line {}, column {})", e.line(), e.column()))
        })?;
        let Value::Object(mut root) = root else { return Err(self.corrupt("not an object")) };
        if root.get("version").and_then(Value::as_u64) != Some(VERSION) {
            return Err(self.corrupt(format!("not version {VERSION}")));
        }
        if let Some(key) = root.keys().find(|k| *k != "version" && *k != field) {
            return Err(self.corrupt(format!("unknown key `{key}`")));
        }
        match root.remove(field) {
            None => Ok(BTreeMap::new()),
            Some(records) => serde_json::from_value(records)
                .map_err(|_| self.corrupt(format!("`{field}` does not hold the records"))),
        }
    }

    /// Reads the records, lets `change` edit them, and writes them back
    /// when it says they changed; whether they did.
    pub(crate) fn update<K, V>(
        &self,
        field: &str,
        change: impl FnOnce(&mut BTreeMap<K, V>) -> bool,
    ) -> Result<bool, TrustError>
    where
        K: Ord + Serialize + DeserializeOwned,
        V: Serialize + DeserializeOwned,
    {
        let _guard = self.write.lock().unwrap_or_else(|e| e.into_inner());
        let mut records = self.read(field)?;
        if !change(&mut records) {
            return Ok(false);
        }
        let mut root = Map::new();
        root.insert("version".into(), VERSION.into());
        let records = serde_json::to_value(&records).map_err(|e| self.corrupt(e.to_string()))?;
        root.insert(field.to_owned(), records);
        let mut text = serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
        text.push('\n');
        private_file::write_atomic(&self.path, text.as_bytes())
            .map_err(|source| TrustError::Io { path: self.path.clone(), source })?;
        Ok(true)
    }
}
