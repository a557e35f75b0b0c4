//! The compile-time rules of a tool contract. Each function checks one field (or one relation
//! between fields), reports with the narrowest span, and returns the checked value; on error it
//! returns a placeholder so the expansion still emits the impl and no cascade follows.

use darling::error::Accumulator;
use darling::util::SpannedValue;
use proc_macro2::Span;
use syn::LitStr;

use super::attr::{DriverArgs, RetryArgs, ToolArgs};

/// The known mutation classes (AIP-14 `mutates`).
const MUTATION_CLASSES: &[&str] = &["workspace", "network", "database", "secret", "external"];
const DRIVER_KINDS: &[&str] = &["cli", "http", "mcp", "sdk", "builtin"];

/// A checked contract, ready to expand.
pub(crate) struct ToolSpec {
    pub(crate) id: String,
    pub(crate) version: String,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) idempotent: bool,
    pub(crate) mutates: Vec<String>,
    pub(crate) requires: [Vec<String>; 3],
    pub(crate) approval: Approval,
    pub(crate) risk_level: u8,
    pub(crate) cost_class: &'static str,
    pub(crate) timeout_ms: u64,
    pub(crate) retry: Option<(u32, &'static str, u64)>,
    pub(crate) default_implementation: Option<String>,
    pub(crate) forbid: Vec<&'static str>,
    pub(crate) require_kind: Vec<&'static str>,
    pub(crate) implements: Option<String>,
    pub(crate) tags: Vec<String>,
}

pub(crate) enum Approval {
    Auto,
    Always,
    OnMutate,
    Policy(String),
}

fn error(span: Span, message: impl std::fmt::Display) -> darling::Error {
    darling::Error::custom(message).with_span(&span)
}

/// Checks every field; `docs` is the doc comment of the item the attribute is on.
pub(crate) fn contract(
    args: &ToolArgs,
    docs: Option<String>,
    at_attr: Span,
    errors: &mut Accumulator,
) -> ToolSpec {
    removed_fields(args, errors);
    let id = id(args.id.as_ref(), at_attr, errors);
    let mutates = mutates(args.mutates.as_deref().unwrap_or_default(), errors);
    let approval = approval(args.approval.as_ref(), &mutates, errors);
    let idempotent = args.idempotent.as_ref().is_some_and(|flag| **flag);
    ToolSpec {
        version: version(args.version.as_ref(), errors),
        name: name(args.name.as_ref(), &id, errors),
        description: description(args.description.as_ref(), docs, at_attr, errors),
        idempotent,
        requires: requires(args, errors),
        approval,
        risk_level: risk_level(args.risk_level.as_ref(), errors),
        cost_class: cost_class(args.cost_class.as_ref(), errors),
        timeout_ms: timeout_ms(args.timeout_ms.as_ref(), errors),
        retry: retry(args.retry.as_ref(), idempotent, errors),
        default_implementation: default_implementation(
            args.default_implementation.as_ref(),
            errors,
        ),
        forbid: driver_kinds(
            args.driver_constraints
                .as_ref()
                .and_then(|d| d.forbid.as_deref()),
            errors,
        ),
        require_kind: driver_kinds(
            args.driver_constraints
                .as_ref()
                .and_then(|d: &DriverArgs| d.require_kind.as_deref()),
            errors,
        ),
        implements: args.implements.as_ref().map(|i| i.as_str().to_owned()),
        tags: tags(args.tags.as_deref().unwrap_or_default(), errors),
        mutates,
        id,
    }
}

/// Rule: the contract has no body (AIP-14 "No `execute` on the contract"), and the fields
/// AIP-14 moved to the driver layer are not contract fields. Each gets a message saying where
/// it belongs instead of darling's generic "unknown field".
fn removed_fields(args: &ToolArgs, errors: &mut Accumulator) {
    if let Some(execute) = &args.execute {
        errors.push(error(
            syn::spanned::Spanned::span(execute),
            "a tool contract has no `execute`: the body is `execute_typed` in the `impl TypedTool` block (or the function itself); AIP-14 keeps bodies off the contract",
        ));
    }
    let moved = [
        ("code", &args.code, "a DRIVER.md's `code`"),
        ("run", &args.run, "a DRIVER.md's `run`"),
        ("runner", &args.runner, "a DRIVER.md's `runner`"),
        (
            "secrets",
            &args.secrets,
            "`requires(secrets = [...])` for what the tool needs, a DRIVER.md's `auth` for how",
        ),
        (
            "network",
            &args.network,
            "`requires(network = [...])` for what the tool needs, a DRIVER.md's `network.egress` for how",
        ),
        ("entry", &args.entry, "the body of the tool"),
    ];
    for (field, meta, home) in moved {
        if let Some(meta) = meta {
            errors.push(error(
                syn::spanned::Spanned::span(meta.path()),
                format_args!("`{field}` is not a contract field since AIP-30 moved it to the driver layer; use {home}"),
            ));
        }
    }
}

