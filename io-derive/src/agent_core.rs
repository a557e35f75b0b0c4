//! `#[agent_core]`: the default turn types for an `impl AgentCore` block.

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::spanned::Spanned;

use crate::attr::AgentCoreArgs;

/// Adds the associated types the impl block leaves out. The item is re-emitted even on error,
/// so a mistake here does not also break every use of the core.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item_impl: syn::ItemImpl = match syn::parse2(item.clone()) {
        Ok(item_impl) => item_impl,
        Err(_) => {
            let err = syn::Error::new(
                item.span(),
                "`#[agent_core]` goes on an `impl AgentCore for YourCore { ... }` block",
            )
            .into_compile_error();
            return quote!(#err #item);
        }
    };
    let args = NestedMeta::parse_meta_list(args)
        .map_err(darling::Error::from)
        .and_then(|list| AgentCoreArgs::from_list(&list));
    // A bad argument is reported, and the types are still filled in with the default path,
    // so the impl does not also fail for missing associated types.
    let (args, args_error) = match args {
        Ok(args) => (args, None),
        Err(err) => (AgentCoreArgs::default(), Some(err.write_errors())),
    };

    // Rule: the attribute fills in `AgentCore`'s associated types, so it belongs on an
    // `impl AgentCore for T` block; on an inherent impl it would silently do nothing.
    let is_agent_core = item_impl
        .trait_
        .as_ref()
        .and_then(|(path, _)| path.segments.last())
        .is_some_and(|s| s.ident == "AgentCore");
    if !is_agent_core {
        let span = match &item_impl.trait_ {
            Some((path, _)) => path.span(),
            None => item_impl.self_ty.span(),
        };
        let err = syn::Error::new(
            span,
            "`#[agent_core]` goes on an `impl AgentCore for ...` block, not on an inherent impl or another trait's impl",
        )
        .into_compile_error();
        return quote!(#err #item_impl);
    }

    let krate = args.krate.unwrap_or_else(crate::paths::agentio_core);
    let declared = |name: &str| {
        item_impl
            .items
            .iter()
            .any(|i| matches!(i, syn::ImplItem::Type(t) if t.ident == name))
    };
    let mut added: Vec<syn::ImplItem> = Vec::new();
    if !declared("Input") {
        added.push(syn::parse_quote!(type Input = #krate::TurnInput;));
    }
    if !declared("Output") {
        added.push(syn::parse_quote!(type Output = #krate::TurnOutput;));
    }
    added.append(&mut item_impl.items);
    item_impl.items = added;
    let item_impl = item_impl.into_token_stream();
    quote!(#args_error #item_impl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_associated_types_not_declared_get_the_turn_defaults() {
        let neither = expand(
            quote!(),
            quote!(impl AgentCore for C { fn core_type(&self) -> &str { "c" } }),
        )
        .to_string();
        assert!(
            neither.contains("type Input = :: agentio_core :: TurnInput"),
            "{neither}"
        );
        assert!(
            neither.contains("type Output = :: agentio_core :: TurnOutput"),
            "{neither}"
        );
        let input_only =
            expand(quote!(), quote!(impl AgentCore for C { type Input = Ask; })).to_string();
        assert!(input_only.contains("type Input = Ask"), "{input_only}");
        assert!(!input_only.contains("TurnInput"), "{input_only}");
        assert!(input_only.contains("TurnOutput"), "{input_only}");
        let output_only = expand(
            quote!(),
            quote!(impl AgentCore for C { type Output = Say; }),
        )
        .to_string();
        assert!(!output_only.contains("TurnOutput"), "{output_only}");
        assert!(output_only.contains("TurnInput"), "{output_only}");
    }
}
