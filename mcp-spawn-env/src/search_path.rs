//! PATH values: splitting, joining, merging with de-duplication, and the
//! PATH a spawned server gets.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::cache::ProbeCache;
use crate::fallback::{RealFileSystem, fallback_dirs};
use crate::platform::Platform;
use crate::probe::login_shell_path_cached;

/// Splits a PATH value into its entries, following `platform`'s rules.
///
/// Empty entries are dropped: on Unix an empty entry means "the current
/// directory", which no spawned server should inherit by accident. On
/// Windows, double quotes group an entry that contains `;` and are removed.
#[must_use]
pub fn split_path_list(value: &OsStr, platform: Platform) -> Vec<PathBuf> {
    let entries = match value.to_str() {
        Some(text) => split_text(text, platform),
        None => split_non_unicode(value, platform),
    };
    entries.into_iter().filter(|entry| !entry.is_empty()).map(PathBuf::from).collect()
}

fn split_text(text: &str, platform: Platform) -> Vec<OsString> {
    let separator = platform.path_list_separator();
    match platform {
        Platform::Unix => text.split(separator).map(OsString::from).collect(),
        Platform::Windows => {
            let mut entries = Vec::new();
            let mut current = String::new();
            let mut quoted = false;
            for c in text.chars() {
                match c {
                    '"' => quoted = !quoted,
                    c if c == separator && !quoted => {
                        entries.push(std::mem::take(&mut current).into())
                    }
                    c => current.push(c),
                }
            }
            entries.push(current.into());
            entries
        }
    }
}

/// A value that is not Unicode: only the real platform can split it exactly.
fn split_non_unicode(value: &OsStr, platform: Platform) -> Vec<OsString> {
    if platform == Platform::CURRENT {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let separator = platform.path_list_separator() as u8;
            return value
                .as_bytes()
                .split(|&b| b == separator)
                .map(|entry| OsStr::from_bytes(entry).to_owned())
                .collect();
        }
        #[cfg(not(unix))]
        {
            return std::env::split_paths(value).map(PathBuf::into_os_string).collect();
        }
    }
    split_text(&value.to_string_lossy(), platform)
}

/// Joins entries into a PATH value, following `platform`'s rules.
///
/// An entry that cannot be represented is left out (and logged at debug
/// level): on Unix one containing `:`, on Windows one containing `"`. On
/// Windows an entry containing `;` is quoted.
#[must_use]
pub fn join_path_list<P: AsRef<Path>>(entries: &[P], platform: Platform) -> OsString {
    let separator = platform.path_list_separator();
    let separator_text = match platform {
        Platform::Unix => ":",
        Platform::Windows => ";",
    };
    let mut joined = OsString::new();
    let mut first = true;
    for entry in entries {
        let entry = entry.as_ref().as_os_str();
        let bytes = entry.as_encoded_bytes();
        let needs_quotes = match platform {
            Platform::Unix if bytes.contains(&(separator as u8)) => {
                tracing::debug!(?entry, "PATH entry contains ':', left out");
                continue;
            }
            Platform::Windows if bytes.contains(&b'"') => {
                tracing::debug!(?entry, "PATH entry contains '\"', left out");
                continue;
            }
            Platform::Unix => false,
            Platform::Windows => bytes.contains(&(separator as u8)),
        };
        if entry.is_empty() {
            continue;
        }
        if !first {
            joined.push(separator_text);
        }
        first = false;
        if needs_quotes {
            joined.push("\"");
            joined.push(entry);
            joined.push("\"");
        } else {
            joined.push(entry);
        }
    }
    joined
}

/// The key two PATH entries are compared by: trailing separators removed,
/// and on Windows `/` read as `\` and ASCII case folded.
fn dedupe_key(entry: &Path, platform: Platform) -> OsString {
    let Some(text) = entry.to_str() else {
        return entry.as_os_str().to_owned();
    };
    let trimmed =
        text.trim_end_matches(|c: char| c.is_ascii() && platform.is_path_separator(c as u8));
    // Keep a root ("/", "C:\") a root.
    let trimmed = if trimmed.is_empty() || trimmed.ends_with(':') { text } else { trimmed };
    match platform {
        Platform::Unix => trimmed.into(),
        Platform::Windows => trimmed.replace('/', "\\").to_ascii_lowercase().into(),
    }
}