/// Rule: `id` is required, 2–80 characters of lowercase letters, digits, `-` and `.`, starting
/// and ending with a letter or digit (TOOL.schema.json `id`); it keys registries and audits.
fn id(id: Option<&SpannedValue<String>>, at_attr: Span, errors: &mut Accumulator) -> String {
    let Some(id) = id else {
        errors.push(error(
            at_attr,
            "a tool needs an `id`, like `#[tool(id = \"files.read\")]`",
        ));
        return "missing-id".into();
    };
    let text = id.as_str();
    let chars_ok = text
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    let ends_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !(2..=80).contains(&text.len()) {
        errors.push(error(
            id.span(),
            format_args!(
                "a tool id has 2 to 80 characters; `{text}` has {}",
                text.len()
            ),
        ));
    } else if !chars_ok || !ends_ok(text.chars().next()) || !ends_ok(text.chars().last()) {
        errors.push(error(
            id.span(),
            "a tool id uses lowercase letters, digits, `-` and `.` (dots separate namespaces), and starts and ends with a letter or digit, like `github.pr.merge`",
        ));
    }
    text.to_owned()
}

/// Rule: `version` is a semantic version `MAJOR.MINOR.PATCH` (optionally `-pre` or `+build`):
/// its major part is half of the tool's identity `id@major`.
fn version(version: Option<&SpannedValue<String>>, errors: &mut Accumulator) -> String {
    let Some(version) = version else {
        return "1.0.0".into();
    };
    let text = version.as_str();
    let core = text.split(['-', '+']).next().unwrap_or(text);
    let parts: Vec<&str> = core.split('.').collect();
    let numeric = parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    let suffix = &text[core.len()..];
    let suffix_ok = suffix.is_empty()
        || (suffix.len() > 1
            && suffix[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)));
    if !numeric || !suffix_ok {
        errors.push(error(
            version.span(),
            format_args!(
                "`{text}` is not a semantic version; write `MAJOR.MINOR.PATCH`, like `1.2.0`"
            ),
        ));
    }
    text.to_owned()
}

/// Rule: `name` is 1–80 characters (TOOL.schema.json); it defaults to the id.
fn name(name: Option<&SpannedValue<String>>, id: &str, errors: &mut Accumulator) -> String {
    let Some(name) = name else {
        return id.to_owned();
    };
    let count = name.chars().count();
    if !(1..=80).contains(&count) {
        errors.push(error(
            name.span(),
            format_args!("a tool name has 1 to 80 characters; this one has {count}"),
        ));
    }
    name.as_str().to_owned()
}

/// Rule: a tool has a description for the model (required by AIP-14), at most 2000
/// characters; it comes from `description = "..."` or else from the doc comment.
fn description(
    attribute: Option<&SpannedValue<String>>,
    docs: Option<String>,
    at_attr: Span,
    errors: &mut Accumulator,
) -> String {
    let (text, span) = match (attribute, docs) {
        (Some(text), _) => (text.trim().to_owned(), text.span()),
        (None, Some(docs)) => (docs, at_attr),
        (None, None) => {
            errors.push(error(
                at_attr,
                "a tool needs a description for the model: add a doc comment (`/// ...`) or `description = \"...\"`",
            ));
            return String::new();
        }
    };
    let count = text.chars().count();
    if count == 0 {
        errors.push(error(span, "the tool description is empty"));
    } else if count > 2000 {
        errors.push(error(
            span,
            format_args!("a tool description has at most 2000 characters; this one has {count}"),
        ));
    }
    text
}

