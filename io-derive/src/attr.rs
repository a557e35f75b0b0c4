//! The `#[agent(...)]` attribute, parsed with darling. The receivers are the reference.

use darling::util::{Flag, SpannedValue};
use darling::{FromDeriveInput, FromField, FromMeta, FromVariant, ast};

/// `#[agent(...)]` on a type deriving `AgentInput` and/or `AgentOutput`. Both derives read the
/// same attribute, so it holds the options of both; each derive uses those that concern it.
#[derive(FromDeriveInput)]
#[darling(attributes(agent), supports(struct_any, enum_any))]
pub(crate) struct ContainerAttrs {
    /// Parsed only so that a misplaced `#[agent(...)]` on a field or variant is reported.
    #[allow(dead_code)]
    pub(crate) data: ast::Data<VariantAttrs, FieldAttrs>,
    /// `crate = "path"`: the path of `agentio_core`, for crates that rename or re-export it.
    #[darling(rename = "crate", default, with = crate_path)]
    pub(crate) krate: Option<syn::Path>,
    /// `strict`: give the output an OpenAI strict structured-output format.
    pub(crate) strict: Flag,
    /// `name = "..."`: the structured-output name of a strict output (default: the type name).
    pub(crate) name: Option<SpannedValue<String>>,
    /// `validate = path::to::function`: the type's cross-field rules, a
    /// `fn(&Self, &mut agentio_core::rules::Rules)` run after schema validation.
    pub(crate) validate: Option<syn::Path>,
}

/// `#[agent(...)]` on a field: no options yet; any key is reported as unknown.
#[derive(FromField)]
#[darling(attributes(agent))]
pub(crate) struct FieldAttrs {}

/// `#[agent(...)]` on a variant: no options yet; any key is reported as unknown.
#[derive(FromVariant)]
#[darling(attributes(agent))]
pub(crate) struct VariantAttrs {}

/// The arguments of `#[agent_core(...)]`.
#[derive(FromMeta, Default)]
pub(crate) struct AgentCoreArgs {
    /// `crate = "path"`: the path of `agentio_core`.
    #[darling(rename = "crate", default, with = crate_path)]
    pub(crate) krate: Option<syn::Path>,
}

/// `crate = "some::path"`, with an error that shows the expected form.
pub(crate) fn crate_path(meta: &syn::Meta) -> darling::Result<Option<syn::Path>> {
    let expected = "`crate` takes a path in quotes, like `crate = \"my_crate::agentio_core\"`";
    let syn::Meta::NameValue(pair) = meta else {
        return Err(darling::Error::custom(expected).with_span(meta));
    };
    match &pair.value {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) => text
            .parse::<syn::Path>()
            .map(Some)
            .map_err(|_| darling::Error::custom(expected).with_span(text)),
        other => Err(darling::Error::custom(expected).with_span(other)),
    }
}

/// Skips the rest of one entry of a `parse_nested_meta` walk over an attribute of another
/// crate's (serde's, schemars'): the value of `key = value`, or the one group of `key(...)`,
/// so that the entries after it are read too.
pub(crate) fn skip_entry(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _: proc_macro2::TokenTree = meta.input.parse()?;
    }
    Ok(())
}
