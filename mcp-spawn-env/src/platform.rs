//! The platform rules the pure functions follow, as a value.
//!
//! Every pure function of this crate takes a [`Platform`] instead of asking
//! `cfg!` itself, so the Windows rules (`;` between PATH entries, `\` in
//! paths, `PATHEXT`) are unit-tested on Linux and the other way round.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// The family of rules a PATH value and a command name follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Platform {
    /// Linux, macOS, the BSDs: `:` between PATH entries, `/` in paths,
    /// executables marked by permission bits.
    Unix,
    /// Windows: `;` between PATH entries (which may be quoted), `\` or `/`
    /// in paths, drive prefixes, executables recognised by `PATHEXT`.
    Windows,
}

impl Platform {
    /// The platform this crate was compiled for.
    pub const CURRENT: Platform = if cfg!(windows) { Platform::Windows } else { Platform::Unix };

    /// The character between two entries of a PATH value.
    #[must_use]
    pub const fn path_list_separator(self) -> char {
        match self {
            Platform::Unix => ':',
            Platform::Windows => ';',
        }
    }

    /// The separator [`join`](Self::join) inserts between two path parts.
    #[must_use]
    pub const fn path_separator(self) -> char {
        match self {
            Platform::Unix => '/',
            Platform::Windows => '\\',
        }
    }

    /// Whether `byte` separates the components of a path.
    #[must_use]
    pub const fn is_path_separator(self, byte: u8) -> bool {
        match self {
            Platform::Unix => byte == b'/',
            Platform::Windows => byte == b'/' || byte == b'\\',
        }
    }

    /// Whether `path` is anchored: it names the same file whatever the
    /// current directory is (Unix: starts with `/`; Windows: starts with a
    /// separator or a drive prefix such as `C:`), so it is never joined to a
    /// working directory.
    #[must_use]
    pub fn is_anchored(self, path: &OsStr) -> bool {
        let bytes = path.as_encoded_bytes();
        match bytes.first() {
            None => false,
            Some(&first) if self.is_path_separator(first) => true,
            Some(&first) => {
                self == Platform::Windows
                    && first.is_ascii_alphabetic()
                    && bytes.get(1) == Some(&b':')
            }
        }
    }

    /// `base` followed by `rest`, with one separator of this platform between
    /// them; `rest` alone when it is [anchored](Self::is_anchored).
    ///
    /// Unlike [`Path::join`](std::path::Path::join) this follows `self`, not
    /// the platform the code runs on, so Windows joins are testable on Linux.
    #[must_use]
    pub fn join(self, base: impl AsRef<OsStr>, rest: impl AsRef<OsStr>) -> PathBuf {
        let (base, rest) = (base.as_ref(), rest.as_ref());
        if self.is_anchored(rest) || base.is_empty() {
            return PathBuf::from(rest);
        }
        let mut joined = OsString::with_capacity(base.len() + 1 + rest.len());
        joined.push(base);
        let ends_with_separator =
            base.as_encoded_bytes().last().is_some_and(|&b| self.is_path_separator(b));
        if !ends_with_separator {
            let mut buf = [0; 4];
            joined.push(self.path_separator().encode_utf8(&mut buf) as &str);
        }
        joined.push(rest);
        PathBuf::from(joined)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchored_paths() {
        let cases: &[(Platform, &str, bool)] = &[
            (Platform::Unix, "/usr/bin/node", true),
            (Platform::Unix, "./node", false),
            (Platform::Unix, "node", false),
            (Platform::Unix, "", false),
            (Platform::Unix, "C:\\node.exe", false),
            (Platform::Unix, "\\node", false),
            (Platform::Windows, "C:\\node.exe", true),
            (Platform::Windows, "c:/node.exe", true),
            (Platform::Windows, "C:node.exe", true),
            (Platform::Windows, "\\\\server\\share\\node.exe", true),
            (Platform::Windows, "\\node.exe", true),
            (Platform::Windows, "/node.exe", true),
            (Platform::Windows, ".\\node.exe", false),
            (Platform::Windows, "node", false),
            (Platform::Windows, "1:x", false),
        ];
        for &(platform, path, expected) in cases {
            assert_eq!(platform.is_anchored(OsStr::new(path)), expected, "{platform:?} {path:?}");
        }
    }

    #[test]
    fn joins() {
        let cases: &[(Platform, &str, &str, &str)] = &[
            (Platform::Unix, "/work", "./x", "/work/./x"),
            (Platform::Unix, "/work/", "x/y", "/work/x/y"),
            (Platform::Unix, "/work", "/bin/x", "/bin/x"),
            (Platform::Unix, "", "x", "x"),
            (Platform::Windows, "C:\\work", ".\\x", "C:\\work\\.\\x"),
            (Platform::Windows, "C:\\work\\", "x", "C:\\work\\x"),
            (Platform::Windows, "C:/work/", "x", "C:/work/x"),
            (Platform::Windows, "C:\\work", "D:\\x", "D:\\x"),
        ];
        for &(platform, base, rest, expected) in cases {
            assert_eq!(
                platform.join(base, rest),
                PathBuf::from(expected),
                "{platform:?} {base:?} {rest:?}"
            );
        }
    }

    #[test]
    fn separators() {
        assert_eq!(Platform::Unix.path_list_separator(), ':');
        assert_eq!(Platform::Windows.path_list_separator(), ';');
        assert!(Platform::Windows.is_path_separator(b'\\'));
        assert!(!Platform::Unix.is_path_separator(b'\\'));
        assert_eq!(
            Platform::CURRENT,
            if cfg!(windows) { Platform::Windows } else { Platform::Unix }
        );
    }
}
