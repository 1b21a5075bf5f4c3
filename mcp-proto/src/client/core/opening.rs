//! Opening a connection: the stateless era's probe (`server/discover`)
//! and entry, or the handshake era's `initialize` and version negotiation.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::encode::{Meta, request_text};
use super::{ClientCore, ModernMeta, Phase, RequestOptions};
use crate::client::ClientError;
use crate::jsonrpc::{Message, Notification, Request, RequestId};
use crate::methods;
use crate::types::{
    ClientCapabilities, DiscoverResult, Implementation, InitializeRequestParams, InitializeResult,
};
use crate::version::{ProtocolVersion, negotiate};

/// [`InitializeRequestParams::new`] of the same three, as text: the same
/// members in the same order (no `_meta`, nothing unknown), borrowed.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParamsText<'a> {
    protocol_version: &'a str,
    capabilities: &'a ClientCapabilities,
    client_info: &'a Implementation,
}

impl<W> ClientCore<W> {
    /// Starts the stateless era's probe: returns the `server/discover`
    /// request to send, asking for `version` in its `_meta`.
    ///
    /// The core does not judge the answer: the waiter gets it, the core
    /// returns to its fresh state, and the driver then calls
    /// [`enter_modern`](Self::enter_modern) or
    /// [`initialize`](Self::initialize). A probe that times out or is
    /// cancelled sends no `notifications/cancelled` (a handshake-era
    /// server must see nothing before `initialize`).
    pub fn start_probe(
        &mut self,
        version: ProtocolVersion,
        timeout: Duration,
        waiter: W,
        now: Instant,
    ) -> Result<Request, ClientError> {
        let id = self.probe(version, timeout, waiter, now)?;
        let meta = self.probe_meta.as_ref().map(|(_, m)| m.map().clone()).unwrap_or_default();
        let mut params = Map::new();
        params.insert("_meta".into(), Value::Object(meta));
        Ok(Request {
            id: RequestId::Number(id),
            method: methods::SERVER_DISCOVER.into(),
            params: Some(Value::Object(params)),
        })
    }

    /// [`start_probe`](Self::start_probe), the request encoded straight to
    /// JSON text (no [`Value`] is built): its id and the message.
    pub fn start_probe_encoded(
        &mut self,
        version: ProtocolVersion,
        timeout: Duration,
        waiter: W,
        now: Instant,
    ) -> Result<(RequestId, Vec<u8>), ClientError> {
        let n = self.probe(version, timeout, waiter, now)?;
        let id = RequestId::Number(n);
        let meta = self.probe_meta.as_ref().map(|(_, m)| &*m.text);
        let meta = Meta::Text(meta.unwrap_or(b"{}"));
        let text = request_text(&id, methods::SERVER_DISCOVER, &(), Some(meta));
        match text {
            Ok(Some(text)) => Ok((id, text)),
            // `null` parameters always take a `_meta`: not reached.
            Ok(None) => Err(self.unsent(n, methods::SERVER_DISCOVER, "unencodable".into())),
            Err(e) => Err(self.unsent(n, methods::SERVER_DISCOVER, e.to_string())),
        }
    }

    /// Registers the probe asking for `version`, and makes the era's
    /// `_meta` it carries; returns its id.
    fn probe(
        &mut self,
        version: ProtocolVersion,
        timeout: Duration,
        waiter: W,
        now: Instant,
    ) -> Result<i64, ClientError> {
        match self.phase {
            Phase::Fresh => {}
            Phase::Closed => {
                return Err(ClientError::Closed { method: methods::SERVER_DISCOVER.into() });
            }
            _ => return Err(ClientError::AlreadyInitialized),
        }
        let meta = match self.probe_meta.take() {
            Some((v, meta)) if v == version => meta,
            _ => ModernMeta::new(&self.config, version),
        };
        self.probe_meta = Some((version, meta));
        let id = self.allocate_id();
        let options = RequestOptions::with_timeout(timeout);
        self.register(id, methods::SERVER_DISCOVER, waiter, &options, now);
        self.phase = Phase::Probing(id);
        Ok(id)
    }

