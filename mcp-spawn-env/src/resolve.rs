//! Command resolution: from a server's `command` to the file to execute.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::fallback::{FileSystem, RealFileSystem};
use crate::guidance::{Runtime, missing_command_guidance, missing_file_guidance};
use crate::platform::Platform;
use crate::search_path::split_path_list;

/// The extensions Windows tries when `PATHEXT` is unset or empty.
pub const DEFAULT_PATHEXT: [&str; 4] = [".COM", ".EXE", ".BAT", ".CMD"];

/// The rules a command is looked up by: the platform and, on Windows, the
/// executable extensions (`PATHEXT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRules {
    platform: Platform,
    pathext: Vec<String>,
}

impl SearchRules {
    /// Unix rules: a file is executable by its permission bits; no extension
    /// is added.
    #[must_use]
    pub fn unix() -> SearchRules {
        SearchRules { platform: Platform::Unix, pathext: Vec::new() }
    }

    /// Windows rules with the given `PATHEXT` value (see [`parse_pathext`]).
    #[must_use]
    pub fn windows(pathext: Option<&OsStr>) -> SearchRules {
        SearchRules { platform: Platform::Windows, pathext: parse_pathext(pathext) }
    }

    /// The rules of the platform this runs on (on Windows, with this
    /// process's `PATHEXT`).
    #[must_use]
    pub fn current() -> SearchRules {
        match Platform::CURRENT {
            Platform::Unix => SearchRules::unix(),
            Platform::Windows => SearchRules::windows(std::env::var_os("PATHEXT").as_deref()),
        }
    }

    /// The platform the rules are for.
    #[must_use]
    pub fn platform(&self) -> Platform {
        self.platform
    }

    /// The executable extensions tried, in order (empty on Unix).
    #[must_use]
    pub fn pathext(&self) -> &[String] {
        &self.pathext
    }

    /// The files that `base` may stand for, in the order they are tried: on
    /// Unix `base` itself; on Windows `base` itself when its extension is
    /// one of `PATHEXT` (compared without regard to ASCII case), otherwise
    /// `base` followed by each `PATHEXT` extension (`npx` → `npx.COM`,
    /// `npx.EXE`, `npx.BAT`, `npx.CMD`).
    #[must_use]
    pub fn candidates(&self, base: &Path) -> Vec<PathBuf> {
        if self.platform == Platform::Unix || self.has_executable_extension(base.as_os_str()) {
            return vec![base.to_owned()];
        }
        self.pathext
            .iter()
            .map(|extension| {
                let mut name = base.as_os_str().to_owned();
                name.push(extension);
                PathBuf::from(name)
            })
            .collect()
    }

    fn has_executable_extension(&self, path: &OsStr) -> bool {
        let bytes = path.as_encoded_bytes();
        let file_name_start =
            bytes.iter().rposition(|&b| self.platform.is_path_separator(b)).map_or(0, |i| i + 1);
        let file_name = &bytes[file_name_start..];
        let Some(dot) = file_name.iter().rposition(|&b| b == b'.') else {
            return false;
        };
        let extension = &file_name[dot..];
        self.pathext.iter().any(|known| known.as_bytes().eq_ignore_ascii_case(extension))
    }
}

/// The extensions in a Windows `PATHEXT` value, in order: entries trimmed,
/// empty ones dropped, a missing leading `.` added, duplicates (ignoring
/// ASCII case) dropped; [`DEFAULT_PATHEXT`] when that leaves nothing.
#[must_use]
pub fn parse_pathext(value: Option<&OsStr>) -> Vec<String> {
    let mut extensions: Vec<String> = Vec::new();
    let text = value.map(OsStr::to_string_lossy).unwrap_or_default();
    for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let extension = if entry.starts_with('.') { entry.to_owned() } else { format!(".{entry}") };
        if !extensions.iter().any(|known| known.eq_ignore_ascii_case(&extension)) {
            extensions.push(extension);
        }
    }
    if extensions.is_empty() {
        extensions = DEFAULT_PATHEXT.iter().map(|e| (*e).to_owned()).collect();
    }
    extensions
}

/// Whether `command` names a file by path (it contains a path separator,
/// or on Windows starts with a drive prefix) rather than by a name to look
/// up on PATH: `./x`, `../x`, `x/y`, `/abs/x`; on Windows also `.\x`,
/// `x\y`, `C:\x`, `C:x`.
#[must_use]
pub fn is_path_like(command: &OsStr, platform: Platform) -> bool {
    command.as_encoded_bytes().iter().any(|&b| platform.is_path_separator(b))
        || platform.is_anchored(command)
}

