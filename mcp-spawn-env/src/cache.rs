//! An opt-in on-disk cache of the login-shell probe's result, so a host
//! that starts often (a command-line tool) does not run the user's login
//! shell on every start.
//!
//! The file holds one entry: the PATH the shell printed, the time it was
//! probed, and the key it is valid for (the shell, `HOME`, `ZDOTDIR`, the
//! PATH the shell inherited, and the modification time and size of the
//! shell's binary and of every startup file a shell reads). A different
//! key, an entry older than the maximum age, a file that cannot be read or
//! parsed, that is over [`CACHE_FILE_MAX`] or writable by others: a miss
//! (logged at debug level), and the shell is probed again. Nothing but
//! PATH values and file names is written.

use std::ffi::{OsStr, OsString};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a cached login-shell PATH is used before the shell is probed
/// again (24 hours): a startup file can source others (`~/.cargo/env`,
/// `nvm.sh`) whose changes the key does not see.
pub const DEFAULT_CACHE_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// The largest cache file read or written (64 KiB); a larger one is
/// ignored, and an entry that would be larger is not written.
pub const CACHE_FILE_MAX: u64 = 64 * 1024;

/// The first line of a cache file; another version is a miss.
const HEADER: &[u8] = b"mcp-spawn-env login-shell PATH cache v1\n";

/// How far in the future an entry's time may be (clock adjustments) before
/// it is taken as wrong.
const CLOCK_SLACK: Duration = Duration::from_secs(60);

/// The startup files of sh, bash, zsh, fish, ksh and csh under `HOME`.
const HOME_FILES: &[&str] = &[
    ".profile",
    ".bash_profile",
    ".bash_login",
    ".bashrc",
    ".zshenv",
    ".zprofile",
    ".zshrc",
    ".zlogin",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".config/fish/config.fish",
    ".config/fish/conf.d",
];

/// The zsh files under `ZDOTDIR`, when it is set.
const ZDOTDIR_FILES: &[&str] = &[".zshenv", ".zprofile", ".zshrc", ".zlogin"];

/// The system-wide startup files (and the directories whose files they
/// read: a directory's time changes when a file is added or removed).
const SYSTEM_FILES: &[&str] = &[
    "/etc/profile",
    "/etc/profile.d",
    "/etc/environment",
    "/etc/bash.bashrc",
    "/etc/bashrc",
    "/etc/zshenv",
    "/etc/zprofile",
    "/etc/zshrc",
    "/etc/zlogin",
    "/etc/zsh/zshenv",
    "/etc/zsh/zprofile",
    "/etc/zsh/zshrc",
    "/etc/zsh/zlogin",
    "/etc/paths",
    "/etc/paths.d",
    "/etc/fish/config.fish",
    "/etc/fish/conf.d",
];

/// Where the login-shell probe's result is kept between runs of a host
/// (see [`login_shell_path_cached`](crate::login_shell_path_cached)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeCache {
    file: PathBuf,
    max_age: Duration,
}

impl ProbeCache {
    /// A cache in `file` (its directory is made when missing), with
    /// [`DEFAULT_CACHE_MAX_AGE`].
    pub fn new(file: impl Into<PathBuf>) -> Self {
        ProbeCache { file: file.into(), max_age: DEFAULT_CACHE_MAX_AGE }
    }

    /// The same cache with entries used for at most `max_age`.
    #[must_use]
    pub fn with_max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// The cache file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// How long an entry is used.
    pub fn max_age(&self) -> Duration {
        self.max_age
    }

