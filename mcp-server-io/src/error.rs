//! The crate's error.

use std::fmt;

/// What can fail when a server is set up.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A certificate chain or private key that rustls refuses.
    Tls(String),
    /// An I/O failure (binding the listener, reading the input).
    Io(std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Tls(reason) => write!(f, "the TLS certificate or key was refused: {reason}"),
            Error::Io(e) => write!(f, "I/O error: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Tls(_) => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Io(e) => e,
            tls @ Error::Tls(_) => std::io::Error::new(std::io::ErrorKind::InvalidInput, tls),
        }
    }
}
