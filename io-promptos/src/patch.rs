//! What a unified diff (`git diff` output or plain `diff -u`) does, read the way `git apply`
//! reads it: which paths it writes, which it reads (a copy's source), and which symlinks it
//! creates, with their targets.
//!
//! Paths follow `git apply`'s default `-p1`: one leading component is stripped from the paths
//! of a `diff --git` header and of `---`/`+++` lines (whatever it is: `a/`, `b/`, `docs/`),
//! and a path without a `/` is kept whole; `rename from`/`to` and `copy from`/`to` name paths
//! from the root and override the header. So `--- docs/a.md` writes `a.md`, as git would.
//! The gateway checks its reading against `git apply` itself (see [`crate::gateway`]).

use std::collections::BTreeSet;

/// A symlink the patch creates, or a file it turns into one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symlink {
    /// Where the link is.
    pub path: String,
    /// What it points to, when the patch spells it out (a text hunk); `None` otherwise.
    pub target: Option<String>,
}

/// What a patch does (see the module documentation for how paths are read).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PatchEffects {
    /// Every path the patch creates, modifies, deletes, or renames from or to.
    pub written: BTreeSet<String>,
    /// Every path the patch reads without writing it: a copy's source.
    pub read: BTreeSet<String>,
    /// Every symlink it creates or makes.
    pub symlinks: Vec<Symlink>,
}

/// One file section of the patch, being read.
#[derive(Default)]
struct Section {
    header: Vec<String>,
    old: Option<String>,
    new: Option<String>,
    renamed: Option<(Option<String>, Option<String>)>,
    copied: Option<(Option<String>, Option<String>)>,
    symlink: bool,
    /// The added lines of its hunks (a symlink's target).
    added: Vec<String>,
    binary: bool,
}

impl Section {
    fn close(self, effects: &mut PatchEffects) {
        // A complete rename or copy names its paths from the root, and git takes them over
        // the header's. Anything less complete is judged by every path it names: judging more
        // than git writes is safe, less is not (and git refuses a half rename anyway).
        let mut written = Vec::new();
        match (self.renamed, self.copied) {
            (Some((Some(from), Some(to))), None) => written.extend([from, to]),
            (None, Some((Some(from), Some(to)))) => {
                effects.read.insert(from);
                written.push(to);
            }
            (renamed, copied) => {
                written.extend(self.header);
                written.extend(self.old.filter(|p| p != "/dev/null"));
                written.extend(self.new.filter(|p| p != "/dev/null"));
                for (from, to) in renamed.into_iter().chain(copied) {
                    written.extend(from);
                    written.extend(to);
                }
            }
        }
        written.sort();
        written.dedup();
        if self.symlink {
            let target = (!self.binary && !self.added.is_empty()).then(|| self.added.join("\n"));
            for path in &written {
                effects.symlinks.push(Symlink {
                    path: path.clone(),
                    target: target.clone(),
                });
            }
        }
        effects.written.extend(written);
    }
}

