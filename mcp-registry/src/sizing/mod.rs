//! Tool results sized for a model: a bound on the characters of text and
//! the bytes of binary content a result may carry, and the cut that
//! applies it.
//!
//! The decision is a pure function over the result ([`cut_result`]); the
//! one piece of I/O, keeping the whole result where the user can find it,
//! is [`SpillDir`] (in `spill.rs`). [`size_result`] puts them together.
//!
//! # What is counted, and how a result is cut
//!
//! - **Text**: the characters (Unicode scalar values) of `text` blocks and
//!   of embedded `resource` blocks with `text`, in the order of the blocks.
//!   Blocks are kept whole while the budget lasts; the first that does not
//!   fit is cut at a character boundary to what remains, and every later
//!   text is dropped (an embedded resource keeps its URI and MIME type).
//! - **Binary**: the decoded bytes of `image` and `audio` blocks and of
//!   embedded `resource` blocks with a `blob`, in order, against their own
//!   budget. A block that does not fit in what remains is replaced by a
//!   text block describing it (`[image left out: image/png, 2.0 MiB]`).
//! - **`structuredContent`** counts as its compact JSON text, after the
//!   content's text. It is kept whole when it fits in what the text left of
//!   the budget. Otherwise it is removed (a cut JSON value would be
//!   neither valid JSON nor valid under the tool's `outputSchema`); when
//!   the result has no text of its own, its JSON text takes its place as a
//!   text block and is cut like any text, so the model still sees a prefix.
//! - Everything else (`resource_link` blocks, `isError`, `_meta`, unknown
//!   members) is kept as it came.
//!
//! A cut result ends with one more text block, the notice, saying how many
//! characters and bytes were left out, and where the whole result went (a
//! spill file) or that it was not kept. The notice is not counted in the
//! budget (it is at most a few hundred characters plus the path).
//!
//! # A server asking for more
//!
//! No revision of the specification names a size key. Servers written for
//! Claude Code declare `_meta["anthropic/maxResultSizeChars"]` on a tool's
//! definition in `tools/list` (that host's default is 50,000 characters and
//! its ceiling 500,000); others put a per-call value in the result's
//! `_meta`. Both are read ([`REQUESTED_CAP_KEYS`]); the larger request
//! raises the text limit up to [`ResultLimits::max_requested_chars`], the
//! host's maximum, and never lowers it.

mod spill;

use mcp_proto::render::{base64_decoded_len, format_size};
use mcp_proto::types::{CallToolResult, ContentBlock, Meta, ResourceContents, TextContent, Tool};

pub use spill::{SpillDir, SpillError};

/// The `_meta` keys by which a server asks for a larger text limit, on a
/// tool's definition or on a result.
pub const REQUESTED_CAP_KEYS: &[&str] = &["anthropic/maxResultSizeChars"];

/// How large a tool result may be when it goes to a model.
///
/// ```
/// use mcp_host_registry::ResultLimits;
///
/// let limits = ResultLimits::default();
/// assert_eq!(limits.max_chars, 50_000);
/// assert_eq!(limits.max_binary_bytes, 1024 * 1024);
/// assert_eq!(limits.max_requested_chars, 500_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResultLimits {
    /// Characters of text (content and `structuredContent` together).
    pub max_chars: usize,
    /// Decoded bytes of binary content (images, audio, blobs together).
    pub max_binary_bytes: u64,
    /// The most characters a server's `_meta` request may raise
    /// `max_chars` to (the host's maximum). Below `max_chars`, requests
    /// are ignored.
    pub max_requested_chars: usize,
}

impl Default for ResultLimits {
    /// 50,000 characters, 1 MiB of binary content, requests honoured up to
    /// 500,000 characters.
    fn default() -> Self {
        ResultLimits {
            max_chars: 50_000,
            max_binary_bytes: 1024 * 1024,
            max_requested_chars: 500_000,
        }
    }
}

