//! The inputs of a configuration (`${input:ID}` in VS Code's `servers`
//! file): `MCPC_INPUT_<ID>` from the environment, else asked on the
//! terminal (a password without echo), else a configuration error naming
//! the variable to set. A project's configuration is reviewed for consent
//! with its references unexpanded (nothing is asked before it is
//! approved), then loaded with the answers.

use std::io::IsTerminal as _;
use std::sync::Arc;

use mcp_host_registry::{
    Config, InputKind, InputLookup, InputRequest, LoadOptions, TransportConfig,
};

use crate::output::{note, one_line, prompt};

/// The prefix of the environment variables that supply inputs.
pub(crate) const INPUT_ENV_PREFIX: &str = "MCPC_INPUT_";

/// `base` with inputs from the environment and the terminal.
pub(crate) fn asking(base: &LoadOptions) -> LoadOptions {
    LoadOptions {
        inputs: Some(Arc::new(ask) as InputLookup),
        input_env_prefix: Some(INPUT_ENV_PREFIX.into()),
        ..base.clone()
    }
}

/// `base` with each input left as its reference (`${input:ID}`): what a
/// person reviews and approves.
pub(crate) fn unexpanded(base: &LoadOptions) -> LoadOptions {
    LoadOptions {
        inputs: Some(Arc::new(|r: &InputRequest| Some(format!("${{input:{}}}", r.id)))),
        input_env_prefix: None,
        ..base.clone()
    }
}

/// Whether any value of the configuration still holds an input reference.
pub(crate) fn refers_to_inputs(config: &Config) -> bool {
    let has = |text: &str| text.contains("${input:");
    config.servers.iter().any(|s| match &s.transport {
        TransportConfig::Stdio(c) => {
            has(&c.command)
                || c.args.iter().any(|a| has(a))
                || c.env.values().any(|v| has(v))
                || c.cwd.as_ref().is_some_and(|d| has(&d.to_string_lossy()))
        }
        TransportConfig::Http { endpoint, headers, .. } => {
            has(endpoint) || headers.iter().any(|(_, v)| has(v.expose()))
        }
        _ => false,
    })
}

/// Asks for one input on the terminal; `None` without one (or at the end
/// of input).
fn ask(request: &InputRequest) -> Option<String> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return None;
    }
    crate::progress::clear();
    let what = request.description.as_deref().map(one_line).unwrap_or_default();
    note(&format!("mcpc: the configuration asks for input {}: {what}", one_line(&request.id)));
    let default = request.default.as_deref().map(|d| format!(" [{}]", one_line(d)));
    let answer = match request.kind {
        InputKind::PickString => {
            for (i, option) in request.options.iter().enumerate() {
                note(&format!("  {}) {}", i + 1, one_line(option)));
            }
            prompt(&format!("Choose 1-{}{}: ", request.options.len(), default.unwrap_or_default()));
            let line = read_line(false)?;
            match line.trim().parse::<usize>() {
                Ok(n) if (1..=request.options.len()).contains(&n) => request.options[n - 1].clone(),
                _ => line.trim().to_owned(),
            }
        }
        _ => {
            if request.password && !cfg!(unix) {
                note(&format!(
                    "mcpc: cannot read a password without echo here; set {}",
                    mcp_host_registry::input_variable(INPUT_ENV_PREFIX, &request.id)
                ));
                return None;
            }
            prompt(&format!("{}{}: ", one_line(&request.id), default.unwrap_or_default()));
            read_line(request.password)?
        }
    };
    match (answer.is_empty(), &request.default) {
        (true, Some(default)) => Some(default.clone()),
        _ => Some(answer),
    }
}

/// One line from the terminal, without its line break; not echoed when
/// `hidden`.
fn read_line(hidden: bool) -> Option<String> {
    let _echo_off = if hidden { EchoOff::new() } else { None };
    let mut line = String::new();
    let read = std::io::stdin().read_line(&mut line);
    if hidden {
        // The Enter that was not echoed.
        note("");
    }
    match read {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
    }
}

/// The terminal's echo turned off until dropped.
#[cfg(unix)]
struct EchoOff(nix::sys::termios::Termios);

#[cfg(unix)]
impl EchoOff {
    fn new() -> Option<Self> {
        use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
        let stdin = std::io::stdin();
        let saved = tcgetattr(&stdin).ok()?;
        let mut quiet = saved.clone();
        quiet.local_flags.remove(LocalFlags::ECHO);
        tcsetattr(&stdin, SetArg::TCSANOW, &quiet).ok()?;
        Some(EchoOff(saved))
    }
}

#[cfg(unix)]
impl Drop for EchoOff {
    fn drop(&mut self) {
        use nix::sys::termios::{SetArg, tcsetattr};
        let _ = tcsetattr(std::io::stdin(), SetArg::TCSANOW, &self.0);
    }
}

/// No echo control here: passwords are not asked for (see [`ask`]).
#[cfg(not(unix))]
struct EchoOff;

#[cfg(not(unix))]
impl EchoOff {
    fn new() -> Option<Self> {
        None
    }
}