    /// Forgets a request registered but never sent (its encoding failed),
    /// giving the error its caller gets; the phase it started is undone.
    fn unsent(&mut self, id: i64, method: &str, reason: String) -> ClientError {
        self.pending.remove(&id);
        if matches!(self.phase, Phase::Probing(n) | Phase::Initializing(n) if n == id) {
            self.phase = Phase::Fresh;
        }
        ClientError::InvalidParams { method: method.into(), reason }
    }

    /// Enters the stateless era speaking `version` (a modern one): requests
    /// may be sent at once, each with the era's `_meta`. Allowed on a fresh
    /// core and on a modern one (to change the version after an
    /// `UnsupportedProtocolVersion` error).
    ///
    /// `discover` is the server's answer to `server/discover`, when there
    /// was one. It is kept once, as the
    /// [`initialize_result`](Self::initialize_result) a host reads in
    /// either era: its capabilities, instructions and `_meta` moved there,
    /// `serverInfo` read from that `_meta`, and its other members
    /// (`supportedVersions`, `resultType`, ...) in `extra` as sent.
    pub fn enter_modern(
        &mut self,
        version: ProtocolVersion,
        discover: Option<DiscoverResult>,
    ) -> Result<(), ClientError> {
        match self.phase {
            Phase::Fresh => {}
            Phase::Ready if self.modern.is_some() => {}
            Phase::Closed => {
                return Err(ClientError::Closed { method: methods::SERVER_DISCOVER.into() });
            }
            _ => return Err(ClientError::AlreadyInitialized),
        }
        if !version.is_modern() {
            return Err(ClientError::UnsupportedVersion(crate::version::UnsupportedVersion {
                offered: version.as_str().into(),
                supported: self.config.supported_versions.clone(),
            }));
        }
        let meta = match self.probe_meta.take() {
            Some((v, meta)) if v == version => meta,
            _ => ModernMeta::new(&self.config, version),
        };
        self.modern = Some(meta);
        if let Some(d) = discover {
            // What a host reads of `initialize` in the handshake era, made
            // of the discovery (moved, not copied): one place to ask
            // whatever the era.
            self.init_result = Some(Arc::new(discovered(version, d)));
        } else if self.init_result.is_none() {
            self.init_result = Some(Arc::new(InitializeResult {
                protocol_version: version.as_str().into(),
                capabilities: Default::default(),
                server_info: Implementation::new("", ""),
                instructions: None,
                meta: None,
                extra: Map::new(),
            }));
        } else if let Some(r) = &mut self.init_result {
            Arc::make_mut(r).protocol_version = version.as_str().into();
        }
        self.negotiated = Some(version);
        self.phase = Phase::Ready;
        Ok(())
    }

    /// Starts the handshake: returns the `initialize` request to send.
    ///
    /// When its answer arrives, the version is negotiated; on success
    /// `notifications/initialized` is queued for sending and the waiter gets
    /// the raw result, on failure it gets the error and the core refuses
    /// further requests until [`reset`](Self::reset).
    pub fn initialize(&mut self, waiter: W, now: Instant) -> Result<Request, ClientError> {
        let n = self.start_initialize(waiter, now)?;
        let params = InitializeRequestParams::new(
            self.config.legacy_offer().as_str(),
            self.config.capabilities.clone(),
            self.config.client_info.clone(),
        );
        match serde_json::to_value(&params) {
            Ok(params) => Ok(Request {
                id: RequestId::Number(n),
                method: methods::INITIALIZE.into(),
                params: Some(params),
            }),
            Err(e) => Err(self.unsent(n, methods::INITIALIZE, e.to_string())),
        }
    }

    /// [`initialize`](Self::initialize), the request encoded straight to
    /// JSON text (no [`Value`] is built): its id and the message.
    pub fn initialize_encoded(
        &mut self,
        waiter: W,
        now: Instant,
    ) -> Result<(RequestId, Vec<u8>), ClientError> {
        let n = self.start_initialize(waiter, now)?;
        let id = RequestId::Number(n);
        // The same text as `initialize`'s parameters, written from the
        // configuration without copying it.
        let params = InitializeParamsText {
            protocol_version: self.config.legacy_offer().as_str(),
            capabilities: &self.config.capabilities,
            client_info: &self.config.client_info,
        };
        match request_text(&id, methods::INITIALIZE, &params, None) {
            Ok(Some(text)) => Ok((id, text)),
            // Without a `_meta` to add, the text is always made: not reached.
            Ok(None) => Err(self.unsent(n, methods::INITIALIZE, "unencodable".into())),
            Err(e) => Err(self.unsent(n, methods::INITIALIZE, e.to_string())),
        }
    }

