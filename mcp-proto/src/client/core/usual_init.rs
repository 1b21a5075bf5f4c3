//! The `initialize` result of the usual shape read by a scan of its text,
//! without serde_json's member-by-member decoding: the version, the
//! server's identity and instructions as plain strings, and the
//! capabilities every server declares (`logging`, `completions`,
//! `prompts`, `resources`, `tools`, `tasks`, each empty or with its flags).
//! Anything else (another member, `_meta`, `icons`, a member twice, an
//! escape, a number, `null`, text that is not JSON) gives `None`, and the
//! general decoding reads the text; when the scan gives a result, it is
//! the one the general decoding gives.
//!
//! The scan checks all it reads: the text need not be JSON (it is the
//! unchecked text of [`usual_answer`](crate::jsonrpc::usual_answer)).

use serde_json::Map;

use crate::jsonrpc::scan::{skip_space, string_stop};
use crate::types::{
    Implementation, InitializeResult, PromptsCapability, ResourcesCapability, ServerCapabilities,
    ServerTaskRequestsCapability, ServerTasksCapability, TaskToolsCapability, ToolsCapability,
};

/// `text`, one `initialize` result of the usual shape, as the general
/// decoding reads it (whitespace around it allowed); `None` for any other
/// text.
pub(crate) fn usual_initialize_result(text: &str) -> Option<InitializeResult> {
    let mut scan = Scan { text, b: text.as_bytes(), at: skip_space(text.as_bytes(), 0) };
    let (mut version, mut capabilities, mut server_info, mut instructions) =
        (None, None, None, None);
    scan.object(|scan, key| match key {
        b"protocolVersion" => once(&mut version, scan.string()?),
        b"capabilities" => once(&mut capabilities, scan.capabilities()?),
        b"serverInfo" => once(&mut server_info, scan.implementation()?),
        b"instructions" => once(&mut instructions, scan.string()?),
        _ => None,
    })?;
    if skip_space(scan.b, scan.at) != scan.b.len() {
        return None;
    }
    Some(InitializeResult {
        protocol_version: version?,
        capabilities: capabilities?,
        server_info: server_info?,
        instructions,
        meta: None,
        extra: Map::new(),
    })
}

/// Sets `slot` to `value` unless it was set (a member given twice, which
/// the general decoding reads as its last value: left to it).
fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    slot.is_none().then(|| *slot = Some(value))
}

/// A position in the text.
struct Scan<'t> {
    text: &'t str,
    b: &'t [u8],
    at: usize,
}

impl<'t> Scan<'t> {
    /// Steps over `byte` (and the whitespace after it) if it is next.
    fn eat(&mut self, byte: u8) -> bool {
        let found = self.b.get(self.at) == Some(&byte);
        if found {
            self.at = skip_space(self.b, self.at + 1);
        }
        found
    }

