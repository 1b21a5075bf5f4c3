//! `WWW-Authenticate` challenges (RFC 9110, section 11.6.1) and the typed
//! view of a Bearer challenge (RFC 6750, RFC 9728, MCP authorization).
//!
//! The grammar:
//!
//! ```text
//! WWW-Authenticate = #challenge
//! challenge        = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//! auth-param       = token BWS "=" BWS ( token / quoted-string )
//! token68          = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
//! ```
//!
//! A comma separates both challenges and the parameters of one challenge;
//! after a comma, `token BWS "="` continues the parameter list and any other
//! token starts a new challenge. Scheme and parameter names compare without
//! regard to ASCII case; quoted-string values are unescaped.
//!
//! A malformed challenge is returned as a [`ChallengeError`] naming what is
//! wrong and where; parsing resumes at the next comma (outside quoted
//! strings) that is followed by something that can only start a challenge,
//! so a broken challenge does not hide the well-formed ones around it. A
//! parameter that appears twice in one challenge makes that challenge
//! invalid ([`ChallengeError::DuplicateParam`]).
//!
//! ```
//! use mcp_sse::www_authenticate::{self, BearerChallenge};
//!
//! let header = r#"Basic realm="a", Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://x/.well-known/oauth-protected-resource""#;
//! let challenges = www_authenticate::parse(header);
//! assert_eq!(challenges.len(), 2);
//! let bearer = www_authenticate::find_bearer([header]).unwrap();
//! assert_eq!(bearer.error.as_deref(), Some("insufficient_scope"));
//! assert_eq!(bearer.scope.unwrap(), ["files:read", "files:write"]);
//! assert_eq!(
//!     bearer.resource_metadata.as_deref(),
//!     Some("https://x/.well-known/oauth-protected-resource")
//! );
//! ```

use std::fmt;

use nom::IResult;
use nom::Parser;
use nom::bytes::complete::{take_while, take_while1};
use nom::character::complete::char;
use nom::combinator::recognize;

/// One challenge: an auth-scheme and either a token68 or a list of
/// parameters (or nothing).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Challenge {
    /// The auth-scheme as written (compare it with [`Challenge::is_scheme`]).
    pub scheme: String,
    /// The token68 after the scheme, if the challenge has one (then
    /// `params` is empty).
    pub token68: Option<String>,
    /// The parameters in order, names as written, values unescaped.
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// Whether the scheme is `scheme`, ignoring ASCII case.
    pub fn is_scheme(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }

    /// The value of the parameter `name`, ignoring ASCII case.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

impl fmt::Display for Challenge {
    /// The challenge in its canonical form (every value quoted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.scheme)?;
        if let Some(t) = &self.token68 {
            return write!(f, " {t}");
        }
        for (i, (name, value)) in self.params.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            write!(f, "{name}=\"")?;
            for c in value.chars() {
                if c == '"' || c == '\\' {
                    f.write_str("\\")?;
                }
                write!(f, "{c}")?;
            }
            f.write_str("\"")?;
        }
        Ok(())
    }
}

/// Why a challenge is malformed. Offsets are byte offsets into the header
/// value that was parsed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChallengeError {
    /// The challenge does not start with an auth-scheme token.
    MissingScheme {
        /// Where the challenge starts.
        offset: usize,
    },
    /// After the scheme, something that is neither a token68 nor a
    /// parameter name.
    InvalidParamName {
        /// The challenge's scheme.
        scheme: String,
        /// Where the parameter was expected.
        offset: usize,
    },
    /// A parameter name not followed by `=`.
    MissingEquals {
        /// The challenge's scheme.
        scheme: String,
        /// The parameter.
        param: String,
        /// Where `=` was expected.
        offset: usize,
    },
    /// A parameter with neither a token nor a quoted string after `=`.
    MissingValue {
        /// The challenge's scheme.
        scheme: String,
        /// The parameter.
        param: String,
        /// Where the value was expected.
        offset: usize,
    },
    /// A quoted string with no closing quote.
    UnterminatedQuotedString {
        /// The challenge's scheme.
        scheme: String,
        /// The parameter.
        param: String,
        /// Where the quoted string starts.
        offset: usize,
    },
    /// A character that a quoted string may not hold (a control character).
    InvalidQuotedString {
        /// The challenge's scheme.
        scheme: String,
        /// The parameter.
        param: String,
        /// Where the character is.
        offset: usize,
    },
    /// Something other than `,` or the end after a complete element.
    UnexpectedCharacter {
        /// The challenge's scheme.
        scheme: String,
        /// The character.
        found: char,
        /// Where it is.
        offset: usize,
    },
    /// A parameter given twice in one challenge (names compared without
    /// regard to case).
    DuplicateParam {
        /// The challenge's scheme.
        scheme: String,
        /// The parameter, as first written.
        param: String,
    },
}