impl ResultLimits {
    /// Limits of `max_chars` characters and `max_binary_bytes` bytes, with
    /// the default maximum for servers' requests.
    pub fn new(max_chars: usize, max_binary_bytes: u64) -> Self {
        ResultLimits { max_chars, max_binary_bytes, ..Default::default() }
    }

    /// These limits with servers' requests honoured up to `max` characters.
    pub fn with_max_requested_chars(mut self, max: usize) -> Self {
        self.max_requested_chars = max;
        self
    }

    /// The text limit for a result of `tool`: `max_chars`, raised by the
    /// larger of the tool definition's and the result's `_meta` request
    /// ([`REQUESTED_CAP_KEYS`]), at most to `max_requested_chars`.
    ///
    /// ```
    /// use mcp_host_registry::ResultLimits;
    /// use mcp_proto::types::{CallToolResult, Tool};
    ///
    /// let limits = ResultLimits::new(1000, 0).with_max_requested_chars(5000);
    /// let mut tool = Tool::default();
    /// tool.meta = serde_json::from_str(r#"{"anthropic/maxResultSizeChars": 100000}"#).ok();
    /// assert_eq!(limits.char_limit_for(Some(&tool), &CallToolResult::default()), 5000);
    /// assert_eq!(limits.char_limit_for(None, &CallToolResult::default()), 1000);
    /// ```
    pub fn char_limit_for(&self, tool: Option<&Tool>, result: &CallToolResult) -> usize {
        let requested = [tool.and_then(|t| t.meta.as_ref()), result.meta.as_ref()]
            .into_iter()
            .flatten()
            .filter_map(requested_cap)
            .max();
        match requested {
            Some(n) => self.max_chars.max(n.min(self.max_requested_chars)),
            None => self.max_chars,
        }
    }
}

/// The largest character count a `_meta` object asks for, if any.
fn requested_cap(meta: &Meta) -> Option<usize> {
    REQUESTED_CAP_KEYS
        .iter()
        .filter_map(|key| meta.get(*key)?.as_u64())
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
        .max()
}

/// What a cut left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CutReport {
    /// Characters of text in the whole result (`structuredContent`'s JSON
    /// included).
    pub total_chars: usize,
    /// Characters of text left out.
    pub chars_left_out: usize,
    /// Binary blocks replaced by a description.
    pub binary_blocks_left_out: usize,
    /// Decoded bytes of the binary blocks left out.
    pub binary_bytes_left_out: u64,
    /// Whether `structuredContent` was removed.
    pub structured_content_removed: bool,
}

impl CutReport {
    /// Whether anything was left out.
    pub fn is_cut(&self) -> bool {
        self.chars_left_out > 0
            || self.binary_blocks_left_out > 0
            || self.structured_content_removed
    }
}

/// A result sized for a model.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SizedResult {
    /// The result to hand the model: the original when it fits, else the
    /// cut one ending with the notice.
    pub result: CallToolResult,
    /// What was left out (nothing when the result fit).
    pub report: CutReport,
    /// Where the whole result was kept, when it was cut and kept.
    pub spilled_to: Option<std::path::PathBuf>,
}

