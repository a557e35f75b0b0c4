//! AIP-14 `mutates` scopes: which declared entry covers which resource.

/// The mutation classes AIP-14 names: the `<class>` of a `<class>:<scope>` entry.
pub const MUTATION_CLASSES: &[&str] = &["workspace", "network", "database", "secret", "external"];

/// Whether the declared `mutates` entry `declared` covers `resource` (both `<class>:<scope>`).
///
/// The classes must be equal and known. Then the entry covers the resource when:
/// - its scope is `*` (the whole class);
/// - its scope equals the resource's;
/// - its scope is a path and the resource lies below it: `workspace:/notes` covers
///   `workspace:/notes/a.md` but not `workspace:/notes-old/a.md`;
/// - its scope is a folder wildcard, `/journal/*` or `/journal/**`: it covers everything below
///   `/journal` (AIP-14 manifests write `workspace:/journal/*` for "this folder").
///
/// A resource with a `..` segment is never covered: it cannot climb out of a scope.
///
/// ```
/// use agentio_core::files::mutation_covers;
/// assert!(mutation_covers("workspace:/journal/*", "workspace:/journal/2026-05-01.md"));
/// assert!(mutation_covers("workspace:/notes", "workspace:/notes/a.md"));
/// assert!(!mutation_covers("workspace:/notes", "workspace:/notes-old/a.md"));
/// assert!(!mutation_covers("workspace:/notes", "workspace:/notes/../etc/passwd"));
/// assert!(mutation_covers("network:*", "network:example.com"));
/// ```
pub fn mutation_covers(declared: &str, resource: &str) -> bool {
    let (Some((class, scope)), Some((wanted_class, wanted))) =
        (declared.split_once(':'), resource.split_once(':'))
    else {
        return false;
    };
    if class != wanted_class || !MUTATION_CLASSES.contains(&class) {
        return false;
    }
    if wanted.split(['/', '\\']).any(|segment| segment == "..") {
        return false;
    }
    if scope == "*" || scope == wanted {
        return true;
    }
    // `/journal/*` and `/journal/**` name the folder's contents; `/journal/` the folder.
    let scope = scope
        .strip_suffix("/**")
        .or_else(|| scope.strip_suffix("/*"))
        .unwrap_or(scope);
    let scope = scope.trim_end_matches('/');
    if scope.is_empty() {
        // `/`, `/*` or `/**`: the root of the class.
        return wanted.starts_with('/');
    }
    wanted
        .strip_prefix(scope)
        .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1)
}

/// Whether a contract's `mutates` lets it write the workspace path `relative` (as a declared
/// output file's path, tokens and all, or as interpolated): the path is the resource
/// `workspace:/<relative>`.
///
/// ```
/// use agentio_core::files::covers_workspace_path;
/// let mutates = vec!["workspace:/reports/*".to_owned()];
/// assert!(covers_workspace_path(&mutates, "reports/<runId>.md"));
/// assert!(!covers_workspace_path(&mutates, "notes/today.md"));
/// ```
pub fn covers_workspace_path(mutates: &[String], relative: &str) -> bool {
    let resource = format!("workspace:/{}", relative.trim_start_matches("./"));
    mutates
        .iter()
        .any(|declared| mutation_covers(declared, &resource))
}

#[cfg(test)]
mod tests {

    /// The same table as agentio-derive's `covers_agrees_with_the_runtime_rule`: what the
    /// macros refuse at compile time (an output file outside `mutates`) is what is refused here.
    #[test]
    fn the_rule_the_macros_check_at_compile_time() {
        let cases = [
            ("workspace:/reports", "workspace:/reports/x.csv", true),
            ("workspace:/reports", "workspace:/reports", true),
            ("workspace:/reports", "workspace:/reports/", false),
            ("workspace:/reports", "workspace:/reportsX/a", false),
            ("workspace:/reports/", "workspace:/reports/a", true),
            ("workspace:/reports/*", "workspace:/reports/a", true),
            ("workspace:/reports/**", "workspace:/reports/a/b", true),
            ("workspace:*", "workspace:/anything", true),
            ("workspace:/", "workspace:/anything", true),
            ("workspace:/", "workspace:relative", false),
            ("network:*", "workspace:/a", false),
            ("workspace", "workspace:/a", false),
            ("workspace:/a", "workspace", false),
            ("workspace:/reports", "workspace:/reports/../etc", false),
            ("workspace:*", "workspace:/a/../b", false),
            ("workspace:/reports", "workspace:/reports\\..\\etc", false),
        ];
        for (declared, resource, want) in cases {
            assert_eq!(
                mutation_covers(declared, resource),
                want,
                "{declared} {resource}"
            );
        }
    }

    use super::mutation_covers;

    #[test]
    fn mutation_scopes_cover_paths_below_them_only() {
        assert!(mutation_covers("workspace:/notes", "workspace:/notes/a.md"));
        assert!(mutation_covers(
            "workspace:/notes/",
            "workspace:/notes/a.md"
        ));
        assert!(mutation_covers("workspace:/notes", "workspace:/notes"));
        assert!(mutation_covers("network:*", "network:example.com"));
        assert!(mutation_covers("database:invoices", "database:invoices"));
        assert!(!mutation_covers(
            "workspace:/notes",
            "workspace:/notes-old/a.md"
        ));
        assert!(!mutation_covers("workspace:/notes", "workspace:/notes/"));
        assert!(!mutation_covers(
            "workspace:/notes",
            "workspace:/notes/../etc/passwd"
        ));
        assert!(!mutation_covers(
            "workspace:*",
            "workspace:/notes/../../etc"
        ));
        assert!(!mutation_covers("workspace:/notes", "network:/notes/a"));
        assert!(!mutation_covers("bogus:*", "bogus:x"));
        assert!(!mutation_covers("workspace", "workspace:/x"));
        assert!(!mutation_covers("workspace:/x", "workspace"));
    }

    #[test]
    fn folder_wildcards_cover_the_folder_contents() {
        assert!(mutation_covers(
            "workspace:/journal/*",
            "workspace:/journal/2026-05-01.md"
        ));
        assert!(mutation_covers(
            "workspace:/journal/**",
            "workspace:/journal/a/b.md"
        ));
        assert!(mutation_covers(
            "workspace:/journal/*",
            "workspace:/journal/a/b.md"
        ));
        assert!(!mutation_covers(
            "workspace:/journal/*",
            "workspace:/journal"
        ));
        assert!(!mutation_covers(
            "workspace:/journal/*",
            "workspace:/journalist/x"
        ));
        assert!(!mutation_covers(
            "workspace:/journal/*",
            "workspace:/other.md"
        ));
        assert!(mutation_covers("workspace:/*", "workspace:/anything.md"));
        assert!(!mutation_covers("workspace:/*", "workspace:relative.md"));
    }
}
