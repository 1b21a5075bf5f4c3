//! The directories where version managers and installers put tools, added to
//! PATH when they exist, and the file-system questions this crate asks.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::platform::Platform;
use crate::search_path::merge_path_lists;

/// The questions this crate asks the file system, so the pure functions can
/// be given a fake one in tests. [`RealFileSystem`] answers them for real.
pub trait FileSystem {
    /// Whether `path` is a directory (following symbolic links).
    fn is_dir(&self, path: &Path) -> bool;

    /// The names of the entries of the directory `path`, in any order; empty
    /// when it cannot be read.
    fn dir_entries(&self, path: &Path) -> Vec<OsString>;

    /// Whether `path` is an executable file (following symbolic links):
    /// for [`RealFileSystem`] on Unix, a regular file with any execute
    /// permission bit set; on Windows, where executability is a matter of the
    /// extension, a regular file.
    fn is_executable_file(&self, path: &Path) -> bool;

    /// Whether anything exists at `path` (following symbolic links).
    fn exists(&self, path: &Path) -> bool;
}

impl<F: FileSystem + ?Sized> FileSystem for &F {
    fn is_dir(&self, path: &Path) -> bool {
        (**self).is_dir(path)
    }

    fn dir_entries(&self, path: &Path) -> Vec<OsString> {
        (**self).dir_entries(path)
    }

    fn is_executable_file(&self, path: &Path) -> bool {
        (**self).is_executable_file(path)
    }

    fn exists(&self, path: &Path) -> bool {
        (**self).exists(path)
    }
}

/// The real file system, through `std::fs`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFileSystem;

/// No directory this crate lists holds more than a few dozen entries; the
/// cap only bounds the work on a pathological one.
const MAX_DIR_ENTRIES: usize = 4096;

impl FileSystem for RealFileSystem {
    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn dir_entries(&self, path: &Path) -> Vec<OsString> {
        match std::fs::read_dir(path) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .take(MAX_DIR_ENTRIES)
                .map(|e| e.file_name())
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    fn is_executable_file(&self, path: &Path) -> bool {
        let Ok(metadata) = std::fs::metadata(path) else {
            return false;
        };
        if !metadata.is_file() {
            return false;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            metadata.permissions().mode() & 0o111 != 0
        }
        #[cfg(not(unix))]
        {
            true
        }
    }
}

/// A Node.js version as nvm names its directories (`v20.10.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct NodeVersion {
    major: u64,
    minor: u64,
    patch: u64,
}

impl NodeVersion {
    /// `v20.10.0` or `20.10.0`; anything else (`system`, `v21.0.0-rc.1`,
    /// `.DS_Store`) is not a version.
    fn parse(name: &str) -> Option<NodeVersion> {
        let digits = name.strip_prefix('v').unwrap_or(name);
        let mut parts = digits.split('.').map(|part| {
            if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
                part.parse::<u64>().ok()
            } else {
                None
            }
        });
        let version =
            NodeVersion { major: parts.next()??, minor: parts.next()??, patch: parts.next()?? };
        parts.next().is_none().then_some(version)
    }
}

/// The entry name among `names` with the highest Node.js version, compared
/// numerically (`v18.20.4 < v20.9.0 < v20.10.0`); names that are not
/// versions are ignored.
fn highest_version<'a>(names: impl IntoIterator<Item = &'a OsStr>) -> Option<&'a OsStr> {
    names
        .into_iter()
        .filter_map(|name| Some((NodeVersion::parse(name.to_str()?)?, name)))
        .max_by_key(|&(version, _)| version)
        .map(|(_, name)| name)
}

/// The `bin` directory of the highest Node.js version installed under
/// `versions_dir` (nvm's `versions/node`), among those that have one.
fn highest_node_bin(
    versions_dir: &Path,
    platform: Platform,
    fs: &impl FileSystem,
) -> Option<PathBuf> {
    let names = fs.dir_entries(versions_dir);
    let with_bin: Vec<(&OsStr, PathBuf)> = names
        .iter()
        .map(|name| (name.as_os_str(), platform.join(platform.join(versions_dir, name), "bin")))
        .filter(|(_, bin)| fs.is_dir(bin))
        .collect();
    let highest = highest_version(with_bin.iter().map(|(name, _)| *name))?;
    with_bin.into_iter().find(|(name, _)| *name == highest).map(|(_, bin)| bin)
}

