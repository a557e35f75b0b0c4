//! The compile-time rules of `AgentInput` and `AgentOutput`, one function per rule.
//!
//! The rules read serde's own view of the type (`serde_derive_internals`), so a rename,
//! `rename_all`, `tag` or `flatten` means here exactly what it means to serde.

use darling::error::Accumulator;
use proc_macro2::Span;
use serde_derive_internals::{ast, attr::TagType};
use syn::spanned::Spanned;

use crate::attr::ContainerAttrs;
use crate::side::Side;
use crate::ty::{self, Unexpressible};

/// The one reserved input property of AIP-16.
pub(crate) const FS_ROOT: &str = "_workflowFsRoot";

/// Where to point for a mistake about a whole field: its name (or type, for tuple fields).
fn field_span(field: &ast::Field<'_>) -> Span {
    field
        .original
        .ident
        .as_ref()
        .map_or_else(|| field.ty.span(), syn::Ident::span)
}

fn error(span: Span, message: impl std::fmt::Display) -> darling::Error {
    darling::Error::custom(message).with_span(&span)
}

/// Every field of the container, with the variant it belongs to (if any).
fn fields<'c, 'a>(cont: &'c ast::Container<'a>) -> Vec<&'c ast::Field<'a>> {
    match &cont.data {
        ast::Data::Struct(_, fields) => fields.iter().collect(),
        ast::Data::Enum(variants) => variants.iter().flat_map(|v| v.fields.iter()).collect(),
    }
}

/// The span of `#[serde(<word>)]` on the container, for errors about that word.
fn serde_word_span(input: &syn::DeriveInput, word: &str) -> Option<Span> {
    let mut found = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(word) {
                found = Some(meta.path.span());
            }
            // Only the key matters here.
            crate::attr::skip_entry(&meta)
        });
    }
    found
}

/// Rule: an input is a JSON object. AIP-14 and AIP-16 describe `inputs` as an object schema,
/// and `_workflowFsRoot` can only be injected into an object. Structs with named fields and
/// internally or adjacently tagged enums always serialize to objects; nothing else does.
pub(crate) fn input_is_object(
    input: &syn::DeriveInput,
    cont: &ast::Container<'_>,
    errors: &mut Accumulator,
) {
    let at_ident = cont.ident.span();
    if cont.attrs.transparent() {
        let span = serde_word_span(input, "transparent").unwrap_or(at_ident);
        errors.push(error(
            span,
            "an agent input must be a JSON object, and a `#[serde(transparent)]` type is whatever its field is; use a struct with named fields",
        ));
        return;
    }
    match &cont.data {
        ast::Data::Struct(ast::Style::Struct, _) => {}
        ast::Data::Struct(ast::Style::Tuple, _) => errors.push(error(
            at_ident,
            "an agent input must be a JSON object, but a tuple struct serializes as an array; give the fields names",
        )),
        ast::Data::Struct(ast::Style::Newtype, _) => errors.push(error(
            at_ident,
            "an agent input must be a JSON object, but a newtype struct serializes as its inner value; give the field a name",
        )),
        ast::Data::Struct(ast::Style::Unit, _) => errors.push(error(
            at_ident,
            "an agent input must be a JSON object, but a unit struct serializes as `null`; use `struct Name {}` for an input without arguments",
        )),
        ast::Data::Enum(_) => match cont.attrs.tag() {
            TagType::Internal { .. } | TagType::Adjacent { .. } => {}
            TagType::External => errors.push(error(
                at_ident,
                "an agent input must be a JSON object, but an externally tagged enum can serialize as a string; add `#[serde(tag = \"type\")]`",
            )),
            TagType::None => errors.push(error(
                serde_word_span(input, "untagged").unwrap_or(at_ident),
                "an agent input must be a JSON object, but an untagged enum is whatever its variant is; use `#[serde(tag = \"type\")]` instead",
            )),
        },
    }
}