/// Rule: each `mutates` entry is `<class>:<scope>` with a class AIP-14 names (`workspace`,
/// `network`, `database`, `secret`, `external`): governance and audit read these.
fn mutates(entries: &[LitStr], errors: &mut Accumulator) -> Vec<String> {
    let mut out = Vec::new();
    for entry in entries {
        let text = entry.value();
        match text.split_once(':') {
            Some((class, scope)) if !scope.is_empty() && !scope.chars().any(char::is_whitespace) => {
                if !MUTATION_CLASSES.contains(&class) {
                    errors.push(error(
                        entry.span(),
                        format_args!("unknown mutation class `{class}`: use one of `workspace`, `network`, `database`, `secret`, `external`"),
                    ));
                }
            }
            _ => errors.push(error(
                entry.span(),
                format_args!("`{text}` is not `<class>:<scope>`; write e.g. `workspace:/reports` or `network:api.example.com`"),
            )),
        }
        out.push(text);
    }
    out
}

/// Rule: `approval` is `auto`, `always`, `on-mutate` or `policy:<ref>`; and `auto` cannot go
/// with `mutates` (TOOL.schema.json: "approval auto implies mutates is empty"). Without it,
/// a mutating tool gets `on-mutate`.
fn approval(
    approval: Option<&SpannedValue<String>>,
    mutates: &[String],
    errors: &mut Accumulator,
) -> Approval {
    let Some(approval) = approval else {
        return if mutates.is_empty() {
            Approval::Auto
        } else {
            Approval::OnMutate
        };
    };
    let parsed = match approval.as_str() {
        "auto" => Approval::Auto,
        "always" => Approval::Always,
        "on-mutate" => Approval::OnMutate,
        other => match other.strip_prefix("policy:") {
            Some(reference)
                if !reference.is_empty()
                    && reference
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c)) =>
            {
                Approval::Policy(reference.to_owned())
            }
            _ => {
                errors.push(error(
                    approval.span(),
                    format_args!("unknown approval class `{other}`: use `auto`, `always`, `on-mutate` or `policy:<ref>`"),
                ));
                return Approval::Always;
            }
        },
    };
    if matches!(parsed, Approval::Auto) && !mutates.is_empty() {
        errors.push(error(
            approval.span(),
            "`approval = \"auto\"` runs without asking, but this tool declares `mutates`; use `on-mutate` (the default for tools that mutate) or `always`",
        ));
    }
    parsed
}

fn int<T: std::str::FromStr<Err: std::fmt::Display>>(
    lit: &syn::LitInt,
    what: &str,
    errors: &mut Accumulator,
) -> Option<T> {
    match lit.base10_parse::<T>() {
        Ok(value) => Some(value),
        Err(_) => {
            errors.push(error(
                lit.span(),
                format_args!("`{lit}` is out of range for {what}"),
            ));
            None
        }
    }
}

/// Rule: `risk_level` is 0 (read-only), 1 (scoped writes), 2 (external effects) or 3
/// (irreversible).
fn risk_level(risk: Option<&syn::LitInt>, errors: &mut Accumulator) -> u8 {
    let Some(risk) = risk else { return 0 };
    match int::<u8>(risk, "`risk_level`", errors) {
        Some(level @ 0..=3) => level,
        Some(level) => {
            errors.push(error(
                risk.span(),
                format_args!("`risk_level` is 0 to 3 (0 read-only, 1 scoped writes, 2 external effects, 3 irreversible), not {level}"),
            ));
            3
        }
        None => 3,
    }
}

/// Rule: `cost_class` is `trivial`, `metered` or `expensive`.
fn cost_class(cost: Option<&SpannedValue<String>>, errors: &mut Accumulator) -> &'static str {
    let Some(cost) = cost else { return "Trivial" };
    match cost.as_str() {
        "trivial" => "Trivial",
        "metered" => "Metered",
        "expensive" => "Expensive",
        other => {
            errors.push(error(
                cost.span(),
                format_args!(
                    "unknown cost class `{other}`: use `trivial`, `metered` or `expensive`"
                ),
            ));
            "Trivial"
        }
    }
}

/// Rule: `timeout_ms` is at least 1 (TOOL.schema.json): a zero ceiling could never be met.
fn timeout_ms(timeout: Option<&syn::LitInt>, errors: &mut Accumulator) -> u64 {
    let Some(timeout) = timeout else {
        return 30_000;
    };
    match int::<u64>(timeout, "`timeout_ms`", errors) {
        Some(0) => {
            errors.push(error(
                timeout.span(),
                "`timeout_ms` must be at least 1: a zero ceiling fails every call",
            ));
            30_000
        }
        Some(ms) => ms,
        None => 30_000,
    }
}

