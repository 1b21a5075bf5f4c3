//! The inputs of a configuration (`${input:ID}` in VS Code's `servers`
//! file): `MCPC_INPUT_<ID>` from the environment, else asked on the
//! terminal (a password without echo), else a configuration error naming
//! the variable to set. A project's configuration is reviewed for consent
//! with its references unexpanded (nothing is asked before it is
//! approved), then loaded with the answers and checked to run what was
//! approved.

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::sync::{Arc, Mutex};

use mcp_host_registry::{
    Config, InputKind, InputLookup, InputRequest, LoadOptions, TransportConfig, consent_digest,
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

/// The answers given on the terminal, by input id.
pub(crate) type Answers = Arc<Mutex<BTreeMap<String, String>>>;

/// [`asking`], keeping the terminal's answers.
pub(crate) fn asking_kept(base: &LoadOptions) -> (LoadOptions, Answers) {
    let answers = Answers::default();
    let kept = answers.clone();
    let lookup = move |request: &InputRequest| {
        let answer = ask(request)?;
        kept.lock().unwrap_or_else(|e| e.into_inner()).insert(request.id.clone(), answer.clone());
        Some(answer)
    };
    let options = LoadOptions { inputs: Some(Arc::new(lookup)), ..asking(base) };
    (options, answers)
}

/// Whether `loaded` (read with the inputs' values) runs what `reviewed`
/// (read with their references, and approved) does once each reference
/// is given its value: the file was not changed between the two reads.
pub(crate) fn runs_what_was_approved(
    reviewed: &Config,
    loaded: &Config,
    answers: &Answers,
) -> bool {
    let answers = answers.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let value = |id: &str| {
        answers
            .get(id)
            .cloned()
            .or_else(|| std::env::var(mcp_host_registry::input_variable(INPUT_ENV_PREFIX, id)).ok())
    };
    let fill = |text: &str| {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${input:") {
            let Some(end) = rest[start..].find('}').map(|e| start + e) else { break };
            let id = rest[start + "${input:".len()..end].trim();
            out.push_str(&rest[..start]);
            out.push_str(&value(id).unwrap_or_else(|| rest[start..=end].to_owned()));
            rest = &rest[end + 1..];
        }
        out.push_str(rest);
        out
    };
    let mut filled = reviewed.clone();
    for server in &mut filled.servers {
        match &mut server.transport {
            TransportConfig::Stdio(c) => {
                c.command = fill(&c.command);
                for arg in &mut c.args {
                    *arg = fill(arg);
                }
                if let Some(dir) = &mut c.cwd {
                    *dir = fill(&dir.to_string_lossy()).into();
                }
            }
            TransportConfig::Http { endpoint, .. } => *endpoint = fill(endpoint),
            _ => {}
        }
    }
    consent_digest(&filled) == consent_digest(loaded)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str, options: &LoadOptions) -> Config {
        Config::from_json_str(text, options).unwrap().config
    }

    #[test]
    fn what_runs_is_compared_with_the_inputs_filled_in() {
        let file = r#"{"inputs": [{"type": "promptString", "id": "dir"}],
            "servers": {"a": {"command": "srv", "args": ["--root", "${input:dir}"]}}}"#;
        let reviewed = load(file, &unexpanded(&LoadOptions::default()));
        assert!(refers_to_inputs(&reviewed));
        let answers = Answers::default();
        answers.lock().unwrap().insert("dir".into(), "/data".into());
        let given = LoadOptions {
            inputs: Some(Arc::new(|_: &InputRequest| Some("/data".to_owned()))),
            ..LoadOptions::default()
        };
        assert!(runs_what_was_approved(&reviewed, &load(file, &given), &answers));
        // The file changed between the reads: another argument.
        let changed = file.replace("\"--root\"", "\"--root\", \"--evil\"");
        assert!(!runs_what_was_approved(&reviewed, &load(&changed, &given), &answers));
        // A different answer than the one recorded.
        let other = LoadOptions {
            inputs: Some(Arc::new(|_: &InputRequest| Some("/other".to_owned()))),
            ..LoadOptions::default()
        };
        assert!(!runs_what_was_approved(&reviewed, &load(file, &other), &answers));
    }
}
