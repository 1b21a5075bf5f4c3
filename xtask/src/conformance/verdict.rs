//! The verdict on one scenario's `checks.json` (every expected check
//! `SUCCESS`, none `FAILURE` or `WARNING`), the judgement against the known
//! gaps, and the tally of a run.

use std::time::{Duration, Instant};

use crate::conformance::scenarios::Scenario;

/// Judges one scenario's `checks.json`: every expected check `SUCCESS`, no
/// check `FAILURE` or `WARNING`.
pub(crate) fn verdict(
    scenario: &str,
    checks_json: &str,
    expected: &[&[&str]],
) -> Result<usize, String> {
    let checks = parse_checks(checks_json)
        .ok_or_else(|| format!("{scenario}: checks.json is not a list of checks"))?;
    let mut problems = Vec::new();
    for c in &checks {
        if c.status == "FAILURE" || c.status == "WARNING" {
            let what = if c.message.is_empty() { c.name.clone() } else { c.message.clone() };
            problems.push(format!("{} is {} ({what})", c.id, c.status));
        }
    }
    for want in expected.iter().flat_map(|group| group.iter()) {
        let (id, name) = match want.split_once('#') {
            Some((id, name)) => (id, Some(name)),
            None => (*want, None),
        };
        let ok = checks
            .iter()
            .any(|c| c.id == id && c.status == "SUCCESS" && name.is_none_or(|n| c.name == n));
        if !ok {
            problems.push(format!("{want} is missing or not SUCCESS"));
        }
    }
    if problems.is_empty() { Ok(checks.len()) } else { Err(problems.join("; ")) }
}

/// What became of one scenario.
#[derive(Debug, PartialEq)]
pub(crate) enum Judgement {
    Passed,
    Failed(String),
    /// A known gap that still fails, as expected: the reason, and how.
    KnownGap(&'static str, String),
    /// A known gap that passes now: the list must lose it.
    GapPasses,
}

/// The judgements of a run counted, for its end: one summary line, and
/// an error naming what fails the step.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    passed: usize,
    gaps: usize,
    failures: Vec<String>,
}

impl Tally {
    /// Counts the judgement of the scenario `label`.
    pub(crate) fn count(&mut self, label: String, judgement: &Judgement) {
        match judgement {
            Judgement::Passed => self.passed += 1,
            Judgement::KnownGap(..) => self.gaps += 1,
            Judgement::Failed(_) | Judgement::GapPasses => {}
        }
        if judgement.fails_ci() {
            self.failures.push(label);
        }
    }

    /// The summary line (`<what>: N passed, N known gaps, N failing, of
    /// <of> in <secs>s`).
    fn summary(&self, what: &str, of: &str, took: Duration) -> String {
        format!(
            "{what}: {} passed, {} known gaps, {} failing, of {of} in {:.1}s",
            self.passed,
            self.gaps,
            self.failures.len(),
            took.as_secs_f64()
        )
    }

    /// Prints the summary line of the run started at `start`; an error
    /// names every failing scenario.
    pub(crate) fn finish(self, what: &str, of: &str, start: Instant) -> Result<(), String> {
        println!("{}", self.summary(what, of, start.elapsed()));
        if self.failures.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{} failing (see above): {}",
                self.failures.len(),
                self.failures.join(", ")
            ))
        }
    }
}

impl Judgement {
    /// Whether this judgement fails the step.
    pub(crate) fn fails_ci(&self) -> bool {
        matches!(self, Judgement::Failed(_) | Judgement::GapPasses)
    }
}

/// Judges a scenario from its run (`checks.json`, or why there is none).
pub(crate) fn judge(s: &Scenario, run: Result<String, String>) -> Judgement {
    let result = run.and_then(|text| verdict(s.name, &text, s.expected));
    match (result, s.known_gap) {
        (Ok(_), None) => Judgement::Passed,
        (Err(why), None) => Judgement::Failed(why),
        (Ok(_), Some(_)) => Judgement::GapPasses,
        (Err(why), Some(reason)) => Judgement::KnownGap(reason, why),
    }
}

pub(crate) struct Check {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) status: String,
    pub(crate) message: String,
}

