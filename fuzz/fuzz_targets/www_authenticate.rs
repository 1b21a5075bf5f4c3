//! The challenge parser never panics, every error offset lies inside the
//! value, and a well-formed challenge printed back parses to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sse::www_authenticate::{self, BearerChallenge, ChallengeError};

fuzz_target!(|input: &[u8]| {
    let value = String::from_utf8_lossy(input);
    let parsed = www_authenticate::parse(&value);
    for result in &parsed {
        match result {
            Ok(challenge) => {
                let again = www_authenticate::parse(&challenge.to_string());
                assert_eq!(again.len(), 1, "{challenge}");
                assert_eq!(again[0].as_ref(), Ok(challenge));
                let _ = BearerChallenge::from_challenge(challenge);
            }
            Err(error) => {
                let offset = match error {
                    ChallengeError::MissingScheme { offset }
                    | ChallengeError::InvalidParamName { offset, .. }
                    | ChallengeError::MissingEquals { offset, .. }
                    | ChallengeError::MissingValue { offset, .. }
                    | ChallengeError::UnterminatedQuotedString { offset, .. }
                    | ChallengeError::InvalidQuotedString { offset, .. }
                    | ChallengeError::UnexpectedCharacter { offset, .. } => *offset,
                    _ => 0,
                };
                assert!(offset <= value.len());
                let _ = error.to_string();
            }
        }
    }
    let _ = www_authenticate::find_bearer(value.split('\n'));
});
