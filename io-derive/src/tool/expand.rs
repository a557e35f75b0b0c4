//! The code `#[tool]` generates.

use crate::naming::pascal_case;
use darling::error::Accumulator;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use syn::spanned::Spanned;

use super::attr::ToolArgs;
use super::check::{self, Approval, ToolSpec};
use super::doc_comment;

fn error(span: Span, message: &str) -> darling::Error {
    darling::Error::custom(message).with_span(&span)
}

fn krate(args: &ToolArgs) -> syn::Path {
    args.krate
        .clone()
        .unwrap_or_else(crate::paths::agentio_tools)
}

/// `#[tool]` on `impl TypedTool for T { ... }`: adds `ID` and `contract()`.
pub(super) fn impl_block(
    mut item: syn::ItemImpl,
    args: &ToolArgs,
    at_attr: Span,
    errors: &mut Accumulator,
) -> TokenStream {
    // Rule: the attribute writes `TypedTool`'s `ID` and `contract`, so it belongs on an
    // `impl TypedTool for T` block, and that block must not write them itself.
    let is_typed_tool = item
        .trait_
        .as_ref()
        .and_then(|(path, _)| path.segments.last())
        .is_some_and(|s| s.ident == "TypedTool");
    if !is_typed_tool {
        let span = item
            .trait_
            .as_ref()
            .map_or_else(|| item.self_ty.span(), |(path, _)| path.span());
        errors.push(error(span, "`#[tool]` goes on an `impl TypedTool for ...` block, not on an inherent impl or another trait's impl"));
        return item.into_token_stream();
    }
    let mut written = Vec::new();
    for existing in &item.items {
        let clash = match existing {
            syn::ImplItem::Const(c) if c.ident == "ID" => Some(c.ident.span()),
            syn::ImplItem::Fn(f) if f.sig.ident == "contract" => Some(f.sig.ident.span()),
            _ => None,
        };
        if let Some(span) = clash {
            written.push(match existing {
                syn::ImplItem::Const(_) => "ID",
                _ => "contract",
            });
            errors.push(error(
                span,
                "`#[tool]` writes `ID` and `contract()` from its arguments; remove this one",
            ));
        }
    }
    let spec = check::contract(args, doc_comment(&item.attrs), at_attr, errors);
    let krate = krate(args);
    // Add only what the block does not write itself: a second `ID` would only add a
    // "duplicate definition" error, a missing one a "not all items implemented" error.
    let generated = contract_items(&spec, args, &krate)
        .into_iter()
        .filter(|generated| !written.contains(&generated.name))
        .map(|generated| syn::ImplItem::Verbatim(generated.tokens));
    item.items.extend(generated);
    item.into_token_stream()
}