/// Concatenates lists of PATH entries in order, keeping the first occurrence
/// of each entry and dropping empty ones.
///
/// Entries that differ only by trailing separators (and, on Windows, by
/// ASCII case or `/` against `\`) count as the same; the first spelling wins.
#[must_use]
pub fn merge_path_lists<I, L, P>(lists: I, platform: Platform) -> Vec<PathBuf>
where
    I: IntoIterator<Item = L>,
    L: IntoIterator<Item = P>,
    P: Into<PathBuf>,
{
    let mut seen = HashSet::new();
    let mut merged = Vec::new();
    for entry in lists.into_iter().flatten() {
        let entry = entry.into();
        if entry.as_os_str().is_empty() {
            continue;
        }
        if seen.insert(dedupe_key(&entry, platform)) {
            merged.push(entry);
        }
    }
    merged
}

/// The PATH value a spawned server gets when its configuration sets none:
/// the login shell's PATH, then the process's own PATH, then the fallback
/// directories, de-duplicated keeping the first occurrence.
///
/// This is the pure core of [`default_spawn_path`].
#[must_use]
pub fn merge_path_sources(
    login_path: Option<&OsStr>,
    process_path: Option<&OsStr>,
    fallbacks: &[PathBuf],
    platform: Platform,
) -> OsString {
    let split =
        |value: Option<&OsStr>| value.map(|v| split_path_list(v, platform)).unwrap_or_default();
    let merged =
        merge_path_lists([split(login_path), split(process_path), fallbacks.to_vec()], platform);
    join_path_list(&merged, platform)
}

/// The PATH a spawned server gets: the one configured for that server when
/// there is one and it is not empty, otherwise the computed one.
fn choose_path(config_path: Option<&str>, computed: impl FnOnce() -> OsString) -> OsString {
    match config_path {
        Some(configured) if !configured.is_empty() => configured.into(),
        _ => computed(),
    }
}

/// The PATH a spawned server gets when its configuration sets none.
///
/// Merges, in this order: the login shell's PATH ([`login_shell_path`](crate::login_shell_path),
/// probed once per process), this process's `PATH`, and the
/// [`fallback_dirs`] that exist. Calls after the first are cheap: the probe
/// is cached; the directory checks are a handful of `stat`s, made at most
/// once per [`FALLBACK_RECHECK`], and the merge is remembered with its
/// inputs.
#[must_use]
pub fn default_spawn_path() -> OsString {
    default_spawn_path_cached(None)
}

/// [`default_spawn_path`], with the login shell's PATH kept between runs in
/// `cache` ([`login_shell_path_cached`]).
#[must_use]
pub fn default_spawn_path_cached(cache: Option<&ProbeCache>) -> OsString {
    default_spawn_path_detail(cache).value
}

/// [`default_spawn_path_cached`], saying also whether this process's own
/// PATH is equivalent to it.
fn default_spawn_path_detail(cache: Option<&ProbeCache>) -> SpawnPath {
    let platform = Platform::CURRENT;
    let env = |name: &str| std::env::var_os(name);
    let process_path = std::env::var_os("PATH");
    let login = login_shell_path_cached(cache);
    let fallbacks = || fallback_dirs(platform, &env, &RealFileSystem);
    LAST_SPAWN_PATH.merged(login, process_path, Instant::now(), fallbacks, platform)
}

/// How long the tool directories found to exist ([`fallback_dirs`]) are
/// trusted before they are looked for again: a burst of server starts
/// looks once (about 25k instructions and a dozen `stat`s each time), and
/// a directory made while the host runs is seen by the starts a second
/// later.
pub const FALLBACK_RECHECK: Duration = Duration::from_secs(1);

/// A PATH for a spawned server ([`spawn_path_detail`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SpawnPath {
    /// The PATH value to give the server.
    pub value: OsString,
    /// This process's PATH, when a search along it finds what a search
    /// along `value` finds (the same directories in the same order; it
    /// differs at most by repeated or empty entries): a child inheriting
    /// that PATH needs none set. `None` otherwise, and for a configured PATH.
    pub equivalent_process_path: Option<OsString>,
}

