//! What to tell the user when a server's command is missing.

use std::fmt;

/// A runtime a well-known MCP server command belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Runtime {
    /// `node`, `npm`, `npx`.
    NodeJs,
    /// `uv`, `uvx`.
    Uv,
    /// `python`, `python3`, `python3.12`, ...
    Python,
    /// `docker`.
    Docker,
}

impl Runtime {
    /// The runtime `command` belongs to, judged by its file name without
    /// directory and without a Windows executable extension
    /// (`/usr/bin/npx`, `npx.cmd` and `NPX.EXE` are all Node.js).
    #[must_use]
    pub fn for_command(command: &str) -> Option<Runtime> {
        let stem = command_stem(command);
        match stem.as_str() {
            "node" | "nodejs" | "npm" | "npx" => Some(Runtime::NodeJs),
            "uv" | "uvx" => Some(Runtime::Uv),
            "docker" => Some(Runtime::Docker),
            _ => {
                let version = stem.strip_prefix("python")?;
                version.bytes().all(|b| b.is_ascii_digit() || b == b'.').then_some(Runtime::Python)
            }
        }
    }

    /// The runtime's name, as the user would search for it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Runtime::NodeJs => "Node.js",
            Runtime::Uv => "uv",
            Runtime::Python => "Python",
            Runtime::Docker => "Docker",
        }
    }

    /// Where to get it.
    #[must_use]
    pub const fn install_url(self) -> &'static str {
        match self {
            Runtime::NodeJs => "https://nodejs.org",
            Runtime::Uv => "https://docs.astral.sh/uv/getting-started/installation/",
            Runtime::Python => "https://www.python.org/downloads/",
            Runtime::Docker => "https://docs.docker.com/get-started/get-docker/",
        }
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The last component of `command`, lower-cased, without a Windows
/// executable extension.
fn command_stem(command: &str) -> String {
    let name = command.rsplit(['/', '\\']).next().unwrap_or(command).to_ascii_lowercase();
    for extension in [".exe", ".cmd", ".bat", ".com", ".ps1"] {
        if let Some(stem) = name.strip_suffix(extension) {
            return stem.to_owned();
        }
    }
    name
}

/// "install Node.js (https://nodejs.org)" and the like.
fn install_advice(runtime: Runtime) -> String {
    let (name, url) = (runtime.name(), runtime.install_url());
    match runtime {
        Runtime::NodeJs => format!("install {name} ({url})"),
        Runtime::Uv => format!("install {name}, the Python package manager ({url})"),
        Runtime::Python => format!("install {name} 3 ({url})"),
        Runtime::Docker => format!("install {name} ({url}) and start it"),
    }
}

/// The sentence that tells the user how to get `runtime` onto PATH.
fn runtime_advice(command: &str, runtime: Runtime, host_name: &str) -> String {
    let usual_dir = match runtime {
        Runtime::Uv => " (usually ~/.local/bin)",
        _ => "",
    };
    format!(
        "{host_name} runs MCP servers that use `{command}` with {}: {}, \
         or make sure the directory that holds `{command}`{usual_dir} is on PATH, \
         then restart {host_name}.",
        runtime.name(),
        install_advice(runtime),
    )
}

/// What to tell the user when `command` is not found on PATH: what is
/// missing, what to install (for Node.js, uv, Python and Docker commands)
/// and what to do next. `host_name` is the name the user knows the host
/// program by ("Zed", "my-agent").
///
/// ```
/// let text = mcp_spawn_env::missing_command_guidance("npx", "Acme IDE");
/// assert!(text.starts_with("`npx` was not found. Acme IDE runs MCP servers"));
/// assert!(text.contains("https://nodejs.org"));
/// assert!(text.ends_with("then restart Acme IDE."));
/// ```
#[must_use]
pub fn missing_command_guidance(command: &str, host_name: &str) -> String {
    match Runtime::for_command(command) {
        Some(runtime) => {
            format!("`{command}` was not found. {}", runtime_advice(command, runtime, host_name))
        }
        None => format!(
            "`{command}` was not found. Install it, or make sure the directory that holds it \
             is on PATH (or set the server's command to its absolute path), then restart \
             {host_name}."
        ),
    }
}