/// The user's home directory, from the environment: `HOME` on Unix;
/// `USERPROFILE`, else `HOMEDRIVE` + `HOMEPATH`, on Windows. A value that is
/// empty or not anchored (see [`Platform::is_anchored`]) is ignored.
#[must_use]
pub fn home_dir(platform: Platform, env: &impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let usable =
        |value: OsString| (!value.is_empty() && platform.is_anchored(&value)).then_some(value);
    let home = match platform {
        Platform::Unix => env("HOME").and_then(usable),
        Platform::Windows => env("USERPROFILE").and_then(usable).or_else(|| {
            let mut joined = env("HOMEDRIVE")?;
            joined.push(env("HOMEPATH")?);
            usable(joined)
        }),
    };
    home.map(PathBuf::from)
}

/// The candidate directories, existing or not, in order.
struct Candidates<'a, E> {
    platform: Platform,
    home: Option<PathBuf>,
    env: &'a E,
    dirs: Vec<PathBuf>,
}

impl<E: Fn(&str) -> Option<OsString>> Candidates<'_, E> {
    /// The environment variable `name` when it holds an anchored path.
    fn var(&self, name: &str) -> Option<PathBuf> {
        (self.env)(name)
            .filter(|value| !value.is_empty() && self.platform.is_anchored(value))
            .map(PathBuf::from)
    }

    /// `~/<parts joined>` when the home directory is known.
    fn in_home(&self, parts: &[&str]) -> Option<PathBuf> {
        let home = self.home.as_ref()?;
        Some(parts.iter().fold(home.clone(), |dir, part| self.platform.join(dir, part)))
    }

    /// `$VAR/<parts>` when `VAR` is set, else `~/<default_in_home>/<parts>`.
    fn var_or_home(&self, var: &str, default_in_home: &[&str], parts: &[&str]) -> Option<PathBuf> {
        let base = self.var(var).or_else(|| self.in_home(default_in_home))?;
        Some(parts.iter().fold(base, |dir, part| self.platform.join(dir, part)))
    }

    fn push(&mut self, dir: Option<PathBuf>) {
        self.dirs.extend(dir);
    }

    fn under(&self, base: Option<PathBuf>, parts: &[&str]) -> Option<PathBuf> {
        Some(parts.iter().fold(base?, |dir, part| self.platform.join(dir, part)))
    }
}