/// [`spawn_path_cached`], saying also whether this process's PATH (when
/// it is still the one named) serves the child as well: then a spawner
/// can leave the child's PATH inherited, which spares copying the whole
/// environment for it.
#[must_use]
pub fn spawn_path_detail(config_path: Option<&str>, cache: Option<&ProbeCache>) -> SpawnPath {
    match config_path {
        Some(configured) if !configured.is_empty() => {
            SpawnPath { value: configured.into(), equivalent_process_path: None }
        }
        _ => default_spawn_path_detail(cache),
    }
}

/// The last [`merge_path_sources`] of this process, with its inputs: a host
/// starting servers asks for the same merge each time (the login PATH is
/// fixed once known, the process PATH and the fallbacks that exist rarely
/// change), and the merge (splitting, de-duplicating, joining: about 40k
/// instructions for two PATHs of a dozen entries) is most of the work.
/// A login or process PATH that differs, or fallbacks that differ when
/// looked for again (after [`FALLBACK_RECHECK`]), make the merge again.
static LAST_SPAWN_PATH: SpawnPathMemo = SpawnPathMemo(Mutex::new(None));

struct SpawnPathMemo(Mutex<Option<MergeInputs>>);

/// The inputs of one merge and its result.
struct MergeInputs {
    login: Option<&'static OsStr>,
    process: Option<OsString>,
    fallbacks: Vec<PathBuf>,
    /// When the fallbacks were last looked for.
    checked: Instant,
    merged: SpawnPath,
}

impl SpawnPathMemo {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<MergeInputs>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The merge for these PATHs at `now`, `fallbacks` looked for (with no
    /// lock held) only when the remembered ones are older than
    /// [`FALLBACK_RECHECK`] or the PATHs differ.
    fn merged(
        &self,
        login: Option<&'static OsStr>,
        process: Option<OsString>,
        now: Instant,
        fallbacks: impl FnOnce() -> Vec<PathBuf>,
        platform: Platform,
    ) -> SpawnPath {
        let same_paths = |memo: &MergeInputs| memo.login == login && memo.process == process;
        if let Some(memo) = self.lock().as_ref()
            && same_paths(memo)
            && now.saturating_duration_since(memo.checked) < FALLBACK_RECHECK
        {
            return memo.merged.clone();
        }
        let fallbacks = fallbacks();
        let mut last = self.lock();
        if let Some(memo) = last.as_mut()
            && same_paths(memo)
            && memo.fallbacks == fallbacks
        {
            memo.checked = memo.checked.max(now);
            return memo.merged.clone();
        }
        let value = merge_path_sources(login, process.as_deref(), &fallbacks, platform);
        // The process's PATH alone, merged the same way: equal when the
        // login PATH and the fallbacks add nothing and move nothing.
        let own = merge_path_sources(None, process.as_deref(), &[], platform);
        let equivalent_process_path = process.clone().filter(|_| own == value);
        let merged = SpawnPath { value, equivalent_process_path };
        *last =
            Some(MergeInputs { login, process, fallbacks, checked: now, merged: merged.clone() });
        merged
    }
}

/// The PATH to give a spawned server.
///
/// `config_path` is the `PATH` the user configured for that server (its
/// `env` table), if any: a non-empty one wins as it is. Otherwise the result
/// is [`default_spawn_path`]. Pass the result both to the child's
/// environment and to [`resolve_command`](crate::resolve_command), so the
/// command is found where the child would look.
#[must_use]
pub fn spawn_path(config_path: Option<&str>) -> OsString {
    choose_path(config_path, default_spawn_path)
}

/// [`spawn_path`], with the login shell's PATH kept between runs in `cache`
/// ([`login_shell_path_cached`]): what a host that starts often (a
/// command-line tool) uses, so only its first start in a day, or after a
/// startup file changed, runs the login shell.
#[must_use]
pub fn spawn_path_cached(config_path: Option<&str>, cache: Option<&ProbeCache>) -> OsString {
    choose_path(config_path, || default_spawn_path_cached(cache))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lists of PATH entries.
    type Lists<'a> = &'a [&'a [&'a str]];
    /// Login PATH, process PATH, fallbacks, expected PATH.
    type SourcesCase<'a> = (Option<&'a str>, Option<&'a str>, &'a [&'a str], &'a str);