/// Where the whole of a cut result went, for the notice.
#[derive(Debug, Clone, Copy)]
pub enum WholeResult<'a> {
    /// Kept in this file.
    KeptAt(&'a std::path::Path),
    /// Not kept, for this reason (shown in the notice).
    NotKept(&'a str),
}

/// Whether `result` exceeds `max_chars` characters or `max_binary_bytes`
/// bytes (see the [module docs](self) for what counts).
pub fn exceeds(result: &CallToolResult, max_chars: usize, max_binary_bytes: u64) -> bool {
    let mut chars = 0usize;
    let mut bytes = 0u64;
    for block in &result.content {
        match measure(block) {
            Measure::Text(n) => chars = chars.saturating_add(n),
            Measure::Binary(n) => bytes = bytes.saturating_add(n),
            Measure::Other => {}
        }
    }
    if let Some(structured) = &result.structured_content {
        chars = chars.saturating_add(json_chars(structured));
    }
    chars > max_chars || bytes > max_binary_bytes
}

/// Cuts `result` to `max_chars` characters of text and `max_binary_bytes`
/// bytes of binary content, ending it with a notice naming `whole` (see
/// the [module docs](self)). A result within both limits comes back
/// unchanged, with an empty report and no notice.
///
/// ```
/// use mcp_host_registry::{WholeResult, cut_result};
/// use mcp_proto::types::{CallToolResult, ContentBlock};
///
/// let result = CallToolResult { content: vec![ContentBlock::text("héllo wörld")], ..Default::default() };
/// let (cut, report) = cut_result(&result, 5, 0, WholeResult::NotKept("no spill directory"));
/// assert_eq!(report.chars_left_out, 6);
/// let ContentBlock::Text(first) = &cut.content[0] else { unreachable!() };
/// assert_eq!(first.text, "héllo");
/// assert_eq!(cut.content.len(), 2); // the notice
/// ```
pub fn cut_result(
    result: &CallToolResult,
    max_chars: usize,
    max_binary_bytes: u64,
    whole: WholeResult<'_>,
) -> (CallToolResult, CutReport) {
    if !exceeds(result, max_chars, max_binary_bytes) {
        return (result.clone(), CutReport::default());
    }
    let mut report = CutReport::default();
    let mut chars_left = max_chars;
    let mut bytes_left = max_binary_bytes;
    let mut has_text = false;
    let mut content = Vec::with_capacity(result.content.len() + 1);
    for block in &result.content {
        match measure(block) {
            Measure::Text(n) => {
                has_text = true;
                report.total_chars = report.total_chars.saturating_add(n);
                let keep = n.min(chars_left);
                chars_left -= keep;
                report.chars_left_out += n - keep;
                if keep == n {
                    content.push(block.clone());
                } else if let Some(cut) = cut_text_block(block, keep) {
                    content.push(cut);
                }
            }
            Measure::Binary(n) => {
                if n <= bytes_left {
                    bytes_left -= n;
                    content.push(block.clone());
                } else {
                    report.binary_blocks_left_out += 1;
                    report.binary_bytes_left_out = report.binary_bytes_left_out.saturating_add(n);
                    content.push(ContentBlock::text(describe_binary(block, n)));
                }
            }
            Measure::Other => content.push(block.clone()),
        }
    }
    let mut structured_content = None;
    if let Some(structured) = &result.structured_content {
        let text = structured.to_string();
        let n = text.chars().count();
        report.total_chars = report.total_chars.saturating_add(n);
        if n <= chars_left {
            structured_content = Some(structured.clone());
        } else {
            report.structured_content_removed = true;
            report.chars_left_out += n - chars_left;
            if !has_text {
                content.push(ContentBlock::text(prefix_chars(&text, chars_left)));
            }
        }
    }
    content.push(ContentBlock::Text(TextContent::new(notice(&report, whole))));
    let cut = CallToolResult {
        content,
        structured_content,
        is_error: result.is_error,
        meta: result.meta.clone(),
        extra: result.extra.clone(),
    };
    (cut, report)
}

/// Sizes a result of `tool` (its definition, when known, for its `_meta`
/// request) under `limits`: unchanged when it fits; otherwise the whole
/// result is kept in `spill` (when given) and the cut result names the
/// file. A spill that fails is logged and named in the notice as not
/// kept; the cut happens regardless.
pub fn size_result(
    server: &str,
    tool: &str,
    definition: Option<&Tool>,
    result: CallToolResult,
    limits: &ResultLimits,
    spill: Option<&SpillDir>,
) -> SizedResult {
    let max_chars = limits.char_limit_for(definition, &result);
    if !exceeds(&result, max_chars, limits.max_binary_bytes) {
        return SizedResult { result, report: CutReport::default(), spilled_to: None };
    }
    let kept = match spill {
        Some(dir) => match dir.keep(server, tool, &result) {
            Ok(path) => Ok(path),
            Err(e) => {
                tracing::warn!(target: "mcp_host_registry", server, tool, "a large result was not kept: {e}");
                Err(e.to_string())
            }
        },
        None => Err("no spill directory is set".to_owned()),
    };
    let whole = match &kept {
        Ok(path) => WholeResult::KeptAt(path),
        Err(why) => WholeResult::NotKept(why),
    };
    let (cut, report) = cut_result(&result, max_chars, limits.max_binary_bytes, whole);
    SizedResult { result: cut, report, spilled_to: kept.ok() }
}

enum Measure {
    Text(usize),
    Binary(u64),
    Other,
}

fn measure(block: &ContentBlock) -> Measure {
    match block {
        ContentBlock::Text(t) => Measure::Text(t.text.chars().count()),
        ContentBlock::Image(i) => Measure::Binary(base64_decoded_len(&i.data)),
        ContentBlock::Audio(a) => Measure::Binary(base64_decoded_len(&a.data)),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::Text(t) => Measure::Text(t.text.chars().count()),
            ResourceContents::Blob(b) => Measure::Binary(base64_decoded_len(&b.blob)),
        },
        _ => Measure::Other,
    }
}

