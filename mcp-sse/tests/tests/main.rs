//! The integration tests of `mcp-sse`: data-driven tables for each rule of
//! both parsers, every chunk split of the event-stream fixtures, and
//! property tests against a literal reading of the standard.

mod codec;
mod reference;
mod sse;
mod sse_props;
mod www_authenticate;
