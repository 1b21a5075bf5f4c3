//! Which upstream server a host's name or URI goes to, and what the
//! bridge declares: pure functions over what the servers listed and
//! declared. The routes keep, beside the names, the registry's plain
//! route of each tool name called ([`PlainRoute`]), until the names
//! change.
//!
//! One server is served with its names unchanged. Several are served as
//! one: tool and prompt names follow the registry's flat naming rule
//! ([`ToolNames`]: `server__name`, shortened with a hash when needed);
//! resource URIs stay as they are and are routed to the server that
//! listed them, else by the templates the servers listed.

use std::collections::HashMap;
use std::sync::Arc;

use mcp_host_registry::{PlainRoute, ToolNames};
use serde_json::{Map, Value, json};

/// The routes of the names the host was given.
#[derive(Debug, Clone, Default)]
pub(crate) struct Routes {
    /// The only server, when one is served (names pass unchanged).
    single: Option<String>,
    tools: ToolNames,
    prompts: ToolNames,
    /// URI to server, from the last resource lists.
    resources: HashMap<String, String>,
    /// The literal start of each URI template (up to its first `{`) and
    /// its server, from the last template lists.
    templates: Vec<(String, String)>,
    /// The plain route found for a tool name (see
    /// [`Bridge::forward_plain`](super::handler::Bridge)), kept while the
    /// names stay (at most one per tool name routed).
    plain: HashMap<String, Arc<PlainRoute>>,
}

impl Routes {
    /// Routes for these servers: names unchanged for one.
    pub(crate) fn new(servers: &[String]) -> Routes {
        let single = match servers {
            [only] => Some(only.clone()),
            _ => None,
        };
        Routes { single, ..Routes::default() }
    }

    /// Names the listed tools (each server's, by server): the host's name
    /// of each, in the servers' order.
    pub(crate) fn name_tools(&mut self, listed: &[(String, Vec<String>)]) -> Vec<String> {
        self.plain.clear();
        name(&self.single, &mut self.tools, listed)
    }

    /// The plain route kept for the tool name, if any (it may no longer
    /// hold: [`PlainRoute::call`] tells).
    pub(crate) fn plain_route(&self, name: &str) -> Option<Arc<PlainRoute>> {
        self.plain.get(name).cloned()
    }

    /// Keeps `route` for the tool name, or forgets the one kept (`None`).
    pub(crate) fn keep_plain_route(&mut self, name: &str, route: Option<Arc<PlainRoute>>) {
        match route {
            Some(route) => {
                self.plain.insert(name.to_owned(), route);
            }
            None => {
                self.plain.remove(name);
            }
        }
    }

    /// Names the listed prompts, as [`name_tools`](Self::name_tools).
    pub(crate) fn name_prompts(&mut self, listed: &[(String, Vec<String>)]) -> Vec<String> {
        name(&self.single, &mut self.prompts, listed)
    }

    /// The server and upstream name of a tool the host names.
    pub(crate) fn tool(&self, name: &str) -> Option<(String, String)> {
        self.tool_ref(name).map(|(server, tool)| (server.to_owned(), tool.to_owned()))
    }