    /// Registers the `initialize` request; returns its id.
    fn start_initialize(&mut self, waiter: W, now: Instant) -> Result<i64, ClientError> {
        match self.phase {
            Phase::Fresh => {}
            Phase::Closed => {
                return Err(ClientError::Closed { method: methods::INITIALIZE.into() });
            }
            _ => return Err(ClientError::AlreadyInitialized),
        }
        // A probe found a handshake-era server: its `_meta` is not needed.
        self.probe_meta = None;
        let id = self.allocate_id();
        self.register(id, methods::INITIALIZE, waiter, &RequestOptions::default(), now);
        self.phase = Phase::Initializing(id);
        Ok(id)
    }

    /// Whether `id` is the era probe in flight (whose answer's discovery
    /// the driver may decode itself:
    /// [`usual_discovery`](crate::client::decide::probe::usual_discovery)).
    pub fn is_probe(&self, id: i64) -> bool {
        self.phase == Phase::Probing(id)
    }

    /// Finishes `initialize` `id`, answered with the usual answer whose
    /// result's text is `result`
    /// ([`jsonrpc::usual_answer`](crate::jsonrpc::usual_answer)), the
    /// result decoded once, straight from the message: the handshake is
    /// finished as [`handle_incoming`](Self::handle_incoming) finishes it
    /// on that result (the version negotiated, the result kept and
    /// `notifications/initialized` queued, or the handshake failed), and
    /// its waiter is given back with the outcome instead of coming in an
    /// [`Event::Reply`]. `None`, with nothing changed, when `id` is not the
    /// `initialize` in flight or `result` does not decode as an
    /// [`InitializeResult`]: the general decoding then decides about the
    /// text as about any other. A result that decodes was one JSON value,
    /// so the message was a valid answer, and the outcome is the general
    /// path's. A result of the usual shape (plain strings, the usual
    /// capabilities) is read by a scan of its text rather than by
    /// serde_json's decoding; the same result either way.
    ///
    /// [`Event::Reply`]: super::Event::Reply
    pub fn take_usual_initialize(
        &mut self,
        id: i64,
        result: &str,
    ) -> Option<(W, Result<Arc<InitializeResult>, ClientError>)> {
        if !self.is_initialize(id) {
            return None;
        }
        // The usual shape by a scan, anything else by serde_json.
        let result = match super::usual_init::usual_initialize_result(result) {
            Some(result) => result,
            None => serde_json::from_str::<InitializeResult>(result).ok()?,
        };
        let waiter = self.pending.remove(&id)?.waiter;
        Some((waiter, self.finish_initialize(result)))
    }

    /// Whether `id` is the `initialize` in flight (see
    /// [`take_usual_initialize`](Self::take_usual_initialize)).
    pub fn is_initialize(&self, id: i64) -> bool {
        self.phase == Phase::Initializing(id)
    }

    /// Finishes the era probe `id`, answered with a discovery the driver
    /// decoded itself from the message
    /// ([`usual_discovery`](crate::client::decide::probe::usual_discovery)):
    /// the probe is done as [`handle_incoming`](Self::handle_incoming)
    /// finishes it on a result, and its waiter is given back instead of
    /// coming in an [`Event::Reply`]. `None`, with nothing changed, when
    /// `id` is not the probe in flight.
    ///
    /// [`Event::Reply`]: super::Event::Reply
    pub fn take_probe_answered(&mut self, id: i64) -> Option<W> {
        if !self.is_probe(id) {
            return None;
        }
        let waiter = self.pending.remove(&id)?.waiter;
        self.phase = Phase::Fresh;
        Some(waiter)
    }

    pub(super) fn finish_handshake(
        &mut self,
        outcome: Result<Box<RawValue>, ClientError>,
    ) -> Result<Box<RawValue>, ClientError> {
        let value = match outcome {
            Ok(v) => v,
            Err(e) => {
                self.phase = Phase::Failed;
                return Err(e);
            }
        };
        let result: InitializeResult = match serde_json::from_str(value.get()) {
            Ok(r) => r,
            Err(e) => {
                self.phase = Phase::Failed;
                return Err(ClientError::InvalidResult {
                    method: methods::INITIALIZE.into(),
                    reason: e.to_string(),
                });
            }
        };
        self.finish_initialize(result).map(|_| value)
    }