/// `#[tool]` on `async fn name(input: I [, ctx: &ToolContext]) -> Result<O, E>`: keeps the
/// function and adds `NameTool`, a unit struct implementing `TypedTool` by calling it.
pub(super) fn function(
    item: super::ToolFn,
    args: &ToolArgs,
    at_attr: Span,
    errors: &mut Accumulator,
) -> TokenStream {
    let spec = check::contract(args, doc_comment(&item.attrs), at_attr, errors);
    let sig = &item.sig;
    // Rule: a tool body is awaited by the registry (timeouts, retries), so it is `async`.
    if sig.asyncness.is_none() {
        errors.push(error(
            sig.fn_token.span(),
            "a tool function must be `async`: the registry awaits it under a timeout",
        ));
    }
    // Rule: generics cannot be named by the generated unit struct, which has no parameters
    // to carry them (nor could a registry pick them); an `impl<T> TypedTool for Tool<T>`
    // block keeps its own generics and bounds, and is what a generic tool is written as.
    if !sig.generics.params.is_empty() {
        errors.push(error(
            sig.generics.span(),
            &format!(
                "a tool function cannot be generic: its tool type `{}Tool` has no parameters to carry them; for a generic tool, write `#[tool(...)] impl<T: ...> TypedTool for YourTool<T> {{ ... }}`",
                crate::naming::pascal_case(&sig.ident.to_string())
            ),
        ));
    }
    // Rule: one input (the tool's arguments object), optionally followed by `&ToolContext`.
    let mut inputs = sig.inputs.iter();
    let input_ty = match inputs.next() {
        // Rule: `impl Trait` in argument position is a generic parameter too.
        Some(syn::FnArg::Typed(arg)) if matches!(*arg.ty, syn::Type::ImplTrait(_)) => {
            errors.push(error(
                arg.ty.span(),
                "a tool's input is one concrete type (its JSON Schema is the contract's `inputs`), not `impl Trait`; name the input type, like `input: SearchInput`",
            ));
            None
        }
        Some(syn::FnArg::Typed(arg)) => Some((*arg.ty).clone()),
        Some(syn::FnArg::Receiver(receiver)) => {
            errors.push(error(
                receiver.span(),
                "a tool function takes no `self`; write a `TypedTool` impl for a tool with state",
            ));
            None
        }
        None => {
            errors.push(error(
                sig.paren_token.span.join(),
                "a tool function takes its input as one argument, like `input: SearchInput`",
            ));
            None
        }
    };
    let mut signature_ok =
        sig.asyncness.is_some() && input_ty.is_some() && sig.generics.params.is_empty();
    let takes_context = match inputs.next() {
        None => false,
        Some(syn::FnArg::Typed(arg)) if is_tool_context_ref(&arg.ty) => true,
        Some(other) => {
            signature_ok = false;
            errors.push(error(
                other.span(),
                "a tool function takes one input; a second argument can only be `&ToolContext` (put every argument in the input struct)",
            ));
            false
        }
    };
    if let Some(extra) = inputs.next() {
        signature_ok = false;
        errors.push(error(
            extra.span(),
            "a tool function takes one input, optionally followed by `&ToolContext`",
        ));
    }
    // Rule: the function returns `Result<Output, E>`: the output type is the contract's
    // `outputs`, the error goes into the standard envelope.
    let output_ty = match &sig.output {
        syn::ReturnType::Type(_, ty) => result_ok_type(ty),
        syn::ReturnType::Default => None,
    };
    // Where a wrong error type is reported: at the error type, else at the return type.
    let error_span = match &sig.output {
        syn::ReturnType::Type(_, ty) => result_err_type(ty).map_or_else(|| ty.span(), |e| e.span()),
        syn::ReturnType::Default => sig.ident.span(),
    };
    if output_ty.is_none() {
        let span = match &sig.output {
            syn::ReturnType::Type(_, ty) => ty.span(),
            syn::ReturnType::Default => sig.paren_token.span.join(),
        };
        errors.push(error(
            span,
            "a tool function returns `Result<Output, ToolError>`",
        ));
    }

    let krate = krate(args);
    let vis = &item.vis;
    let fn_name = &sig.ident;
    let struct_name = format_ident!(
        "{}Tool",
        pascal_case(&fn_name.to_string()),
        span = fn_name.span()
    );
    let struct_name_text = struct_name.to_string();
    let struct_doc = format!(
        "The `{}` tool: calls [`{fn_name}`] under its contract.",
        spec.id
    );
    let (Some(input_ty), Some(output_ty)) = (input_ty, output_ty) else {
        return item.into_token_stream();
    };
    // With a signature error already reported, the body must not add errors of its own (a
    // missing argument, a non-future awaited); it never runs, since the crate cannot compile.
    let call = match (signature_ok, takes_context) {
        (false, _) => {
            quote!(async { ::core::unreachable!("`#[tool]` reported an error on this function") })
        }
        (true, taking) => {
            // The conversion is named at the error type, so a type with no conversion is one
            // error there, with the trait's message.
            let convert = format_ident!("__agent_io_tool_error", span = error_span);
            let args = if taking {
                quote!(input, ctx)
            } else {
                quote!(input)
            };
            quote! {
                use #krate::__private::tool_error as #convert;
                #krate::__private::tool_future(#fn_name(#args), #convert)
            }
        }
    };
    let ctx_name = if takes_context {
        quote!(ctx)
    } else {
        quote!(_ctx)
    };
    let contract = contract_items(&spec, args, &krate)
        .into_iter()
        .map(|generated| generated.tokens);
    quote! {
        #item

        #[doc = #struct_doc]
        #vis struct #struct_name;

        // What `#[derive(Clone, Copy, Debug, Default)]` would give, written out: four derive
        // expansions per tool cost the user's build more than the impls themselves.
        #[automatically_derived]
        impl ::core::clone::Clone for #struct_name {
            #[inline]
            fn clone(&self) -> Self {
                *self
            }
        }
        #[automatically_derived]
        impl ::core::marker::Copy for #struct_name {}
        #[automatically_derived]
        impl ::core::fmt::Debug for #struct_name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(#struct_name_text)
            }
        }
        #[automatically_derived]
        impl ::core::default::Default for #struct_name {
            #[inline]
            fn default() -> Self {
                #struct_name
            }
        }

        // Functions and types live in different namespaces: the function's name can name the
        // tool type as well, so `tool_registry![name]` works. Hidden: no doc to compile.
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #vis type #fn_name = #struct_name;

        impl #krate::TypedTool for #struct_name {
            type Input = #input_ty;
            type Output = #output_ty;
            #(#contract)*

            fn execute_typed(
                &self,
                input: #input_ty,
                #ctx_name: &#krate::ToolContext,
            ) -> impl ::core::future::Future<Output = #krate::__private::ToolResult<#output_ty>>
                   + ::core::marker::Send {
                #call
            }
        }
    }
}

