//! `bridge-bench`'s flags: where the testkit, `mcpc` and the Node bridges
//! are, which scenarios to run; the command line after `--` of the helper
//! modes.

use std::path::PathBuf;
use std::process::Command;

use mcp_bench::args::{has, value_of, values_of};
use mcp_bench::proc::testkit_path;

use crate::USAGE;

/// Where everything is.
pub(crate) struct Config {
    pub(crate) quick: bool,
    pub(crate) testkit: PathBuf,
    pub(crate) mcpc: PathBuf,
    /// Node.js and the directory of the pinned Node bridges; `None` with
    /// `--no-node` (their rows are left out).
    pub(crate) node: Option<(PathBuf, PathBuf)>,
    /// Whether this `mcpc` has `serve --http`.
    pub(crate) mcpc_http: bool,
    /// The scenarios asked for (`--scenario KEY`, repeatable); empty: all.
    only: Vec<String>,
}

/// The scenarios' keys for `--scenario`, in the order they run.
const SCENARIO_KEYS: [&str; 3] = ["stdio-http", "stdio-stdio", "http-stdio"];

impl Config {
    /// The flags among `args` (`mcpc` asked whether it has `serve --http`).
    pub(crate) fn from_args(args: &[String]) -> Result<Config, String> {
        let need = |flag: &str| {
            value_of(args, flag)
                .map(PathBuf::from)
                .ok_or_else(|| format!("{flag} is needed\n{USAGE}"))
        };
        let mcpc = need("--mcpc")?;
        let mcpc_http = Command::new(&mcpc)
            .args(["serve", "--help"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("--http"))
            .unwrap_or(false);
        let node = match has(args, "--no-node") {
            true => None,
            false => Some((need("--node")?, need("--bridges")?)),
        };
        let only: Vec<String> =
            values_of(args, "--scenario").into_iter().map(str::to_owned).collect();
        if let Some(unknown) = only.iter().find(|k| !SCENARIO_KEYS.contains(&k.as_str())) {
            return Err(format!(
                "--scenario takes one of {}, not {unknown:?}",
                SCENARIO_KEYS.join(", ")
            ));
        }
        Ok(Config {
            quick: has(args, "--quick"),
            testkit: testkit_path(args),
            mcpc,
            node,
            mcpc_http,
            only,
        })
    }

    /// `node_modules/<package>/<file>` of the pinned bridges, and the Node.js
    /// to run it; `None` with `--no-node`.
    fn node_script(&self, script: &str) -> Option<(PathBuf, String)> {
        let (node, dir) = self.node.as_ref()?;
        let path = dir.join("node_modules").join(script);
        Some((node.clone(), path.to_string_lossy().into_owned()))
    }

    /// `mcp-remote`, with `--no-node` none.
    pub(crate) fn mcp_remote(&self) -> Option<(PathBuf, String)> {
        self.node_script("mcp-remote/dist/proxy.js")
    }

    /// `supergateway`, with `--no-node` none.
    pub(crate) fn supergateway(&self) -> Option<(PathBuf, String)> {
        self.node_script("supergateway/dist/index.js")
    }

    /// Whether the scenario `key` is asked for.
    pub(crate) fn wants(&self, key: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|k| k == key)
    }

    /// The testkit's stdio server as one shell-quoted command line.
    pub(crate) fn stdio_server_line(&self) -> String {
        format!("{} stdio", shell_quote(&self.testkit.to_string_lossy()))
    }
}

/// The command line after `--`: its program and arguments.
pub(crate) fn command_after_dashes(args: &[String]) -> Result<(&str, &[String]), String> {
    let at = args
        .iter()
        .position(|a| a == "--")
        .ok_or_else(|| format!("-- PROGRAM is needed\n{USAGE}"))?;
    match &args[at + 1..] {
        [program, rest @ ..] => Ok((program.as_str(), rest)),
        [] => Err(format!("a program is needed after --\n{USAGE}")),
    }
}

/// POSIX shell quoting of one word (for `--server "<command>"` specs).
fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+=:@".contains(&b))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_keeps_plain_words_and_quotes_the_rest() {
        assert_eq!(shell_quote("/a/b-c/mcp-testkit"), "/a/b-c/mcp-testkit");
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
