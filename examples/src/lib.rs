//! Tools and cores shared by the examples (and by the test suite, which checks their TOOL.md
//! manifests). `cargo run --example NAME` runs the examples themselves.

pub mod files;
pub mod tools;

/// The README's Rust blocks, compiled and run as doctests so the README cannot drift from the
/// code it shows.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
