//! How the client presents itself ([`CoreConfig`]) and the stateless era's
//! `_meta` members every request carries.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::types::{
    CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, ClientCapabilities, Implementation,
    LOG_LEVEL_META_KEY, LoggingLevel, PROTOCOL_VERSION_META_KEY,
};
use crate::version::ProtocolVersion;

/// The default time a request may wait for its answer.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How the client presents itself and what it accepts.
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// `clientInfo` of the `initialize` request.
    pub client_info: Implementation,
    /// The capabilities declared in `initialize`. A server request that needs
    /// a capability not declared here (`roots`, `sampling`, `elicitation`) is
    /// answered with -32601 by the core itself.
    pub capabilities: ClientCapabilities,
    /// The version offered in `initialize` (the newest by default).
    pub protocol_version: ProtocolVersion,
    /// The versions accepted in the server's answer.
    pub supported_versions: Vec<ProtocolVersion>,
    /// The default time a request may wait for its answer.
    pub request_timeout: Duration,
    /// Stateless era: the least level of the log messages the server may
    /// send for each request (`_meta` `io.modelcontextprotocol/logLevel`);
    /// `None` asks for none.
    pub log_level: Option<LoggingLevel>,
}

impl CoreConfig {
    /// The version `initialize` offers: the preferred version when it is of
    /// the handshake era, else the newest handshake-era version accepted.
    pub fn legacy_offer(&self) -> ProtocolVersion {
        if !self.protocol_version.is_modern() {
            return self.protocol_version;
        }
        self.supported_versions
            .iter()
            .copied()
            .filter(|v| !v.is_modern())
            .max()
            .unwrap_or(ProtocolVersion::LATEST_LEGACY)
    }

    /// A configuration with the given identity and the defaults: every
    /// supported version accepted, the latest offered, no capabilities, 30 s
    /// timeout.
    pub fn new(client_info: Implementation) -> Self {
        CoreConfig {
            client_info,
            capabilities: ClientCapabilities::default(),
            protocol_version: ProtocolVersion::LATEST,
            supported_versions: ProtocolVersion::SUPPORTED.to_vec(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            log_level: None,
        }
    }

    /// The `_meta` members every stateless-era request carries for
    /// `version`: the version, the capabilities, `clientInfo` and the log
    /// level when set.
    pub fn modern_meta(&self, version: ProtocolVersion) -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(PROTOCOL_VERSION_META_KEY.into(), Value::from(version.as_str()));
        meta.insert(
            CLIENT_CAPABILITIES_META_KEY.into(),
            serde_json::to_value(&self.capabilities).unwrap_or_else(|_| Value::Object(Map::new())),
        );
        if let Ok(info) = serde_json::to_value(&self.client_info) {
            meta.insert(CLIENT_INFO_META_KEY.into(), info);
        }
        if let Some(level) = &self.log_level
            && let Ok(level) = serde_json::to_value(level)
        {
            meta.insert(LOG_LEVEL_META_KEY.into(), level);
        }
        meta
    }

    /// [`modern_meta`](Self::modern_meta) as JSON text, encoded from the
    /// configuration without building the map.
    pub fn modern_meta_text(&self, version: ProtocolVersion) -> Vec<u8> {
        self.write_modern_meta(version)
            .or_else(|_| serde_json::to_vec(&self.modern_meta(version)))
            .unwrap_or_else(|_| b"{}".to_vec())
    }

    /// The members in a fixed order (the version, the capabilities,
    /// `clientInfo`, the log level when set), their names (constants with
    /// nothing to escape) copied as they are, their values encoded.
    fn write_modern_meta(&self, version: ProtocolVersion) -> serde_json::Result<Vec<u8>> {
        fn member<T: Serialize + ?Sized>(
            text: &mut Vec<u8>,
            first: bool,
            name: &str,
            value: &T,
        ) -> serde_json::Result<()> {
            text.extend_from_slice(if first { b"{\"" } else { b",\"" });
            text.extend_from_slice(name.as_bytes());
            text.extend_from_slice(b"\":");
            serde_json::to_writer(&mut *text, value)
        }
        // Room for the usual text: its buffer does not grow on the way.
        let mut text = Vec::with_capacity(256);
        member(&mut text, true, PROTOCOL_VERSION_META_KEY, version.as_str())?;
        member(&mut text, false, CLIENT_CAPABILITIES_META_KEY, &self.capabilities)?;
        member(&mut text, false, CLIENT_INFO_META_KEY, &self.client_info)?;
        if let Some(level) = &self.log_level {
            member(&mut text, false, LOG_LEVEL_META_KEY, level)?;
        }
        text.push(b'}');
        Ok(text)
    }
}