    fn paths(entries: &[&str]) -> Vec<PathBuf> {
        entries.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn split() {
        let cases: &[(Platform, &str, &[&str])] = &[
            (Platform::Unix, "/usr/bin:/bin", &["/usr/bin", "/bin"]),
            (Platform::Unix, "/usr/bin::/bin:", &["/usr/bin", "/bin"]),
            (Platform::Unix, "", &[]),
            (Platform::Unix, "/only", &["/only"]),
            (Platform::Unix, "/a;b:/c", &["/a;b", "/c"]),
            (Platform::Windows, "C:\\a;C:\\b", &["C:\\a", "C:\\b"]),
            (Platform::Windows, "C:\\a;;C:\\b;", &["C:\\a", "C:\\b"]),
            (Platform::Windows, "\"C:\\odd;dir\";C:\\b", &["C:\\odd;dir", "C:\\b"]),
            (Platform::Windows, "\"C:\\Program Files\\nodejs\"", &["C:\\Program Files\\nodejs"]),
            (Platform::Windows, "/usr/bin:/bin", &["/usr/bin:/bin"]),
        ];
        for &(platform, value, expected) in cases {
            assert_eq!(
                split_path_list(OsStr::new(value), platform),
                paths(expected),
                "{platform:?} {value:?}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn split_non_unicode_on_unix() {
        use std::os::unix::ffi::OsStrExt;
        let value = OsStr::from_bytes(b"/a\xff:/b");
        let split = split_path_list(value, Platform::Unix);
        assert_eq!(split.len(), 2);
        assert_eq!(split[0].as_os_str().as_bytes(), b"/a\xff");
        assert_eq!(split[1], PathBuf::from("/b"));
    }

    #[test]
    fn join() {
        let cases: &[(Platform, &[&str], &str)] = &[
            (Platform::Unix, &["/usr/bin", "/bin"], "/usr/bin:/bin"),
            (Platform::Unix, &["/a:b", "/bin"], "/bin"),
            (Platform::Unix, &["", "/bin", ""], "/bin"),
            (Platform::Unix, &[], ""),
            (Platform::Windows, &["C:\\a", "C:\\b"], "C:\\a;C:\\b"),
            (Platform::Windows, &["C:\\odd;dir", "C:\\b"], "\"C:\\odd;dir\";C:\\b"),
            (Platform::Windows, &["C:\\bad\"quote", "C:\\b"], "C:\\b"),
        ];
        for &(platform, entries, expected) in cases {
            assert_eq!(
                join_path_list(&paths(entries), platform),
                OsString::from(expected),
                "{platform:?} {entries:?}"
            );
        }
    }

    #[test]
    fn split_join_round_trip() {
        let cases: &[(Platform, &str)] = &[
            (Platform::Unix, "/usr/bin:/bin:/home/me/.local/bin"),
            (Platform::Windows, "C:\\a;\"C:\\odd;dir\";C:\\Program Files\\nodejs"),
        ];
        for &(platform, value) in cases {
            let split = split_path_list(OsStr::new(value), platform);
            assert_eq!(join_path_list(&split, platform), OsString::from(value));
        }
    }

    #[test]
    fn merge() {
        let cases: &[(Platform, Lists<'_>, &[&str])] = &[
            (
                Platform::Unix,
                &[&["/a", "/b"], &["/b", "/c"], &["/a", "/d"]],
                &["/a", "/b", "/c", "/d"],
            ),
            (Platform::Unix, &[&["/a/", "/b"], &["/a"]], &["/a/", "/b"]),
            (Platform::Unix, &[&["/a//"], &["/a"]], &["/a//"]),
            (Platform::Unix, &[&["/"], &["/"]], &["/"]),
            (Platform::Unix, &[&["/A"], &["/a"]], &["/A", "/a"]),
            (Platform::Unix, &[&[""], &["/a", ""]], &["/a"]),
            (Platform::Unix, &[&[], &[]], &[]),
            (
                Platform::Windows,
                &[&["C:\\Bin"], &["c:/bin/", "C:\\Other"]],
                &["C:\\Bin", "C:\\Other"],
            ),
            (Platform::Windows, &[&["C:\\"], &["c:\\", "C:"]], &["C:\\", "C:"]),
        ];
        for &(platform, lists, expected) in cases {
            let lists = lists.iter().map(|list| paths(list));
            assert_eq!(merge_path_lists(lists, platform), paths(expected), "{platform:?}");
        }
    }

    #[test]
    fn merge_sources_order_and_dedupe() {
        let cases: &[SourcesCase<'_>] = &[
            (
                Some("/home/me/.nvm/versions/node/v20.10.0/bin:/usr/bin:/bin"),
                Some("/usr/bin:/bin:/usr/sbin"),
                &["/home/me/.cargo/bin", "/usr/bin", "/usr/local/bin"],
                "/home/me/.nvm/versions/node/v20.10.0/bin:/usr/bin:/bin:/usr/sbin:/home/me/.cargo/bin:/usr/local/bin",
            ),
            (None, Some("/usr/bin:/bin"), &["/usr/local/bin"], "/usr/bin:/bin:/usr/local/bin"),
            (Some("/opt/x"), None, &[], "/opt/x"),
            (None, None, &["/usr/local/bin"], "/usr/local/bin"),
            (None, None, &[], ""),
            (Some(""), Some("::"), &[], ""),
        ];
        for &(login, process, fallbacks, expected) in cases {
            let merged = merge_path_sources(
                login.map(OsStr::new),
                process.map(OsStr::new),
                &paths(fallbacks),
                Platform::Unix,
            );
            assert_eq!(merged, OsString::from(expected), "{login:?} {process:?}");
        }
    }

    #[test]
    fn merge_sources_windows() {
        let merged = merge_path_sources(
            None,
            Some(OsStr::new("C:\\Windows\\system32;C:\\Users\\me\\.local\\bin")),
            &paths(&["C:\\Users\\me\\.local\\bin\\", "C:\\Users\\me\\.cargo\\bin"]),
            Platform::Windows,
        );
        assert_eq!(
            merged,
            OsString::from(
                "C:\\Windows\\system32;C:\\Users\\me\\.local\\bin;C:\\Users\\me\\.cargo\\bin"
            )
        );
    }

    #[test]
    fn configured_path_wins() {
        let cases: &[(Option<&str>, &str)] = &[
            (Some("/configured/bin"), "/configured/bin"),
            (Some(""), "computed"),
            (None, "computed"),
        ];
        for &(config, expected) in cases {
            assert_eq!(
                choose_path(config, || "computed".into()),
                OsString::from(expected),
                "{config:?}"
            );
        }
    }

    #[test]
    fn configured_path_skips_the_computation() {
        let chosen = choose_path(Some("/configured"), || panic!("the default PATH was computed"));
        assert_eq!(chosen, OsString::from("/configured"));
    }

    #[test]
    fn the_remembered_merge_follows_its_inputs() {
        let memo = SpawnPathMemo(Mutex::new(None));
        let unix = Platform::Unix;
        // Each call a second after the one before: the fallbacks are
        // looked for every time.
        let start = Instant::now();
        let mut at = start;
        let mut merge = |login: Option<&'static str>, process: Option<&str>, fallbacks: &[&str]| {
            at += FALLBACK_RECHECK;
            let process = process.map(OsString::from);
            memo.merged(login.map(OsStr::new), process, at, || paths(fallbacks), unix)
        };
        // Login PATH, process PATH, fallbacks; the merge; whether the
        // process PATH is equivalent. Each answer is that of its own
        // inputs, whichever came before.
        type Case<'a> = (Option<&'static str>, Option<&'a str>, &'a [&'a str], &'a str, bool);
        let cases: &[Case<'_>] = &[
            (Some("/l"), Some("/usr/bin:/bin"), &["/opt/x"], "/l:/usr/bin:/bin:/opt/x", false),
            (Some("/l"), Some("/usr/bin:/bin"), &["/opt/x"], "/l:/usr/bin:/bin:/opt/x", false),
            (Some("/l"), Some("/usr/bin"), &["/opt/x"], "/l:/usr/bin:/opt/x", false),
            (
                Some("/l"),
                Some("/usr/bin"),
                &["/opt/x", "/opt/y"],
                "/l:/usr/bin:/opt/x:/opt/y",
                false,
            ),
            (Some("/l"), Some("/usr/bin"), &[], "/l:/usr/bin", false),
            (Some("/o"), Some("/usr/bin"), &[], "/o:/usr/bin", false),
            (None, Some("/usr/bin"), &[], "/usr/bin", true),
            // Repeated and empty entries aside, the same search.
            (Some("/a:/a:/b"), Some("/a:/a::/b"), &["/b"], "/a:/b", true),
            (Some("/a:/b"), Some("/a:/b:/a"), &["/a/"], "/a:/b", true),
            // The same directories in another order: not the same search.
            (Some("/b:/a"), Some("/a:/b"), &[], "/b:/a", false),
            (None, None, &[], "", false),
            (Some("/l"), Some("/usr/bin:/bin"), &["/opt/x"], "/l:/usr/bin:/bin:/opt/x", false),
        ];
        for &(login, process, fallbacks, expected, equivalent) in cases {
            let got = merge(login, process, fallbacks);
            let what = format!("{login:?} {process:?} {fallbacks:?}");
            assert_eq!(got.value, OsString::from(expected), "{what}");
            let fresh = merge_path_sources(
                login.map(OsStr::new),
                process.map(OsStr::new),
                &paths(fallbacks),
                unix,
            );
            assert_eq!(got.value, fresh, "{what}");
            let own = process.map(OsString::from).filter(|_| equivalent);
            assert_eq!(got.equivalent_process_path, own, "{what}");
            // Asked again with the same inputs: the remembered answer.
            assert_eq!(merge(login, process, fallbacks), got, "{what}");
        }
    }

    #[test]
    fn the_fallbacks_are_looked_for_again_after_the_recheck_time() {
        let memo = SpawnPathMemo(Mutex::new(None));
        let looked = std::cell::Cell::new(0);
        let t0 = Instant::now();
        let ask = |process: &str, at: Instant, fallbacks: &[&str]| {
            let fallbacks = || {
                looked.set(looked.get() + 1);
                paths(fallbacks)
            };
            let process = Some(OsString::from(process));
            memo.merged(Some(OsStr::new("/l")), process, at, fallbacks, Platform::Unix).value
        };
        assert_eq!(ask("/p", t0, &["/x"]), OsString::from("/l:/p:/x"));
        assert_eq!(looked.get(), 1);
        // Within the recheck time: not looked for; a new directory is not
        // seen yet.
        let soon = t0 + FALLBACK_RECHECK / 2;
        assert_eq!(ask("/p", soon, &["/x", "/new"]), OsString::from("/l:/p:/x"));
        assert_eq!(looked.get(), 1);
        // Another process PATH: looked for at once.
        assert_eq!(ask("/q", soon, &["/x", "/new"]), OsString::from("/l:/q:/x:/new"));
        assert_eq!(looked.get(), 2);
        // The recheck time passed: looked for again, and a change is seen.
        let later = soon + FALLBACK_RECHECK;
        assert_eq!(ask("/q", later, &["/y"]), OsString::from("/l:/q:/y"));
        assert_eq!(looked.get(), 3);
        // Unchanged when looked for again: the same answer.
        let much_later = later + FALLBACK_RECHECK;
        assert_eq!(ask("/q", much_later, &["/y"]), OsString::from("/l:/q:/y"));
        assert_eq!(looked.get(), 4);
        assert_eq!(ask("/q", much_later + FALLBACK_RECHECK / 2, &[]), OsString::from("/l:/q:/y"));
        assert_eq!(looked.get(), 4);
    }
}
