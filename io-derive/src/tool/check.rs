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
