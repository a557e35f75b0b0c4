//! The serde view of a derived struct, for residual validation (`agentio_core::residual`).
//!
//! Only non-generic structs with named fields get a shape. A container attribute that makes
//! serde read or write the type some other way (`from`, `into`, `transparent`, `remote`, an
//! internal tag, `flatten`) gives no shape at all; a field that serde reads or writes its own
//! way (`with`, `deserialize_with`, `serialize_with`, `alias`, `getter`) is opaque, and so is
//! every field whose type has no shape (found by autoref in the expansion).

use proc_macro2::TokenStream;
use quote::quote;
use serde_derive_internals::ast::{Container, Data, Style};
use serde_derive_internals::attr::{Default as SerdeDefault, TagType};

use crate::side::Side;

/// The `InputShape` / `OutputShape` impl, or `None` when the type gets no shape.
pub(crate) fn shape_impl(
    cont: &Container<'_>,
    side: Side,
    krate: &syn::Path,
) -> Option<TokenStream> {
    let generics = &cont.generics;
    if generics.params.iter().next().is_some() {
        return None;
    }
    let Data::Struct(Style::Struct, fields) = &cont.data else {
        return None;
    };
    let attrs = &cont.attrs;
    if attrs.transparent()
        || attrs.type_from().is_some()
        || attrs.type_try_from().is_some()
        || attrs.type_into().is_some()
        || attrs.remote().is_some()
        || !matches!(attrs.tag(), TagType::External)
        || fields.iter().any(|f| f.attrs.flatten())
    {
        return None;
    }
    let container_default = !matches!(attrs.default(), SerdeDefault::None);
    let deny = attrs.deny_unknown_fields();
    let (trait_name, method, fields_method, probe, opaque) = match side {
        Side::Input => (
            quote!(InputShape),
            quote!(input_shape),
            quote!(__input_fields),
            quote!(ProbeInput),
            quote!(ProbeOpaqueInput),
        ),
        Side::Output => (
            quote!(OutputShape),
            quote!(output_shape),
            quote!(__output_fields),
            quote!(ProbeOutput),
            quote!(ProbeOpaqueOutput),
        ),
    };
    let field_shapes = fields
        .iter()
        .filter(|f| match side {
            Side::Input => !f.attrs.skip_deserializing(),
            Side::Output => !f.attrs.skip_serializing(),
        })
        .map(|field| {
            let fa = &field.attrs;
            let name = match side {
                Side::Input => &fa.name().deserialize_name().value,
                Side::Output => &fa.name().serialize_name().value,
            };
            let has_alias = fa.aliases().iter().any(|alias| &alias.value != name);
            let special = match side {
                Side::Input => fa.deserialize_with().is_some() || has_alias,
                Side::Output => fa.serialize_with().is_some() || fa.getter().is_some(),
            };
            let ty = field.ty;
            // `__p` is the `use` below: the expansion is read (and its paths resolved) for
            // every derived type, so it says each path once.
            let shape = if special {
                quote!(__p::Shape::Opaque)
            } else {
                quote!((&__p::Probe::<#ty>::new()).#method())
            };
            let has_default = container_default || !matches!(fa.default(), SerdeDefault::None);
            let omittable = fa.skip_serializing_if().is_some();
            quote!(__p::FieldShape::new(#name, #has_default, #omittable, #shape))
        });
    let ident = &cont.ident;
    Some(quote! {
        #[automatically_derived]
        impl #krate::__private::#trait_name for #ident {
            // The shape itself is the trait's default: these fields, built on demand.
            fn #fields_method() -> #krate::__private::StructShape {
                #[allow(unused_imports)]
                use #krate::__private::{self as __p, #probe as _, #opaque as _};
                __p::StructShape::new(#deny, [#(#field_shapes),*])
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_derive_internals::{Ctxt, Derive};

    use super::*;

    /// The shape impl of `input` for `side`, as text (`None`: no shape).
    fn shape(input: syn::DeriveInput, side: Side) -> Option<String> {
        let cx = Ctxt::new();
        let private = syn::Ident::new("__private", proc_macro2::Span::call_site());
        let derive = match side {
            Side::Input => Derive::Deserialize,
            Side::Output => Derive::Serialize,
        };
        let cont = Container::from_ast(&cx, &input, derive, &private).expect("serde reads it");
        cx.check().expect("serde reads it");
        let krate: syn::Path = syn::parse_quote!(io);
        shape_impl(&cont, side, &krate).map(|t| t.to_string())
    }

    /// Each field's `FieldShape::new(name, has_default, omittable, shape)` of a shape's text:
    /// name, has_default, omittable, opaque.
    fn fields(text: &str) -> Vec<(String, bool, bool, bool)> {
        text.split("__p :: FieldShape :: new (")
            .skip(1)
            .map(|f| {
                let mut parts = f.splitn(4, " , ");
                let name = parts.next().unwrap().trim_matches(|c| c == '"' || c == ' ');
                let has_default = parts.next().unwrap() == "true";
                let omittable = parts.next().unwrap() == "true";
                let shape = parts.next().unwrap();
                (
                    name.to_owned(),
                    has_default,
                    omittable,
                    shape.starts_with("__p :: Shape :: Opaque"),
                )
            })
            .collect()
    }

    #[test]
    fn only_plain_structs_with_named_fields_get_a_shape() {
        let plain: syn::DeriveInput = syn::parse_quote! { struct A { a: u8 } };
        for side in [Side::Input, Side::Output] {
            assert!(shape(plain.clone(), side).is_some());
        }
        let none: Vec<syn::DeriveInput> = vec![
            syn::parse_quote! { struct G<T> { a: T } },
            syn::parse_quote! { struct L<'a> { a: &'a str } },
            syn::parse_quote! { struct T(u8, u8); },
            syn::parse_quote! { enum E { A } },
            syn::parse_quote! { #[serde(transparent)] struct Tr { a: u8 } },
            syn::parse_quote! { #[serde(from = "u8")] struct F { a: u8 } },
            syn::parse_quote! { #[serde(try_from = "u8")] struct Tf { a: u8 } },
            syn::parse_quote! { #[serde(into = "u8")] struct I { a: u8 } },
            syn::parse_quote! { #[serde(remote = "Other")] struct R { a: u8 } },
            syn::parse_quote! { #[serde(tag = "type")] struct Tag { a: u8 } },
            syn::parse_quote! { struct Fl { #[serde(flatten)] a: Other } },
        ];
        for input in none {
            let name = input.ident.to_string();
            // `from`/`try_from` bind deserializing, `into` serializing; each is refused on
            // the side where serde reads it, and refusing both ways is what the rule says.
            for side in [Side::Input, Side::Output] {
                assert_eq!(shape(input.clone(), side), None, "{name}");
            }
        }
    }

    #[test]
    fn fields_carry_their_wire_name_default_omission_and_opacity() {
        let input: syn::DeriveInput = syn::parse_quote! {
            #[serde(deny_unknown_fields, rename_all = "camelCase")]
            struct S {
                plain_field: u8,
                #[serde(default)]
                defaulted: u8,
                #[serde(skip_serializing_if = "Option::is_none")]
                omitted: Option<u8>,
                #[serde(alias = "old")]
                aliased: u8,
                #[serde(with = "m")]
                with: u8,
                #[serde(deserialize_with = "d")]
                read_own_way: u8,
                #[serde(serialize_with = "s")]
                written_own_way: u8,
                #[serde(skip_deserializing)]
                never_read: u8,
                #[serde(skip_serializing)]
                never_written: u8,
                #[serde(rename(serialize = "out", deserialize = "in"))]
                two_names: u8,
            }
        };
        let input_shape = shape(input.clone(), Side::Input).unwrap();
        assert!(input_shape.contains("StructShape :: new (true ,"));
        assert!(input_shape.contains("impl io :: __private :: InputShape for S"));
        assert!(input_shape.contains("ProbeInput") && input_shape.contains("ProbeOpaqueInput"));
        let row = |n: &str, d: bool, o: bool, x: bool| (n.to_owned(), d, o, x);
        assert_eq!(
            fields(&input_shape),
            vec![
                row("plainField", false, false, false),
                row("defaulted", true, false, false),
                row("omitted", false, true, false),
                row("aliased", false, false, true),
                row("with", false, false, true),
                row("readOwnWay", false, false, true),
                row("writtenOwnWay", false, false, false),
                row("neverWritten", false, false, false),
                row("in", false, false, false),
            ]
        );
        let output_shape = shape(input, Side::Output).unwrap();
        assert!(output_shape.contains("impl io :: __private :: OutputShape for S"));
        assert!(output_shape.contains("ProbeOutput") && output_shape.contains("ProbeOpaqueOutput"));
        assert_eq!(
            fields(&output_shape),
            vec![
                row("plainField", false, false, false),
                row("defaulted", true, false, false),
                row("omitted", false, true, false),
                row("aliased", false, false, false),
                row("with", false, false, true),
                row("readOwnWay", false, false, false),
                row("writtenOwnWay", false, false, true),
                // serde gives a field it never reads its default.
                row("neverRead", true, false, false),
                row("out", false, false, false),
            ]
        );
        // A container default makes every field defaulted; without `deny_unknown_fields`,
        // unknown fields are let through; an alias equal to the name is no alias.
        let input: syn::DeriveInput = syn::parse_quote! {
            #[serde(default)]
            struct D { a: u8, #[serde(alias = "b")] b: u8 }
        };
        let text = shape(input, Side::Input).unwrap();
        assert!(text.contains("StructShape :: new (false ,"));
        assert_eq!(
            fields(&text),
            vec![row("a", true, false, false), row("b", true, false, false)]
        );
    }
}
