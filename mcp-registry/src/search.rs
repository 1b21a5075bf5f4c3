//! Tool search: which of many tools fit a request, so a host sends the
//! model only those.
//!
//! [`ToolIndex`] ranks tools by BM25 over their name (split at
//! `camelCase`, `snake_case` and `kebab-case` boundaries), title and
//! description, the name counting three times and the title twice. It is
//! plain data: built from tools, searched without I/O.

use std::collections::HashMap;

use mcp_proto::types::Tool;

use crate::registry::Registry;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;
/// How many times a name's words count against a description's.
const NAME_WEIGHT: u32 = 3;
/// How many times a title's words count.
const TITLE_WEIGHT: u32 = 2;

/// Words too common to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "for", "from", "i", "in", "into", "is",
    "it", "its", "me", "my", "of", "on", "or", "that", "the", "this", "to", "with", "you", "your",
];

/// One tool a search found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SearchHit {
    /// The server that offers it.
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// Its BM25 score (higher is better; only comparable within one
    /// search).
    pub score: f64,
}

#[derive(Debug, Clone)]
struct Doc {
    server: String,
    tool: String,
    /// Weighted term frequencies.
    terms: HashMap<String, u32>,
    /// The weighted length.
    len: u32,
}

/// A BM25 index over tools' names, titles and descriptions.
///
/// ```
/// use mcp_host_registry::ToolIndex;
/// use mcp_proto::types::Tool;
///
/// let tool = |name: &str, description: &str| {
///     let mut t: Tool = serde_json::from_value(serde_json::json!({"name": name})).unwrap();
///     t.description = Some(description.into());
///     t
/// };
/// let mut index = ToolIndex::new();
/// index.add("files", &tool("read_text_file", "Read the contents of a file as text"));
/// index.add("files", &tool("move_file", "Move or rename a file"));
/// index.add("math", &tool("getSum", "Returns the sum of two numbers"));
///
/// let hits = index.search("rename a file", 2);
/// assert_eq!(hits[0].tool, "move_file");
/// assert_eq!(index.search("sum", 1)[0].server, "math");
/// assert!(index.search("weather", 5).is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolIndex {
    docs: Vec<Doc>,
    /// In how many documents each term occurs.
    df: HashMap<String, u32>,
    total_len: u64,
}

impl ToolIndex {
    /// An empty index.
    pub fn new() -> ToolIndex {
        ToolIndex::default()
    }

    /// An index of these (server, tool) pairs.
    pub fn from_tools<'a, I>(tools: I) -> ToolIndex
    where
        I: IntoIterator<Item = (&'a str, &'a Tool)>,
    {
        let mut index = ToolIndex::new();
        for (server, tool) in tools {
            index.add(server, tool);
        }
        index
    }