/// What `patch` does, read as `git apply` reads it.
///
/// ```
/// let patch = "\
/// --- docs/a.md
/// +++ docs/a.md
/// @@ -1 +1 @@
/// -old
/// +new
/// diff --git a/secret.txt b/docs/copy.txt
/// similarity index 100%
/// copy from secret.txt
/// copy to docs/copy.txt
/// diff --git a/docs/link b/docs/link
/// new file mode 120000
/// --- /dev/null
/// +++ b/docs/link
/// @@ -0,0 +1 @@
/// +../../etc/passwd
/// \\ No newline at end of file
/// ";
/// let effects = agentio_promptos::patch::effects(patch);
/// // Without prefixes, `git apply` strips `docs/`: the file written is `a.md`.
/// assert_eq!(effects.written.iter().collect::<Vec<_>>(), ["a.md", "docs/copy.txt", "docs/link"]);
/// assert_eq!(effects.read.iter().collect::<Vec<_>>(), ["secret.txt"]);
/// assert_eq!(effects.symlinks[0].target.as_deref(), Some("../../etc/passwd"));
/// ```
pub fn effects(patch: &str) -> PatchEffects {
    let mut effects = PatchEffects::default();
    let mut section: Option<Section> = None;
    // Lines inside a hunk are content, whatever they start with: the header says how many
    // old and new lines follow, and they are counted out.
    let (mut old, mut new) = (0usize, 0usize);
    for line in patch.lines() {
        if old > 0 || new > 0 {
            match line.as_bytes().first() {
                Some(b'-') => old = old.saturating_sub(1),
                Some(b'+') => {
                    new = new.saturating_sub(1);
                    if let Some(section) = section.as_mut() {
                        section.added.push(line[1..].to_owned());
                    }
                }
                Some(b'\\') => {}
                // A context line (or an empty one, which some tools write for an empty
                // context line) is in both.
                _ => {
                    old = old.saturating_sub(1);
                    new = new.saturating_sub(1);
                }
            }
            continue;
        }
        if let Some(header) = line.strip_prefix("@@ ") {
            (old, new) = hunk_lines(header);
            continue;
        }
        // A git header starts a section and names both sides even when no `---`/`+++` lines
        // follow (a binary patch, a mode change, a pure rename).
        if let Some(rest) = line.strip_prefix("diff --git ") {
            if let Some(done) = section.take() {
                done.close(&mut effects);
            }
            section = Some(Section {
                header: git_header_paths(rest),
                ..Section::default()
            });
            continue;
        }
        if let Some(rest) = line.strip_prefix("--- ") {
            // A `---` line outside a git section starts a plain `diff -u` section.
            let starts = section
                .as_ref()
                .is_none_or(|s| s.old.is_some() || s.new.is_some());
            if starts {
                if let Some(done) = section.take() {
                    done.close(&mut effects);
                }
                section = Some(Section::default());
            }
            if let Some(section) = section.as_mut() {
                section.old = Some(strip_component(unquote(strip_timestamp(rest))));
            }
            continue;
        }
        let Some(current) = section.as_mut() else {
            continue;
        };
        if let Some(rest) = line.strip_prefix("+++ ") {
            current.new = Some(strip_component(unquote(strip_timestamp(rest))));
        } else if let Some(rest) = line.strip_prefix("rename from ") {
            current.renamed.get_or_insert((None, None)).0 = Some(unquote(rest));
        } else if let Some(rest) = line.strip_prefix("rename to ") {
            current.renamed.get_or_insert((None, None)).1 = Some(unquote(rest));
        } else if let Some(rest) = line.strip_prefix("copy from ") {
            current.copied.get_or_insert((None, None)).0 = Some(unquote(rest));
        } else if let Some(rest) = line.strip_prefix("copy to ") {
            current.copied.get_or_insert((None, None)).1 = Some(unquote(rest));
        } else if let Some(mode) = line
            .strip_prefix("new file mode ")
            .or_else(|| line.strip_prefix("new mode "))
        {
            current.symlink = mode.trim() == "120000";
        } else if line.starts_with("GIT binary patch") {
            current.binary = true;
        }
    }
    if let Some(done) = section.take() {
        done.close(&mut effects);
    }
    effects
}

/// Every path the patch touches, read as `git apply` reads it ([`effects`]): what it writes
/// and what it reads.
///
/// ```
/// let patch = "\
/// diff --git a/docs/a.md b/docs/a.md
/// --- a/docs/a.md
/// +++ b/docs/a.md
/// @@ -1 +1 @@
/// -old
/// +new
/// diff --git a/docs/new.md b/docs/new.md
/// new file mode 100644
/// --- /dev/null
/// +++ b/docs/new.md
/// @@ -0,0 +1 @@
/// +hello
/// ";
/// let touched = agentio_promptos::patch::touched_files(patch);
/// assert_eq!(touched.into_iter().collect::<Vec<_>>(), ["docs/a.md", "docs/new.md"]);
/// ```
pub fn touched_files(patch: &str) -> BTreeSet<String> {
    let effects = effects(patch);
    effects.written.into_iter().chain(effects.read).collect()
}

/// `git apply -p1`: the path without its first component; a path with none is kept.
fn strip_component(path: String) -> String {
    if path == "/dev/null" {
        return path;
    }
    match path.split_once('/') {
        Some((_, rest)) if !rest.is_empty() => rest.to_owned(),
        _ => path,
    }
}

/// The two paths of a `diff --git a/X b/Y` header, without their prefixes. Quoted names are
/// unquoted; unquoted names with spaces are split where both sides agree (as git does), else at
/// the first ` b/`.
fn git_header_paths(rest: &str) -> Vec<String> {
    let strip = strip_component;
    if rest.starts_with('"') || rest.ends_with('"') {
        // One or both sides quoted: split on the quote boundaries.
        let mut sides = Vec::new();
        let mut remaining = rest.trim();
        while !remaining.is_empty() {
            if remaining.starts_with('"') {
                let mut end = 1;
                let bytes = remaining.as_bytes();
                while end < bytes.len() && !(bytes[end] == b'"' && bytes[end - 1] != b'\\') {
                    end += 1;
                }
                let end = (end + 1).min(remaining.len());
                let side = &remaining[..end];
                // An unterminated quote is kept verbatim: a name git would never write, so it
                // matches no pin (and git refuses the patch). (A lone `"` ends with a quote too;
                // `unquote` keeps it as it is.)
                if side.ends_with('"') {
                    sides.push(strip(unquote(side)));
                } else {
                    sides.push(side.to_owned());
                }
                remaining = remaining[end..].trim_start();
            } else {
                let end = remaining.find(' ').unwrap_or(remaining.len());
                sides.push(strip(remaining[..end].to_owned()));
                remaining = remaining[end..].trim_start();
            }
        }
        return sides;
    }
    let Some(body) = rest.strip_prefix("a/") else {
        return Vec::new();
    };
    let splits: Vec<usize> = body.match_indices(" b/").map(|(i, _)| i).collect();
    let same = splits.iter().find(|&&i| body[..i] == body[i + 3..]);
    match same.or(splits.first()) {
        Some(&i) => vec![body[..i].to_owned(), body[i + 3..].to_owned()],
        None => Vec::new(),
    }
}

