//! Compile-time checks: each file under `ui/` is a mistake, and its `.stderr` the error a
//! user sees. Re-bless with `TRYBUILD=overwrite cargo test -p agent-io-tests --test ui`, and
//! read every changed `.stderr` before committing it.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*/*.rs");
}
