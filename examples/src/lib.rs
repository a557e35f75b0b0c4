//! Tools and cores shared by the examples (and by the test suite, which checks their TOOL.md
//! manifests). `cargo run --example NAME` runs the examples themselves.

pub mod files;
pub mod tools;