    /// `app`'s cache file under the user's cache directory:
    /// `$XDG_CACHE_HOME/<app>/login-shell-path` when `XDG_CACHE_HOME` is set,
    /// else `~/Library/Caches/<app>/...` on macOS and `~/.cache/<app>/...`
    /// elsewhere; `None` when neither is known.
    pub fn default_for(app: &str) -> Option<Self> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let base = if let Some(dir) = var("XDG_CACHE_HOME") {
            dir
        } else if cfg!(target_os = "macos") {
            var("HOME")?.join("Library").join("Caches")
        } else {
            var("HOME")?.join(".cache")
        };
        Some(ProbeCache::new(base.join(app).join("login-shell-path")))
    }

    /// The cached PATH for `key`, when the file holds a fresh entry for
    /// that key at `now`; every miss is logged at debug level with its
    /// reason.
    pub fn load(&self, key: &CacheKey, now: SystemTime) -> Option<OsString> {
        match self.read(key, now) {
            Ok(path) => {
                tracing::debug!(file = %self.file.display(), "login shell PATH from the cache");
                Some(path)
            }
            Err(reason) => {
                tracing::debug!(file = %self.file.display(), reason, "login shell PATH not cached");
                None
            }
        }
    }

    fn read(&self, key: &CacheKey, now: SystemTime) -> Result<OsString, &'static str> {
        let file = std::fs::File::open(&self.file).map_err(|_| "no cache file")?;
        let meta = file.metadata().map_err(|_| "unreadable")?;
        if !meta.is_file() {
            return Err("not a file");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if meta.permissions().mode() & 0o022 != 0 {
                return Err("writable by others");
            }
        }
        let mut bytes = Vec::new();
        file.take(CACHE_FILE_MAX + 1).read_to_end(&mut bytes).map_err(|_| "unreadable")?;
        if bytes.len() as u64 > CACHE_FILE_MAX {
            return Err("too big");
        }
        let (written, path) = parse_entry(&bytes, key).ok_or("corrupt, or for another key")?;
        let written = UNIX_EPOCH + Duration::from_secs(written);
        if written > now + CLOCK_SLACK {
            return Err("written in the future");
        }
        if now.duration_since(written).unwrap_or_default() > self.max_age {
            return Err("expired");
        }
        Ok(path)
    }

    /// Writes `path` as the entry for `key` at `now`: to a temporary file
    /// (mode 0600) renamed over the cache file, so a reader never sees half
    /// an entry. An entry over [`CACHE_FILE_MAX`], or a PATH with a line
    /// break, is not written.
    pub fn store(&self, key: &CacheKey, path: &OsStr, now: SystemTime) -> std::io::Result<()> {
        let path = path.as_encoded_bytes();
        if path.is_empty() || path.contains(&b'\n') {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "an empty PATH or one with a line break is not cached",
            ));
        }
        let written = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let mut entry = Vec::with_capacity(HEADER.len() + key.lines.len() + path.len() + 32);
        entry.extend_from_slice(HEADER);
        entry.extend_from_slice(format!("written={written}\n").as_bytes());
        entry.extend_from_slice(&key.lines);
        entry.push(b'\n');
        entry.extend_from_slice(path);
        entry.push(b'\n');
        if entry.len() as u64 > CACHE_FILE_MAX {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the entry is over the cache file's size limit",
            ));
        }
        let dir =
            self.file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        create_private_dir(dir)?;
        let name = self.file.file_name().unwrap_or(OsStr::new("login-shell-path"));
        let mut temp_name = name.to_owned();
        temp_name.push(format!(".{}.tmp", std::process::id()));
        let temp = dir.join(temp_name);
        let written =
            write_private(&temp, &entry).and_then(|()| std::fs::rename(&temp, &self.file));
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }
}

/// What a cached entry is valid for: the probe's inputs that a host can
/// see without running the shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey {
    /// `name=value` lines, each ending in `\n`.
    lines: Vec<u8>,
}

impl CacheKey {
    /// The key for probing `shell` from this process: its environment
    /// (`HOME`, `ZDOTDIR`, `XDG_CONFIG_HOME`, `PATH`) and the startup files
    /// on disk. `None` when a value holds a line break (not cached).
    pub fn current(shell: &Path) -> Option<Self> {
        let env = |name: &str| std::env::var_os(name);
        Self::new(shell, &env, &|path: &Path| file_stamp(path))
    }

    /// The key from an environment lookup and a file stamp (modification
    /// time and size, `None` when the file is missing); what
    /// [`current`](Self::current) does with the real ones.
    pub fn new(
        shell: &Path,
        env: &dyn Fn(&str) -> Option<OsString>,
        stamp: &dyn Fn(&Path) -> Option<(u128, u64)>,
    ) -> Option<Self> {
        let mut key = KeyWriter::default();
        key.value("shell", shell.as_os_str());
        key.file(shell, stamp);
        let home = env("HOME").filter(|h| !h.is_empty());
        let zdotdir = env("ZDOTDIR").filter(|z| !z.is_empty());
        let config = env("XDG_CONFIG_HOME").filter(|c| !c.is_empty());
        key.value("home", home.as_deref().unwrap_or_default());
        key.value("zdotdir", zdotdir.as_deref().unwrap_or_default());
        key.value("config", config.as_deref().unwrap_or_default());
        key.value("path", env("PATH").as_deref().unwrap_or_default());
        if let Some(home) = &home {
            let home = Path::new(home);
            for file in HOME_FILES {
                key.file(&home.join(file), stamp);
            }
        }
        if let Some(zdotdir) = &zdotdir {
            for file in ZDOTDIR_FILES {
                key.file(&Path::new(zdotdir).join(file), stamp);
            }
        }
        if let Some(config) = &config {
            key.file(&Path::new(config).join("fish/config.fish"), stamp);
            key.file(&Path::new(config).join("fish/conf.d"), stamp);
        }
        for file in SYSTEM_FILES {
            key.file(Path::new(file), stamp);
        }
        (!key.broken).then_some(CacheKey { lines: key.lines })
    }
}

