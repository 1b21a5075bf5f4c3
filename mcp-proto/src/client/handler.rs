//! The host's answers to server requests: roots, sampling, elicitation.
//!
//! The handlers are runtime-agnostic async traits; the client's driver
//! (`mcp-peer`) runs [`Handlers::handle`] for each
//! [`ServerRequest`](crate::client::ServerRequest) (and for each input
//! request of a stateless-era round) and passes the outcome to
//! [`ClientCore::respond`](crate::client::ClientCore::respond).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::jsonrpc::{ErrorObject, error_code};
use crate::methods;
use crate::types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationCapability, ListRootsResult, Root, RootsCapability,
    SamplingCapability,
};

/// A boxed future, as the object-safe handler traits return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Answers `roots/list`.
///
/// **Deprecated by the protocol** (SEP-2577, from 2026-07-28): roots
/// keep working in every revision that has them; nothing new should be
/// built on them. A server that needs paths takes them as tool arguments
/// or configuration. In the stateless era a server asks for the roots in
/// an `input_required` round, which this same handler answers.
pub trait RootsHandler: Send + Sync {
    /// The roots the server may work in.
    fn list_roots(&self) -> BoxFuture<'_, Result<ListRootsResult, ErrorObject>>;
}

/// Answers `sampling/createMessage` (the server asks the host's model).
///
/// **Deprecated by the protocol** (SEP-2577, from 2026-07-28): sampling
/// keeps working in every revision that has it; nothing new should be
/// built on it (a server that needs a model calls its provider itself). In
/// the stateless era a server asks for a sample in an `input_required`
/// round, which this same handler answers.
pub trait SamplingHandler: Send + Sync {
    /// Runs the model on the server's messages. A user's refusal is
    /// `ErrorObject::new(error_code::USER_REJECTED, ...)`.
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>>;

    /// Whether the handler accepts `tools` and `toolChoice` (declares
    /// `sampling.tools`).
    fn supports_tools(&self) -> bool {
        false
    }
}

/// Answers `elicitation/create` (the server asks the user).
pub trait ElicitationHandler: Send + Sync {
    /// Asks the user; the result says whether they accepted, declined or
    /// cancelled, and holds their answer.
    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>>;

    /// Whether URL-mode elicitation is supported (declares `elicitation.url`).
    fn supports_url_mode(&self) -> bool {
        false
    }
}

/// A fixed list of roots.
#[derive(Debug, Clone, Default)]
pub struct StaticRoots(pub Vec<Root>);

impl RootsHandler for StaticRoots {
    fn list_roots(&self) -> BoxFuture<'_, Result<ListRootsResult, ErrorObject>> {
        let result = ListRootsResult { roots: self.0.clone(), ..Default::default() };
        Box::pin(async move { Ok(result) })
    }
}

/// The handlers a host provides. A capability is declared in `initialize`
/// exactly when its handler is set, so a server never asks for what the host
/// cannot answer.
#[derive(Clone, Default)]
pub struct Handlers {
    /// Answers `roots/list` (deprecated by the protocol, SEP-2577: see
    /// [`RootsHandler`]).
    pub roots: Option<Arc<dyn RootsHandler>>,
    /// Answers `sampling/createMessage` (deprecated by the protocol,
    /// SEP-2577: see [`SamplingHandler`]).
    pub sampling: Option<Arc<dyn SamplingHandler>>,
    /// Answers `elicitation/create`.
    pub elicitation: Option<Arc<dyn ElicitationHandler>>,
}

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handlers")
            .field("roots", &self.roots.is_some())
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .finish()
    }
}

impl Handlers {
    /// The client capabilities these handlers justify.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if self.roots.is_some() {
            caps.roots = Some(RootsCapability { list_changed: Some(false), ..Default::default() });
        }
        if let Some(s) = &self.sampling {
            let mut cap = SamplingCapability::default();
            if s.supports_tools() {
                cap.tools = Some(Map::new());
            }
            caps.sampling = Some(cap);
        }
        if let Some(e) = &self.elicitation {
            let mut cap = ElicitationCapability { form: Some(Map::new()), ..Default::default() };
            if e.supports_url_mode() {
                cap.url = Some(Map::new());
            }
            caps.elicitation = Some(cap);
        }
        caps
    }

    /// Answers one server request: decodes its parameters (-32602 when they
    /// are invalid), calls the handler, encodes the result. A method without
    /// a handler gets -32601.
    pub async fn handle(&self, method: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
        match method {
            methods::ROOTS_LIST => match &self.roots {
                Some(h) => encode(h.list_roots().await?),
                None => Err(ErrorObject::method_not_found(method)),
            },
            methods::SAMPLING_CREATE_MESSAGE => match &self.sampling {
                Some(h) => encode(h.create_message(decode(method, params)?).await?),
                None => Err(ErrorObject::method_not_found(method)),
            },
            methods::ELICITATION_CREATE => match &self.elicitation {
                Some(h) => encode(h.elicit(decode(method, params)?).await?),
                None => Err(ErrorObject::method_not_found(method)),
            },
            _ => Err(ErrorObject::method_not_found(method)),
        }
    }
}

fn decode<T: DeserializeOwned>(method: &str, params: Option<Value>) -> Result<T, ErrorObject> {
    serde_json::from_value(params.unwrap_or(Value::Object(Map::new()))).map_err(|e| {
        ErrorObject::new(error_code::INVALID_PARAMS, format!("invalid {method} parameters: {e}"))
    })
}

fn encode<T: Serialize>(result: T) -> Result<Value, ErrorObject> {
    serde_json::to_value(result).map_err(|e| {
        ErrorObject::new(error_code::INTERNAL_ERROR, format!("could not encode the result: {e}"))
    })
}