    /// [`tool`](Self::tool), borrowed.
    pub(crate) fn tool_ref<'a>(&'a self, name: &'a str) -> Option<(&'a str, &'a str)> {
        resolve(&self.single, &self.tools, name)
    }

    /// As [`tool`](Self::tool), the name taken (one server served: it is
    /// the tool's own, kept as it is); the name back when it routes to
    /// nothing.
    pub(crate) fn take_tool(&self, name: String) -> Result<(String, String), String> {
        match &self.single {
            Some(only) => Ok((only.clone(), name)),
            None => self.tool(&name).ok_or(name),
        }
    }

    /// The server and upstream name of a prompt the host names.
    pub(crate) fn prompt(&self, name: &str) -> Option<(String, String)> {
        resolve(&self.single, &self.prompts, name).map(|(s, n)| (s.to_owned(), n.to_owned()))
    }

    /// Remembers which server listed these resource URIs (replacing what
    /// that server listed before).
    pub(crate) fn note_resources(&mut self, server: &str, uris: &[String]) {
        self.resources.retain(|_, s| s != server);
        for uri in uris {
            // The first server to list a URI keeps it.
            self.resources.entry(uri.clone()).or_insert_with(|| server.to_owned());
        }
    }

    /// Remembers which server listed these URI templates (replacing what
    /// that server listed before).
    pub(crate) fn note_templates(&mut self, server: &str, templates: &[String]) {
        self.templates.retain(|(_, s)| s != server);
        for template in templates {
            let start = template.split('{').next().unwrap_or_default();
            if !start.is_empty() {
                self.templates.push((start.to_owned(), server.to_owned()));
            }
        }
    }

    /// The server a resource URI goes to: the one that listed it, else
    /// the one with the longest template start it begins with (the first
    /// listed of equals).
    pub(crate) fn resource(&self, uri: &str) -> Option<String> {
        if let Some(only) = &self.single {
            return Some(only.clone());
        }
        if let Some(server) = self.resources.get(uri) {
            return Some(server.clone());
        }
        let mut best: Option<&(String, String)> = None;
        for entry in self.templates.iter().filter(|(start, _)| uri.starts_with(start.as_str())) {
            if best.is_none_or(|b| entry.0.len() > b.0.len()) {
                best = Some(entry);
            }
        }
        best.map(|(_, server)| server.clone())
    }
}

fn name(
    single: &Option<String>,
    names: &mut ToolNames,
    listed: &[(String, Vec<String>)],
) -> Vec<String> {
    if single.is_some() {
        return listed.iter().flat_map(|(_, items)| items.iter().cloned()).collect();
    }
    *names = ToolNames::new(
        listed.iter().flat_map(|(s, items)| items.iter().map(move |n| (s.as_str(), n.as_str()))),
    );
    listed
        .iter()
        .flat_map(|(server, items)| {
            let names = &*names;
            items.iter().map(move |n| names.name(server, n).unwrap_or(n).to_owned())
        })
        .collect()
}

fn resolve<'a>(
    single: &'a Option<String>,
    names: &'a ToolNames,
    name: &'a str,
) -> Option<(&'a str, &'a str)> {
    match single {
        Some(only) => Some((only, name)),
        None => names.resolve(name),
    }
}