/// The checks of a `checks.json` array.
pub(crate) fn parse_checks(text: &str) -> Option<Vec<Check>> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let text_of = |c: &serde_json::Value, key: &str| {
        c.get(key).and_then(serde_json::Value::as_str).unwrap_or_default().to_owned()
    };
    value
        .as_array()?
        .iter()
        .map(|c| {
            Some(Check {
                id: c.get("id")?.as_str()?.to_owned(),
                status: c.get("status")?.as_str()?.to_owned(),
                name: text_of(c, "name"),
                message: text_of(c, "errorMessage").chars().take(300).collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::scenarios::{R26, gap, pass};

    #[test]
    fn a_tally_sums_up_and_names_what_fails() {
        let mut tally = Tally::default();
        tally.count("a".into(), &Judgement::Passed);
        tally.count("b".into(), &Judgement::KnownGap("why", "how".into()));
        tally.count("c".into(), &Judgement::Failed("no".into()));
        tally.count("d".into(), &Judgement::GapPasses);
        assert_eq!(
            tally.summary("conformance", "4 runs", Duration::from_millis(1250)),
            "conformance: 1 passed, 1 known gaps, 2 failing, of 4 runs in 1.2s"
        );
        let err = tally.finish("x", "4", Instant::now()).unwrap_err();
        assert_eq!(err, "2 failing (see above): c, d");
        let mut clean = Tally::default();
        clean.count("a".into(), &Judgement::Passed);
        assert!(clean.finish("x", "1", Instant::now()).is_ok());
    }

    #[test]
    fn verdicts() {
        let ok = r#"[{"id":"a","status":"SUCCESS","specReferences":[{"id":"x"}]},{"id":"b","status":"INFO"}]"#;
        assert_eq!(verdict("s", ok, &[&["a"]]), Ok(2));
        assert!(verdict("s", ok, &[&["a"], &["c"]]).unwrap_err().contains("c is missing"));
        let warn = r#"[{"id":"a","status":"SUCCESS"},{"id":"t","status":"WARNING"}]"#;
        assert!(verdict("s", warn, &[&["a"]]).unwrap_err().contains("t is WARNING"));
        let fail = r#"[{"id":"a","status":"FAILURE","errorMessage":"no call"}]"#;
        assert!(verdict("s", fail, &[&["a"]]).unwrap_err().contains("a is FAILURE (no call)"));
        assert!(verdict("s", "{}", &[]).is_err());
        // Only SKIPPED: the runner would pass it; the expected ids do not.
        let skipped = r#"[{"id":"a","status":"SKIPPED"}]"#;
        assert!(verdict("s", skipped, &[&["a"]]).is_err());
    }

    #[test]
    fn named_checks() {
        let checks = r#"[
            {"id":"h","name":"M_tools_list","status":"SUCCESS"},
            {"id":"h","name":"M_prompts_get","status":"SKIPPED"}
        ]"#;
        assert!(verdict("s", checks, &[&["h#M_tools_list"]]).is_ok());
        assert!(verdict("s", checks, &[&["h"]]).is_ok());
        let err = verdict("s", checks, &[&["h#M_tools_list", "h#M_prompts_get"]]).unwrap_err();
        assert!(err.contains("h#M_prompts_get is missing"), "{err}");
    }

    const PASSING: &str = r#"[{"id":"a","status":"SUCCESS"}]"#;
    const FAILING: &str = r#"[{"id":"a","status":"FAILURE"}]"#;

    #[test]
    fn judgements() {
        let must = pass("x", R26, &[&["a"]]);
        assert_eq!(judge(&must, Ok(PASSING.into())), Judgement::Passed);
        assert!(matches!(judge(&must, Ok(FAILING.into())), Judgement::Failed(_)));
        assert!(matches!(judge(&must, Err("no checks.json".into())), Judgement::Failed(_)));
        let known = gap("y", R26, &[&["a"]], "not built yet");
        let j = judge(&known, Ok(FAILING.into()));
        assert!(matches!(j, Judgement::KnownGap("not built yet", _)), "{j:?}");
        assert!(!j.fails_ci());
        assert!(!judge(&known, Err("crashed".into())).fails_ci());
        // A gap that passes fails CI until it leaves the list.
        assert_eq!(judge(&known, Ok(PASSING.into())), Judgement::GapPasses);
        assert!(Judgement::GapPasses.fails_ci());
        assert!(Judgement::Failed(String::new()).fails_ci());
        assert!(!Judgement::Passed.fails_ci());
    }
}