#[derive(Default)]
struct KeyWriter {
    lines: Vec<u8>,
    broken: bool,
}

impl KeyWriter {
    fn value(&mut self, name: &str, value: &OsStr) {
        let value = value.as_encoded_bytes();
        self.broken |= value.contains(&b'\n');
        self.lines.extend_from_slice(name.as_bytes());
        self.lines.push(b'=');
        self.lines.extend_from_slice(value);
        self.lines.push(b'\n');
    }

    fn file(&mut self, path: &Path, stamp: &dyn Fn(&Path) -> Option<(u128, u64)>) {
        let mut value = path.as_os_str().to_owned();
        match stamp(path) {
            Some((mtime, size)) => value.push(format!(" {mtime} {size}")),
            None => value.push(" -"),
        }
        self.value("file", &value);
    }
}

/// A file's modification time (nanoseconds since the epoch) and size;
/// `None` when it is missing.
fn file_stamp(path: &Path) -> Option<(u128, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    Some((mtime, meta.len()))
}

/// The entry's time and PATH, when `bytes` is a well-formed entry for `key`.
fn parse_entry(bytes: &[u8], key: &CacheKey) -> Option<(u64, OsString)> {
    let rest = bytes.strip_prefix(HEADER)?;
    let line_end = rest.iter().position(|&b| b == b'\n')?;
    let written = std::str::from_utf8(rest[..line_end].strip_prefix(b"written=")?).ok()?;
    let written: u64 = written.parse().ok()?;
    let rest = rest[line_end + 1..].strip_prefix(key.lines.as_slice())?;
    let rest = rest.strip_prefix(b"\n")?;
    let path = rest.strip_suffix(b"\n")?;
    if path.is_empty() || path.contains(&b'\n') {
        return None;
    }
    Some((written, os_string(path)))
}