/// The stateless era's `_meta` members of every request: made as JSON
/// text (spliced into encoded requests), and as a map only when a request
/// made by value first needs one.
pub(super) struct ModernMeta {
    pub(super) text: Box<[u8]>,
    map: std::sync::OnceLock<Map<String, Value>>,
}

impl ModernMeta {
    pub(super) fn new(config: &CoreConfig, version: ProtocolVersion) -> ModernMeta {
        let text = config.modern_meta_text(version).into_boxed_slice();
        ModernMeta { text, map: std::sync::OnceLock::new() }
    }

    /// The members as a map (made from the text once).
    pub(super) fn map(&self) -> &Map<String, Value> {
        self.map.get_or_init(|| serde_json::from_slice(&self.text).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Icon, RootsCapability};

    /// The text as serde derives it (what the hand-written one replaced).
    #[derive(Serialize)]
    struct DerivedMeta<'a> {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
        version: &'a str,
        #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
        capabilities: &'a ClientCapabilities,
        #[serde(rename = "io.modelcontextprotocol/clientInfo")]
        client_info: &'a Implementation,
        #[serde(
            rename = "io.modelcontextprotocol/logLevel",
            skip_serializing_if = "Option::is_none"
        )]
        log_level: Option<&'a LoggingLevel>,
    }

    fn configs() -> Vec<CoreConfig> {
        let plain = CoreConfig::new(Implementation::new("bench", "0.1.0"));
        let mut full = plain.clone();
        full.client_info = Implementation {
            name: "a \"quoted\" \\ name\u{1}\u{e9}".into(),
            title: Some("Title / with </script>".into()),
            description: Some("line\nbreak\ttab".into()),
            icons: Some(vec![Icon { src: "data:x".into(), ..Default::default() }]),
            ..Implementation::new("", "v\u{2028}")
        };
        full.client_info.extra.insert("x-extra".into(), serde_json::json!({"k": [1, 2.5, null]}));
        full.capabilities = ClientCapabilities {
            roots: Some(RootsCapability { list_changed: Some(true), ..Default::default() }),
            experimental: Some(serde_json::json!({"e": {}}).as_object().cloned().unwrap()),
            ..Default::default()
        };
        full.capabilities.extra.insert("unknown\"cap".into(), serde_json::json!(true));
        let mut configs = vec![plain.clone(), full.clone()];
        for level in ["debug", "emergency", "a \"new\" level"] {
            for base in [&plain, &full] {
                let mut c = base.clone();
                c.log_level = Some(LoggingLevel::from(level));
                configs.push(c);
            }
        }
        configs
    }

    #[test]
    fn the_meta_text_is_the_derived_encoding_byte_for_byte() {
        for config in configs() {
            for &version in ProtocolVersion::SUPPORTED {
                let derived = serde_json::to_vec(&DerivedMeta {
                    version: version.as_str(),
                    capabilities: &config.capabilities,
                    client_info: &config.client_info,
                    log_level: config.log_level.as_ref(),
                })
                .unwrap();
                let text = config.modern_meta_text(version);
                assert_eq!(
                    String::from_utf8_lossy(&text),
                    String::from_utf8_lossy(&derived),
                    "{config:?} {version}"
                );
                // And the map, member for member.
                let parsed: Map<String, Value> = serde_json::from_slice(&text).unwrap();
                assert_eq!(parsed, config.modern_meta(version));
            }
        }
    }
}
