//! Opening: the first step, and the probe after a failed remembered
//! handshake.

use mcp_proto::ProtocolVersion as V;
use mcp_proto::client::decide::open::{first_step, probe_after_failed_handshake};
use mcp_proto::client::decide::{EraChoice, Failure, OpenStep};

use super::{ALL, LEGACY_ONLY, MODERN_ONLY, NOTHING, REFUSAL, STREAM_LOST, header_mismatch, rpc};

#[test]
fn the_first_step_of_an_opening() {
    let probe_if_refused = |b| OpenStep::Handshake { probe_if_refused: b };
    // (choice, versions accepted, remembered as handshake-era, expected)
    let cases: &[(EraChoice, &[V], bool, OpenStep)] = &[
        (EraChoice::Legacy, ALL, false, probe_if_refused(false)),
        (EraChoice::Legacy, ALL, true, probe_if_refused(false)),
        (EraChoice::Auto, ALL, false, OpenStep::Probe),
        (EraChoice::Auto, ALL, true, probe_if_refused(true)),
        (EraChoice::Auto, LEGACY_ONLY, false, probe_if_refused(false)),
        (EraChoice::Auto, LEGACY_ONLY, true, probe_if_refused(true)),
        (EraChoice::Modern, ALL, false, OpenStep::Probe),
        (EraChoice::Modern, ALL, true, OpenStep::Probe),
        (EraChoice::Modern, MODERN_ONLY, false, OpenStep::Probe),
    ];
    for (choice, versions, remembered, expected) in cases {
        assert_eq!(
            first_step(*choice, versions, *remembered),
            *expected,
            "{choice:?} {versions:?} {remembered}"
        );
    }
    assert_eq!(EraChoice::default(), EraChoice::Auto);
}

#[test]
fn a_failed_remembered_handshake_is_followed_by_the_probe() {
    let remembered = OpenStep::Handshake { probe_if_refused: true };
    let pinned = OpenStep::Handshake { probe_if_refused: false };
    let modern = header_mismatch();
    let other = rpc(-32601);
    // (step, failure, expected)
    let cases: &[(OpenStep, Failure<'_>, bool)] = &[
        (remembered, Failure::transport(None, REFUSAL), true),
        (remembered, Failure::transport(Some(&modern), NOTHING), true),
        (remembered, Failure::core(&modern), true),
        (remembered, Failure::transport(None, NOTHING), false),
        (remembered, Failure::transport(Some(&other), NOTHING), false),
        (remembered, Failure::core(&other), false),
        (remembered, Failure::transport(None, STREAM_LOST), false),
        (pinned, Failure::transport(None, REFUSAL), false),
        (pinned, Failure::core(&modern), false),
        (OpenStep::Probe, Failure::transport(None, REFUSAL), false),
    ];
    for (step, failure, expected) in cases {
        assert_eq!(
            probe_after_failed_handshake(*step, *failure),
            *expected,
            "{step:?} {failure:?}"
        );
    }
}
