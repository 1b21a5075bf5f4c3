//! Trust at the host's edge: consent before a project's configuration
//! runs anything ([`consent`]), approval before a tool is called
//! ([`approval`], enforced by [`gate`]), an administrator's policy
//! ([`managed`]) and the host's settings read from its configuration file
//! ([`settings`]).

pub(crate) mod approval;
pub(crate) mod audit;
pub(crate) mod consent;
pub(crate) mod gate;
pub(crate) mod managed;
pub(crate) mod pattern;
pub(crate) mod records;
pub(crate) mod settings;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::error::ConfigError;
use approval::{ApprovalStore, Approver, CallPolicy, MemoryApprovalStore};
use managed::ManagedPolicy;

/// How a [`Registry`](crate::Registry) decides about calls
/// ([`RegistryOptions::trust`](crate::RegistryOptions::trust)).
#[derive(Clone)]
#[non_exhaustive]
pub struct TrustOptions {
    /// The user's call policy (every call allowed by default).
    pub call_policy: CallPolicy,
    /// Who is asked about a call whose tier is `ask` (none: refused).
    pub approver: Option<Arc<dyn Approver>>,
    /// Where answers given for good are kept ([`MemoryApprovalStore`] by
    /// default).
    pub approval_store: Arc<dyn ApprovalStore>,
    /// The administrator's policy (none by default): servers it blocks are
    /// not started, tiers it pins are never widened.
    pub managed: Arc<ManagedPolicy>,
    /// The audit log of every tool call (none by default).
    pub audit: Option<Arc<audit::AuditLog>>,
}

impl Default for TrustOptions {
    fn default() -> Self {
        TrustOptions {
            call_policy: CallPolicy::default(),
            approver: None,
            approval_store: Arc::new(MemoryApprovalStore::new()),
            managed: Arc::new(ManagedPolicy::default()),
            audit: None,
        }
    }
}

impl fmt::Debug for TrustOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrustOptions")
            .field("call_policy", &self.call_policy)
            .field("approver", &self.approver)
            .field("approval_store", &self.approval_store)
            .field("managed", &self.managed)
            .field("audit", &self.audit)
            .finish()
    }
}

impl TrustOptions {
    pub(crate) fn parts(&self) -> gate::GateParts<'_> {
        gate::GateParts {
            policy: &self.call_policy,
            managed: &self.managed.tools,
            approver: self.approver.as_ref(),
            store: &self.approval_store,
        }
    }
}

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