/// Rule: `retry` has `max_attempts` 1–20, `backoff` `fixed` or `exponential`, and
/// `initial_ms` ≥ 0; and it needs `idempotent`, because the host only retries calls that are
/// safe to repeat (AIP-14 `idempotent`), so a policy on a non-idempotent tool would never apply.
fn retry(
    retry: Option<&SpannedValue<RetryArgs>>,
    idempotent: bool,
    errors: &mut Accumulator,
) -> Option<(u32, &'static str, u64)> {
    let retry = retry?;
    if !idempotent {
        errors.push(error(
            retry.span(),
            "`retry` only applies to idempotent tools: the host never repeats a call that is not safe to repeat; add `idempotent` or remove `retry`",
        ));
    }
    let attempts = match int::<u32>(&retry.max_attempts, "`max_attempts`", errors) {
        Some(n @ 1..=20) => n,
        Some(n) => {
            errors.push(error(
                retry.max_attempts.span(),
                format_args!("`max_attempts` counts every attempt and is 1 to 20, not {n}"),
            ));
            1
        }
        None => 1,
    };
    let backoff = match retry.backoff.as_str() {
        "fixed" => "Fixed",
        "exponential" => "Exponential",
        other => {
            errors.push(error(
                retry.backoff.span(),
                format_args!("unknown backoff `{other}`: use `fixed` or `exponential`"),
            ));
            "Fixed"
        }
    };
    let initial = retry
        .initial_ms
        .as_ref()
        .and_then(|ms| int::<u64>(ms, "`initial_ms`", errors))
        .unwrap_or(0);
    Some((attempts, backoff, initial))
}

/// Rule: `default_implementation` is an implementation id (TOOL.schema.json pattern).
fn default_implementation(
    value: Option<&SpannedValue<String>>,
    errors: &mut Accumulator,
) -> Option<String> {
    let value = value?;
    let text = value.as_str();
    let valid = (2..=80).contains(&text.len())
        && text
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    if !valid {
        errors.push(error(value.span(), "`default_implementation` is an implementation id: lowercase letters, digits, `-` and `.`"));
    }
    Some(text.to_owned())
}

/// Rule: driver kinds are `cli`, `http`, `mcp`, `sdk` or `builtin`, each listed once.
fn driver_kinds(kinds: Option<&[LitStr]>, errors: &mut Accumulator) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for kind in kinds.unwrap_or_default() {
        let text = kind.value();
        match DRIVER_KINDS.iter().position(|k| *k == text) {
            Some(i) if out.contains(&DRIVER_VARIANTS[i]) => {
                errors.push(error(
                    kind.span(),
                    format_args!("driver kind `{text}` is listed twice"),
                ));
            }
            Some(i) => out.push(DRIVER_VARIANTS[i]),
            None => errors.push(error(
                kind.span(),
                format_args!(
                    "unknown driver kind `{text}`: use `cli`, `http`, `mcp`, `sdk` or `builtin`"
                ),
            )),
        }
    }
    out
}

const DRIVER_VARIANTS: &[&str] = &["Cli", "Http", "Mcp", "Sdk", "Builtin"];

/// Rule: tags are lowercase letters, digits and `-`, each listed once (TOOL.schema.json).
fn tags(tags: &[LitStr], errors: &mut Accumulator) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for tag in tags {
        let text = tag.value();
        let valid = text
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && text
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !valid {
            errors.push(error(
                tag.span(),
                format_args!("tag `{text}` must be lowercase letters, digits and `-`"),
            ));
        } else if out.contains(&text) {
            errors.push(error(
                tag.span(),
                format_args!("tag `{text}` is listed twice"),
            ));
        }
        out.push(text);
    }
    out
}