/// The tool directories to add to PATH after the login shell's and the
/// process's own, in this order, keeping only those that exist (per `fs`):
///
/// Unix:
/// - `$XDG_BIN_HOME`, `~/.local/bin` (pipx, uv, many installers)
/// - `${VOLTA_HOME:-~/.volta}/bin`, `${BUN_INSTALL:-~/.bun}/bin`,
///   `${CARGO_HOME:-~/.cargo}/bin`
/// - the highest `${NVM_DIR:-~/.nvm}/versions/node/*/bin`, by numeric version
/// - fnm's default alias: `$FNM_DIR`, `${XDG_DATA_HOME:-~/.local/share}/fnm`,
///   `~/.fnm`, `~/Library/Application Support/fnm`, each `/aliases/default/bin`
/// - asdf's `${ASDF_DATA_DIR:-~/.asdf}/shims`, mise's
///   `${MISE_DATA_DIR:-${XDG_DATA_HOME:-~/.local/share}/mise}/shims`
/// - `/opt/homebrew/bin`, `/usr/local/bin`, `/usr/local/sbin`
///
/// Windows:
/// - uv: `%UV_TOOL_BIN_DIR%`, `%XDG_BIN_HOME%`, `%XDG_DATA_HOME%\..\bin`,
///   `%USERPROFILE%\.local\bin`, `%UV_INSTALL_DIR%`,
///   `%CARGO_HOME%\bin` or `%USERPROFILE%\.cargo\bin` (older uv installers),
///   `%LOCALAPPDATA%\Microsoft\WinGet\Links` (uv from winget)
/// - Node.js: `%APPDATA%\npm`, `%ProgramFiles%\nodejs`
///
/// Environment variables are read through `env`, and only used when they
/// hold an anchored path. The result has no duplicates.
#[must_use]
pub fn fallback_dirs(
    platform: Platform,
    env: &impl Fn(&str) -> Option<OsString>,
    fs: &impl FileSystem,
) -> Vec<PathBuf> {
    let mut c = Candidates { platform, home: home_dir(platform, env), env, dirs: Vec::new() };
    match platform {
        Platform::Unix => {
            c.push(c.var("XDG_BIN_HOME"));
            c.push(c.in_home(&[".local", "bin"]));
            c.push(c.var_or_home("VOLTA_HOME", &[".volta"], &["bin"]));
            c.push(c.var_or_home("BUN_INSTALL", &[".bun"], &["bin"]));
            c.push(c.var_or_home("CARGO_HOME", &[".cargo"], &["bin"]));
            let nvm_versions = c.var_or_home("NVM_DIR", &[".nvm"], &["versions", "node"]);
            c.push(nvm_versions.and_then(|dir| highest_node_bin(&dir, platform, fs)));
            let fnm_default = ["aliases", "default", "bin"];
            c.push(c.under(c.var("FNM_DIR"), &fnm_default));
            let data_home = c.var("XDG_DATA_HOME").or_else(|| c.in_home(&[".local", "share"]));
            c.push(c.under(data_home.clone(), &["fnm", "aliases", "default", "bin"]));
            c.push(c.in_home(&[".fnm", "aliases", "default", "bin"]));
            c.push(c.in_home(&[
                "Library",
                "Application Support",
                "fnm",
                "aliases",
                "default",
                "bin",
            ]));
            c.push(c.var_or_home("ASDF_DATA_DIR", &[".asdf"], &["shims"]));
            let mise = c.var("MISE_DATA_DIR").or_else(|| c.under(data_home, &["mise"]));
            c.push(c.under(mise, &["shims"]));
            for dir in ["/opt/homebrew/bin", "/usr/local/bin", "/usr/local/sbin"] {
                c.push(Some(dir.into()));
            }
        }
        Platform::Windows => {
            c.push(c.var("UV_TOOL_BIN_DIR"));
            c.push(c.var("XDG_BIN_HOME"));
            c.push(c.under(c.var("XDG_DATA_HOME"), &["..", "bin"]));
            c.push(c.in_home(&[".local", "bin"]));
            c.push(c.var("UV_INSTALL_DIR"));
            c.push(c.var_or_home("CARGO_HOME", &[".cargo"], &["bin"]));
            c.push(c.under(c.var("LOCALAPPDATA"), &["Microsoft", "WinGet", "Links"]));
            c.push(c.under(c.var("APPDATA"), &["npm"]));
            c.push(c.under(c.var("ProgramFiles"), &["nodejs"]));
        }
    }
    let existing: Vec<PathBuf> = c.dirs.into_iter().filter(|dir| fs.is_dir(dir)).collect();
    merge_path_lists([existing], platform)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// A file system made of a set of directories, a set of plain files and
    /// a set of executable files. Paths are compared lexically normalised
    /// (`/` and `\` alike, `.` and `..` folded), case-sensitively.
    #[derive(Debug, Default)]
    pub(crate) struct FakeFs {
        pub(crate) dirs: BTreeSet<PathBuf>,
        pub(crate) files: BTreeSet<PathBuf>,
        pub(crate) executables: BTreeSet<PathBuf>,
    }

    /// `C:\a\.\b\..\c` and `C:/a/c` both become `C:/a/c`.
    pub(crate) fn normalise(path: &Path) -> String {
        let text = path.to_str().expect("test paths are Unicode");
        let rooted = text.starts_with(['/', '\\']);
        let mut parts: Vec<&str> = Vec::new();
        for part in text.split(['/', '\\']) {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                part => parts.push(part),
            }
        }
        format!("{}{}", if rooted { "/" } else { "" }, parts.join("/"))
    }

    impl FakeFs {
        pub(crate) fn with_dirs(dirs: &[&str]) -> FakeFs {
            FakeFs { dirs: dirs.iter().map(PathBuf::from).collect(), ..FakeFs::default() }
        }

        fn contains(set: &BTreeSet<PathBuf>, path: &Path) -> bool {
            let wanted = normalise(path);
            set.iter().any(|entry| normalise(entry) == wanted)
        }
    }

    impl FileSystem for FakeFs {
        fn is_dir(&self, path: &Path) -> bool {
            Self::contains(&self.dirs, path)
        }

        fn dir_entries(&self, path: &Path) -> Vec<OsString> {
            let prefix = format!("{}/", normalise(path));
            let mut names = BTreeSet::new();
            for entry in self.dirs.iter().chain(&self.files).chain(&self.executables) {
                if let Some(rest) = normalise(entry).strip_prefix(&prefix) {
                    names.insert(OsString::from(rest.split('/').next().unwrap_or(rest)));
                }
            }
            names.into_iter().collect()
        }

        fn is_executable_file(&self, path: &Path) -> bool {
            Self::contains(&self.executables, path)
        }

        fn exists(&self, path: &Path) -> bool {
            Self::contains(&self.dirs, path)
                || Self::contains(&self.files, path)
                || Self::contains(&self.executables, path)
        }
    }

    /// Environment variables of a test case.
    type Vars<'a> = &'a [(&'a str, &'a str)];
    /// A version as (major, minor, patch).
    type Triple = (u64, u64, u64);

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let vars: BTreeMap<String, OsString> =
            vars.iter().map(|(k, v)| ((*k).to_owned(), OsString::from(v))).collect();
        move |name| vars.get(name).cloned()
    }

    #[test]
    fn node_versions() {
        let cases: &[(&str, Option<Triple>)] = &[
            ("v18.20.4", Some((18, 20, 4))),
            ("v20.10.0", Some((20, 10, 0))),
            ("20.9.0", Some((20, 9, 0))),
            ("v0.12.18", Some((0, 12, 18))),
            ("system", None),
            ("v21.0.0-rc.1", None),
            ("v20.10", None),
            ("v20.10.0.1", None),
            ("v20..0", None),
            ("v+1.2.3", None),
            ("v1.+2.3", None),
            (".DS_Store", None),
            ("", None),
            ("v", None),
        ];
        for &(name, expected) in cases {
            let parsed = NodeVersion::parse(name).map(|v| (v.major, v.minor, v.patch));
            assert_eq!(parsed, expected, "{name:?}");
        }
    }

    #[test]
    fn highest_versions() {
        let cases: &[(&[&str], Option<&str>)] = &[
            (&["v18.20.4", "v20.9.0", "v20.10.0"], Some("v20.10.0")),
            (&["v20.10.0", "v20.9.0", "v18.20.4"], Some("v20.10.0")),
            (&["v9.11.2", "v10.0.0"], Some("v10.0.0")),
            (&["v20.9.0", "system", "default", ".DS_Store"], Some("v20.9.0")),
            (&["system", "lts"], None),
            (&[], None),
        ];
        for &(names, expected) in cases {
            let names: Vec<&OsStr> = names.iter().map(OsStr::new).collect();
            assert_eq!(
                highest_version(names.iter().copied()),
                expected.map(OsStr::new),
                "{names:?}"
            );
        }
    }

    #[test]
    fn highest_node_bin_needs_a_bin_dir() {
        let fs = FakeFs::with_dirs(&[
            "/h/.nvm/versions/node/v18.20.4/bin",
            "/h/.nvm/versions/node/v20.9.0/bin",
            "/h/.nvm/versions/node/v22.1.0",
            "/h/.nvm/versions/node/zz-not-a-version/bin",
        ]);
        let bin = highest_node_bin(Path::new("/h/.nvm/versions/node"), Platform::Unix, &fs);
        assert_eq!(bin, Some(PathBuf::from("/h/.nvm/versions/node/v20.9.0/bin")));
        assert_eq!(highest_node_bin(Path::new("/nowhere"), Platform::Unix, &fs), None);
    }

    #[test]
    fn home_dirs() {
        let cases: &[(Platform, Vars<'_>, Option<&str>)] = &[
            (Platform::Unix, &[("HOME", "/home/me")], Some("/home/me")),
            (Platform::Unix, &[("HOME", "")], None),
            (Platform::Unix, &[("HOME", "relative")], None),
            (Platform::Unix, &[], None),
            (Platform::Unix, &[("USERPROFILE", "C:\\Users\\me")], None),
            (Platform::Windows, &[("USERPROFILE", "C:\\Users\\me")], Some("C:\\Users\\me")),
            (
                Platform::Windows,
                &[("HOMEDRIVE", "D:"), ("HOMEPATH", "\\Users\\me")],
                Some("D:\\Users\\me"),
            ),
            (Platform::Windows, &[("HOMEDRIVE", "D:")], None),
            (Platform::Windows, &[("HOME", "/home/me")], None),
        ];
        for &(platform, vars, expected) in cases {
            assert_eq!(
                home_dir(platform, &env_of(vars)),
                expected.map(PathBuf::from),
                "{platform:?} {vars:?}"
            );
        }
    }

    #[test]
    fn unix_fallbacks_in_order_only_existing() {
        let fs = FakeFs::with_dirs(&[
            "/h/.local/bin",
            "/h/.volta/bin",
            "/h/.bun/bin",
            "/h/.cargo/bin",
            "/h/.nvm/versions/node/v18.20.4/bin",
            "/h/.nvm/versions/node/v20.10.0/bin",
            "/h/.nvm/versions/node/v20.9.0/bin",
            "/h/.local/share/fnm/aliases/default/bin",
            "/h/.asdf/shims",
            "/h/.local/share/mise/shims",
            "/opt/homebrew/bin",
            "/usr/local/bin",
            "/usr/local/sbin",
        ]);
        let dirs = fallback_dirs(Platform::Unix, &env_of(&[("HOME", "/h")]), &fs);
        let expected: Vec<PathBuf> = [
            "/h/.local/bin",
            "/h/.volta/bin",
            "/h/.bun/bin",
            "/h/.cargo/bin",
            "/h/.nvm/versions/node/v20.10.0/bin",
            "/h/.local/share/fnm/aliases/default/bin",
            "/h/.asdf/shims",
            "/h/.local/share/mise/shims",
            "/opt/homebrew/bin",
            "/usr/local/bin",
            "/usr/local/sbin",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(dirs, expected);
    }

    #[test]
    fn unix_fallbacks_cases() {
        let cases: &[(&[&str], Vars<'_>, &[&str])] = &[
            // Nothing exists: nothing is added.
            (&[], &[("HOME", "/h")], &[]),
            // Without a home, only the system directories.
            (&["/h/.local/bin", "/usr/local/bin"], &[], &["/usr/local/bin"]),
            // Variables move the version managers.
            (
                &[
                    "/v/bin",
                    "/c/bin",
                    "/n/versions/node/v20.0.0/bin",
                    "/f/aliases/default/bin",
                    "/a/shims",
                    "/m/shims",
                    "/b/bin",
                ],
                &[
                    ("HOME", "/h"),
                    ("VOLTA_HOME", "/v"),
                    ("CARGO_HOME", "/c"),
                    ("NVM_DIR", "/n"),
                    ("FNM_DIR", "/f"),
                    ("ASDF_DATA_DIR", "/a"),
                    ("MISE_DATA_DIR", "/m"),
                    ("BUN_INSTALL", "/b"),
                ],
                &[
                    "/v/bin",
                    "/b/bin",
                    "/c/bin",
                    "/n/versions/node/v20.0.0/bin",
                    "/f/aliases/default/bin",
                    "/a/shims",
                    "/m/shims",
                ],
            ),
            // A relative variable is ignored; the default location is used.
            (&["/h/.cargo/bin"], &[("HOME", "/h"), ("CARGO_HOME", "rel")], &["/h/.cargo/bin"]),
            // XDG data home moves fnm and mise; XDG_BIN_HOME comes first.
            (
                &[
                    "/xb",
                    "/xd/fnm/aliases/default/bin",
                    "/xd/mise/shims",
                    "/h/.fnm/aliases/default/bin",
                ],
                &[("HOME", "/h"), ("XDG_BIN_HOME", "/xb"), ("XDG_DATA_HOME", "/xd")],
                &[
                    "/xb",
                    "/xd/fnm/aliases/default/bin",
                    "/h/.fnm/aliases/default/bin",
                    "/xd/mise/shims",
                ],
            ),
            // macOS fnm location.
            (
                &["/h/Library/Application Support/fnm/aliases/default/bin"],
                &[("HOME", "/h")],
                &["/h/Library/Application Support/fnm/aliases/default/bin"],
            ),
            // The same directory reached twice is listed once.
            (
                &["/h/.local/bin"],
                &[("HOME", "/h"), ("XDG_BIN_HOME", "/h/.local/bin/")],
                &["/h/.local/bin"],
            ),
        ];
        for &(dirs, vars, expected) in cases {
            let fs = FakeFs::with_dirs(dirs);
            let found = fallback_dirs(Platform::Unix, &env_of(vars), &fs);
            let expected: Vec<PathBuf> = expected.iter().map(PathBuf::from).collect();
            assert_eq!(found, expected, "{vars:?}");
        }
    }

    #[test]
    fn windows_fallbacks() {
        let fs = FakeFs::with_dirs(&[
            "D:\\uvtools",
            "C:\\Users\\me\\.local\\bin",
            "C:\\Users\\me\\.cargo\\bin",
            "C:\\Users\\me\\AppData\\Local\\Microsoft\\WinGet\\Links",
            "C:\\Users\\me\\AppData\\Roaming\\npm",
            "C:\\Program Files\\nodejs",
            "/usr/local/bin",
        ]);
        let env = env_of(&[
            ("USERPROFILE", "C:\\Users\\me"),
            ("UV_TOOL_BIN_DIR", "D:\\uvtools"),
            ("LOCALAPPDATA", "C:\\Users\\me\\AppData\\Local"),
            ("APPDATA", "C:\\Users\\me\\AppData\\Roaming"),
            ("ProgramFiles", "C:\\Program Files"),
        ]);
        let expected: Vec<PathBuf> = [
            "D:\\uvtools",
            "C:\\Users\\me\\.local\\bin",
            "C:\\Users\\me\\.cargo\\bin",
            "C:\\Users\\me\\AppData\\Local\\Microsoft\\WinGet\\Links",
            "C:\\Users\\me\\AppData\\Roaming\\npm",
            "C:\\Program Files\\nodejs",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(fallback_dirs(Platform::Windows, &env, &fs), expected);
    }

    #[test]
    fn windows_xdg_data_home_sibling_bin() {
        let fs = FakeFs::with_dirs(&["E:\\data\\..\\bin"]);
        let env = env_of(&[("XDG_DATA_HOME", "E:\\data")]);
        assert_eq!(
            fallback_dirs(Platform::Windows, &env, &fs),
            vec![PathBuf::from("E:\\data\\..\\bin")]
        );
    }

    #[cfg(unix)]
    #[test]
    fn real_file_system_answers() {
        let fs = RealFileSystem;
        assert!(fs.is_dir(Path::new("/")));
        assert!(!fs.is_dir(Path::new("/definitely/not/here")));
        assert!(fs.is_executable_file(Path::new("/bin/sh")));
        assert!(!fs.is_executable_file(Path::new("/")));
        assert!(fs.dir_entries(Path::new("/definitely/not/here")).is_empty());
    }
}