/// Rule: `_workflowFsRoot` is host-injected into inputs only (AIP-16 "Reserved input field").
/// In an input it must be optional (the host injects it only when the unit declares files)
/// and string-like; it must be deserialized (the host writes it for the body to read); a field
/// that nearly has the name would silently never be filled; an output must not carry it.
pub(crate) fn fs_root_field(side: Side, cont: &ast::Container<'_>, errors: &mut Accumulator) {
    for field in fields(cont) {
        let name = match side {
            Side::Input => &field.attrs.name().deserialize_name().value,
            Side::Output => &field.attrs.name().serialize_name().value,
        };
        let at_field = field_span(field);
        if name == FS_ROOT {
            match side {
                Side::Output => errors.push(error(
                    at_field,
                    "`_workflowFsRoot` is reserved for inputs: the host injects it into a unit's input, and an output must not carry it",
                )),
                Side::Input if field.attrs.skip_deserializing() => errors.push(error(
                    at_field,
                    "the reserved `_workflowFsRoot` field is skipped when deserializing, so the host-injected root would never reach it; remove `skip_deserializing`",
                )),
                Side::Input if !ty::is_optional_path_or_string(field.ty) => errors.push(error(
                    field.ty.span(),
                    "the reserved `_workflowFsRoot` field must be `Option<String>`, `Option<PathBuf>` or `Option<FsRoot>`: the host injects it only when the unit declares files",
                )),
                Side::Input => {}
            }
        } else if side == Side::Input && looks_like_fs_root(name) {
            errors.push(error(
                at_field,
                format_args!(
                    "`{name}` looks like the reserved `_workflowFsRoot` field but is not spelled like it, so the host would never fill it; add `#[serde(rename = \"_workflowFsRoot\")]`"
                ),
            ));
        }
    }
}

/// Whether the input type can receive `_workflowFsRoot`: a `deny_unknown_fields` type must
/// declare it; any other type ignores unknown fields.
pub(crate) fn accepts_fs_root(cont: &ast::Container<'_>) -> bool {
    !cont.attrs.deny_unknown_fields()
        || fields(cont)
            .iter()
            .any(|f| f.attrs.name().deserialize_name().value == FS_ROOT)
}

fn looks_like_fs_root(name: &str) -> bool {
    let folded: String = name.chars().filter(|c| *c != '_' && *c != '-').collect();
    folded.eq_ignore_ascii_case("workflowfsroot")
}

/// Rule: a strict output's root is an object (OpenAI strict mode requires it), so it is a
/// struct with named fields; and no field may be something strict mode cannot describe: a map
/// (no fixed property names), `serde_json::Value` (any JSON), a tuple (a fixed-length array of
/// mixed types, `prefixItems`) or a flattened field (which schemars expresses with constructs
/// strict mode rejects). Strict mode also requires every property, so no field may be one that
/// serialization leaves out (`skip_serializing_if`): the model would have to write a value the
/// type itself never writes, and the type's own output would not match the format.
pub(crate) fn strict_output(
    strict_span: Span,
    cont: &ast::Container<'_>,
    errors: &mut Accumulator,
) {
    strict_shape("output", strict_span, cont, errors);
    if !matches!(cont.data, ast::Data::Struct(ast::Style::Struct, _)) {
        return;
    }
    for field in fields(cont) {
        if field.attrs.skip_serializing_if().is_some() && !field.attrs.skip_serializing() {
            errors.push(error(
                serde_field_word_span(field, "skip_serializing_if").unwrap_or_else(|| field_span(field)),
                "a `strict` output cannot have a field that `skip_serializing_if` leaves out: strict mode requires every property; remove it (an `Option` is then written as `null`)",
            ));
        }
    }
}

/// The span of `#[serde(<word>)]` on a field.
fn serde_field_word_span(field: &ast::Field<'_>, word: &str) -> Option<Span> {
    let mut found = None;
    for attr in field
        .original
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
    {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(word) {
                found = Some(meta.path.span());
            }
            crate::attr::skip_entry(&meta)
        });
    }
    found
}

/// Rule: a strict input (function calling with `strict: true`) has the same shape rules as a
/// strict output: the model writes it under strict mode, so strict mode must describe it.
pub(crate) fn strict_input(strict_span: Span, cont: &ast::Container<'_>, errors: &mut Accumulator) {
    strict_shape("input", strict_span, cont, errors);
}