/// The capabilities declared to the host: what the upstream servers
/// declared (any of them, for several), of what the bridge forwards.
pub(crate) fn capabilities(upstream: &[Value]) -> Value {
    let mut out = Map::new();
    let flag = |name: &str, member: &str| {
        upstream.iter().any(|c| c.get(name).and_then(|v| v.get(member)) == Some(&json!(true)))
    };
    let declared = |name: &str| upstream.iter().any(|c| c.get(name).is_some_and(Value::is_object));
    if declared("tools") {
        out.insert("tools".into(), json!({ "listChanged": flag("tools", "listChanged") }));
    }
    if declared("resources") {
        out.insert(
            "resources".into(),
            json!({
                "subscribe": flag("resources", "subscribe"),
                "listChanged": flag("resources", "listChanged"),
            }),
        );
    }
    if declared("prompts") {
        out.insert("prompts".into(), json!({ "listChanged": flag("prompts", "listChanged") }));
    }
    for plain in ["completions", "logging"] {
        if declared(plain) {
            out.insert(plain.into(), json!({}));
        }
    }
    // Tasks pass through to a host that declares the extension.
    if super::tasks::offered(upstream) {
        out.insert("extensions".into(), json!({ mcp_proto::types::TASKS_EXTENSION: {} }));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(items: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        items
            .iter()
            .map(|(s, names)| ((*s).to_owned(), names.iter().map(|n| (*n).to_owned()).collect()))
            .collect()
    }

    #[test]
    fn names_and_routes() {
        // One server: unchanged both ways, any URI goes to it.
        let mut one = Routes::new(&["files".into()]);
        assert_eq!(one.name_tools(&listed(&[("files", &["read", "a.b"])])), ["read", "a.b"]);
        assert_eq!(one.tool("read"), Some(("files".into(), "read".into())));
        assert_eq!(one.tool("never-listed"), Some(("files".into(), "never-listed".into())));
        assert_eq!(one.resource("file:///x"), Some("files".into()));
        assert_eq!(one.take_tool("read".into()), Ok(("files".into(), "read".into())));

        // Several: the registry's flat names, and back; unknown is unknown.
        let mut many = Routes::new(&["a".into(), "b".into()]);
        let cases: &[(&str, &str, &str)] =
            &[("a", "echo", "a__echo"), ("b", "echo", "b__echo"), ("b", "add", "b__add")];
        let names = many.name_tools(&listed(&[("a", &["echo"]), ("b", &["echo", "add"])]));
        assert_eq!(names, ["a__echo", "b__echo", "b__add"]);
        for (server, tool, flat) in cases {
            assert_eq!(many.tool(flat), Some(((*server).into(), (*tool).into())), "{flat}");
        }
        assert_eq!(many.tool("echo"), None);
        assert_eq!(many.take_tool("b__add".into()), Ok(("b".into(), "add".into())));
        assert_eq!(many.take_tool("echo".into()), Err("echo".into()));
        assert_eq!(many.tool("c__echo"), None);
        // A name that is no valid flat name gets the hashed form, reversibly.
        let names = many.name_prompts(&listed(&[("a", &["greet me"]), ("b", &["greet"])]));
        assert!(names[0].starts_with("a__greet_me_") && names[0].len() == 24, "{names:?}");
        assert_eq!(many.prompt(&names[0]), Some(("a".into(), "greet me".into())));
        assert_eq!(many.prompt("b__greet"), Some(("b".into(), "greet".into())));
        // Tools and prompts are named apart.
        assert_eq!(many.tool("b__greet"), None);

        // URIs: routed to the server that listed them; the first keeps one
        // listed twice; a new list replaces the server's old one.
        many.note_resources("a", &["test://1".into(), "test://both".into()]);
        many.note_resources("b", &["test://2".into(), "test://both".into()]);
        assert_eq!(many.resource("test://1"), Some("a".into()));
        assert_eq!(many.resource("test://2"), Some("b".into()));
        assert_eq!(many.resource("test://both"), Some("a".into()));
        assert_eq!(many.resource("test://none"), None);
        many.note_resources("a", &["test://3".into()]);
        assert_eq!(many.resource("test://1"), None);
        assert_eq!(many.resource("test://3"), Some("a".into()));
        // A URI no list has: the server of the longest template start.
        many.note_templates("a", &["test://t/{id}".into(), "{whole}".into()]);
        many.note_templates("b", &["test://t/b/{id}".into(), "test://t/{x}".into()]);
        let cases = [
            ("test://t/7", Some("a")),
            ("test://t/b/7", Some("b")),
            ("test://3", Some("a")),
            ("other://x", None),
        ];
        for (uri, server) in cases {
            assert_eq!(many.resource(uri).as_deref(), server, "{uri}");
        }
    }

    #[test]
    fn capabilities_are_what_upstream_declared_of_what_is_forwarded() {
        let cases: &[(&[Value], Value)] = &[
            (&[], json!({})),
            (
                &[json!({"tools": {}, "tasks": {"list": {}}, "experimental": {"x": {}}})],
                json!({"tools": {"listChanged": false}}),
            ),
            (
                &[
                    json!({"tools": {"listChanged": true}, "logging": {}}),
                    json!({"resources": {"subscribe": true}, "prompts": {}, "completions": {},
                        "extensions": {"io.modelcontextprotocol/tasks": {}, "other/x": {}}}),
                ],
                json!({
                    "tools": {"listChanged": true},
                    "resources": {"subscribe": true, "listChanged": false},
                    "prompts": {"listChanged": false},
                    "completions": {},
                    "logging": {},
                    "extensions": {"io.modelcontextprotocol/tasks": {}},
                }),
            ),
        ];
        for (upstream, expected) in cases {
            assert_eq!(&capabilities(upstream), expected, "{upstream:?}");
        }
    }
}
