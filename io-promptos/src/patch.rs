//! The files a unified diff touches (`git diff` output or plain `diff -u`).

use std::collections::BTreeSet;

/// Every path the patch touches, as written (without the `a/` and `b/` prefixes): a modified
/// file, a created one (`--- /dev/null`), a deleted one (`+++ /dev/null`), both sides of a
/// rename. A path git quoted (`"a/with space"`) is unquoted.
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
    let mut touched = BTreeSet::new();
    // Lines inside a hunk are content, whatever they start with: the header says how many
    // old and new lines follow, and they are counted out.
    let (mut old, mut new) = (0usize, 0usize);
    for line in patch.lines() {
        if old > 0 || new > 0 {
            match line.as_bytes().first() {
                Some(b'-') => old = old.saturating_sub(1),
                Some(b'+') => new = new.saturating_sub(1),
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
        // A git header names both sides even when no `---`/`+++` lines follow (a binary
        // patch, a mode change, a pure rename).
        if let Some(rest) = line.strip_prefix("diff --git ") {
            for side in git_header_paths(rest) {
                touched.insert(side);
            }
            continue;
        }
        for (prefix, strip) in [
            ("--- ", true),
            ("+++ ", true),
            ("rename from ", false),
            ("rename to ", false),
            ("copy to ", false),
        ] {
            if let Some(rest) = line.strip_prefix(prefix) {
                let path = unquote(strip_timestamp(rest));
                if path == "/dev/null" {
                    continue;
                }
                let path = if strip {
                    path.strip_prefix("a/")
                        .or_else(|| path.strip_prefix("b/"))
                        .map(str::to_owned)
                        .unwrap_or(path)
                } else {
                    path
                };
                touched.insert(path);
            }
        }
    }
    touched
}

/// The two paths of a `diff --git a/X b/Y` header, without their prefixes. Quoted names are
/// unquoted; unquoted names with spaces are split where both sides agree (as git does), else at
/// the first ` b/`.
fn git_header_paths(rest: &str) -> Vec<String> {
    let strip = |path: String| -> String {
        path.strip_prefix("a/")
            .or_else(|| path.strip_prefix("b/"))
            .map(str::to_owned)
            .unwrap_or(path)
    };
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
                sides.push(strip(unquote(&remaining[..end])));
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
    use super::touched_files;

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
        // `diff -u` names carry a tab and a timestamp.
        let plain = "--- docs/a.md\t2026-01-01 00:00:00\n+++ docs/a.md\t2026-01-02 00:00:00\n";
        assert_eq!(touched(plain), ["docs/a.md"]);
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
