//! The list and lookup operations shared by the client's typed API:
//! following pagination (bounded by [`MAX_PAGES`]), keeping the tool list
//! in the core's cache with invalid `x-mcp-header` tools dropped, looking a
//! tool up, and decoding a result once into its type ([`parse_result`]).
//!
//! `mcp-peer`'s client is the one [`Requester`] (send one request through
//! its single send path, reach the core's tool cache); calls themselves
//! (`tools/call` with its `Mcp-Param-*` headers, relisting, input rounds)
//! are made there, not here. Plain async functions with no runtime.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::client::{ClientError, RequestOptions};
use crate::methods;
use crate::types::{
    Cursor, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListTasksResult,
    ListToolsResult, Prompt, Resource, ResourceTemplate, Task, Tool,
};

/// The most pages a list operation follows before giving up: a server that
/// keeps returning cursors must not keep a client busy forever.
pub const MAX_PAGES: usize = 1000;

/// What a transport provides so the operations can run over it.
pub trait Requester: Sync {
    /// The transport's error type.
    type Error: Send;

    /// Turns a core error (an invalid result, a repeated cursor, ...) into
    /// the transport's error, adding what only the transport knows.
    fn client_error(&self, error: ClientError) -> Self::Error;

    /// Sends one request and waits for its answer: the `result` as JSON
    /// text, which [`parse_result`] decodes into its type.
    fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> impl Future<Output = Result<Box<RawValue>, Self::Error>> + Send;

    /// Sends one request whose parameters are any serialisable value. The
    /// default turns them into a [`Value`] and calls
    /// [`request`](Self::request); a transport that needs nothing from the
    /// parameters but their text overrides it to encode them straight into
    /// the message (see `ClientCore::start_request_encoded`).
    fn request_with_params<P: Serialize + Sync>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> impl Future<Output = Result<Box<RawValue>, Self::Error>> + Send {
        async move {
            let params = serde_json::to_value(params).map_err(|e| {
                self.client_error(ClientError::InvalidParams {
                    method: method.into(),
                    reason: e.to_string(),
                })
            })?;
            self.request(method, Some(params), options).await
        }
    }

    /// The cached tool list (see `ClientCore::cached_tools`).
    fn cached_tools(&self) -> Option<Arc<[Tool]>>;

    /// The tool cache's generation (see `ClientCore::tools_generation`).
    fn tools_generation(&self) -> u64;

    /// Stores a listed tool list (see `ClientCore::store_tools`).
    fn store_tools(&self, generation: u64, tools: Vec<Tool>) -> Arc<[Tool]>;
}

/// Decodes a method's result (as JSON text) into its type, or says why it
/// does not fit. `T = Value` gives the result as a generic JSON value.
pub fn parse_result<T: DeserializeOwned>(method: &str, raw: &RawValue) -> Result<T, ClientError> {
    serde_json::from_str(raw.get())
        .map_err(|e| ClientError::InvalidResult { method: method.into(), reason: e.to_string() })
}

/// `ping`: succeeds when the server answers.
pub async fn ping<R: Requester>(r: &R, options: RequestOptions) -> Result<(), R::Error> {
    r.request(methods::PING, None, options).await.map(drop)
}

/// Every tool the server lists (all pages), from the cache when it is valid.
pub async fn list_tools<R: Requester>(
    r: &R,
    options: RequestOptions,
) -> Result<Arc<[Tool]>, R::Error> {
    match r.cached_tools() {
        Some(tools) => Ok(tools),
        None => list_and_store_tools(r, options).await,
    }
}

/// Lists every tool (all pages) from the server, ignoring the cache, and
/// caches the answer.
pub async fn list_tools_fresh<R: Requester>(
    r: &R,
    options: RequestOptions,
) -> Result<Arc<[Tool]>, R::Error> {
    list_and_store_tools(r, RequestOptions { no_cache: true, ..options }).await
}

