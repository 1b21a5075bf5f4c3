//! The opening's result of the usual shape read by a scan of its text,
//! without serde_json's member-by-member decoding: the `initialize` result
//! and the `server/discover` result. The scan reads plain strings (no
//! escapes), booleans, `null`, plain non-negative integers, objects and
//! arrays of those, and the capabilities every server declares
//! (`logging`, `completions`, `prompts`, `resources`, `tools`, `tasks`,
//! ...). Anything else (a capability member this crate does not know,
//! `icons`, a member twice, an escape, a fraction or a sign, nesting past
//! [`MAX_DEPTH`], text that is not JSON) gives `None`, and the general
//! decoding reads the text; when the scan gives a result, it is the one
//! the general decoding gives.
//!
//! The scan checks all it reads: the text need not be JSON (it is the
//! unchecked text of [`usual_answer`](crate::jsonrpc::usual_answer)).

use serde_json::{Map, Value};

use crate::jsonrpc::scan::{skip_space, string_stop};
use crate::types::{
    DiscoverResult, Implementation, InitializeResult, PromptsCapability, ResourcesCapability,
    ServerCapabilities, ServerTaskRequestsCapability, ServerTasksCapability, TaskToolsCapability,
    ToolsCapability,
};

/// How deep the scan follows a free value's objects and arrays before it
/// leaves the text to the decoding.
const MAX_DEPTH: u32 = 16;

/// `text`, one `initialize` result of the usual shape, as the general
/// decoding reads it (whitespace around it allowed); `None` for any other
/// text.
pub(crate) fn usual_initialize_result(text: &str) -> Option<InitializeResult> {
    let mut scan = Scan::new(text);
    let (mut version, mut capabilities, mut server_info, mut instructions, mut meta) =
        (None, None, None, None, None);
    let mut extra = Map::new();
    scan.object(|scan, key| match key {
        "protocolVersion" => once(&mut version, scan.string()?),
        "capabilities" => once(&mut capabilities, scan.capabilities()?),
        "serverInfo" => once(&mut server_info, scan.implementation()?),
        "instructions" => once(&mut instructions, scan.string()?),
        "_meta" => once(&mut meta, scan.map(0)?),
        _ => scan.member(&mut extra, key, 1),
    })?;
    scan.end()?;
    Some(InitializeResult {
        protocol_version: version?,
        capabilities: capabilities?,
        server_info: server_info?,
        instructions,
        meta,
        extra,
    })
}

