//! A tool's arguments, read with typed accessors.

use serde_json::{Map, Value};

/// A tool's arguments, with typed accessors whose errors name the argument.
pub(super) struct Args(pub(super) Map<String, Value>);

impl Args {
    pub(super) fn string(&mut self, name: &str) -> Result<String, String> {
        self.opt_string(name)?.ok_or_else(|| Args::missing(name))
    }

    pub(super) fn opt_string(&mut self, name: &str) -> Result<Option<String>, String> {
        Args::string_of(name, self.0.remove(name))
    }

    /// A string argument's value, or none.
    pub(super) fn string_of(name: &str, value: Option<Value>) -> Result<Option<String>, String> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("argument `{name}` must be a string")),
        }
    }

    pub(super) fn missing(name: &str) -> String {
        format!("missing required argument `{name}`")
    }

    pub(super) fn number(&self, name: &str) -> Result<f64, String> {
        match self.0.get(name) {
            None | Some(Value::Null) => Err(Args::missing(name)),
            Some(v) => v.as_f64().ok_or_else(|| format!("argument `{name}` must be a number")),
        }
    }

    pub(super) fn integer(&self, name: &str, max: u64) -> Result<u64, String> {
        self.opt_integer(name, max)?.ok_or_else(|| Args::missing(name))
    }

    /// A whole number in `0..=max`; `5.0` counts as `5`.
    pub(super) fn opt_integer(&self, name: &str, max: u64) -> Result<Option<u64>, String> {
        let value = match self.0.get(name) {
            None | Some(Value::Null) => return Ok(None),
            Some(v) => v,
        };
        let n = value.as_u64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= max as f64)
                .map(|f| f as u64)
        });
        match n {
            Some(n) if n <= max => Ok(Some(n)),
            _ => Err(format!("argument `{name}` must be an integer from 0 to {max}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn integer_arguments() {
        let args = Args(
            json!({"a": 5, "b": 5.0, "c": 5.5, "d": -1, "e": "5", "f": 1000})
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(args.opt_integer("a", 10), Ok(Some(5)));
        assert_eq!(args.opt_integer("b", 10), Ok(Some(5)));
        assert_eq!(args.opt_integer("missing", 10), Ok(None));
        for bad in ["c", "d", "e", "f"] {
            assert!(args.opt_integer(bad, 10).is_err(), "{bad}");
        }
        assert!(args.integer("missing", 10).unwrap_err().contains("missing"));
    }
}