    /// A string without escapes or control characters, the whitespace
    /// after it skipped: its text.
    fn plain(&mut self) -> Option<&'t str> {
        if self.b.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at + 1;
        let end = start + string_stop(&self.b[start..])?;
        if self.b[end] != b'"' {
            return None;
        }
        self.at = skip_space(self.b, end + 1);
        // Both ends are next to a quote (ASCII): character boundaries.
        self.text.get(start..end)
    }

    /// [`plain`](Self::plain), owned.
    fn string(&mut self) -> Option<String> {
        self.plain().map(str::to_owned)
    }

    /// `true` or `false`.
    fn boolean(&mut self) -> Option<bool> {
        let rest = &self.b[self.at..];
        let (value, len) = if rest.starts_with(b"true") {
            (true, 4)
        } else if rest.starts_with(b"false") {
            (false, 5)
        } else {
            return None;
        };
        self.at = skip_space(self.b, self.at + len);
        Some(value)
    }

    /// An object whose members `member` reads, one at a time (given the
    /// name, the scan at its value): `None` if one of them does.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            let key = self.plain()?.as_bytes();
            if !self.eat(b':') {
                return None;
            }
            member(self, key)?;
            if self.eat(b'}') {
                return Some(());
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    /// An empty object, as the empty map it decodes to.
    fn empty(&mut self) -> Option<Map<String, serde_json::Value>> {
        self.object(|_, _| None).map(|()| Map::new())
    }

    /// An object of `listChanged` only.
    fn list_changed(&mut self) -> Option<Option<bool>> {
        let mut list_changed = None;
        self.object(|scan, key| match key {
            b"listChanged" => once(&mut list_changed, scan.boolean()?),
            _ => None,
        })?;
        Some(list_changed)
    }

    /// The server's capabilities of the usual members.
    fn capabilities(&mut self) -> Option<ServerCapabilities> {
        let mut c = ServerCapabilities::default();
        self.object(|scan, key| match key {
            b"experimental" => once(&mut c.experimental, scan.empty()?),
            b"logging" => once(&mut c.logging, scan.empty()?),
            b"completions" => once(&mut c.completions, scan.empty()?),
            b"extensions" => once(&mut c.extensions, scan.empty()?),
            b"prompts" => {
                let list_changed = scan.list_changed()?;
                once(&mut c.prompts, PromptsCapability { list_changed, extra: Map::new() })
            }
            b"tools" => {
                let list_changed = scan.list_changed()?;
                once(&mut c.tools, ToolsCapability { list_changed, extra: Map::new() })
            }
            b"resources" => {
                let (mut subscribe, mut list_changed) = (None, None);
                scan.object(|scan, key| match key {
                    b"subscribe" => once(&mut subscribe, scan.boolean()?),
                    b"listChanged" => once(&mut list_changed, scan.boolean()?),
                    _ => None,
                })?;
                let resources = ResourcesCapability { subscribe, list_changed, extra: Map::new() };
                once(&mut c.resources, resources)
            }
            b"tasks" => {
                let tasks = scan.tasks()?;
                once(&mut c.tasks, tasks)
            }
            _ => None,
        })?;
        Some(c)
    }

    /// The `tasks` capability: `list`, `cancel` and `requests.tools.call`,
    /// each empty.
    fn tasks(&mut self) -> Option<ServerTasksCapability> {
        let mut t = ServerTasksCapability::default();
        self.object(|scan, key| match key {
            b"list" => once(&mut t.list, scan.empty()?),
            b"cancel" => once(&mut t.cancel, scan.empty()?),
            b"requests" => {
                let mut tools = None;
                scan.object(|scan, key| match key {
                    b"tools" => {
                        let mut call = None;
                        scan.object(|scan, key| match key {
                            b"call" => once(&mut call, scan.empty()?),
                            _ => None,
                        })?;
                        once(&mut tools, TaskToolsCapability { call, extra: Map::new() })
                    }
                    _ => None,
                })?;
                let requests = ServerTaskRequestsCapability { tools, extra: Map::new() };
                once(&mut t.requests, requests)
            }
            _ => None,
        })?;
        Some(t)
    }

    /// `serverInfo` of plain strings (`name`, `version`, and maybe
    /// `title`, `description`, `websiteUrl`).
    fn implementation(&mut self) -> Option<Implementation> {
        let (mut name, mut version) = (None, None);
        let (mut title, mut description, mut website_url) = (None, None, None);
        self.object(|scan, key| match key {
            b"name" => once(&mut name, scan.string()?),
            b"version" => once(&mut version, scan.string()?),
            b"title" => once(&mut title, scan.string()?),
            b"description" => once(&mut description, scan.string()?),
            b"websiteUrl" => once(&mut website_url, scan.string()?),
            _ => None,
        })?;
        Some(Implementation {
            name: name?,
            title,
            version: version?,
            description,
            website_url,
            icons: None,
            extra: Map::new(),
        })
    }
}

#[cfg(test)]
mod tests;
