//! The benchmark binaries' command lines: flags, their values, and the
//! mode word among them.

/// Whether `flag` is among the arguments.
pub fn has(args: &[String], flag: &str) -> bool {
    args.iter().any(|a| a == flag)
}

/// What follows `flag` (`--flag VALUE`): `None` when the flag is absent,
/// `Some(None)` when it is the last argument.
pub fn after<'a>(args: &'a [String], flag: &str) -> Option<Option<&'a str>> {
    args.iter().position(|a| a == flag).map(|i| args.get(i + 1).map(String::as_str))
}

/// The value after `flag` among a binary's arguments (`--flag VALUE`);
/// `None` when the flag or its value is missing.
pub fn value_of<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    after(args, flag).flatten()
}

/// Every value of a flag that may be given more than once, in order.
pub fn values_of<'a>(args: &'a [String], flag: &str) -> Vec<&'a str> {
    args.windows(2).filter(|w| w[0] == flag).map(|w| w[1].as_str()).collect()
}

/// The number after `flag`: `Ok(None)` when the flag or its value is
/// missing, an error naming the flag when the value is not a number.
pub fn number<T: std::str::FromStr>(args: &[String], flag: &str) -> Result<Option<T>, String> {
    match value_of(args, flag) {
        Some(v) => v.parse().map(Some).map_err(|_| format!("{flag} takes a number, not {v:?}")),
        None => Ok(None),
    }
}

/// The words after a profiling flag (`--profile WHICH N [DEPTH]`): `None`
/// when the flag is absent; each word `None` when missing (or, for the
/// numbers, not a number).
pub fn profile<'a>(args: &'a [String], flag: &str) -> Option<Profile<'a>> {
    let i = args.iter().position(|a| a == flag)?;
    let number = |k: usize| args.get(i + k).and_then(|n| n.parse().ok());
    Some(Profile { which: args.get(i + 1).map(String::as_str), n: number(2), depth: number(3) })
}

/// What follows a profiling flag: see [`profile`].
#[derive(Debug, PartialEq, Eq)]
pub struct Profile<'a> {
    /// What to profile (a contender, a mode).
    pub which: Option<&'a str>,
    /// How many calls or starts.
    pub n: Option<usize>,
    /// How many of them in flight.
    pub depth: Option<usize>,
}

/// The mode word: the first argument that is neither a flag (`--...`) nor
/// the value of one of the `valued` flags.
pub fn mode<'a>(args: &'a [String], valued: &[&str]) -> Option<&'a str> {
    args.iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || !valued.contains(&args[i - 1].as_str())))
        .map(|(_, a)| a.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn a_flag_s_value_or_none() {
        let a = args("--quick --node n --era");
        assert_eq!(value_of(&a, "--node"), Some("n"));
        assert_eq!(value_of(&a, "--era"), None);
        assert_eq!(after(&a, "--era"), Some(None));
        assert_eq!(after(&a, "--python"), None);
        assert!(has(&a, "--quick") && !has(&a, "--pin"));
    }

    #[test]
    fn repeated_values_and_numbers() {
        let a = args("--scenario a --calls 12 --scenario b --seconds x");
        assert_eq!(values_of(&a, "--scenario"), ["a", "b"]);
        assert_eq!(number::<usize>(&a, "--calls"), Ok(Some(12)));
        assert_eq!(number::<usize>(&a, "--missing"), Ok(None));
        assert_eq!(
            number::<u64>(&a, "--seconds"),
            Err("--seconds takes a number, not \"x\"".to_owned())
        );
    }

    #[test]
    fn the_words_after_a_profiling_flag() {
        let a = args("--era modern --profile rmcp 300 x");
        let p = profile(&a, "--profile").unwrap();
        assert_eq!(p, Profile { which: Some("rmcp"), n: Some(300), depth: None });
        assert_eq!(profile(&args("--profile"), "--profile").unwrap().which, None);
        assert!(profile(&a, "--profile-start").is_none());
    }

    #[test]
    fn the_mode_word_skips_flags_and_their_values() {
        let valued = ["--server", "--era"];
        assert_eq!(
            mode(&args("--server seq --era modern throughput"), &valued),
            Some("throughput")
        );
        assert_eq!(mode(&args("seq --quick"), &valued), Some("seq"));
        assert_eq!(mode(&args("--quick --era modern"), &valued), None);
    }
}
