//! `git apply`, asked what it would do with a patch: the referee for what the gateway reads.
//!
//! The gateway reads a patch itself ([`crate::patch::effects`]) and then asks `git apply`
//! (never to apply anything: `--numstat`, `--summary` and `--check` only) so that its verdict
//! is about what `git apply` would write, not about what the patch text seems to say:
//!
//! - the patch must parse for `git apply` (garbage, a corrupt binary patch: refused);
//! - every path `git apply` would write must be one the gateway judged;
//! - every symlink `git apply` would create must be one the gateway judged;
//! - the patch must apply to the workspace, in reverse (the workspace holds the change, as an
//!   executor leaves it) or forward (the workspace is the base).
//!
//! git runs in the workspace with no repository above it (`GIT_CEILING_DIRECTORIES`) and no
//! system or global configuration, reading the patch from its standard input.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// What `git apply` says about a patch.
#[derive(Debug, Default)]
pub(crate) struct GitView {
    /// Every path it would write (`--numstat -z`).
    pub(crate) written: Vec<String>,
    /// Every path it would make a symlink (`--summary`: `mode 120000`).
    pub(crate) symlinks: Vec<String>,
    /// Why it would not apply the patch to the workspace in either direction, if it would not.
    pub(crate) not_applicable: Option<String>,
}

/// Why git could not be asked, or refused the patch outright.
#[derive(Debug)]
pub(crate) enum GitRefusal {
    /// git is not there to ask (the gateway's environment, not the submission).
    Unavailable(String),
    /// git does not read the patch at all: what it said.
    Unreadable(String),
}

fn git(workspace: &Path, args: &[&str], patch: &[u8]) -> Result<(bool, Vec<u8>, String), String> {
    let mut command = Command::new("git");
    command
        .arg("apply")
        .args(args)
        .arg("-")
        .current_dir(workspace)
        .env(
            "GIT_CEILING_DIRECTORIES",
            workspace.parent().unwrap_or(workspace),
        )
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| format!("git could not be started: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("git has no standard input")?;
    let writer = {
        let patch = patch.to_vec();
        std::thread::spawn(move || {
            // git may stop reading early (a refusal); a broken pipe is its answer, not ours.
            let _ = stdin.write_all(&patch);
        })
    };
    let output = child
        .wait_with_output()
        .map_err(|e| format!("git could not be waited on: {e}"))?;
    let _ = writer.join();
    let mut stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    agentio_core::limits::clip(&mut stderr, 500);
    Ok((output.status.success(), output.stdout, stderr))
}

/// Asks `git apply` about `patch` in `workspace`.
pub(crate) fn view(workspace: &Path, patch: &[u8]) -> Result<GitView, GitRefusal> {
    let (ok, numstat, stderr) =
        git(workspace, &["--numstat", "-z"], patch).map_err(GitRefusal::Unavailable)?;
    if !ok {
        return Err(GitRefusal::Unreadable(stderr));
    }
    // Records are `added\tdeleted\tpath\0`, or `added\tdeleted\t\0from\0to\0` for a rename
    // or copy git reports as one.
    let mut written = Vec::new();
    let mut fields = numstat.split(|&b| b == 0);
    while let Some(record) = fields.next() {
        if record.is_empty() {
            continue;
        }
        let text = String::from_utf8_lossy(record);
        let path = text.splitn(3, '\t').nth(2).unwrap_or("");
        if path.is_empty() {
            for _ in 0..2 {
                if let Some(side) = fields.next() {
                    written.push(String::from_utf8_lossy(side).into_owned());
                }
            }
        } else {
            written.push(path.to_owned());
        }
    }
    let (ok, summary, stderr) =
        git(workspace, &["--summary"], patch).map_err(GitRefusal::Unavailable)?;
    if !ok {
        return Err(GitRefusal::Unreadable(stderr));
    }
    let symlinks = String::from_utf8_lossy(&summary)
        .lines()
        .filter_map(|line| line.split_once(" 120000 ").map(|(_, path)| path.trim()))
        .map(|path| {
            // `--summary` quotes a path with special characters as the diff does.
            path.trim_matches('"').to_owned()
        })
        .collect();
    let (reverse, _, reverse_err) =
        git(workspace, &["--check", "-R"], patch).map_err(GitRefusal::Unavailable)?;
    let not_applicable = if reverse {
        None
    } else {
        let (forward, _, forward_err) =
            git(workspace, &["--check"], patch).map_err(GitRefusal::Unavailable)?;
        (!forward).then(|| {
            format!("it applies to the workspace in neither direction: in reverse (the workspace holding the change): {reverse_err}; forward (the workspace as the base): {forward_err}")
        })
    };
    Ok(GitView {
        written,
        symlinks,
        not_applicable,
    })
}
