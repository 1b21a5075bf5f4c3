//! Trust at the host's edge: consent before a project's configuration
//! runs anything ([`consent`]).

pub(crate) mod consent;

use std::fmt;
use std::path::PathBuf;

use crate::error::ConfigError;

/// Why a consent (or other trust) record could not be used, or why a
/// configuration may not run yet.
#[derive(Debug)]
#[non_exhaustive]
pub enum TrustError {
    /// The configuration itself could not be loaded.
    Config(ConfigError),
    /// The project configuration was not approved as it is now: nothing
    /// of it was spawned or contacted.
    ConsentRequired {
        /// The configuration file (absolute).
        file: PathBuf,
        /// It was approved once, and what it runs changed since.
        changed: bool,
    },
    /// A record file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A record file is not what it should be (the message never quotes
    /// it); nothing was approved or written.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
}

impl fmt::Display for TrustError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrustError::Config(e) => e.fmt(f),
            TrustError::ConsentRequired { file, changed: false } => write!(
                f,
                "the project configuration {} has not been approved: none of its servers was started",
                file.display()
            ),
            TrustError::ConsentRequired { file, changed: true } => write!(
                f,
                "the project configuration {} changed what it runs since it was approved: none of its servers was started",
                file.display()
            ),
            TrustError::Io { path, source } => write!(f, "cannot use {}: {source}", path.display()),
            TrustError::Corrupt { path, message } => {
                write!(f, "{} is not valid: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for TrustError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TrustError::Config(e) => Some(e),
            TrustError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