fn json_chars(value: &serde_json::Value) -> usize {
    value.to_string().chars().count()
}

/// The first `n` characters of `text` (cut at a character boundary).
fn prefix_chars(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((end, _)) => text[..end].to_owned(),
        None => text.to_owned(),
    }
}

/// A text block cut to `keep` characters; `None` for a plain text block
/// with nothing left (an embedded resource keeps its URI).
fn cut_text_block(block: &ContentBlock, keep: usize) -> Option<ContentBlock> {
    match block {
        ContentBlock::Text(_) if keep == 0 => None,
        ContentBlock::Text(t) => {
            let mut t = t.clone();
            t.text = prefix_chars(&t.text, keep);
            Some(ContentBlock::Text(t))
        }
        ContentBlock::Resource(r) => {
            let mut r = r.clone();
            if let ResourceContents::Text(t) = &mut r.resource {
                t.text = prefix_chars(&t.text, keep);
            }
            Some(ContentBlock::Resource(r))
        }
        other => Some(other.clone()),
    }
}

/// `[image left out: image/png, 2.0 MiB]`.
fn describe_binary(block: &ContentBlock, bytes: u64) -> String {
    let (kind, mime, uri) = match block {
        ContentBlock::Image(i) => ("image", Some(i.mime_type.as_str()), None),
        ContentBlock::Audio(a) => ("audio", Some(a.mime_type.as_str()), None),
        ContentBlock::Resource(r) => ("resource", r.resource.mime_type(), Some(r.resource.uri())),
        _ => ("content", None, None),
    };
    let mime = mime.filter(|m| !m.is_empty()).unwrap_or("unknown type");
    let size = format_size(bytes);
    match uri {
        Some(uri) => format!("[{kind} left out: {uri}, {mime}, {size}]"),
        None => format!("[{kind} left out: {mime}, {size}]"),
    }
}

/// The notice that ends a cut result.
fn notice(report: &CutReport, whole: WholeResult<'_>) -> String {
    let mut parts = Vec::new();
    if report.chars_left_out > 0 {
        parts.push(format!(
            "{} of {} characters left out",
            report.chars_left_out, report.total_chars
        ));
    }
    if report.structured_content_removed {
        parts.push("structuredContent removed".to_owned());
    }
    if report.binary_blocks_left_out > 0 {
        let blocks = if report.binary_blocks_left_out == 1 { "block" } else { "blocks" };
        parts.push(format!(
            "{} binary {blocks} ({}) left out",
            report.binary_blocks_left_out,
            format_size(report.binary_bytes_left_out)
        ));
    }
    let whole = match whole {
        WholeResult::KeptAt(path) => format!("the whole result is in {}", path.display()),
        WholeResult::NotKept(why) => format!("the whole result was not kept ({why})"),
    };
    format!("[result cut to fit: {}; {whole}]", parts.join(", "))
}
