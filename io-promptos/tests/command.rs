//! The built `promptos-gateway` binary: its exit statuses reach the shell.

use std::process::Command;

fn gateway(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_promptos-gateway"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn the_binary_prints_help_and_exits_2_on_wrong_usage() {
    let help = gateway(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("EXIT STATUS"));
    let wrong = gateway(&[]);
    assert_eq!(wrong.status.code(), Some(2));
    let said: serde_json::Value = serde_json::from_slice(&wrong.stdout).expect("JSON");
    assert_eq!(said["error"], "usage");
}