impl fmt::Display for ChallengeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChallengeError::MissingScheme { offset } => {
                write!(f, "challenge at byte {offset} does not start with an auth-scheme")
            }
            ChallengeError::InvalidParamName { scheme, offset } => write!(
                f,
                "{scheme} challenge: expected a parameter name or a token68 at byte {offset}"
            ),
            ChallengeError::MissingEquals { scheme, param, offset } => {
                write!(f, "{scheme} challenge: parameter {param} has no `=` (byte {offset})")
            }
            ChallengeError::MissingValue { scheme, param, offset } => {
                write!(f, "{scheme} challenge: parameter {param} has no value (byte {offset})")
            }
            ChallengeError::UnterminatedQuotedString { scheme, param, offset } => write!(
                f,
                "{scheme} challenge: the quoted value of {param} starting at byte {offset} is not closed"
            ),
            ChallengeError::InvalidQuotedString { scheme, param, offset } => write!(
                f,
                "{scheme} challenge: the quoted value of {param} has a control character at byte {offset}"
            ),
            ChallengeError::UnexpectedCharacter { scheme, found, offset } => write!(
                f,
                "{scheme} challenge: unexpected {found:?} at byte {offset} (expected `,` or the end)"
            ),
            ChallengeError::DuplicateParam { scheme, param } => {
                write!(f, "{scheme} challenge: parameter {param} is given more than once")
            }
        }
    }
}

impl std::error::Error for ChallengeError {}

/// Parses one `WWW-Authenticate` header value: every challenge in it, in
/// order, each either well-formed or the reason it is not. An empty value (or
/// one of only commas and white space) has no challenges.
pub fn parse(value: &str) -> Vec<Result<Challenge, ChallengeError>> {
    let mut out = Vec::new();
    let mut input = value;
    loop {
        input = separators(input);
        if input.is_empty() {
            return out;
        }
        match challenge(value, input) {
            Ok((rest, c)) => {
                out.push(Ok(c));
                input = rest;
            }
            Err((error, resume)) => {
                out.push(Err(error));
                input = recover(resume);
            }
        }
    }
}

/// Parses several `WWW-Authenticate` header values (a response may carry
/// more than one), as if they were one list.
pub fn parse_all<'a>(
    values: impl IntoIterator<Item = &'a str>,
) -> Vec<Result<Challenge, ChallengeError>> {
    values.into_iter().flat_map(parse).collect()
}

/// The first well-formed Bearer challenge in these header values, as a
/// [`BearerChallenge`].
pub fn find_bearer<'a>(values: impl IntoIterator<Item = &'a str>) -> Option<BearerChallenge> {
    parse_all(values).iter().flatten().find_map(BearerChallenge::from_challenge)
}

/// The parameters of a Bearer challenge that an OAuth client acts on:
/// RFC 6750 (`realm`, `scope`, `error`, `error_description`, `error_uri`)
/// and RFC 9728 (`resource_metadata`), as the MCP authorization
/// specification uses them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// `realm`.
    pub realm: Option<String>,
    /// `scope`, split on spaces (empty scope tokens dropped).
    pub scope: Option<Vec<String>>,
    /// `error`: `invalid_request`, `invalid_token`, `insufficient_scope`
    /// or another code.
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
    /// `error_uri`.
    pub error_uri: Option<String>,
    /// `resource_metadata`: the URL of the protected resource metadata
    /// document (RFC 9728).
    pub resource_metadata: Option<String>,
}