fn is_tool_context_ref(ty: &syn::Type) -> bool {
    let syn::Type::Reference(reference) = ty else {
        return false;
    };
    let syn::Type::Path(path) = &*reference.elem else {
        return false;
    };
    path.path
        .segments
        .last()
        .is_some_and(|s| s.ident == "ToolContext")
}

fn result_ok_type(ty: &syn::Type) -> Option<syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(ok) => Some(ok.clone()),
        _ => None,
    }
}

/// `E` of a written `Result<T, E>`, when there is one.
fn result_err_type(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.iter().nth(1)? {
        syn::GenericArgument::Type(err) => Some(err),
        _ => None,
    }
}

/// One item `#[tool]` adds to a `TypedTool` impl: its name (`ID`, `contract` or
/// `file_contract`) and its tokens.
struct ContractItem {
    name: &'static str,
    tokens: TokenStream,
}

/// `const ID` and `fn contract()` (and `fn file_contract()` with `io = ...`) for a checked
/// spec, as tokens: parsing them back into syn items would cost every tool's expansion more
/// than building them (the macro runs unoptimized in a debug build).
fn contract_items(spec: &ToolSpec, args: &ToolArgs, krate: &syn::Path) -> Vec<ContractItem> {
    let ToolSpec {
        id,
        version,
        name,
        description,
        idempotent,
        risk_level,
        timeout_ms,
        ..
    } = spec;
    // Only what differs from `ToolContract::new`'s defaults is written: each field left out
    // costs the user's crate nothing to compile (100 tools: about 1% of a debug build each).
    let mut sets: Vec<TokenStream> = Vec::new();
    let strings = |items: &[String]| quote!(#krate::__private::strings(&[#(#items),*]));
    if *name != *id {
        sets.push(quote!(contract.name = ::std::string::String::from(#name);));
    }
    if let Some(ty) = &args.context {
        sets.push(quote!(contract.context_schema = ::core::option::Option::Some(#krate::__private::context_schema::<#ty>());));
    }
    if *idempotent {
        sets.push(quote!(contract.idempotent = true;));
    }
    if !spec.mutates.is_empty() {
        let mutates = strings(&spec.mutates);
        sets.push(quote!(contract.mutates = #mutates;));
    }
    for (field, list) in ["network", "secrets", "tools"].iter().zip(&spec.requires) {
        if !list.is_empty() {
            let field = format_ident!("{field}");
            let list = strings(list);
            sets.push(quote!(contract.requires.#field = #list;));
        }
    }
    match &spec.approval {
        Approval::Auto => {}
        Approval::Always => sets.push(quote!(contract.approval = #krate::Approval::Always;)),
        Approval::OnMutate => sets.push(quote!(contract.approval = #krate::Approval::OnMutate;)),
        Approval::Policy(reference) => sets.push(
            quote!(contract.approval = #krate::Approval::Policy(::std::string::String::from(#reference));),
        ),
    }
    if *risk_level != 0 {
        sets.push(quote!(contract.risk_level = #risk_level;));
    }
    if spec.cost_class != "Trivial" {
        let cost = format_ident!("{}", spec.cost_class);
        sets.push(quote!(contract.cost_class = #krate::CostClass::#cost;));
    }
    // Always written: the default lives in agentio-tools, and a store costs nothing.
    sets.push(quote!(contract.timeout_ms = #timeout_ms;));
    if let Some((max_attempts, backoff, initial_ms)) = spec.retry {
        let backoff = format_ident!("{backoff}");
        sets.push(
            quote!(contract.retry = ::core::option::Option::Some(#krate::RetryPolicy {
            max_attempts: #max_attempts,
            backoff: #krate::Backoff::#backoff,
            initial_ms: #initial_ms,
        });),
        );
    }
    if let Some(text) = &spec.default_implementation {
        sets.push(quote!(contract.default_implementation = ::core::option::Option::Some(::std::string::String::from(#text));));
    }
    for (field, kinds) in [
        ("forbid", &spec.forbid),
        ("require_kind", &spec.require_kind),
    ] {
        if !kinds.is_empty() {
            let field = format_ident!("{field}");
            let kinds = kinds.iter().map(|k| format_ident!("{k}"));
            sets.push(quote!(contract.driver_constraints.#field = ::std::vec![#(#krate::DriverKind::#kinds),*];));
        }
    }
    if let Some(text) = &spec.implements {
        sets.push(quote!(contract.implements = ::core::option::Option::Some(#krate::__private::serde_json::Value::String(::std::string::String::from(#text)));));
    }
    if !spec.tags.is_empty() {
        let tags = strings(&spec.tags);
        sets.push(quote!(contract.tags = #tags;));
    }
    if let Some(path) = &args.examples {
        sets.push(quote!(contract.examples = #path();));
    }
    if let Some(path) = &args.metadata {
        sets.push(quote!(contract.metadata = #path();));
    }
    let mut items: Vec<ContractItem> = Vec::new();
    if let Some(io) = &args.io {
        // The IO type's input is what the host injects the root into and validates: it must be
        // the tool's own input type, or the two schemas would disagree.
        items.push(ContractItem {
            name: "file_contract",
            tokens: quote! {
            fn file_contract() -> ::core::option::Option<&'static #krate::__private::agentio_core::files::IoHandle> {
                fn __io_same_input<T: #krate::__private::agentio_core::files::DefinesIo<Input = I>, I>(_: ::core::marker::PhantomData<I>) {}
                __io_same_input::<#io, <Self as #krate::TypedTool>::Input>(::core::marker::PhantomData);
                ::core::option::Option::Some(<#io as #krate::__private::agentio_core::files::DefinesIo>::io_handle())
            }
            },
        });
    }
    items.extend([
        ContractItem {
            name: "ID",
            tokens: quote!(const ID: &'static str = #id;),
        },
        ContractItem {
            name: "contract",
            tokens: quote! {
            fn contract() -> #krate::ToolContract {
                let mut contract = #krate::__private::base_contract::<Self>(#version, #description);
                #(#sets)*
                contract
            }
            },
        },
    ]);
    items
}