/// Lists every tool (all pages; in the stateless era fresh pages may come
/// from the result cache unless the options say `no_cache`) and stores the
/// list.
async fn list_and_store_tools<R: Requester>(
    r: &R,
    options: RequestOptions,
) -> Result<Arc<[Tool]>, R::Error> {
    let generation = r.tools_generation();
    let tools = list_all(r, methods::TOOLS_LIST, options, |page: ListToolsResult| {
        (page.tools, page.next_cursor)
    })
    .await?;
    // A tool whose `x-mcp-header` annotations break the rules is dropped here,
    // once, for every transport.
    Ok(r.store_tools(generation, crate::client::headers::retain_valid_tools(tools)))
}

/// Looks a tool up by name in the cached tool list (listing the tools from
/// the server once when the cache is empty or does not have it), lending it
/// to `f`.
pub async fn with_tool<R: Requester, T>(
    r: &R,
    name: &str,
    options: RequestOptions,
    f: impl FnOnce(&Tool) -> T,
) -> Result<Option<T>, R::Error> {
    if let Some(tools) = r.cached_tools()
        && let Some(tool) = tools.iter().find(|t| t.name == name)
    {
        return Ok(Some(f(tool)));
    }
    let tools = list_tools_fresh(r, options).await?;
    Ok(tools.iter().find(|t| t.name == name).map(f))
}

/// Every resource the server lists (all pages).
pub async fn list_resources<R: Requester>(
    r: &R,
    options: RequestOptions,
) -> Result<Vec<Resource>, R::Error> {
    list_all(r, methods::RESOURCES_LIST, options, |p: ListResourcesResult| {
        (p.resources, p.next_cursor)
    })
    .await
}

/// Every resource template the server lists (all pages).
pub async fn list_resource_templates<R: Requester>(
    r: &R,
    options: RequestOptions,
) -> Result<Vec<ResourceTemplate>, R::Error> {
    list_all(r, methods::RESOURCES_TEMPLATES_LIST, options, |p: ListResourceTemplatesResult| {
        (p.resource_templates, p.next_cursor)
    })
    .await
}

/// Every prompt the server lists (all pages).
pub async fn list_prompts<R: Requester>(
    r: &R,
    options: RequestOptions,
) -> Result<Vec<Prompt>, R::Error> {
    list_all(r, methods::PROMPTS_LIST, options, |p: ListPromptsResult| (p.prompts, p.next_cursor))
        .await
}

/// Every task the server lists (all pages; experimental `tasks/list`).
pub async fn list_tasks<R: Requester>(
    r: &R,
    options: RequestOptions,
) -> Result<Vec<Task>, R::Error> {
    list_all(r, methods::TASKS_LIST, options, |p: ListTasksResult| (p.tasks, p.next_cursor)).await
}

/// Follows `nextCursor` until the last page. Cursors are opaque and never
/// kept; a repeated cursor or more than [`MAX_PAGES`] pages is an error.
async fn list_all<R, P, T>(
    r: &R,
    method: &str,
    options: RequestOptions,
    split: impl Fn(P) -> (Vec<T>, Option<Cursor>),
) -> Result<Vec<T>, R::Error>
where
    R: Requester,
    P: DeserializeOwned,
{
    let mut items = Vec::new();
    let mut cursor: Option<Cursor> = None;
    let mut seen: HashSet<Cursor> = HashSet::new();
    for _ in 0..MAX_PAGES {
        let params = cursor.take().map(|c| {
            let mut m = Map::new();
            m.insert("cursor".into(), Value::String(c));
            Value::Object(m)
        });
        let raw = r.request(method, params, options.clone()).await?;
        let (page, next) = split(parse_result::<P>(method, &raw).map_err(|e| r.client_error(e))?);
        items.extend(page);
        match next {
            None => return Ok(items),
            Some(next) => {
                if !seen.insert(next.clone()) {
                    return Err(r.client_error(ClientError::InvalidResult {
                        method: method.into(),
                        reason: format!("the server repeated the cursor {next:?}"),
                    }));
                }
                cursor = Some(next);
            }
        }
    }
    Err(r.client_error(ClientError::InvalidResult {
        method: method.into(),
        reason: format!("more than {MAX_PAGES} pages"),
    }))
}