impl BearerChallenge {
    /// The Bearer view of a challenge, or `None` if its scheme is not
    /// `Bearer`. A Bearer challenge with a token68 instead of parameters has
    /// every field empty.
    pub fn from_challenge(challenge: &Challenge) -> Option<Self> {
        if !challenge.is_scheme("Bearer") {
            return None;
        }
        let get = |name: &str| challenge.param(name).map(str::to_owned);
        Some(BearerChallenge {
            realm: get("realm"),
            scope: challenge
                .param("scope")
                .map(|s| s.split(' ').filter(|t| !t.is_empty()).map(str::to_owned).collect()),
            error: get("error"),
            error_description: get("error_description"),
            error_uri: get("error_uri"),
            resource_metadata: get("resource_metadata"),
        })
    }

    /// Whether `error` is `insufficient_scope` (a step-up authorization is
    /// needed).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }

    /// Whether `error` is `invalid_token` (the token expired or was revoked).
    pub fn is_invalid_token(&self) -> bool {
        self.error.as_deref() == Some("invalid_token")
    }
}

// The grammar's pieces, as nom parsers over `&str`.

type PResult<'a, T> = IResult<&'a str, T, ()>;

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

fn is_token68_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~+/".contains(c)
}

/// Quoted-string text that needs no unescaping: HTAB, SP, VCHAR except `"`
/// and `\`, obs-text.
fn is_qdtext(c: char) -> bool {
    c == '\t' || c == ' ' || (c.is_ascii_graphic() && c != '"' && c != '\\') || !c.is_ascii()
}

fn is_quoted_pair_char(c: char) -> bool {
    c == '\t' || c == ' ' || c.is_ascii_graphic() || !c.is_ascii()
}

fn ows(input: &str) -> &str {
    let r: PResult<'_, &str> = take_while(|c| c == ' ' || c == '\t').parse(input);
    r.map_or(input, |(rest, _)| rest)
}

fn token(input: &str) -> PResult<'_, &str> {
    take_while1(is_tchar).parse(input)
}

fn token68(input: &str) -> PResult<'_, &str> {
    recognize((take_while1(is_token68_char), take_while(|c| c == '='))).parse(input)
}

/// Why a quoted string failed: no closing quote, or a bad character at this
/// remaining input.
enum QuotedError<'a> {
    Unterminated,
    BadChar(&'a str),
}

fn quoted_string(input: &str) -> Result<(&str, String), QuotedError<'_>> {
    let opening: PResult<'_, char> = char('"').parse(input);
    let Ok((mut input, _)) = opening else { return Err(QuotedError::Unterminated) };
    let mut out = String::new();
    loop {
        let text: PResult<'_, &str> = take_while(is_qdtext).parse(input);
        let Ok((rest, text)) = text else { return Err(QuotedError::Unterminated) };
        out.push_str(text);
        let mut chars = rest.chars();
        match chars.next() {
            None => return Err(QuotedError::Unterminated),
            Some('"') => return Ok((chars.as_str(), out)),
            Some('\\') => match chars.next() {
                Some(c) if is_quoted_pair_char(c) => {
                    out.push(c);
                    input = chars.as_str();
                }
                None => return Err(QuotedError::Unterminated),
                Some(_) => return Err(QuotedError::BadChar(&rest[1..])),
            },
            Some(_) => return Err(QuotedError::BadChar(rest)),
        }
    }
}

/// Skips list separators: white space and empty list elements.
fn separators(mut input: &str) -> &str {
    loop {
        input = ows(input);
        match input.strip_prefix(',') {
            Some(rest) => input = rest,
            None => return input,
        }
    }
}

/// Whether `input` (just after a comma and white space) starts an
/// auth-param, `token BWS "="`, rather than a new challenge.
fn starts_param(input: &str) -> bool {
    match token(input) {
        Ok((rest, _)) => ows(rest).starts_with('='),
        Err(_) => false,
    }
}

/// Whether `input` (just after a comma and white space) can only be the
/// start of a challenge.
fn starts_challenge(input: &str) -> bool {
    token(input).is_ok() && !starts_param(input)
}

/// After an error at `input`: the input from the next comma (outside quoted
/// strings) that is followed by the start of a challenge, or the end.
fn recover(mut input: &str) -> &str {
    loop {
        let Some(i) = input.find(['"', ',']) else { return "" };
        if input[i..].starts_with('"') {
            match skip_quoted(&input[i + 1..]) {
                Some(rest) => input = rest,
                None => return "",
            }
            continue;
        }
        let after = separators(&input[i..]);
        if after.is_empty() || starts_challenge(after) {
            return after;
        }
        input = after;
    }
}