    /// Adds a server's tool.
    pub fn add(&mut self, server: &str, tool: &Tool) {
        let mut terms: HashMap<String, u32> = HashMap::new();
        let mut len = 0;
        let fields = [
            (Some(tool.name.as_str()), NAME_WEIGHT),
            (tool.title.as_deref(), TITLE_WEIGHT),
            (tool.description.as_deref(), 1),
        ];
        for (text, weight) in fields {
            for term in tokenize(text.unwrap_or_default()) {
                *terms.entry(term).or_default() += weight;
                len += weight;
            }
        }
        for term in terms.keys() {
            *self.df.entry(term.clone()).or_default() += 1;
        }
        self.total_len += u64::from(len);
        self.docs.push(Doc { server: server.to_owned(), tool: tool.name.clone(), terms, len });
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The `k` tools that fit `query` best, best first (equal scores in
    /// server, then tool order). Tools that share no word with the query
    /// are never returned.
    pub fn search(&self, query: &str, k: usize) -> Vec<SearchHit> {
        if self.docs.is_empty() || k == 0 {
            return Vec::new();
        }
        let mut query_terms = tokenize(query);
        query_terms.sort();
        query_terms.dedup();
        let n = self.docs.len() as f64;
        let avg_len = (self.total_len as f64 / n).max(1.0);
        let mut hits: Vec<SearchHit> = self
            .docs
            .iter()
            .filter_map(|doc| {
                let mut score = 0.0;
                for term in &query_terms {
                    let Some(&tf) = doc.terms.get(term) else { continue };
                    let df = f64::from(self.df[term]);
                    let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                    let tf = f64::from(tf);
                    let norm = 1.0 - B + B * f64::from(doc.len) / avg_len;
                    score += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
                }
                (score > 0.0).then(|| SearchHit {
                    server: doc.server.clone(),
                    tool: doc.tool.clone(),
                    score,
                })
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.server.cmp(&b.server))
                .then_with(|| a.tool.cmp(&b.tool))
        });
        hits.truncate(k);
        hits
    }
}

impl Registry {
    /// The `k` allowed tools of every server that fit `query` best, best
    /// first: a [`ToolIndex`] over [`list_all_tools`](Self::list_all_tools)
    /// (so tools withheld by pinning are not found). Servers that cannot
    /// be listed are left out (logged at `debug`); a host that must report
    /// them builds its own index from `list_all_tools`.
    pub async fn search_tools(&self, query: &str, k: usize) -> Vec<SearchHit> {
        let listing = self.list_all_tools().await;
        let mut index = ToolIndex::new();
        for entry in &listing {
            match &entry.result {
                Ok(tools) => {
                    for tool in tools {
                        index.add(&entry.server, tool);
                    }
                }
                Err(e) => {
                    tracing::debug!(server = %entry.server, "not searched: {e}");
                }
            }
        }
        index.search(query, k)
    }
}

/// The words of `text`: split at anything not a letter or digit and at
/// `camelCase` boundaries, lower-cased, stop words dropped, common English
/// endings taken off (`files` and `file`, `reading` and `read`, match).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut prev: Option<char> = None;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            flush(&mut current, &mut words);
            prev = None;
            continue;
        }
        // `readFile` and `HTTPServer` split before the upper-case letter
        // that starts a word.
        if let Some(p) = prev
            && c.is_uppercase()
            && (p.is_lowercase() || p.is_ascii_digit())
        {
            flush(&mut current, &mut words);
        }
        current.extend(c.to_lowercase());
        prev = Some(c);
    }
    flush(&mut current, &mut words);
    words
}

fn flush(current: &mut String, words: &mut Vec<String>) {
    if current.is_empty() {
        return;
    }
    let word = std::mem::take(current);
    if STOP_WORDS.contains(&word.as_str()) {
        return;
    }
    words.push(stem(word));
}

/// A light stemmer: plurals, `-ing`, `-ed`, then a final `e` (so `move`,
/// `moves`, `moved` and `moving` meet).
fn stem(word: String) -> String {
    if !word.is_ascii() || word.len() <= 3 {
        return word;
    }
    let base = strip_ending(&word);
    match base.strip_suffix('e') {
        Some(shorter) if shorter.len() >= 3 => shorter.to_owned(),
        _ => base.into_owned(),
    }
}

fn strip_ending(word: &str) -> std::borrow::Cow<'_, str> {
    let n = word.len();
    if let Some(base) = word.strip_suffix("ies")
        && n > 4
    {
        return format!("{base}y").into();
    }
    for (ending, min) in [("ing", 6), ("ed", 5)] {
        if let Some(base) = word.strip_suffix(ending)
            && n >= min
        {
            return base.into();
        }
    }
    if let Some(base) = word.strip_suffix("es")
        && ["ss", "sh", "ch", "x"].iter().any(|e| base.ends_with(e))
    {
        return base.into();
    }
    if let Some(base) = word.strip_suffix('s')
        && !base.ends_with(['s', 'u', 'i'])
    {
        return base.into();
    }
    word.into()
}

#[cfg(test)]
mod tests {
    use super::tokenize;

    #[test]
    fn words_of_names_and_sentences() {
        let cases: &[(&str, &[&str])] = &[
            ("read_text_file", &["read", "text", "fil"]),
            ("get-sum", &["get", "sum"]),
            ("readFile", &["read", "fil"]),
            ("HTTPServer2Go", &["httpserver2", "go"]),
            ("list_directories", &["list", "directory"]),
            ("Reads the files, moved it", &["read", "fil", "mov"]),
            ("move, moving, moves", &["mov", "mov", "mov"]),
            ("Compresses status", &["compress", "status"]),
            ("", &[]),
        ];
        for (text, expected) in cases {
            assert_eq!(tokenize(text), *expected, "{text:?}");
        }
    }
}