/// `text`, one `server/discover` result of the usual shape, as the
/// general decoding reads it; `None` for any other text.
pub(crate) fn usual_discover_result(text: &str) -> Option<DiscoverResult> {
    let mut scan = Scan::new(text);
    let (mut versions, mut capabilities, mut instructions, mut meta) = (None, None, None, None);
    let mut extra = Map::new();
    scan.object(|scan, key| match key {
        "supportedVersions" => {
            let mut list = Vec::new();
            scan.array(|scan| {
                list.push(scan.string()?);
                Some(())
            })?;
            once(&mut versions, list)
        }
        "capabilities" => once(&mut capabilities, scan.capabilities()?),
        "instructions" => once(&mut instructions, scan.string()?),
        "_meta" => once(&mut meta, scan.map(0)?),
        _ => scan.member(&mut extra, key, 1),
    })?;
    scan.end()?;
    Some(DiscoverResult {
        supported_versions: versions?,
        capabilities: capabilities.unwrap_or_default(),
        instructions,
        meta,
        extra,
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
    /// At the start of `text`, its leading whitespace skipped.
    fn new(text: &'t str) -> Scan<'t> {
        Scan { text, b: text.as_bytes(), at: skip_space(text.as_bytes(), 0) }
    }

    /// Nothing but whitespace left.
    fn end(&self) -> Option<()> {
        (skip_space(self.b, self.at) == self.b.len()).then_some(())
    }

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
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'t str) -> Option<()>) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            let key = self.plain()?;
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

    /// An array whose elements `element` reads, one at a time.
    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if !self.eat(b'[') {
            return None;
        }
        if self.eat(b']') {
            return Some(());
        }
        loop {
            element(self)?;
            if self.eat(b']') {
                return Some(());
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    /// A plain non-negative integer (`0`, or digits without a leading
    /// zero) that fits a `u64`, not followed by a fraction or an exponent.
    fn integer(&mut self) -> Option<u64> {
        let rest = &self.b[self.at..];
        let len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if len == 0 || (len > 1 && rest[0] == b'0') {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = rest.get(len) {
            return None;
        }
        let n = self.text.get(self.at..self.at + len)?.parse().ok()?;
        self.at = skip_space(self.b, self.at + len);
        Some(n)
    }

    /// A value of plain strings, booleans, `null`, plain integers, objects
    /// and arrays, `depth` levels in.
    fn value(&mut self, depth: u32) -> Option<Value> {
        match self.b.get(self.at)? {
            b'"' => self.string().map(Value::String),
            b't' | b'f' => self.boolean().map(Value::Bool),
            b'n' => {
                if !self.b[self.at..].starts_with(b"null") {
                    return None;
                }
                self.at = skip_space(self.b, self.at + 4);
                Some(Value::Null)
            }
            b'{' => self.map(depth).map(Value::Object),
            b'[' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                let mut list = Vec::new();
                self.array(|scan| {
                    list.push(scan.value(depth + 1)?);
                    Some(())
                })?;
                Some(Value::Array(list))
            }
            _ => self.integer().map(|n| Value::Number(n.into())),
        }
    }

    /// An object of [`value`](Self::value)s, as a map.
    fn map(&mut self, depth: u32) -> Option<Map<String, Value>> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let mut map = Map::new();
        self.object(|scan, key| scan.member(&mut map, key, depth + 1))?;
        Some(map)
    }

    /// The value of member `key` (`depth` levels in) into `map`, unless
    /// it is there already.
    fn member(&mut self, map: &mut Map<String, Value>, key: &str, depth: u32) -> Option<()> {
        let value = self.value(depth)?;
        if map.contains_key(key) {
            return None;
        }
        map.insert(key.to_owned(), value);
        Some(())
    }

    /// An object of `listChanged` only.
    fn list_changed(&mut self) -> Option<Option<bool>> {
        let mut list_changed = None;
        self.object(|scan, key| match key {
            "listChanged" => once(&mut list_changed, scan.boolean()?),
            _ => None,
        })?;
        Some(list_changed)
    }

    /// The server's capabilities of the usual members.
    fn capabilities(&mut self) -> Option<ServerCapabilities> {
        let mut c = ServerCapabilities::default();
        self.object(|scan, key| match key {
            "experimental" => once(&mut c.experimental, scan.map(1)?),
            "logging" => once(&mut c.logging, scan.map(1)?),
            "completions" => once(&mut c.completions, scan.map(1)?),
            "extensions" => once(&mut c.extensions, scan.map(1)?),
            "prompts" => {
                let list_changed = scan.list_changed()?;
                once(&mut c.prompts, PromptsCapability { list_changed, extra: Map::new() })
            }
            "tools" => {
                let list_changed = scan.list_changed()?;
                once(&mut c.tools, ToolsCapability { list_changed, extra: Map::new() })
            }
            "resources" => {
                let (mut subscribe, mut list_changed) = (None, None);
                scan.object(|scan, key| match key {
                    "subscribe" => once(&mut subscribe, scan.boolean()?),
                    "listChanged" => once(&mut list_changed, scan.boolean()?),
                    _ => None,
                })?;
                let resources = ResourcesCapability { subscribe, list_changed, extra: Map::new() };
                once(&mut c.resources, resources)
            }
            "tasks" => {
                let tasks = scan.tasks()?;
                once(&mut c.tasks, tasks)
            }
            _ => None,
        })?;
        Some(c)
    }

    /// The `tasks` capability: `list`, `cancel` and `requests.tools.call`,
    /// each an object of free values.
    fn tasks(&mut self) -> Option<ServerTasksCapability> {
        let mut t = ServerTasksCapability::default();
        self.object(|scan, key| match key {
            "list" => once(&mut t.list, scan.map(1)?),
            "cancel" => once(&mut t.cancel, scan.map(1)?),
            "requests" => {
                let mut tools = None;
                scan.object(|scan, key| match key {
                    "tools" => {
                        let mut call = None;
                        scan.object(|scan, key| match key {
                            "call" => once(&mut call, scan.map(1)?),
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
            "name" => once(&mut name, scan.string()?),
            "version" => once(&mut version, scan.string()?),
            "title" => once(&mut title, scan.string()?),
            "description" => once(&mut description, scan.string()?),
            "websiteUrl" => once(&mut website_url, scan.string()?),
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