/// How many lines of old and new text a hunk header (`-1,3 +1,4 @@`) announces.
fn hunk_lines(header: &str) -> (usize, usize) {
    let mut parts = header.split_whitespace();
    let count = |part: Option<&str>, sign: char| -> usize {
        part.and_then(|p| p.strip_prefix(sign))
            .and_then(|range| match range.split_once(',') {
                Some((_, n)) => n.parse().ok(),
                None => Some(1),
            })
            .unwrap_or(0)
    };
    let old = count(parts.next(), '-');
    let new = count(parts.next(), '+');
    (old, new)
}

/// `diff -u` appends a tab and a timestamp to the file name.
fn strip_timestamp(rest: &str) -> &str {
    rest.split('\t').next().unwrap_or(rest)
}

/// Unquotes a C-style quoted path, as git writes names with special characters.
fn unquote(path: &str) -> String {
    let Some(inner) = path.strip_prefix('"').and_then(|p| p.strip_suffix('"')) else {
        return path.trim_end().to_owned();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'"') => bytes.push(b'"'),
            Some(b'\\') => bytes.push(b'\\'),
            Some(d @ b'0'..=b'7') => {
                let mut value = u32::from(d - b'0');
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&o @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(o - b'0');
                            chars.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(u8::try_from(value).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{Symlink, effects, touched_files};

    #[test]
    fn a_lone_quote_in_a_git_header_is_kept_verbatim() {
        assert_eq!(touched("diff --git \"a/x.md\" \"\n"), ["\"", "x.md"]);
        assert_eq!(
            touched("diff --git \"a/x.md\" \"b/unterminated\n"),
            ["\"b/unterminated", "x.md"]
        );
    }

    #[test]
    fn a_path_with_nothing_after_its_first_component_is_kept_whole() {
        let written: Vec<String> = effects("--- docs/\n+++ b/\n").written.into_iter().collect();
        assert_eq!(written, ["b/", "docs/"]);
        let written: Vec<String> = effects("--- a/x/y\n+++ b/x/y\n")
            .written
            .into_iter()
            .collect();
        assert_eq!(written, ["x/y"]);
    }

    #[test]
    fn a_new_file_header_after_a_half_named_section_starts_a_section_of_its_own() {
        // A section that named only its new side: the next `---` starts another section, so
        // both sections' paths are judged (none is lost to an overwrite).
        let patch = "diff --git a/g b/g\n+++ b/g2\n--- a/other\n+++ b/other\n";
        let written: Vec<String> = effects(patch).written.into_iter().collect();
        assert_eq!(written, ["g", "g2", "other"]);
    }

    #[test]
    fn a_symlink_s_target_is_known_only_from_a_text_hunk() {
        // A mode change to a symlink with no hunk, and a binary one: the target is unknown.
        let mode_only = "diff --git a/docs/link b/docs/link\nold mode 100644\nnew mode 120000\n";
        let binary = "diff --git a/docs/link b/docs/link\nnew file mode 120000\nGIT binary patch\nliteral 5\nabc\n\n";
        for patch in [mode_only, binary] {
            assert_eq!(
                effects(patch).symlinks,
                [Symlink {
                    path: "docs/link".into(),
                    target: None
                }],
                "{patch}"
            );
        }
        let text = "diff --git a/docs/link b/docs/link\nnew file mode 120000\n--- /dev/null\n+++ b/docs/link\n@@ -0,0 +1 @@\n+../secret\n";
        assert_eq!(
            effects(text).symlinks,
            [Symlink {
                path: "docs/link".into(),
                target: Some("../secret".into())
            }]
        );
    }

    fn touched(patch: &str) -> Vec<String> {
        touched_files(patch).into_iter().collect()
    }

    #[test]
    fn a_binary_or_mode_only_change_is_seen_through_its_git_header() {
        let binary = "diff --git a/img/logo.png b/img/logo.png\nindex 1..2 100644\nGIT binary patch\nliteral 5\nabc\n\n";
        assert_eq!(touched(binary), ["img/logo.png"]);
        let mode = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n";
        assert_eq!(touched(mode), ["run.sh"]);
        let rename = "diff --git a/old name.md b/new name.md\nsimilarity index 100%\nrename from old name.md\nrename to new name.md\n";
        assert_eq!(touched(rename), ["new name.md", "old name.md"]);
        let spaced = "diff --git a/x b/y.md b/x b/y.md\n";
        assert_eq!(touched(spaced), ["x b/y.md"]);
    }

    #[test]
    fn quoted_names_are_unquoted() {
        let patch = "diff --git \"a/caf\\303\\251.md\" \"b/caf\\303\\251.md\"\n--- \"a/caf\\303\\251.md\"\n+++ \"b/caf\\303\\251.md\"\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(touched(patch), ["café.md"]);
        let tab = "--- \"a/t\\tab\"\n+++ \"b/t\\tab\"\n";
        assert_eq!(touched(tab), ["t\tab"]);
    }

    #[test]
    fn hunk_content_that_looks_like_a_header_is_content() {
        let patch = "--- a/x.md\n+++ b/x.md\n@@ -1,2 +1,3 @@\n a\n+--- a/evil.md\n++++ b/evil.md\n-diff --git a/e b/e\n";
        // One old line and... the counts: old 2 (` a`, `-diff`), new 3 (` a`, `+---`, `++++`).
        assert_eq!(touched(patch), ["x.md"]);
        // `diff -u` names carry a tab and a timestamp; without prefixes, `git apply -p1`
        // strips the first component all the same.
        let plain = "--- docs/a.md\t2026-01-01 00:00:00\n+++ docs/a.md\t2026-01-02 00:00:00\n";
        assert_eq!(touched(plain), ["a.md"]);
        let deleted = "--- a/gone.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
        assert_eq!(touched(deleted), ["gone.md"]);
    }

    #[test]
    fn a_hunk_ends_only_when_both_sides_are_counted_out() {
        // The new side is done after the context line; the old side still has one line,
        // a removed line whose text is `-- a/evil.md`.
        let old_left = "--- a/x.md\n+++ b/x.md\n@@ -1,2 +1 @@\n a\n--- a/evil.md\n";
        assert_eq!(touched(old_left), ["x.md"]);
        // And the other way round: an added line whose text is `++ b/evil.md`.
        let new_left = "--- a/x.md\n+++ b/x.md\n@@ -1 +1,2 @@\n a\n+++ b/evil.md\n";
        assert_eq!(touched(new_left), ["x.md"]);
    }

    #[test]
    fn each_kind_of_hunk_line_counts_its_own_side() {
        // A removed line counts the old side only: after `-x` the new side still expects two
        // lines, so `+++ b/evil2.md` is the second added line, not a header.
        let removed =
            "--- a/x.md\n+++ b/x.md\n@@ -1,2 +1,2 @@\n-x\n--- a/evil.md\n+y\n+++ b/evil2.md\n";
        assert_eq!(touched(removed), ["x.md"]);
        // An added line counts the new side only.
        let added =
            "--- a/x.md\n+++ b/x.md\n@@ -1,2 +1,2 @@\n+y\n++++ b/evil.md\n-x\n--- a/evil2.md\n";
        assert_eq!(touched(added), ["x.md"]);
        // `\ No newline at end of file` counts neither.
        let marker = "--- a/x.md\n+++ b/x.md\n@@ -2 +2,2 @@\n-a\n\\ No newline at end of file\n+a\n+++ b/evil.md\n";
        assert_eq!(touched(marker), ["x.md"]);
    }

    #[test]
    fn a_git_header_with_one_quoted_side_names_both() {
        let first =
            "diff --git \"a/caf\\303\\251.md\" b/cafe.md\nrename from \"caf\\303\\251.md\"\n";
        assert_eq!(touched(first), ["cafe.md", "café.md"]);
        let second = "diff --git a/cafe.md \"b/caf\\303\\251.md\"\n";
        assert_eq!(touched(second), ["cafe.md", "café.md"]);
    }

    #[test]
    fn quoted_header_names_keep_escaped_quotes_and_survive_a_missing_quote() {
        let escaped = "diff --git \"a/say \\\"hi\\\".md\" \"b/say \\\"hi\\\".md\"\n";
        assert_eq!(touched(escaped), ["say \"hi\".md"]);
        // An unterminated quote takes the rest of the line, kept verbatim (no panic): a name
        // git would never write, so it matches no pin and the scope check refuses it.
        let open = "diff --git \"a/open.md\n";
        assert_eq!(touched(open), ["\"a/open.md"]);
    }
}