/// The input after the closing quote of a quoted string whose opening quote
/// was just consumed, skipping any character (valid or not) and honouring
/// backslash escapes; `None` if it is never closed.
fn skip_quoted(input: &str) -> Option<&str> {
    let mut chars = input.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some(&input[i + 1..]),
            '\\' => {
                chars.next();
            }
            _ => {}
        }
    }
    None
}

type Failure<'a> = (ChallengeError, &'a str);

/// One challenge at the start of `input` (a suffix of `whole`). On success,
/// the rest starts at the end or at a comma; on failure, the error and the
/// input from which to recover.
fn challenge<'a>(whole: &str, input: &'a str) -> Result<(&'a str, Challenge), Failure<'a>> {
    let at = |rest: &str| whole.len() - rest.len();
    let Ok((rest, scheme)) = token(input) else {
        return Err((ChallengeError::MissingScheme { offset: at(input) }, input));
    };
    let mut challenge = Challenge { scheme: scheme.to_owned(), token68: None, params: Vec::new() };
    let after_sp = rest.trim_start_matches(' ');
    let end_of_element = |rest: &'a str| -> Result<&'a str, Failure<'a>> {
        let rest = ows(rest);
        match rest.chars().next() {
            None | Some(',') => Ok(rest),
            Some(found) => Err((
                ChallengeError::UnexpectedCharacter {
                    scheme: scheme.to_owned(),
                    found,
                    offset: at(rest),
                },
                rest,
            )),
        }
    };
    if after_sp.len() == rest.len() || after_sp.is_empty() || after_sp.starts_with(',') {
        // No `1*SP`, or nothing after it: a challenge with no parameters.
        return end_of_element(rest).map(|rest| (rest, challenge));
    }
    if let Ok((after, t)) = token68(after_sp) {
        let next = ows(after);
        if next.is_empty() || next.starts_with(',') {
            challenge.token68 = Some(t.to_owned());
            return Ok((next, challenge));
        }
    }
    let mut input = after_sp;
    let mut duplicate: Option<String> = None;
    // Parameter names seen (lowercase): a repeat is found in constant time,
    // so a header of many parameters costs linear time, not quadratic.
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    loop {
        let param_start = input;
        let Ok((rest, name)) = token(input) else {
            return Err((
                ChallengeError::InvalidParamName { scheme: scheme.to_owned(), offset: at(input) },
                param_start,
            ));
        };
        let rest = ows(rest);
        let Some(rest) = rest.strip_prefix('=') else {
            return Err((
                ChallengeError::MissingEquals {
                    scheme: scheme.to_owned(),
                    param: name.to_owned(),
                    offset: at(rest),
                },
                param_start,
            ));
        };
        let rest = ows(rest);
        let (rest, value) = if rest.starts_with('"') {
            match quoted_string(rest) {
                Ok(done) => done,
                Err(QuotedError::Unterminated) => {
                    return Err((
                        ChallengeError::UnterminatedQuotedString {
                            scheme: scheme.to_owned(),
                            param: name.to_owned(),
                            offset: at(rest),
                        },
                        "",
                    ));
                }
                Err(QuotedError::BadChar(bad)) => {
                    return Err((
                        ChallengeError::InvalidQuotedString {
                            scheme: scheme.to_owned(),
                            param: name.to_owned(),
                            offset: at(bad),
                        },
                        param_start,
                    ));
                }
            }
        } else {
            match token(rest) {
                Ok((rest, value)) => (rest, value.to_owned()),
                Err(_) => {
                    return Err((
                        ChallengeError::MissingValue {
                            scheme: scheme.to_owned(),
                            param: name.to_owned(),
                            offset: at(rest),
                        },
                        param_start,
                    ));
                }
            }
        };
        if !seen.insert(name.to_ascii_lowercase()) && duplicate.is_none() {
            duplicate = Some(name.to_owned());
        }
        challenge.params.push((name.to_owned(), value));
        let rest = end_of_element(rest)?;
        let next = separators(rest);
        if !next.is_empty() && starts_param(next) {
            input = next;
            continue;
        }
        return match duplicate {
            None => Ok((rest, challenge)),
            Some(param) => {
                Err((ChallengeError::DuplicateParam { scheme: scheme.to_owned(), param }, rest))
            }
        };
    }
}