fn strict_shape(
    noun: &str,
    strict_span: Span,
    cont: &ast::Container<'_>,
    errors: &mut Accumulator,
) {
    let is_named_struct = matches!(cont.data, ast::Data::Struct(ast::Style::Struct, _));
    if !is_named_struct || cont.attrs.transparent() {
        errors.push(error(
            strict_span,
            format_args!("a `strict` {noun} must be a struct with named fields: strict mode needs an object at the root"),
        ));
        return;
    }
    for field in fields(cont) {
        if field.attrs.flatten() {
            errors.push(error(
                field_span(field),
                format_args!("a `strict` {noun} cannot have a `#[serde(flatten)]` field: strict mode needs every property listed on its own object; nest the struct as a named field instead"),
            ));
            continue;
        }
        match ty::unexpressible(field.ty) {
            Some(Unexpressible::Map(ident)) => errors.push(error(
                ident.span(),
                format_args!(
                    "a `strict` {noun} cannot contain a map (`{ident}`): strict mode needs fixed property names; use a struct, or a `Vec` of key-value structs"
                ),
            )),
            Some(Unexpressible::AnyValue(ident)) => errors.push(error(
                ident.span(),
                format_args!("a `strict` {noun} cannot contain `serde_json::Value`: strict mode needs a fixed shape for every property; use a concrete type"),
            )),
            Some(Unexpressible::Tuple(tuple)) => errors.push(error(
                tuple.span(),
                format_args!("a `strict` {noun} cannot contain a tuple: strict mode has no fixed-length arrays of mixed types (`prefixItems`); use a struct with named fields"),
            )),
            None => {}
        }
    }
}

/// The span of `strict` in `#[agent(...)]`, read without darling: used when the attribute
/// has another mistake, so that one compile still reports the strict-mode problems too.
pub(crate) fn strict_word_span(input: &syn::DeriveInput) -> Option<Span> {
    let mut found = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("agent")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("strict") {
                found = Some(meta.path.span());
            }
            crate::attr::skip_entry(&meta)
        });
    }
    found
}

/// Rule: serde's and schemars' derives name their crates as `::serde` and `::schemars` unless
/// told otherwise, so in a crate that reaches them only through the facade, a type deriving
/// them without `#[serde(crate = ...)]` / `#[schemars(crate = ...)]` fails with a dozen errors
/// (`can't find crate for serde`, and notes to add derives the type already has) none of which
/// names the fix. This derive sees the type too, and says what to write. An explicit
/// `#[agent(crate = ...)]` turns the rule off (a type implementing serde's traits by hand).
pub(crate) fn crate_lines(
    input: &syn::DeriveInput,
    side: Side,
    has_serde: bool,
    has_schemars: bool,
    errors: &mut Accumulator,
) {
    let serde = !has_serde && !crate::io_type::names_crate(&input.attrs, "serde");
    let schemars = !has_schemars && !crate::io_type::names_crate(&input.attrs, "schemars");
    if !serde && !schemars {
        return;
    }
    let path = |name: &str| {
        let path = crate::paths::reexported(name);
        quote::ToTokens::to_token_stream(&path)
            .to_string()
            .replace(' ', "")
            .trim_start_matches("::")
            .to_owned()
    };
    let (role, derive) = match side {
        Side::Input => ("input", "AgentInput"),
        Side::Output => ("output", "AgentOutput"),
    };
    let mut lines = Vec::new();
    if serde {
        lines.push(format!("`#[serde(crate = \"{}\")]`", path("serde")));
    }
    if schemars {
        lines.push(format!("`#[schemars(crate = \"{}\")]`", path("schemars")));
    }
    errors.push(error(
        input.ident.span(),
        format_args!(
            "this crate reaches serde and schemars only through agentio, so their derives cannot find them; write `#[io({role})]` above the type in place of `#[derive(Serialize, Deserialize, JsonSchema, {derive})]`, or add {}",
            lines.join(" and ")
        ),
    ));
}

