//! Which of a server's tools a host may see and call.

/// A server's allow and deny lists.
///
/// Both lists are normalised when the policy is built: names trimmed, blank
/// ones dropped, repeats removed (the first kept, order otherwise
/// unchanged). A tool is allowed when its trimmed name is non-empty, it is
/// not denied (deny wins over allow), and the allow list is empty or names
/// it. Matching is exact and case-sensitive.
///
/// ```
/// use mcp_host_registry::ToolPolicy;
///
/// let policy = ToolPolicy::new([" read ", "write", "", "read"], ["write"]);
/// assert_eq!(policy.allowed(), ["read", "write"]);
/// assert!(policy.is_allowed("read"));
/// assert!(!policy.is_allowed("write")); // deny wins
/// assert!(!policy.is_allowed("Read")); // case-sensitive
/// assert!(!policy.is_allowed("delete")); // not in a non-empty allow list
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolPolicy {
    allowed: Vec<String>,
    denied: Vec<String>,
}

impl ToolPolicy {
    /// A policy from raw allow and deny lists (normalised).
    pub fn new<A, D, S, T>(allowed: A, denied: D) -> Self
    where
        A: IntoIterator<Item = S>,
        D: IntoIterator<Item = T>,
        S: AsRef<str>,
        T: AsRef<str>,
    {
        ToolPolicy { allowed: normalise(allowed), denied: normalise(denied) }
    }

    /// The policy that allows every tool.
    pub fn allow_all() -> Self {
        ToolPolicy::default()
    }

    /// The normalised allow list (empty: every tool not denied).
    pub fn allowed(&self) -> &[String] {
        &self.allowed
    }

    /// The normalised deny list.
    pub fn denied(&self) -> &[String] {
        &self.denied
    }

    /// Whether a tool of this name may be listed and called.
    pub fn is_allowed(&self, tool: &str) -> bool {
        let tool = tool.trim();
        !tool.is_empty()
            && !self.denied.iter().any(|d| d == tool)
            && (self.allowed.is_empty() || self.allowed.iter().any(|a| a == tool))
    }
}

fn normalise<I, S>(names: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out: Vec<String> = Vec::new();
    for name in names {
        let name = name.as_ref().trim();
        if !name.is_empty() && !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
    }
    out
}