    /// The handshake finished with `result`: the version negotiated, the
    /// result kept and `notifications/initialized` queued, or the handshake
    /// failed.
    fn finish_initialize(
        &mut self,
        result: InitializeResult,
    ) -> Result<Arc<InitializeResult>, ClientError> {
        match negotiate(&result.protocol_version, &self.config.supported_versions) {
            Ok(version) => {
                let result = Arc::new(result);
                self.negotiated = Some(version);
                self.init_result = Some(Arc::clone(&result));
                self.phase = Phase::Ready;
                self.transmit.push_back(Message::Notification(Notification::new(
                    methods::NOTIFICATION_INITIALIZED,
                    None,
                )));
                Ok(result)
            }
            Err(e) => {
                self.phase = Phase::Failed;
                Err(ClientError::UnsupportedVersion(e))
            }
        }
    }
}

/// The discovery as the [`InitializeResult`] the core keeps: its members
/// moved, `serverInfo` read from its `_meta`, `supportedVersions` and the
/// members this crate does not know kept in `extra`.
fn discovered(version: ProtocolVersion, d: DiscoverResult) -> InitializeResult {
    let server_info = d.server_info().unwrap_or_else(|| Implementation::new("", ""));
    let DiscoverResult { supported_versions, capabilities, instructions, meta, mut extra } = d;
    let versions = supported_versions.into_iter().map(Value::String).collect();
    extra.insert("supportedVersions".into(), Value::Array(versions));
    InitializeResult {
        protocol_version: version.as_str().into(),
        capabilities,
        server_info,
        instructions,
        meta,
        extra,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::client::core::CoreConfig;
    use crate::types::{Icon, RootsCapability};

    /// `initialize_encoded`'s text against the general path: the parameters
    /// built as `InitializeRequestParams` and encoded, on a table of
    /// configurations (defaults, every member set, unknown members, strings
    /// that need escaping, a preferred version of the stateless era).
    #[test]
    fn the_initialize_text_is_the_encoded_parameters() {
        let mut configs = vec![CoreConfig::new(Implementation::new("c", "1.0"))];
        let mut info = Implementation::new("cl\u{e9}ent \"q\"\n", "2.0-\u{1f600}");
        info.title = Some("T\\itle".into());
        info.description = Some(String::new());
        info.website_url = Some("https://example.com/".into());
        let mut icon = Icon { src: "data:image/png;base64,AA==".into(), ..Default::default() };
        icon.sizes = Some(vec!["48x48".into(), "any".into()]);
        icon.extra.insert("x-icon".into(), json!([1, null]));
        info.icons = Some(vec![icon]);
        info.extra.insert("zeta".into(), json!({"a": 1}));
        info.extra.insert("alpha".into(), json!("b"));
        let mut full = CoreConfig::new(info);
        full.capabilities.roots =
            Some(RootsCapability { list_changed: Some(true), ..Default::default() });
        full.capabilities.sampling = Some(Default::default());
        full.capabilities.elicitation = Some(Default::default());
        full.capabilities.experimental = Some(Map::from_iter([("e".into(), json!({}))]));
        full.capabilities.extensions =
            Some(Map::from_iter([("io.example/x".into(), json!({"k": [true]}))]));
        full.capabilities.extra.insert("unknownCapability".into(), json!(7));
        configs.push(full.clone());
        for version in ProtocolVersion::SUPPORTED {
            let mut config = full.clone();
            config.protocol_version = *version;
            configs.push(config);
        }
        let now = Instant::now();
        for config in configs {
            let mut core = ClientCore::<()>::new(config.clone());
            let (id, text) = core.initialize_encoded((), now).unwrap();
            let general = InitializeRequestParams::new(
                config.legacy_offer().as_str(),
                config.capabilities.clone(),
                config.client_info.clone(),
            );
            let expected = request_text(&id, methods::INITIALIZE, &general, None).unwrap().unwrap();
            assert_eq!(String::from_utf8(text).unwrap(), String::from_utf8(expected).unwrap());
        }
    }
}
