//! The arguments of `#[tool(...)]`: the AIP-14 contract fields, parsed with darling.

use darling::FromMeta;
use darling::util::SpannedValue;
use syn::spanned::Spanned;

/// `#[tool(...)]`. Each field is the contract field of the same name (AIP-14 frontmatter).
#[derive(FromMeta, Default)]
pub(crate) struct ToolArgs {
    /// Machine id: lowercase letters, digits, `-`, `.`; 2–80 characters. Required.
    pub(crate) id: Option<SpannedValue<String>>,
    /// Semantic version of the contract. Default `1.0.0`.
    pub(crate) version: Option<SpannedValue<String>>,
    /// Display name, 1–80 characters. Default: the id.
    pub(crate) name: Option<SpannedValue<String>>,
    /// Purpose for the model, at most 2000 characters. Default: the doc comment.
    pub(crate) description: Option<SpannedValue<String>>,
    /// Safe to retry (a flag, or `idempotent = true`).
    pub(crate) idempotent: Option<SpannedValue<bool>>,
    /// `mutates = ["workspace:/notes", ...]`.
    #[darling(default, with = string_list)]
    pub(crate) mutates: Option<Vec<syn::LitStr>>,
    /// `requires(network = [...], secrets = [...], tools = [...])`.
    pub(crate) requires: Option<RequiresArgs>,
    /// `auto`, `always`, `on-mutate` or `policy:<ref>`. Default: `on-mutate` when the tool
    /// mutates, `auto` otherwise.
    pub(crate) approval: Option<SpannedValue<String>>,
    /// 0–3.
    pub(crate) risk_level: Option<syn::LitInt>,
    /// `trivial`, `metered` or `expensive`.
    pub(crate) cost_class: Option<SpannedValue<String>>,
    /// Per-attempt ceiling in milliseconds, at least 1. Default 30000.
    pub(crate) timeout_ms: Option<syn::LitInt>,
    /// `retry(max_attempts = 3, backoff = "exponential", initial_ms = 100)`.
    pub(crate) retry: Option<SpannedValue<RetryArgs>>,
    /// The implementation to prefer.
    pub(crate) default_implementation: Option<SpannedValue<String>>,
    /// `driver_constraints(forbid = [...], require_kind = [...])`.
    pub(crate) driver_constraints: Option<DriverArgs>,
    /// The AIP-39 action reference this tool implements.
    pub(crate) implements: Option<SpannedValue<String>>,
    /// `tags = ["finance", ...]`.
    #[darling(default, with = string_list)]
    pub(crate) tags: Option<Vec<syn::LitStr>>,
    /// The type of the per-call host context (`contextSchema`).
    #[darling(default, with = type_arg)]
    pub(crate) context: Option<syn::Type>,
    /// A type with `#[define_io]` whose file contract the tool uses (`#[define_io]` on the
    /// same function sets this itself).
    #[darling(default, with = type_arg)]
    pub(crate) io: Option<syn::Type>,
    /// A function `fn() -> Vec<ToolExample>`.
    pub(crate) examples: Option<syn::Path>,
    /// A function `fn() -> serde_json::Map<String, Value>`.
    pub(crate) metadata: Option<syn::Path>,
    /// Not a contract field: reported with a pointer to where bodies go.
    pub(crate) execute: Option<syn::Meta>,
    /// The path of `agentio_tools`.
    #[darling(rename = "crate", default, with = crate::attr::crate_path)]
    pub(crate) krate: Option<syn::Path>,
    /// Removed from AIP-14 (moved to AIP-30 DRIVER): reported with where each went.
    pub(crate) code: Option<syn::Meta>,
    /// Removed from AIP-14; see `code`.
    pub(crate) run: Option<syn::Meta>,
    /// Removed from AIP-14; see `code`.
    pub(crate) runner: Option<syn::Meta>,
    /// Removed from AIP-14; see `code`.
    pub(crate) secrets: Option<syn::Meta>,
    /// Removed from AIP-14; see `code`.
    pub(crate) network: Option<syn::Meta>,
    /// Removed from AIP-14; see `code`.
    pub(crate) entry: Option<syn::Meta>,
}