/// Why a command could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResolveError {
    /// The command is empty.
    Empty,
    /// No executable file was found for the command.
    #[non_exhaustive]
    NotFound {
        /// The command as configured.
        command: String,
        /// The runtime the command belongs to, when it is a well-known one
        /// (a host may offer a link to [`Runtime::install_url`]).
        runtime: Option<Runtime>,
        /// What to tell the user: what is missing and what to do (see
        /// [`missing_command_guidance`]).
        guidance: String,
        /// How many PATH directories were searched (0 for a path-like
        /// command, which is not searched for).
        searched_dirs: usize,
    },
    /// A path-like command names something that is not an executable file
    /// (a directory, or a file without execute permission).
    #[non_exhaustive]
    NotExecutable {
        /// The command as configured.
        command: String,
        /// The file it names.
        path: PathBuf,
    },
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::Empty => f.write_str("the server's command is empty"),
            ResolveError::NotFound { guidance, searched_dirs, .. } => {
                f.write_str(guidance)?;
                match searched_dirs {
                    0 => Ok(()),
                    1 => f.write_str(" (Searched 1 directory on PATH.)"),
                    n => write!(f, " (Searched {n} directories on PATH.)"),
                }
            }
            ResolveError::NotExecutable { command, path } => write!(
                f,
                "`{command}` names {}, which is not an executable file: point the server's \
                 command at an executable, or make this file executable (chmod +x)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for ResolveError {}

/// `command` without leading `./` (or `.\` on Windows) components, so
/// `./server` relative to `/work` is `/work/server`, not `/work/./server`.
fn strip_current_dir(command: &OsStr, platform: Platform) -> &OsStr {
    let Some(mut text) = command.to_str() else {
        return command;
    };
    while let Some(rest) = text.strip_prefix('.') {
        let Some(&first) = rest.as_bytes().first() else { break };
        if !platform.is_path_separator(first) {
            break;
        }
        text =
            rest.trim_start_matches(|c: char| c.is_ascii() && platform.is_path_separator(c as u8));
    }
    if text.is_empty() { command } else { OsStr::new(text) }
}

/// Resolves `command` to the file to execute, without touching the real
/// file system or environment: the pure core of [`resolve_command`].
///
/// - A path-like command (see [`is_path_like`]) is taken relative to `cwd`
///   (unless anchored) and must be an executable file (on Windows, with the
///   `PATHEXT` rules of [`SearchRules::candidates`]).
/// - Any other command is looked for in each entry of `path` in order
///   (relative entries taken relative to `cwd`, empty ones skipped, never the
///   current directory implicitly); the first executable candidate wins.
///
/// The result is not canonicalised: a symbolic link (nvm's `npx`, a shim)
/// stays a link, so the tool sees the path it expects. It is absolute when
/// `cwd` and the PATH entries are.
pub fn resolve_command_with(
    command: &OsStr,
    cwd: &Path,
    path: &OsStr,
    host_name: &str,
    rules: &SearchRules,
    fs: &impl FileSystem,
) -> Result<PathBuf, ResolveError> {
    if command.is_empty() {
        return Err(ResolveError::Empty);
    }
    let platform = rules.platform();
    let shown = command.to_string_lossy();
    let runtime = Runtime::for_command(&shown);

    if is_path_like(command, platform) {
        let base = platform.join(cwd, strip_current_dir(command, platform));
        let candidates = rules.candidates(&base);
        if let Some(found) = candidates.iter().find(|c| fs.is_executable_file(c)) {
            return Ok(found.clone());
        }
        if fs.exists(&base) || candidates.iter().any(|c| fs.exists(c)) {
            return Err(ResolveError::NotExecutable { command: shown.into_owned(), path: base });
        }
        let guidance = missing_file_guidance(&shown, &base.to_string_lossy(), host_name);
        return Err(ResolveError::NotFound {
            command: shown.into_owned(),
            runtime,
            guidance,
            searched_dirs: 0,
        });
    }

    let dirs = split_path_list(path, platform);
    for dir in &dirs {
        let base = platform.join(platform.join(cwd, dir), command);
        if let Some(found) = rules.candidates(&base).into_iter().find(|c| fs.is_executable_file(c))
        {
            return Ok(found);
        }
    }
    let guidance = missing_command_guidance(&shown, host_name);
    Err(ResolveError::NotFound {
        command: shown.into_owned(),
        runtime,
        guidance,
        searched_dirs: dirs.len(),
    })
}

/// Resolves a server's `command` to the absolute path of the file to
/// execute, before spawning it.
///
/// - A path-like command (`./server`, `../x`, `bin/server`, `/abs/server`;
///   on Windows also with `\` or a drive) is taken relative to `cwd`, the
///   working directory the server will run in, and must be an executable
///   file.
/// - Any other command is searched for in `path`, which should be the PATH
///   the child will get ([`spawn_path`](crate::spawn_path)); on Windows
///   each `PATHEXT` extension is tried (`npx` → `npx.cmd`).
///
/// A missing command gives [`ResolveError::NotFound`], whose message tells
/// the user what to install, naming the host as `host_name`.
///
/// ```
/// # #[cfg(unix)] {
/// use mcp_spawn_env::{resolve_command, ResolveError};
///
/// let sh = resolve_command("sh", "/", "/usr/bin:/bin", "Acme").unwrap();
/// assert!(sh.is_absolute());
///
/// let error = resolve_command("npx", "/", "/nonexistent", "Acme").unwrap_err();
/// assert!(matches!(error, ResolveError::NotFound { .. }));
/// assert!(error.to_string().contains("install Node.js"));
/// # }
/// ```
pub fn resolve_command(
    command: impl AsRef<OsStr>,
    cwd: impl AsRef<Path>,
    path: impl AsRef<OsStr>,
    host_name: &str,
) -> Result<PathBuf, ResolveError> {
    resolve_command_with(
        command.as_ref(),
        cwd.as_ref(),
        path.as_ref(),
        host_name,
        &SearchRules::current(),
        &RealFileSystem,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fallback::tests::FakeFs;

    fn fs(executables: &[&str], files: &[&str], dirs: &[&str]) -> FakeFs {
        FakeFs {
            dirs: dirs.iter().map(PathBuf::from).collect(),
            files: files.iter().map(PathBuf::from).collect(),
            executables: executables.iter().map(PathBuf::from).collect(),
        }
    }

    #[test]
    fn path_like() {
        let cases: &[(Platform, &str, bool)] = &[
            (Platform::Unix, "./x", true),
            (Platform::Unix, "../x", true),
            (Platform::Unix, "x/y", true),
            (Platform::Unix, "/usr/bin/x", true),
            (Platform::Unix, "x", false),
            (Platform::Unix, "npx", false),
            (Platform::Unix, ".", false),
            (Platform::Unix, "x\\y", false),
            (Platform::Unix, "C:x", false),
            (Platform::Windows, ".\\x", true),
            (Platform::Windows, "..\\x", true),
            (Platform::Windows, "x\\y", true),
            (Platform::Windows, "x/y", true),
            (Platform::Windows, "C:\\x", true),
            (Platform::Windows, "C:x", true),
            (Platform::Windows, "\\\\server\\share\\x", true),
            (Platform::Windows, "npx", false),
            (Platform::Windows, "npx.cmd", false),
        ];
        for &(platform, command, expected) in cases {
            assert_eq!(
                is_path_like(OsStr::new(command), platform),
                expected,
                "{platform:?} {command:?}"
            );
        }
    }

    #[test]
    fn current_dir_prefix() {
        let cases: &[(Platform, &str, &str)] = &[
            (Platform::Unix, "./x", "x"),
            (Platform::Unix, ".//./x/y", "x/y"),
            (Platform::Unix, "../x", "../x"),
            (Platform::Unix, ".x/y", ".x/y"),
            (Platform::Unix, "./", "./"),
            (Platform::Unix, "/abs", "/abs"),
            (Platform::Unix, ".\\x", ".\\x"),
            (Platform::Windows, ".\\x", "x"),
            (Platform::Windows, "./.\\x", "x"),
        ];
        for &(platform, command, expected) in cases {
            assert_eq!(
                strip_current_dir(OsStr::new(command), platform),
                OsStr::new(expected),
                "{command:?}"
            );
        }
    }

    #[test]
    fn pathext_parsing() {
        let cases: &[(Option<&str>, &[&str])] = &[
            (None, &[".COM", ".EXE", ".BAT", ".CMD"]),
            (Some(""), &[".COM", ".EXE", ".BAT", ".CMD"]),
            (Some(" ; ;"), &[".COM", ".EXE", ".BAT", ".CMD"]),
            (Some(".EXE;.CMD"), &[".EXE", ".CMD"]),
            (Some(".exe; .Cmd ;;.EXE;PS1"), &[".exe", ".Cmd", ".PS1"]),
            (
                Some(".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC;.CPL"),
                &[
                    ".COM", ".EXE", ".BAT", ".CMD", ".VBS", ".VBE", ".JS", ".JSE", ".WSF", ".WSH",
                    ".MSC", ".CPL",
                ],
            ),
        ];
        for &(value, expected) in cases {
            assert_eq!(parse_pathext(value.map(OsStr::new)), expected, "{value:?}");
        }
    }

    #[test]
    fn candidates() {
        let windows = SearchRules::windows(Some(OsStr::new(".EXE;.CMD")));
        let cases: &[(&SearchRules, &str, &[&str])] = &[
            (&windows, "C:\\bin\\npx", &["C:\\bin\\npx.EXE", "C:\\bin\\npx.CMD"]),
            (&windows, "C:\\bin\\node.exe", &["C:\\bin\\node.exe"]),
            (&windows, "C:\\bin\\npx.Cmd", &["C:\\bin\\npx.Cmd"]),
            (
                &windows,
                "C:\\bin\\python3.12",
                &["C:\\bin\\python3.12.EXE", "C:\\bin\\python3.12.CMD"],
            ),
            (&windows, "C:\\my.dir\\tool", &["C:\\my.dir\\tool.EXE", "C:\\my.dir\\tool.CMD"]),
            (
                &windows,
                "C:\\bin\\server.ps1",
                &["C:\\bin\\server.ps1.EXE", "C:\\bin\\server.ps1.CMD"],
            ),
        ];
        for &(rules, base, expected) in cases {
            let expected: Vec<PathBuf> = expected.iter().map(PathBuf::from).collect();
            assert_eq!(rules.candidates(Path::new(base)), expected, "{base:?}");
        }
        assert_eq!(
            SearchRules::unix().candidates(Path::new("/bin/npx")),
            vec![PathBuf::from("/bin/npx")]
        );
        assert!(SearchRules::unix().pathext().is_empty());
        assert_eq!(SearchRules::windows(None).platform(), Platform::Windows);
    }

    /// One resolution case: command, cwd, PATH, expected path or error kind.
    struct Case {
        command: &'static str,
        cwd: &'static str,
        path: &'static str,
        expected: Result<&'static str, &'static str>,
    }

    fn check(rules: &SearchRules, fs: &FakeFs, cases: &[Case]) {
        for case in cases {
            let got = resolve_command_with(
                OsStr::new(case.command),
                Path::new(case.cwd),
                OsStr::new(case.path),
                "Acme",
                rules,
                fs,
            );
            let got = match &got {
                Ok(path) => Ok(path.to_str().unwrap()),
                Err(ResolveError::Empty) => Err("empty"),
                Err(ResolveError::NotFound { .. }) => Err("not found"),
                Err(ResolveError::NotExecutable { .. }) => Err("not executable"),
            };
            assert_eq!(
                got, case.expected,
                "{} in {} with PATH {}",
                case.command, case.cwd, case.path
            );
        }
    }

    #[test]
    fn resolve_unix() {
        let fs = fs(
            &[
                "/usr/bin/node",
                "/opt/node/bin/node",
                "/work/bin/server",
                "/work/tool",
                "/srv/rel/x",
            ],
            &["/usr/local/bin/node", "/work/data.txt"],
            &["/usr/bin", "/work/dir"],
        );
        let ok = Ok;
        let cases = [
            Case {
                command: "node",
                cwd: "/work",
                path: "/usr/bin:/opt/node/bin",
                expected: ok("/usr/bin/node"),
            },
            Case {
                command: "node",
                cwd: "/work",
                path: "/opt/node/bin:/usr/bin",
                expected: ok("/opt/node/bin/node"),
            },
            // A non-executable file earlier on PATH is skipped.
            Case {
                command: "node",
                cwd: "/work",
                path: "/usr/local/bin:/usr/bin",
                expected: ok("/usr/bin/node"),
            },
            Case {
                command: "node",
                cwd: "/work",
                path: "/usr/local/bin",
                expected: Err("not found"),
            },
            // Empty PATH entries are not the current directory.
            Case { command: "tool", cwd: "/work", path: "::/usr/bin", expected: Err("not found") },
            // Relative PATH entries are relative to cwd.
            Case { command: "x", cwd: "/srv", path: "rel", expected: ok("/srv/rel/x") },
            Case {
                command: "./bin/server",
                cwd: "/work",
                path: "",
                expected: ok("/work/bin/server"),
            },
            Case {
                command: "bin/server",
                cwd: "/work",
                path: "",
                expected: ok("/work/bin/server"),
            },
            Case {
                command: "../tool",
                cwd: "/work/dir",
                path: "",
                expected: ok("/work/dir/../tool"),
            },
            Case { command: "/work/tool", cwd: "/elsewhere", path: "", expected: ok("/work/tool") },
            // Path-like commands are not searched on PATH.
            Case { command: "./node", cwd: "/work", path: "/usr/bin", expected: Err("not found") },
            Case { command: "./data.txt", cwd: "/work", path: "", expected: Err("not executable") },
            Case { command: "./dir", cwd: "/work", path: "", expected: Err("not executable") },
            Case { command: "", cwd: "/work", path: "/usr/bin", expected: Err("empty") },
            Case { command: "npx", cwd: "/work", path: "", expected: Err("not found") },
        ];
        check(&SearchRules::unix(), &fs, &cases);
    }

    #[test]
    fn resolve_windows() {
        let fs = fs(
            &[
                "C:\\Program Files\\nodejs\\npx.CMD",
                "C:\\Program Files\\nodejs\\node.exe",
                "C:\\work\\bin\\server.EXE",
                "C:\\tools\\uvx.EXE",
            ],
            &["C:\\Program Files\\nodejs\\npx", "C:\\work\\readme.txt"],
            &[],
        );
        let rules = SearchRules::windows(Some(OsStr::new(".COM;.EXE;.BAT;.CMD")));
        let ok = Ok;
        let cases = [
            // The extension-less sh script npm ships next to npx.cmd is not taken.
            Case {
                command: "npx",
                cwd: "C:\\work",
                path: "C:\\Windows;C:\\Program Files\\nodejs",
                expected: ok("C:\\Program Files\\nodejs\\npx.CMD"),
            },
            Case {
                command: "node.exe",
                cwd: "C:\\work",
                path: "C:\\Program Files\\nodejs",
                expected: ok("C:\\Program Files\\nodejs\\node.exe"),
            },
            Case {
                command: "uvx",
                cwd: "C:\\work",
                path: "\"C:\\tools\"",
                expected: ok("C:\\tools\\uvx.EXE"),
            },
            Case {
                command: ".\\bin\\server",
                cwd: "C:\\work",
                path: "",
                expected: ok("C:\\work\\bin\\server.EXE"),
            },
            Case {
                command: "bin/server.EXE",
                cwd: "C:\\work",
                path: "",
                expected: ok("C:\\work\\bin/server.EXE"),
            },
            Case {
                command: "C:\\work\\bin\\server",
                cwd: "D:\\",
                path: "",
                expected: ok("C:\\work\\bin\\server.EXE"),
            },
            Case {
                command: ".\\readme.txt",
                cwd: "C:\\work",
                path: "",
                expected: Err("not executable"),
            },
            Case {
                command: "docker",
                cwd: "C:\\work",
                path: "C:\\Program Files\\nodejs",
                expected: Err("not found"),
            },
        ];
        check(&rules, &fs, &cases);
    }

    #[test]
    fn not_found_carries_guidance_and_count() {
        let fs = fs(&[], &[], &[]);
        let error = resolve_command_with(
            OsStr::new("npx"),
            Path::new("/work"),
            OsStr::new("/a:/b::/c"),
            "Acme IDE",
            &SearchRules::unix(),
            &fs,
        )
        .unwrap_err();
        let ResolveError::NotFound { command, runtime, guidance, searched_dirs } = &error else {
            panic!("unexpected {error:?}");
        };
        assert_eq!(command, "npx");
        assert_eq!(*runtime, Some(Runtime::NodeJs));
        assert_eq!(guidance, &missing_command_guidance("npx", "Acme IDE"));
        assert_eq!(*searched_dirs, 3);
        assert_eq!(error.to_string(), format!("{guidance} (Searched 3 directories on PATH.)"));
        assert!(!error.to_string().contains("/a:/b"));
    }

    #[test]
    fn error_messages() {
        let cases: Vec<(ResolveError, String)> = vec![
            (ResolveError::Empty, "the server's command is empty".to_owned()),
            (
                ResolveError::NotFound {
                    command: "x".into(),
                    runtime: None,
                    guidance: "G.".into(),
                    searched_dirs: 1,
                },
                "G. (Searched 1 directory on PATH.)".to_owned(),
            ),
            (
                ResolveError::NotFound {
                    command: "./x".into(),
                    runtime: None,
                    guidance: "G.".into(),
                    searched_dirs: 0,
                },
                "G.".to_owned(),
            ),
            (
                ResolveError::NotExecutable {
                    command: "./data.txt".into(),
                    path: "/work/./data.txt".into(),
                },
                "`./data.txt` names /work/./data.txt, which is not an executable file: point the \
                 server's command at an executable, or make this file executable (chmod +x)"
                    .to_owned(),
            ),
        ];
        for (error, expected) in cases {
            assert_eq!(error.to_string(), expected);
        }
    }
}