fn os_string(bytes: &[u8]) -> OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        OsStr::from_bytes(bytes).to_owned()
    }
    #[cfg(not(unix))]
    {
        String::from_utf8_lossy(bytes).into_owned().into()
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcp-spawn-env-cache-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// A key over a fake environment and fake file stamps.
    fn key(bashrc: Option<(u128, u64)>) -> CacheKey {
        let env = |name: &str| match name {
            "HOME" => Some(OsString::from("/home/me")),
            "PATH" => Some(OsString::from("/usr/bin:/bin")),
            _ => None,
        };
        let stamp = move |path: &Path| {
            if path == Path::new("/home/me/.bashrc") {
                bashrc
            } else if path == Path::new("/bin/bash") {
                Some((1, 1000))
            } else {
                None
            }
        };
        CacheKey::new(Path::new("/bin/bash"), &env, &stamp).unwrap()
    }

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn hit_after_store() {
        let dir = dir("hit");
        let cache = ProbeCache::new(dir.join("sub/login-shell-path"));
        let k = key(Some((5, 10)));
        assert_eq!(cache.load(&k, at(1000)), None);
        cache.store(&k, OsStr::new("/login/bin:/usr/bin"), at(1000)).unwrap();
        assert_eq!(cache.load(&k, at(1000)), Some(OsString::from("/login/bin:/usr/bin")));
        assert_eq!(cache.load(&k, at(1000 + 3600)), Some(OsString::from("/login/bin:/usr/bin")));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(cache.file()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            let mode = std::fs::metadata(dir.join("sub")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        // No temporary file left behind.
        assert_eq!(std::fs::read_dir(dir.join("sub")).unwrap().count(), 1);
        // A second store replaces the entry.
        cache.store(&k, OsStr::new("/other/bin"), at(2000)).unwrap();
        assert_eq!(cache.load(&k, at(2000)), Some(OsString::from("/other/bin")));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn miss_when_a_startup_file_changed() {
        let dir = dir("changed");
        let cache = ProbeCache::new(dir.join("login-shell-path"));
        cache.store(&key(Some((5, 10))), OsStr::new("/a"), at(1000)).unwrap();
        // Touched, grown, created or removed: each a miss.
        for changed in [Some((6, 10)), Some((5, 11)), None] {
            assert_eq!(cache.load(&key(changed), at(1000)), None, "{changed:?}");
        }
        assert_eq!(cache.load(&key(Some((5, 10))), at(1000)), Some(OsString::from("/a")));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_key_holds_the_environment() {
        let stamp = |_: &Path| None;
        let make = |home: &str, path: &str| {
            let env = |name: &str| match name {
                "HOME" => Some(OsString::from(home)),
                "PATH" => Some(OsString::from(path)),
                _ => None,
            };
            CacheKey::new(Path::new("/bin/zsh"), &env, &stamp)
        };
        let base = make("/home/me", "/usr/bin");
        assert_eq!(base, make("/home/me", "/usr/bin"));
        assert_ne!(base, make("/home/you", "/usr/bin"));
        assert_ne!(base, make("/home/me", "/usr/local/bin:/usr/bin"));
        let other_shell = CacheKey::new(
            Path::new("/bin/bash"),
            &|name: &str| match name {
                "HOME" => Some(OsString::from("/home/me")),
                "PATH" => Some(OsString::from("/usr/bin")),
                _ => None,
            },
            &stamp,
        );
        assert_ne!(base, other_shell);
        // A line break in a value: not cached.
        assert_eq!(make("/home/me\nfile=/x -", "/usr/bin"), None);
    }

    #[test]
    fn expired_and_future_entries_are_misses() {
        let dir = dir("expired");
        let cache =
            ProbeCache::new(dir.join("login-shell-path")).with_max_age(Duration::from_secs(100));
        let k = key(Some((5, 10)));
        cache.store(&k, OsStr::new("/a"), at(1000)).unwrap();
        assert_eq!(cache.load(&k, at(1100)), Some(OsString::from("/a")));
        assert_eq!(cache.load(&k, at(1101)), None);
        // Written more than a minute after "now": the clock went back.
        assert_eq!(cache.load(&k, at(1000 - 61)), None);
        assert_eq!(cache.load(&k, at(1000 - 30)), Some(OsString::from("/a")));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn corrupt_files_are_misses() {
        let dir = dir("corrupt");
        std::fs::create_dir_all(&dir).unwrap();
        let cache = ProbeCache::new(dir.join("login-shell-path"));
        let k = key(Some((5, 10)));
        cache.store(&k, OsStr::new("/a"), at(1000)).unwrap();
        let good = std::fs::read(cache.file()).unwrap();
        let cut = good[..good.len() - 1].to_vec();
        let no_path = good[..good.len() - 3].to_vec();
        let mut other_version = good.clone();
        other_version[HEADER.len() - 2] = b'9';
        let bad_time =
            String::from_utf8(good.clone()).unwrap().replace("written=1000", "written=x");
        for (what, bytes) in [
            ("cut", cut),
            ("no path", no_path),
            ("other version", other_version),
            ("bad time", bad_time.into_bytes()),
            ("garbage", b"\xff\x00garbage".to_vec()),
            ("empty", Vec::new()),
        ] {
            std::fs::write(cache.file(), &bytes).unwrap();
            assert_eq!(cache.load(&k, at(1000)), None, "{what}");
        }
        std::fs::write(cache.file(), &good).unwrap();
        assert_eq!(cache.load(&k, at(1000)), Some(OsString::from("/a")));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn size_bounds() {
        let dir = dir("big");
        std::fs::create_dir_all(&dir).unwrap();
        let cache = ProbeCache::new(dir.join("login-shell-path"));
        let k = key(Some((5, 10)));
        // A file over the limit is not read, even when it starts well.
        cache.store(&k, OsStr::new("/a"), at(1000)).unwrap();
        let mut big = std::fs::read(cache.file()).unwrap();
        big.resize(CACHE_FILE_MAX as usize + 1, b'x');
        std::fs::write(cache.file(), &big).unwrap();
        assert_eq!(cache.load(&k, at(1000)), None);
        // An entry over the limit is not written; the file is left as it was.
        let huge = "/x".repeat(CACHE_FILE_MAX as usize);
        assert!(cache.store(&k, OsStr::new(&huge), at(1000)).is_err());
        assert_eq!(std::fs::metadata(cache.file()).unwrap().len(), CACHE_FILE_MAX + 1);
        // Nor is a PATH with a line break.
        assert!(cache.store(&k, OsStr::new("/a\n/b"), at(1000)).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_may_write_is_ignored() {
        use std::os::unix::fs::PermissionsExt;
        let dir = dir("perm");
        let cache = ProbeCache::new(dir.join("login-shell-path"));
        let k = key(Some((5, 10)));
        cache.store(&k, OsStr::new("/a"), at(1000)).unwrap();
        std::fs::set_permissions(cache.file(), std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(cache.load(&k, at(1000)), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
