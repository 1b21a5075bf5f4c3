//! Logging: `logging/setLevel` and the levels of `notifications/message`.
//!
//! Deprecated by the protocol (SEP-2577, from 2026-07-28): kept working
//! in every revision that has it; the stateless era carries the level in
//! each request's `_meta` instead of `logging/setLevel`.

use serde::{Deserialize, Serialize};

use crate::types::{JsonObject, Meta};

open_string_enum! {
    /// The severity of a log message (the syslog severities of RFC 5424).
    pub enum LoggingLevel {
        /// `debug`.
        Debug => "debug",
        /// `info`.
        Info => "info",
        /// `notice`.
        Notice => "notice",
        /// `warning`.
        Warning => "warning",
        /// `error`.
        Error => "error",
        /// `critical`.
        Critical => "critical",
        /// `alert`.
        Alert => "alert",
        /// `emergency`.
        Emergency => "emergency",
    }
}

impl LoggingLevel {
    /// The severity rank: 0 for `debug` up to 7 for `emergency`; `None` for
    /// a level this crate does not know.
    pub fn severity(&self) -> Option<u8> {
        Some(match self {
            LoggingLevel::Debug => 0,
            LoggingLevel::Info => 1,
            LoggingLevel::Notice => 2,
            LoggingLevel::Warning => 3,
            LoggingLevel::Error => 4,
            LoggingLevel::Critical => 5,
            LoggingLevel::Alert => 6,
            LoggingLevel::Emergency => 7,
            LoggingLevel::Other(_) => return None,
        })
    }
}

/// Parameters of `logging/setLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetLevelRequestParams {
    /// The lowest level the client wants to receive.
    pub level: LoggingLevel,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}
