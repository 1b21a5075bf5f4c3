//! Where the whole of a cut result goes: a directory of JSON files with a
//! bound on their total size, the oldest removed first.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use mcp_proto::types::CallToolResult;

/// The prefix and suffix of the files a [`SpillDir`] writes; it removes
/// nothing else.
const PREFIX: &str = "result-";
const SUFFIX: &str = ".json";
/// The most characters of a server's or tool's name in a file name.
const NAME_PART: usize = 40;
/// A process-wide counter, so file names sort in the order written.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Why a result could not be kept.
#[derive(Debug)]
#[non_exhaustive]
pub enum SpillError {
    /// The result alone is larger than the directory's whole bound.
    TooLarge {
        /// Its size as JSON.
        bytes: u64,
        /// The directory's bound.
        max_total_bytes: u64,
    },
    /// Creating the directory, writing the file or removing old ones
    /// failed.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
}

impl fmt::Display for SpillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpillError::TooLarge { bytes, max_total_bytes } => write!(
                f,
                "the result ({bytes} bytes) is larger than the spill directory's bound ({max_total_bytes} bytes)"
            ),
            SpillError::Io { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for SpillError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SpillError::Io { source, .. } => Some(source),
            SpillError::TooLarge { .. } => None,
        }
    }
}

/// A directory that keeps whole tool results as JSON files
/// (`result-<time>-<n>-<server>-<tool>.json`, in a directory and files
/// readable by the user alone),
/// at most `max_total_bytes` of them in all: after each write the oldest
/// of its files are removed until the rest fit. Files it did not write are
/// never touched.
///
/// ```no_run
/// use mcp_host_registry::SpillDir;
///
/// let spill = SpillDir::default_for("my-host").expect("a home directory");
/// assert!(spill.dir().ends_with("results"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillDir {
    dir: PathBuf,
    max_total_bytes: u64,
}

impl SpillDir {
    /// The default bound on the directory's total size: 100 MiB.
    pub const DEFAULT_MAX_TOTAL_BYTES: u64 = 100 * 1024 * 1024;

    /// A spill directory at `dir` holding at most `max_total_bytes`.
    pub fn new(dir: impl Into<PathBuf>, max_total_bytes: u64) -> Self {
        SpillDir { dir: dir.into(), max_total_bytes }
    }

    /// `app`'s directory under the user's cache directory, with the
    /// default bound: `$XDG_CACHE_HOME/<app>/results` when `XDG_CACHE_HOME`
    /// is set (on every platform, so tests and sandboxes can redirect it),
    /// else `%LOCALAPPDATA%\<app>\results` on Windows,
    /// `~/Library/Caches/<app>/results` on macOS and
    /// `~/.cache/<app>/results` elsewhere. `None` when neither the
    /// variable nor a home directory is known.
    pub fn default_for(app: &str) -> Option<Self> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let base = if let Some(d) = var("XDG_CACHE_HOME") {
            d
        } else if cfg!(windows) {
            var("LOCALAPPDATA")?
        } else if cfg!(target_os = "macos") {
            var("HOME")?.join("Library").join("Caches")
        } else {
            var("HOME")?.join(".cache")
        };
        Some(SpillDir::new(base.join(app).join("results"), Self::DEFAULT_MAX_TOTAL_BYTES))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The bound on the total size of its files.
    pub fn max_total_bytes(&self) -> u64 {
        self.max_total_bytes
    }

    /// Writes `result` as JSON to a new file and removes the oldest files
    /// until the directory is within its bound; the new file's path.
    pub fn keep(
        &self,
        server: &str,
        tool: &str,
        result: &CallToolResult,
    ) -> Result<PathBuf, SpillError> {
        // Encoding a `CallToolResult` cannot fail: every key is a string.
        let json = serde_json::to_vec(result).unwrap_or_default();
        let bytes = json.len() as u64;
        if bytes > self.max_total_bytes {
            return Err(SpillError::TooLarge { bytes, max_total_bytes: self.max_total_bytes });
        }
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| SpillError::Io { path, source }
        };
        create_private_dir(&self.dir).map_err(io(&self.dir))?;
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name =
            format!("{PREFIX}{nanos:020}-{n:06}-{}-{}{SUFFIX}", name_part(server), name_part(tool));
        let path = self.dir.join(name);
        write_private(&path, &json).map_err(io(&path))?;
        self.prune(&path)?;
        Ok(path)
    }

    /// Removes the oldest of its files (by name: the time written) until
    /// the total is within the bound, never `keep`.
    fn prune(&self, keep: &Path) -> Result<(), SpillError> {
        let entries = std::fs::read_dir(&self.dir)
            .map_err(|source| SpillError::Io { path: self.dir.clone(), source })?;
        let mut files: Vec<(String, u64)> = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with(PREFIX) || !name.ends_with(SUFFIX) {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_file() {
                files.push((name, meta.len()));
            }
        }
        files.sort();
        let mut total: u64 = files.iter().map(|(_, len)| len).sum();
        for (name, len) in files {
            if total <= self.max_total_bytes {
                break;
            }
            let path = self.dir.join(&name);
            if path == keep {
                continue;
            }
            match std::fs::remove_file(&path) {
                Ok(()) => total -= len,
                // Removed meanwhile (another process pruning): gone is gone.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => total -= len,
                Err(source) => return Err(SpillError::Io { path, source }),
            }
        }
        Ok(())
    }
}

/// A server's or tool's name as a piece of a file name: `[A-Za-z0-9_-]`,
/// others as `_`, at most [`NAME_PART`] characters.
fn name_part(name: &str) -> String {
    name.chars()
        .take(NAME_PART)
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect()
}

/// Creates the directory (`0700`), or makes an existing one private: the
/// results it holds may carry whatever a tool read. One that everyone may
/// write to (`/tmp`) is refused, never changed.
#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let mode = std::fs::metadata(dir)?.permissions().mode();
    if mode & 0o002 != 0 {
        return Err(std::io::Error::other(
            "everyone may write to this directory; a spill directory must be the user's own",
        ));
    }
    if mode & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file =
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(bytes)
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
    file.write_all(bytes)
}