/// What to tell the user when a path-like `command` (resolved to `tried`)
/// names no file.
#[must_use]
pub fn missing_file_guidance(command: &str, tried: &str, host_name: &str) -> String {
    match Runtime::for_command(command) {
        Some(runtime) => {
            let file_name = command.rsplit(['/', '\\']).next().unwrap_or(command);
            format!(
                "`{command}` was not found (no file at {tried}). `{file_name}` comes with {}: \
                 {}, or fix the server's command in {host_name}'s configuration, then restart \
                 {host_name}.",
                runtime.name(),
                install_advice(runtime),
            )
        }
        None => format!(
            "`{command}` was not found (no file at {tried}). A relative command is resolved \
             against the server's working directory: fix the server's command in \
             {host_name}'s configuration, or create the file."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtimes() {
        let cases: &[(&str, Option<Runtime>)] = &[
            ("npx", Some(Runtime::NodeJs)),
            ("npm", Some(Runtime::NodeJs)),
            ("node", Some(Runtime::NodeJs)),
            ("nodejs", Some(Runtime::NodeJs)),
            ("/usr/local/bin/npx", Some(Runtime::NodeJs)),
            ("C:\\Program Files\\nodejs\\npx.cmd", Some(Runtime::NodeJs)),
            ("NPX.EXE", Some(Runtime::NodeJs)),
            ("uvx", Some(Runtime::Uv)),
            ("uv", Some(Runtime::Uv)),
            ("uv.exe", Some(Runtime::Uv)),
            ("python", Some(Runtime::Python)),
            ("python3", Some(Runtime::Python)),
            ("python3.12", Some(Runtime::Python)),
            ("/usr/bin/python3", Some(Runtime::Python)),
            ("python.exe", Some(Runtime::Python)),
            ("docker", Some(Runtime::Docker)),
            ("docker.exe", Some(Runtime::Docker)),
            ("pythonista", None),
            ("npx-tool", None),
            ("uvicorn", None),
            ("my-server", None),
            ("", None),
        ];
        for &(command, expected) in cases {
            assert_eq!(Runtime::for_command(command), expected, "{command:?}");
        }
    }

    #[test]
    fn guidance_texts() {
        let cases: &[(&str, &str)] = &[
            (
                "npx",
                "`npx` was not found. Acme runs MCP servers that use `npx` with Node.js: install \
                 Node.js (https://nodejs.org), or make sure the directory that holds `npx` is on \
                 PATH, then restart Acme.",
            ),
            (
                "uvx",
                "`uvx` was not found. Acme runs MCP servers that use `uvx` with uv: install uv, \
                 the Python package manager (https://docs.astral.sh/uv/getting-started/installation/), \
                 or make sure the directory that holds `uvx` (usually ~/.local/bin) is on PATH, \
                 then restart Acme.",
            ),
            (
                "python3",
                "`python3` was not found. Acme runs MCP servers that use `python3` with Python: \
                 install Python 3 (https://www.python.org/downloads/), or make sure the directory \
                 that holds `python3` is on PATH, then restart Acme.",
            ),
            (
                "docker",
                "`docker` was not found. Acme runs MCP servers that use `docker` with Docker: \
                 install Docker (https://docs.docker.com/get-started/get-docker/) and start it, or \
                 make sure the directory that holds `docker` is on PATH, then restart Acme.",
            ),
            (
                "my-server",
                "`my-server` was not found. Install it, or make sure the directory that holds it \
                 is on PATH (or set the server's command to its absolute path), then restart Acme.",
            ),
        ];
        for &(command, expected) in cases {
            assert_eq!(missing_command_guidance(command, "Acme"), expected, "{command:?}");
        }
    }

    #[test]
    fn host_name_is_a_parameter() {
        for command in ["npx", "npm", "node", "uvx", "uv", "python", "python3", "docker", "other"] {
            let text = missing_command_guidance(command, "Host-XYZ");
            assert!(text.starts_with(&format!("`{command}` was not found.")), "{text}");
            assert!(text.ends_with("then restart Host-XYZ."), "{text}");
            assert!(!missing_command_guidance(command, "Other").contains("Host-XYZ"));
        }
    }

    #[test]
    fn missing_file_texts() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "./server.sh",
                "/work/server.sh",
                "`./server.sh` was not found (no file at /work/server.sh). A relative command is \
                 resolved against the server's working directory: fix the server's command in \
                 Acme's configuration, or create the file.",
            ),
            (
                "/opt/node/bin/npx",
                "/opt/node/bin/npx",
                "`/opt/node/bin/npx` was not found (no file at /opt/node/bin/npx). `npx` comes \
                 with Node.js: install Node.js (https://nodejs.org), or fix the server's command \
                 in Acme's configuration, then restart Acme.",
            ),
        ];
        for &(command, tried, expected) in cases {
            assert_eq!(missing_file_guidance(command, tried, "Acme"), expected, "{command:?}");
        }
    }

    #[test]
    fn runtime_names() {
        assert_eq!(Runtime::NodeJs.to_string(), "Node.js");
        assert_eq!(
            Runtime::Uv.install_url(),
            "https://docs.astral.sh/uv/getting-started/installation/"
        );
    }
}