/// Rule: `name` names the strict structured-output format, so it needs `strict`, and it must
/// match what providers accept (`^[a-zA-Z0-9_-]{1,64}$`).
pub(crate) fn strict_name(attrs: &ContainerAttrs, errors: &mut Accumulator) {
    let Some(name) = &attrs.name else { return };
    if !attrs.strict.is_present() {
        errors.push(error(
            name.span(),
            "`name` is the structured-output name of a `strict` output; add `strict` or remove `name`",
        ));
    }
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        errors.push(error(
            name.span(),
            "a structured-output name must be 1 to 64 characters of letters, digits, `_` and `-`",
        ));
    }
}

/// `read` of `input` as serde reads it for deserializing (a test's input, which serde reads).
#[cfg(test)]
pub(crate) fn read_as_input<R>(
    input: &syn::DeriveInput,
    read: impl FnOnce(&ast::Container<'_>) -> R,
) -> R {
    let cx = serde_derive_internals::Ctxt::new();
    let private = syn::Ident::new("__private", Span::call_site());
    let cont = ast::Container::from_ast(
        &cx,
        input,
        serde_derive_internals::Derive::Deserialize,
        &private,
    )
    .expect("serde reads it");
    cx.check().expect("serde reads it");
    read(&cont)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_line_errors(input: syn::DeriveInput, serde: bool, schemars: bool) -> Vec<String> {
        let mut errors = darling::Error::accumulator();
        crate_lines(&input, Side::Input, serde, schemars, &mut errors);
        match errors.finish() {
            Ok(()) => Vec::new(),
            Err(err) => err.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn a_crate_without_serde_is_told_what_to_write() {
        let bare: syn::DeriveInput = syn::parse_quote! { struct Ask { q: String } };
        let errors = crate_line_errors(bare.clone(), false, false);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("`#[io(input)]`"), "{}", errors[0]);
        assert!(errors[0].contains("#[serde(crate = "), "{}", errors[0]);
        assert!(errors[0].contains("#[schemars(crate = "), "{}", errors[0]);
        // Only the line that is missing is asked for.
        let errors = crate_line_errors(bare.clone(), true, false);
        assert!(!errors[0].contains("#[serde(crate"), "{}", errors[0]);
        assert!(errors[0].contains("#[schemars(crate"), "{}", errors[0]);
        // With both crates, or both lines, nothing to say.
        assert!(crate_line_errors(bare, true, true).is_empty());
        let told: syn::DeriveInput = syn::parse_quote! {
            #[serde(crate = "agentio::serde")]
            #[schemars(crate = "agentio::schemars")]
            struct Ask { q: String }
        };
        assert!(crate_line_errors(told, false, false).is_empty());
    }

    #[test]
    fn near_misses_of_the_reserved_name_are_caught() {
        assert!(looks_like_fs_root("workflow_fs_root"));
        assert!(looks_like_fs_root("workflowFsRoot"));
        assert!(looks_like_fs_root("_workflowfsroot"));
        assert!(!looks_like_fs_root("fs_root"));
    }

    /// `accepts_fs_root` of `input`, read as serde reads it for deserializing.
    fn accepts(input: syn::DeriveInput) -> bool {
        read_as_input(&input, accepts_fs_root)
    }

    #[test]
    fn only_a_type_that_denies_unknown_fields_without_the_field_refuses_the_root() {
        // Unknown fields are ignored: the root is accepted (and dropped).
        assert!(accepts(syn::parse_quote! { struct A { path: String } }));
        // Denied without the field: refused.
        assert!(!accepts(syn::parse_quote! {
            #[serde(deny_unknown_fields)]
            struct B { path: String }
        }));
        // Denied, with the field under its wire name: accepted.
        assert!(accepts(syn::parse_quote! {
            #[serde(deny_unknown_fields)]
            struct C {
                path: String,
                #[serde(rename = "_workflowFsRoot")]
                root: Option<String>,
            }
        }));
        // A field whose Rust name is the wire name, but renamed away from it, does not count.
        assert!(!accepts(syn::parse_quote! {
            #[serde(deny_unknown_fields)]
            struct D {
                #[serde(rename = "root")]
                _workflowFsRoot: Option<String>,
            }
        }));
    }
}
