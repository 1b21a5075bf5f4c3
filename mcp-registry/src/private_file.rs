//! The one way the registry writes and reads its own small files (tool
//! pins, consent records): written whole through a temporary file beside
//! the target and a rename, readable by the owner only on Unix, read back
//! under a size cap.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The largest file of the registry's own read back (1 MiB).
pub(crate) const MAX_FILE: u64 = 1024 * 1024;

/// Distinguishes the temporary files of concurrent writers in one process.
static NEXT_TMP: AtomicU64 = AtomicU64::new(0);

/// A per-user base directory: `$<xdg>` when set (on every platform, so
/// tests and sandboxes can redirect it), else `%<windows>%` on Windows,
/// `~/Library/Application Support` on macOS and `~/<unix>` elsewhere.
/// `None` when neither the variable nor a home directory is known.
pub(crate) fn user_base_dir(xdg: &str, windows: &str, unix: &str) -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var(xdg) {
        Some(dir)
    } else if cfg!(windows) {
        var(windows)
    } else if cfg!(target_os = "macos") {
        Some(var("HOME")?.join("Library").join("Application Support"))
    } else {
        Some(var("HOME")?.join(unix))
    }
}

/// Replaces `path` with `bytes` atomically: a new temporary file in the
/// same folder (`0600` on Unix, never an existing file), synced, renamed
/// over the target, then the folder synced (best effort). A missing folder
/// is created (`0700` on Unix). A crash leaves the old file or the new
/// one, never half of either.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt as _;
            builder.mode(0o700);
        }
        builder.create(dir)?;
    }
    let mut tmp_name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    tmp_name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        NEXT_TMP.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp = path.with_file_name(tmp_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let written = (|| {
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    #[cfg(unix)]
    if let Some(dir) = dir
        && let Err(e) = std::fs::File::open(dir).and_then(|d| d.sync_all())
    {
        tracing::debug!(error = %e, "a folder could not be synced after a rename");
    }
    Ok(())
}

/// The text of `path`, `None` when it does not exist; an error when it
/// cannot be read, is not UTF-8 or is larger than [`MAX_FILE`].
pub(crate) fn read_capped(path: &Path) -> std::io::Result<Option<String>> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {MAX_FILE} bytes"),
        ));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_whole_private_and_read_back() {
        let dir = std::env::temp_dir().join(format!("mcp-registry-pf-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sub").join("f.json");
        assert!(read_capped(&path).unwrap().is_none());
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(read_capped(&path).unwrap().as_deref(), Some("two"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        // Nothing but the file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.join("sub")).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
        std::fs::write(&path, vec![b'x'; MAX_FILE as usize + 1]).unwrap();
        assert!(read_capped(&path).is_err());
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(read_capped(&path).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
