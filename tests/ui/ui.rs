//! Compile-time checks: each file under a folder here is a mistake, and its `.stderr` the error
//! a user sees. Re-bless with `TRYBUILD=overwrite cargo test -p agentio-ui-tests`, and read every
//! changed `.stderr` before committing it. agentio-derive's `ui_replay` unit test runs the
//! macros on these same cases in process and compares their errors (message, line and column)
//! with the blessed `.stderr` files: seconds instead of minutes, for mutation testing.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("*/*.rs");
}
