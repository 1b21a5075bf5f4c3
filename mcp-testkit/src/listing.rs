//! What the testkit lists and reads: tools, resources, templates and
//! prompts (the conformance fixtures after its own when they are on),
//! pagination, and resource subscriptions.

use mcp_proto::jsonrpc::ErrorObject;
use serde_json::{Value, json};

use crate::server::{Server, invalid_params};
use crate::{features, fixtures, task_fixtures, tools};

impl Server {
    /// `tools/list` of the handshake era.
    pub(crate) fn list_tools(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let all = self.described(self.tool_definitions(false));
        self.paginate(params.as_ref(), "tools", all)
    }

    /// `resources/read`.
    pub(crate) fn read_resource(&self, params: Option<&Value>) -> Result<Value, ErrorObject> {
        let uri = features::uri_param(params)?;
        let fixture = self.config().conformance_fixtures.then(|| fixtures::read(uri)).flatten();
        let contents =
            fixture.or_else(|| features::read(uri)).ok_or_else(|| features::not_found(uri))?;
        Ok(json!({ "contents": [contents] }))
    }

    /// The resources listed, the fixtures' after the testkit's when on.
    pub(crate) fn resources(&self) -> Vec<Value> {
        let mut all = features::resources();
        if self.config().conformance_fixtures {
            all.extend(fixtures::resources());
        }
        all
    }

    /// The resource templates listed.
    pub(crate) fn resource_templates(&self) -> Vec<Value> {
        let mut all = features::resource_templates();
        if self.config().conformance_fixtures {
            all.extend(fixtures::resource_templates());
        }
        all
    }

    /// The prompts listed.
    pub(crate) fn prompts(&self) -> Vec<Value> {
        let mut all = features::prompts();
        if self.config().conformance_fixtures {
            all.extend(fixtures::prompts());
        }
        all
    }

    /// `prompts/get`: a fixture prompt when they are on, else the testkit's.
    pub(crate) fn get_prompt(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        if self.config().conformance_fixtures
            && let Some(name) = params.as_ref().and_then(|p| p.get("name")).and_then(Value::as_str)
            && let Some(result) =
                fixtures::get_prompt(name, params.as_ref().and_then(|p| p.get("arguments")))
        {
            return result;
        }
        features::get_prompt(params)
    }

    /// Every tool listed: the testkit's, then the conformance fixtures when
    /// they are on.
    pub(crate) fn tool_definitions(&self, modern: bool) -> Vec<Value> {
        self.definitions(self.extra_tool(), modern)
    }

    /// The tools listed with the `extra` tool on or off.
    pub(crate) fn definitions(&self, extra: bool, modern: bool) -> Vec<Value> {
        let mut all = tools::definitions(extra, modern);
        if self.config().conformance_fixtures {
            all.extend(fixtures::definitions());
            if modern {
                all.extend(task_fixtures::definitions());
            }
        }
        all
    }

    /// The tool definitions with the descriptions `--tool-description`
    /// replaces.
    pub(crate) fn described(&self, mut all: Vec<Value>) -> Vec<Value> {
        for (name, text) in &self.config().tool_descriptions {
            if let Some(tool) = all.iter_mut().find(|t| t["name"] == name.as_str()) {
                tool["description"] = Value::String(text.clone());
            }
        }
        all
    }

    /// One page of a list result: `{key: [...], nextCursor?}`. With
    /// `--page-size N` the pages hold N items and the cursors are `"page:2"`,
    /// `"page:3"`, ...; without it everything is one page. A cursor the server
    /// did not issue gets `-32602`.
    pub(crate) fn paginate(
        &self,
        params: Option<&Value>,
        key: &str,
        all: Vec<Value>,
    ) -> Result<Value, ErrorObject> {
        let cursor = match params.and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.clone()),
            Some(_) => return Err(invalid_params("cursor must be a string")),
        };
        let Some(page_size) = self.config().page_size else {
            return match cursor {
                None => Ok(json!({ key: all })),
                Some(c) => Err(invalid_params(format!("Invalid cursor: {c:?}"))),
            };
        };
        let page = match &cursor {
            None => 1,
            Some(c) => match c.strip_prefix("page:").and_then(|n| n.parse::<usize>().ok()) {
                Some(n) if n >= 2 && (n - 1).saturating_mul(page_size) < all.len() => n,
                _ => return Err(invalid_params(format!("Invalid cursor: {c:?}"))),
            },
        };
        let start = (page - 1) * page_size;
        let end = all.len().min(start + page_size);
        let items: Vec<Value> = all[start..end].to_vec();
        let mut result = json!({ key: items });
        if end < all.len() {
            result["nextCursor"] = json!(format!("page:{}", page + 1));
        }
        Ok(result)
    }

    pub(crate) fn subscribe(
        &self,
        params: Option<&Value>,
        subscribe: bool,
    ) -> Result<Value, ErrorObject> {
        let uri = features::uri_param(params)?;
        if subscribe {
            if !self.resource_exists(uri) {
                return Err(features::not_found(uri));
            }
            self.state().subscriptions.insert(uri.to_owned());
        } else {
            self.state().subscriptions.remove(uri);
        }
        Ok(json!({}))
    }
}