/// Rule: `requires` lists are plain strings (checked by darling); gathered here.
fn requires(args: &ToolArgs, _errors: &mut Accumulator) -> [Vec<String>; 3] {
    let list = |l: Option<&Vec<LitStr>>| {
        l.map(|l| l.iter().map(LitStr::value).collect())
            .unwrap_or_default()
    };
    match &args.requires {
        Some(r) => [
            list(r.network.as_ref()),
            list(r.secrets.as_ref()),
            list(r.tools.as_ref()),
        ],
        None => Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use darling::FromMeta;
    use darling::ast::NestedMeta;
    use proc_macro2::TokenStream;
    use quote::quote;

    use super::*;

    /// The contract of `#[tool(args)]` with `docs`, and the messages of its errors.
    fn checked(args: TokenStream, docs: Option<&str>) -> (ToolSpec, Vec<String>) {
        let list = NestedMeta::parse_meta_list(args).expect("arguments parse");
        let args = ToolArgs::from_list(&list).expect("arguments read");
        let mut errors = darling::Error::accumulator();
        let spec = contract(
            &args,
            docs.map(str::to_owned),
            Span::call_site(),
            &mut errors,
        );
        let messages = match errors.finish() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        };
        (spec, messages)
    }

    /// The messages for `args` on a tool with an id and a description otherwise valid.
    fn errors_of(args: TokenStream) -> Vec<String> {
        checked(quote!(id = "files.find", #args), Some("Finds.")).1
    }

    fn spec_of(args: TokenStream) -> ToolSpec {
        let (spec, errors) = checked(quote!(id = "files.find", #args), Some("Finds."));
        assert_eq!(errors, Vec::<String>::new());
        spec
    }

    #[test]
    fn the_defaults_of_a_minimal_contract() {
        let spec = spec_of(quote!());
        assert_eq!(spec.id, "files.find");
        assert_eq!(spec.name, "files.find");
        assert_eq!(spec.version, "1.0.0");
        assert_eq!(spec.description, "Finds.");
        assert!(!spec.idempotent);
        assert!(spec.mutates.is_empty());
        assert!(matches!(spec.approval, Approval::Auto));
        assert_eq!(spec.risk_level, 0);
        assert_eq!(spec.cost_class, "Trivial");
        assert_eq!(spec.timeout_ms, 30_000);
        assert!(spec.retry.is_none());
        assert!(spec.default_implementation.is_none());
        assert!(spec.forbid.is_empty() && spec.require_kind.is_empty());
        assert!(spec.implements.is_none());
        assert!(spec.tags.is_empty());
        assert_eq!(spec.requires, [Vec::<String>::new(), vec![], vec![]]);
    }

    #[test]
    fn every_field_is_carried_into_the_contract() {
        let spec = spec_of(quote!(
            version = "2.1.0-rc.1",
            name = "Find files",
            description = "  Finds files.  ",
            idempotent = true,
            mutates = ["workspace:/reports", "network:api.example.com"],
            requires(
                network = ["api.example.com"],
                secrets = ["TOKEN"],
                tools = ["files.read"]
            ),
            approval = "policy:org/files-v2_1",
            risk_level = 3,
            cost_class = "expensive",
            timeout_ms = 1,
            retry(max_attempts = 20, backoff = "exponential", initial_ms = 250),
            default_implementation = "files.find-local",
            driver_constraints(
                forbid = ["cli", "http"],
                require_kind = ["mcp", "sdk", "builtin"]
            ),
            implements = "files.search",
            tags = ["files", "search-2"],
        ));
        assert_eq!(spec.version, "2.1.0-rc.1");
        assert_eq!(spec.name, "Find files");
        assert_eq!(spec.description, "Finds files.");
        assert!(spec.idempotent);
        assert_eq!(
            spec.mutates,
            ["workspace:/reports", "network:api.example.com"]
        );
        assert_eq!(
            spec.requires,
            [
                vec!["api.example.com".to_owned()],
                vec!["TOKEN".to_owned()],
                vec!["files.read".to_owned()]
            ]
        );
        assert!(matches!(&spec.approval, Approval::Policy(r) if r == "org/files-v2_1"));
        assert_eq!(spec.risk_level, 3);
        assert_eq!(spec.cost_class, "Expensive");
        assert_eq!(spec.timeout_ms, 1);
        assert_eq!(spec.retry, Some((20, "Exponential", 250)));
        assert_eq!(
            spec.default_implementation.as_deref(),
            Some("files.find-local")
        );
        assert_eq!(spec.forbid, ["Cli", "Http"]);
        assert_eq!(spec.require_kind, ["Mcp", "Sdk", "Builtin"]);
        assert_eq!(spec.implements.as_deref(), Some("files.search"));
        assert_eq!(spec.tags, ["files", "search-2"]);
        let spec = spec_of(quote!(
            cost_class = "metered",
            approval = "always",
            retry(max_attempts = 1, backoff = "fixed"),
            idempotent = true
        ));
        assert_eq!(spec.cost_class, "Metered");
        assert!(matches!(spec.approval, Approval::Always));
        assert_eq!(spec.retry, Some((1, "Fixed", 0)));
        assert_eq!(
            spec_of(quote!(cost_class = "trivial")).cost_class,
            "Trivial"
        );
        assert!(matches!(
            spec_of(quote!(approval = "auto")).approval,
            Approval::Auto
        ));
        // Without `approval`, a tool that mutates asks on mutation.
        let spec = spec_of(quote!(mutates = ["workspace:/a"]));
        assert!(matches!(spec.approval, Approval::OnMutate));
        assert!(matches!(
            spec_of(quote!(mutates = ["workspace:/a"], approval = "on-mutate")).approval,
            Approval::OnMutate
        ));
    }

    #[test]
    fn the_id_has_2_to_80_characters_of_its_alphabet() {
        for ok in ["ab", "a1", "github.pr.merge", "a-b", &"a".repeat(80)] {
            assert_eq!(
                checked(quote!(id = #ok), Some("d")).1,
                Vec::<String>::new(),
                "{ok}"
            );
        }
        let alphabet = "a tool id uses lowercase letters, digits, `-` and `.` (dots separate namespaces), and starts and ends with a letter or digit, like `github.pr.merge`";
        for bad in [
            "Files.find",
            "files_find",
            "-files",
            "files.",
            ".a",
            "a-",
            "é1",
        ] {
            assert_eq!(
                checked(quote!(id = #bad), Some("d")).1,
                vec![alphabet],
                "{bad}"
            );
        }
        let long = "a".repeat(81);
        assert_eq!(
            checked(quote!(id = #long), Some("d")).1,
            vec![format!("a tool id has 2 to 80 characters; `{long}` has 81")]
        );
        assert_eq!(
            checked(quote!(id = "a"), Some("d")).1,
            vec!["a tool id has 2 to 80 characters; `a` has 1"]
        );
        let (spec, errors) = checked(quote!(), Some("d"));
        assert_eq!(
            errors,
            vec!["a tool needs an `id`, like `#[tool(id = \"files.read\")]`"]
        );
        assert_eq!(spec.id, "missing-id");
    }

    #[test]
    fn the_version_is_semantic() {
        for ok in [
            "0.0.0",
            "10.20.30",
            "1.2.3-alpha",
            "1.2.3+b.1",
            "1.2.3-a_b.c-d",
        ] {
            assert_eq!(
                errors_of(quote!(version = #ok)),
                Vec::<String>::new(),
                "{ok}"
            );
        }
        // TOOL.schema.json's pattern takes one suffix, `-` or `+` then `[\w.-]+`: not both.
        for bad in [
            "1.2",
            "1.2.3.4",
            "1..3",
            "1.x.3",
            "v1.2.3",
            "1.2.3-",
            "1.2.3+",
            "1.2.3-a b",
            "1.2.3-rc+b",
            "",
        ] {
            assert_eq!(
                errors_of(quote!(version = #bad)),
                vec![format!(
                    "`{bad}` is not a semantic version; write `MAJOR.MINOR.PATCH`, like `1.2.0`"
                )],
                "{bad}"
            );
        }
    }

    #[test]
    fn the_name_and_description_are_bounded() {
        let eighty = "é".repeat(80);
        assert_eq!(errors_of(quote!(name = #eighty)), Vec::<String>::new());
        assert_eq!(errors_of(quote!(name = "x")), Vec::<String>::new());
        let long = "é".repeat(81);
        assert_eq!(
            errors_of(quote!(name = #long)),
            vec!["a tool name has 1 to 80 characters; this one has 81"]
        );
        assert_eq!(
            errors_of(quote!(name = "")),
            vec!["a tool name has 1 to 80 characters; this one has 0"]
        );
        let max = "é".repeat(2000);
        assert_eq!(errors_of(quote!(description = #max)), Vec::<String>::new());
        let over = "é".repeat(2001);
        assert_eq!(
            errors_of(quote!(description = #over)),
            vec!["a tool description has at most 2000 characters; this one has 2001"]
        );
        assert_eq!(
            errors_of(quote!(description = "   ")),
            vec!["the tool description is empty"]
        );
        // The attribute wins over the doc comment; the doc comment is taken as it is.
        let (spec, _) = checked(
            quote!(id = "ab", description = "From the attribute."),
            Some("Docs."),
        );
        assert_eq!(spec.description, "From the attribute.");
        let (spec, errors) = checked(quote!(id = "ab"), Some(""));
        assert_eq!(errors, vec!["the tool description is empty"]);
        assert_eq!(spec.description, "");
        let (_, errors) = checked(quote!(id = "ab"), None);
        assert_eq!(
            errors,
            vec![
                "a tool needs a description for the model: add a doc comment (`/// ...`) or `description = \"...\"`"
            ]
        );
    }

    #[test]
    fn mutates_entries_are_class_colon_scope() {
        for class in MUTATION_CLASSES {
            let entry = format!("{class}:x");
            assert_eq!(
                errors_of(quote!(mutates = [#entry], approval = "always")),
                Vec::<String>::new()
            );
        }
        assert_eq!(
            errors_of(quote!(mutates = ["filesystem:/a"], approval = "always")),
            vec![
                "unknown mutation class `filesystem`: use one of `workspace`, `network`, `database`, `secret`, `external`"
            ]
        );
        for bad in ["workspace", "workspace:", "workspace:/a b", "workspace:\t"] {
            assert_eq!(
                errors_of(quote!(mutates = [#bad], approval = "always")),
                vec![format!(
                    "`{bad}` is not `<class>:<scope>`; write e.g. `workspace:/reports` or `network:api.example.com`"
                )],
                "{bad}"
            );
        }
    }

    #[test]
    fn approval_is_one_of_four_and_auto_does_not_mutate() {
        let unknown = |a: &str| {
            format!(
                "unknown approval class `{a}`: use `auto`, `always`, `on-mutate` or `policy:<ref>`"
            )
        };
        for bad in ["sometimes", "policy:", "policy:a b", "policy:a*", "Auto"] {
            let (spec, errors) = checked(quote!(id = "ab", approval = #bad), Some("d"));
            assert_eq!(errors, vec![unknown(bad)], "{bad}");
            // A mistake asks every time rather than never.
            assert!(matches!(spec.approval, Approval::Always), "{bad}");
        }
        assert_eq!(
            errors_of(quote!(approval = "auto", mutates = ["workspace:/a"])),
            vec![
                "`approval = \"auto\"` runs without asking, but this tool declares `mutates`; use `on-mutate` (the default for tools that mutate) or `always`"
            ]
        );
    }

    #[test]
    fn numbers_are_in_their_ranges() {
        for level in 0u8..=3 {
            assert_eq!(spec_of(quote!(risk_level = #level)).risk_level, level);
        }
        let (spec, errors) = checked(quote!(id = "ab", risk_level = 4), Some("d"));
        assert_eq!(
            errors,
            vec![
                "`risk_level` is 0 to 3 (0 read-only, 1 scoped writes, 2 external effects, 3 irreversible), not 4"
            ]
        );
        assert_eq!(spec.risk_level, 3);
        let (spec, errors) = checked(quote!(id = "ab", risk_level = 300), Some("d"));
        assert_eq!(errors, vec!["`300` is out of range for `risk_level`"]);
        assert_eq!(spec.risk_level, 3);
        assert_eq!(
            errors_of(quote!(cost_class = "cheap")),
            vec!["unknown cost class `cheap`: use `trivial`, `metered` or `expensive`"]
        );
        let (spec, errors) = checked(quote!(id = "ab", timeout_ms = 0), Some("d"));
        assert_eq!(
            errors,
            vec!["`timeout_ms` must be at least 1: a zero ceiling fails every call"]
        );
        assert_eq!(spec.timeout_ms, 30_000);
        let (spec, errors) = checked(
            quote!(id = "ab", timeout_ms = 18446744073709551616),
            Some("d"),
        );
        assert_eq!(
            errors,
            vec!["`18446744073709551616` is out of range for `timeout_ms`"]
        );
        assert_eq!(spec.timeout_ms, 30_000);
        assert_eq!(
            spec_of(quote!(timeout_ms = 18446744073709551615)).timeout_ms,
            u64::MAX
        );
    }

    #[test]
    fn retry_needs_idempotence_and_bounded_attempts() {
        let (spec, errors) = checked(
            quote!(id = "ab", retry(max_attempts = 3, backoff = "fixed")),
            Some("d"),
        );
        assert_eq!(
            errors,
            vec![
                "`retry` only applies to idempotent tools: the host never repeats a call that is not safe to repeat; add `idempotent` or remove `retry`"
            ]
        );
        assert_eq!(spec.retry, Some((3, "Fixed", 0)));
        for n in [0u32, 21] {
            let (spec, errors) = checked(
                quote!(id = "ab", idempotent = true, retry(max_attempts = #n, backoff = "fixed")),
                Some("d"),
            );
            assert_eq!(
                errors,
                vec![format!(
                    "`max_attempts` counts every attempt and is 1 to 20, not {n}"
                )]
            );
            assert_eq!(spec.retry, Some((1, "Fixed", 0)));
        }
        let (spec, errors) = checked(
            quote!(
                id = "ab",
                idempotent = true,
                retry(
                    max_attempts = 99999999999,
                    backoff = "linear",
                    initial_ms = -1
                )
            ),
            Some("d"),
        );
        assert_eq!(
            errors,
            vec![
                "`99999999999` is out of range for `max_attempts`",
                "unknown backoff `linear`: use `fixed` or `exponential`",
                "`-1` is out of range for `initial_ms`",
            ]
        );
        assert_eq!(spec.retry, Some((1, "Fixed", 0)));
    }

    #[test]
    fn implementation_ids_driver_kinds_and_tags_are_checked() {
        for ok in ["ab", "1a", "a.b-c", &"a".repeat(80)] {
            assert_eq!(
                errors_of(quote!(default_implementation = #ok)),
                Vec::<String>::new(),
                "{ok}"
            );
        }
        for bad in ["a", "-ab", ".ab", "Ab", "a_b", &"a".repeat(81)] {
            assert_eq!(
                errors_of(quote!(default_implementation = #bad)),
                vec![
                    "`default_implementation` is an implementation id: lowercase letters, digits, `-` and `.`"
                ],
                "{bad}"
            );
        }
        assert_eq!(
            errors_of(quote!(driver_constraints(forbid = ["cli", "ftp", "cli"]))),
            vec![
                "unknown driver kind `ftp`: use `cli`, `http`, `mcp`, `sdk` or `builtin`",
                "driver kind `cli` is listed twice",
            ]
        );
        let spec = spec_of(quote!(tags = ["a", "1-b"]));
        assert_eq!(spec.tags, ["a", "1-b"]);
        for bad in ["Read Only", "-a", "", "a_b", "a.b"] {
            assert_eq!(
                errors_of(quote!(tags = [#bad])),
                vec![format!(
                    "tag `{bad}` must be lowercase letters, digits and `-`"
                )],
                "{bad}"
            );
        }
        assert_eq!(
            errors_of(quote!(tags = ["a", "a"])),
            vec!["tag `a` is listed twice"]
        );
    }

    #[test]
    fn fields_moved_to_the_driver_layer_say_where_they_went() {
        let moved = |field: &str, home: &str| {
            format!(
                "`{field}` is not a contract field since AIP-30 moved it to the driver layer; use {home}"
            )
        };
        assert_eq!(
            errors_of(quote!(
                code = "x",
                run = "y",
                runner = "z",
                secrets = "s",
                network = "n",
                entry = "e"
            )),
            vec![
                moved("code", "a DRIVER.md's `code`"),
                moved("run", "a DRIVER.md's `run`"),
                moved("runner", "a DRIVER.md's `runner`"),
                moved(
                    "secrets",
                    "`requires(secrets = [...])` for what the tool needs, a DRIVER.md's `auth` for how"
                ),
                moved(
                    "network",
                    "`requires(network = [...])` for what the tool needs, a DRIVER.md's `network.egress` for how"
                ),
                moved("entry", "the body of the tool"),
            ]
        );
        assert_eq!(
            errors_of(quote!(execute = "run")),
            vec![
                "a tool contract has no `execute`: the body is `execute_typed` in the `impl TypedTool` block (or the function itself); AIP-14 keeps bodies off the contract"
            ]
        );
    }
}