/// `requires(...)`.
#[derive(FromMeta, Default)]
pub(crate) struct RequiresArgs {
    /// Network hosts.
    #[darling(default, with = string_list)]
    pub(crate) network: Option<Vec<syn::LitStr>>,
    /// Secret slugs.
    #[darling(default, with = string_list)]
    pub(crate) secrets: Option<Vec<syn::LitStr>>,
    /// Tool ids.
    #[darling(default, with = string_list)]
    pub(crate) tools: Option<Vec<syn::LitStr>>,
}

/// `retry(...)`.
#[derive(FromMeta)]
pub(crate) struct RetryArgs {
    /// Attempts in all, 1–20.
    pub(crate) max_attempts: syn::LitInt,
    /// `fixed` or `exponential`.
    pub(crate) backoff: SpannedValue<String>,
    /// First wait in milliseconds.
    pub(crate) initial_ms: Option<syn::LitInt>,
}

/// `driver_constraints(...)`.
#[derive(FromMeta, Default)]
pub(crate) struct DriverArgs {
    /// Kinds refused.
    #[darling(default, with = string_list)]
    pub(crate) forbid: Option<Vec<syn::LitStr>>,
    /// Kinds allowed.
    #[darling(default, with = string_list)]
    pub(crate) require_kind: Option<Vec<syn::LitStr>>,
}

/// `key = ["a", "b"]`: a list of string literals, each keeping its span.
fn string_list(meta: &syn::Meta) -> darling::Result<Option<Vec<syn::LitStr>>> {
    let expected = || {
        darling::Error::custom("expected a list of strings, like `[\"a\", \"b\"]`").with_span(meta)
    };
    let syn::Meta::NameValue(pair) = meta else {
        return Err(expected());
    };
    let syn::Expr::Array(array) = &pair.value else {
        return Err(expected().with_span(&pair.value));
    };
    let mut errors = darling::Error::accumulator();
    let mut items = Vec::new();
    for element in &array.elems {
        match element {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => items.push(text.clone()),
            other => {
                errors.push(darling::Error::custom("expected a string").with_span(&other.span()))
            }
        }
    }
    errors.finish_with(Some(items))
}

/// `context = SomeType` or `context = "SomeType"`.
fn type_arg(meta: &syn::Meta) -> darling::Result<Option<syn::Type>> {
    let expected = || {
        darling::Error::custom("expected a type, like `context = TenantContext`").with_span(meta)
    };
    let syn::Meta::NameValue(pair) = meta else {
        return Err(expected());
    };
    match &pair.value {
        syn::Expr::Path(path) => {
            let tokens = quote::ToTokens::to_token_stream(path);
            syn::parse2(tokens)
                .map(Some)
                .map_err(|_| expected().with_span(path))
        }
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) => text
            .parse()
            .map(Some)
            .map_err(|_| expected().with_span(text)),
        other => Err(expected().with_span(other)),
    }
}

#[cfg(test)]
mod tests {
    use darling::ast::NestedMeta;

    use super::*;

    fn args(tokens: proc_macro2::TokenStream) -> darling::Result<ToolArgs> {
        ToolArgs::from_list(&NestedMeta::parse_meta_list(tokens).unwrap())
    }

    #[test]
    fn a_type_argument_is_a_path_or_a_quoted_type() {
        let read = args(quote::quote!(context = TenantContext, io = "my::Io<u8>")).unwrap();
        let context = read.context.unwrap();
        assert_eq!(quote::quote!(#context).to_string(), "TenantContext");
        let io = read.io.unwrap();
        assert_eq!(quote::quote!(#io).to_string(), "my :: Io < u8 >");
        for bad in [
            quote::quote!(context = 1),
            quote::quote!(context = "not a type!"),
            quote::quote!(context),
        ] {
            let err = args(bad).err().unwrap();
            assert!(
                err.to_string()
                    .contains("expected a type, like `context = TenantContext`"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_string_list_takes_only_strings() {
        let read = args(quote::quote!(mutates = ["a", "b"], tags = [])).unwrap();
        let mutates: Vec<String> = read.mutates.unwrap().iter().map(|s| s.value()).collect();
        assert_eq!(mutates, ["a", "b"]);
        assert!(read.tags.unwrap().is_empty());
        let err = args(quote::quote!(tags = ["a", 1])).err().unwrap();
        assert!(err.to_string().contains("expected a string"), "{err}");
    }
}
