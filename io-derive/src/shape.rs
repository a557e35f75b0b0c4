//! The serde view of a derived struct, for residual validation (`io_core::residual`).
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

use crate::expand::Side;

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
    let (trait_name, method, probe, opaque) = match side {
        Side::Input => (
            quote!(InputShape),
            quote!(input_shape),
            quote!(ProbeInput),
            quote!(ProbeOpaqueInput),
        ),
        Side::Output => (
            quote!(OutputShape),
            quote!(output_shape),
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
            let shape = if special {
                quote!(#krate::__private::Shape::Opaque)
            } else {
                quote!({
                    #[allow(unused_imports)]
                    use #krate::__private::{#probe as _, #opaque as _};
                    (&#krate::__private::Probe::<#ty>::new()).#method()
                })
            };
            let has_default = container_default || !matches!(fa.default(), SerdeDefault::None);
            let omittable = fa.skip_serializing_if().is_some();
            quote! {
                #krate::__private::FieldShape {
                    name: #name,
                    has_default: #has_default,
                    omittable: #omittable,
                    shape: #shape,
                }
            }
        });
    let ident = &cont.ident;
    Some(quote! {
        #[automatically_derived]
        impl #krate::__private::#trait_name for #ident {
            fn #method() -> #krate::__private::Shape {
                #krate::__private::Shape::Struct(|| #krate::__private::StructShape {
                    deny_unknown_fields: #deny,
                    fields: ::std::vec![#(#field_shapes),*],
                })
            }
        }
    })
}
