//! Values from the environment: `${VAR}` in string values, and secrets
//! given as `KEY` or `KEY_env`.

use serde_json::{Map, Value};

use super::types::Secret;
use super::validate::{Ctx, Entry, invalid, opt_str};
use crate::error::{ConfigError, Location, MissingVariable, WarningKind};

impl Ctx<'_> {
    /// An environment variable's value. One that is not set is an error in
    /// strict mode; otherwise it makes the entry unusable (the first one is
    /// remembered) and reads as empty.
    pub(super) fn var(&mut self, name: &str, location: Location) -> Result<String, ConfigError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(invalid(location, "names no environment variable"));
        }
        if let Some(value) = (self.options.env)(name) {
            return Ok(value);
        }
        if self.options.strict {
            return Err(ConfigError::MissingEnv { location, variable: name.to_owned() });
        }
        if self.missing.is_none() {
            self.missing = Some(MissingVariable { location, variable: name.to_owned() });
        }
        Ok(String::new())
    }

    /// `text` with `${VAR}`, `${env:VAR}`, `${VAR:-default}` and
    /// `${env:VAR:-default}` replaced ([`expand_with`]), and the hosts'
    /// variables in their JSON.
    pub(super) fn expand(&mut self, text: &str, location: Location) -> Result<String, ConfigError> {
        let options = self.options;
        let mut host = self.host.take();
        let mut secret = false;
        let expanded = expand_with(
            text,
            |inner| {
                let (value, is_secret) = match host.as_mut()?.resolve(inner, &location, options)? {
                    Ok(found) => found,
                    Err(e) => return Some(Err(e)),
                };
                secret |= is_secret;
                Some(Ok(value))
            },
            |name, default| match default {
                Some(default) => match (self.options.env)(name) {
                    Some(value) if !value.is_empty() => Ok(value),
                    _ => Ok(default.to_owned()),
                },
                None => self.var(name, location.clone()),
            },
        );
        self.host = host;
        let shown = location.key.as_deref().is_none_or(|k| {
            !(k.starts_with("env.") || k.starts_with("headers.") || k.starts_with("auth."))
        });
        if secret && shown && expanded.is_ok() {
            self.warn(
                WarningKind::SecretShown,
                location,
                "a password input is used here, where the value is shown as part of the \
                 command line or URL; pass secrets in `env` or `headers`"
                    .into(),
            );
        }
        expanded
    }

    /// `KEY` or `KEY_env` (exactly one).
    pub(super) fn secret(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        entry: &Entry,
    ) -> Result<Secret, ConfigError> {
        let env_key = format!("{key}_env");
        let at = |k: &str| entry.at(format!("auth.{k}"));
        let literal = opt_str(map, key, || at(key))?;
        let var = opt_str(map, &env_key, || at(&env_key))?;
        match (literal, var) {
            (Some(_), Some(_)) => {
                Err(invalid(at(key), &format!("give `{key}` or `{env_key}`, not both")))
            }
            (Some(value), None) => self.expand(value, at(key)).map(Secret),
            (None, Some(var)) => self.var(var, at(&env_key)).map(Secret),
            (None, None) => Err(invalid(at(key), &format!("is missing (or give `{env_key}`)"))),
        }
    }
}

/// Replaces `${NAME}` and `${env:NAME}` with `value(NAME, None)`, and
/// `${NAME:-default}` and `${env:NAME:-default}` with
/// `value(NAME, Some(default))`; `$${` is a literal `${`. Anything else
/// (an unclosed `${`, a `${...}` that does not hold a variable name) is kept
/// verbatim. `NAME` is `[A-Za-z_][A-Za-z0-9_]*`.
///
/// `host` is asked first about each `${...}` not starting with `env:`
/// (its whole inside): `Some` is its value (the hosts' variables).
pub(super) fn expand_with<H, F>(
    text: &str,
    mut host: H,
    mut value: F,
) -> Result<String, ConfigError>
where
    H: FnMut(&str) -> Option<Result<String, ConfigError>>,
    F: FnMut(&str, Option<&str>) -> Result<String, ConfigError>,
{
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('$') {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        if let Some(after) = tail.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
            continue;
        }
        let Some(after) = tail.strip_prefix("${") else {
            out.push('$');
            rest = &tail[1..];
            continue;
        };
        let Some(end) = after.find('}') else {
            out.push_str(tail);
            return Ok(out);
        };
        let inner = &after[..end];
        if !inner.starts_with("env:")
            && let Some(found) = host(inner)
        {
            out.push_str(&found?);
            rest = &after[end + 1..];
            continue;
        }
        let reference = inner.strip_prefix("env:").unwrap_or(inner);
        let (name, default) = match reference.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (reference, None),
        };
        let is_name = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_name {
            out.push_str(&value(name, default)?);
        } else {
            out.push_str(&tail[..2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
