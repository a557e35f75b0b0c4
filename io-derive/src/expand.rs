//! The code the derives generate.

use darling::FromDeriveInput;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use serde_derive_internals::{Ctxt, Derive, ast};
use syn::spanned::Spanned;

use crate::attr::ContainerAttrs;
use crate::check;
use crate::side::Side;

/// Parses, checks and expands one derive. The impl is emitted even when a check fails, so
/// the user sees the mistake and not a cascade of "trait not implemented" errors after it.
pub(crate) fn derive(input: &syn::DeriveInput, side: Side) -> TokenStream {
    let mut errors = darling::Error::accumulator();
    let attrs = errors.handle(ContainerAttrs::from_derive_input(input));

    // serde's own reading of the type. Its errors are serde_derive's to report; a type serde
    // cannot read is left to it, and the checks below that need serde's view are skipped.
    let cx = Ctxt::new();
    let private = syn::Ident::new("__private", Span::call_site());
    let serde_side = match side {
        Side::Input => Derive::Deserialize,
        Side::Output => Derive::Serialize,
    };
    let cont = ast::Container::from_ast(&cx, input, serde_side, &private);
    let serde_ok = cx.check().is_ok();

    if let Some(cont) = cont.as_ref().filter(|_| serde_ok) {
        check::fs_root_field(side, cont, &mut errors);
        match side {
            Side::Input => {
                check::input_is_object(input, cont, &mut errors);
                crate::mcp_header::mcp_headers(cont, &mut errors);
                if let Some(strict) = attrs
                    .as_ref()
                    .and_then(|a| a.strict.is_present().then(|| a.strict.span()))
                {
                    check::strict_input(strict, cont, &mut errors);
                }
            }
            Side::Output => {
                let strict = match &attrs {
                    Some(attrs) => attrs.strict.is_present().then(|| attrs.strict.span()),
                    None => check::strict_word_span(input),
                };
                if let Some(strict) = strict {
                    check::strict_output(strict, cont, &mut errors);
                }
            }
        }
    }
    if let (Side::Output, Some(attrs)) = (side, &attrs) {
        check::strict_name(attrs, &mut errors);
    }
    if attrs.as_ref().is_some_and(|a| a.krate.is_none()) {
        check::crate_lines(
            input,
            side,
            !crate::paths::lacks("serde"),
            !crate::paths::lacks("schemars"),
            &mut errors,
        );
    }

    let krate = attrs
        .as_ref()
        .and_then(|a| a.krate.clone())
        .unwrap_or_else(crate::paths::agentio_core);
    let strict_name = attrs
        .as_ref()
        .filter(|a| side == Side::Output && a.strict.is_present())
        .map(|a| {
            a.name
                .as_ref()
                .map_or_else(|| input.ident.to_string(), |n| n.as_str().to_owned())
        });
    let accepts_fs_root = cont
        .as_ref()
        .filter(|_| serde_ok)
        .is_none_or(check::accepts_fs_root);
    let shape = cont
        .as_ref()
        .filter(|_| serde_ok)
        .and_then(|cont| crate::shape::shape_impl(cont, side, &krate));
    let validate = attrs.as_ref().and_then(|a| a.validate.as_ref());
    let implementation = impl_block(
        input,
        side,
        &krate,
        strict_name.as_deref(),
        accepts_fs_root,
        shape.is_some(),
        validate,
    );
    let errors = errors.finish().err().map(darling::Error::write_errors);
    quote! {
        #errors
        const _: () = { #implementation #shape };
    }
}

fn impl_block(
    input: &syn::DeriveInput,
    side: Side,
    krate: &syn::Path,
    strict: Option<&str>,
    accepts_fs_root: bool,
    shaped: bool,
    validate: Option<&syn::Path>,
) -> TokenStream {
    let ident = &input.ident;
    let (trait_name, method, build, cached) = match side {
        Side::Input => (
            quote!(AgentInput),
            quote!(input_boundary),
            quote!(input_parts_opaque),
            quote!(cached_input),
        ),
        Side::Output => (
            quote!(AgentOutput),
            quote!(output_boundary),
            quote!(output_parts_opaque),
            quote!(cached_output),
        ),
    };
    let plain = strict.is_none() && validate.is_none();
    let strict = match strict {
        Some(name) => quote!(::core::option::Option::Some(#name)),
        None => quote!(::core::option::Option::None),
    };
    let build = if shaped {
        match side {
            Side::Input => quote!(input_parts),
            Side::Output => quote!(output_parts),
        }
    } else {
        build
    };
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let generic = input.generics.type_params().next().is_some()
        || input.generics.lifetimes().next().is_some()
        || input.generics.const_params().next().is_some();

    // `validate = f`: the boundary runs the rules on JSON values, and the typed paths call
    // them through the trait's hook.
    let (rules_fn, rules_hook) = match side {
        Side::Input => (quote!(input_rules), quote!(__input_rules)),
        Side::Output => (quote!(output_rules), quote!(__output_rules)),
    };
    let cached = match (validate, side) {
        (Some(_), Side::Input) => quote!(cached_input_with_rules),
        (Some(_), Side::Output) => quote!(cached_output_with_rules),
        (None, _) => cached,
    };
    let rules = match validate {
        Some(_) => quote!(::core::option::Option::Some(#krate::__private::#rules_fn::<Self>)),
        None => quote!(::core::option::Option::None),
    };
    let hook = validate.map(|path| {
        // Spanned at the path, so a function of the wrong signature is underlined there.
        // Coerced to the expected signature first, so a mismatch names it.
        let rule: TokenStream = quote_spanned! {path.span()=>
            let rule: fn(&Self, &mut #krate::rules::Rules) = #path;
        };
        quote! {
            fn #rules_hook(&self, rules: &mut #krate::rules::Rules) {
                #rule
                rule(self, rules)
            }
        }
    });
    let body = if generic {
        // One static per generic *item* would be shared by every instantiation, so generic
        // types use the process-wide cache keyed by `TypeId`.
        quote! {
            #krate::__private::#cached::<Self>(#strict)
        }
    } else {
        // A cell that is not generic, with the builder passed as a function: no closure and
        // no `OnceLock` initialization to instantiate per type.
        let parts = quote!(#krate::__private::#build::<Self>);
        let get = if plain {
            quote!(__IO_SCHEMA.get(#parts))
        } else {
            quote!(__IO_SCHEMA.get_with(#parts, #strict, #rules))
        };
        quote! {
            static __IO_SCHEMA: #krate::__private::BoundaryCell =
                #krate::__private::BoundaryCell::new();
            #get
        }
    };

    // Generic types get the supertrait bounds as a where-clause on `Self`, which holds exactly
    // when the serde and schemars impls do; non-generic types are checked by the supertraits
    // themselves, whose `on_unimplemented` notes name the missing derive.
    let mut predicates = where_clause
        .map(|w| w.predicates.clone())
        .unwrap_or_default();
    if generic {
        predicates.push(syn::parse_quote! {
            Self: #krate::__private::serde::Serialize
                + #krate::__private::serde::de::DeserializeOwned
                + #krate::__private::schemars::JsonSchema
                + ::core::marker::Send
                + ::core::marker::Sync
                + 'static
        });
    }
    let where_clause = (!predicates.is_empty()).then(|| quote!(where #predicates));

    // Spanned at the type's name, so a missing supertrait underlines the type.
    let header = quote_spanned! {ident.span()=>
        impl #impl_generics #krate::#trait_name for #ident #ty_generics
    };
    let fs_root = (side == Side::Input && !accepts_fs_root).then(|| {
        quote!(
            const ACCEPTS_FS_ROOT: bool = false;
        )
    });
    quote! {
        #[automatically_derived]
        #header #where_clause {
            #fs_root
            fn #method() -> &'static #krate::BoundarySchema {
                #body
            }
            #hook
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(input: syn::DeriveInput, side: Side) -> String {
        derive(&input, side).to_string()
    }

    #[test]
    fn a_plain_type_keeps_its_boundary_in_a_static_and_a_generic_one_in_the_shared_cache() {
        let plain = expanded(syn::parse_quote! { struct P { a: u8 } }, Side::Input);
        assert!(plain.contains("AgentInput for P"), "{plain}");
        assert!(plain.contains("__IO_SCHEMA"), "{plain}");
        assert!(!plain.contains("cached_input"), "{plain}");
        assert!(!plain.contains("where"), "{plain}");
        for generic in [
            syn::parse_quote! { struct T<X> { a: X } },
            syn::parse_quote! { struct L<'a> { a: &'a str } },
            syn::parse_quote! { struct C<const N: usize> { a: [u8; N] } },
        ] {
            let generic: syn::DeriveInput = generic;
            let name = generic.ident.to_string();
            let text = expanded(generic, Side::Output);
            assert!(text.contains("cached_output :: < Self >"), "{name}: {text}");
            assert!(!text.contains("__IO_SCHEMA"), "{name}: {text}");
            assert!(text.contains("where Self :"), "{name}: {text}");
        }
    }

    #[test]
    fn only_a_strict_output_carries_its_name() {
        let output = |input: syn::DeriveInput| expanded(input, Side::Output);
        let named = output(syn::parse_quote! { #[agent(strict)] struct Report { a: u8 } });
        assert!(
            named.contains("get_with (") && named.contains("Some (\"Report\")"),
            "{named}"
        );
        let renamed = output(syn::parse_quote! {
            #[agent(strict, name = "inventory_report")]
            struct Report { a: u8 }
        });
        assert!(renamed.contains("Some (\"inventory_report\")"), "{renamed}");
        let loose = output(syn::parse_quote! { struct Report { a: u8 } });
        // Nothing to pass: the cell's short form.
        assert!(
            loose.contains("__IO_SCHEMA . get (") && !loose.contains("get_with"),
            "{loose}"
        );
        assert!(!loose.contains("Some (\""), "{loose}");
        // The name is an output's (a response format's); an input is not named.
        let input = expanded(
            syn::parse_quote! { #[agent(strict)] struct Ask { a: u8 } },
            Side::Input,
        );
        assert!(!input.contains("Some (\"Ask\")"), "{input}");
    }

    #[test]
    fn only_an_input_that_cannot_take_the_workspace_root_says_so() {
        let refuses: syn::DeriveInput = syn::parse_quote! {
            #[serde(deny_unknown_fields)]
            struct Strict { a: u8 }
        };
        let text = expanded(refuses.clone(), Side::Input);
        assert!(
            text.contains("const ACCEPTS_FS_ROOT : bool = false"),
            "{text}"
        );
        // An output never receives it; an input that ignores unknown fields takes it.
        assert!(!expanded(refuses, Side::Output).contains("ACCEPTS_FS_ROOT"));
        let open: syn::DeriveInput = syn::parse_quote! { struct Open { a: u8 } };
        assert!(!expanded(open, Side::Input).contains("ACCEPTS_FS_ROOT"));
    }
}
