//! Questions about the syntax of a field type. Syntax only: a type alias hides what it names.

use syn::{GenericArgument, PathArguments, Type};

/// What in a type strict mode cannot express.
pub(crate) enum Unexpressible<'a> {
    /// A map type (`HashMap`, `BTreeMap`, `IndexMap`, `serde_json::Map`).
    Map(&'a syn::Ident),
    /// `serde_json::Value`, which accepts any JSON.
    AnyValue(&'a syn::Ident),
    /// A tuple of one or more types, a fixed-length array of mixed types (`prefixItems`).
    Tuple(&'a syn::TypeTuple),
}

/// The map types, by their last path segment.
pub(crate) const MAPS: &[&str] = &["HashMap", "BTreeMap", "IndexMap", "Map"];

/// The first map or `Value` anywhere inside `ty`, generic arguments included, or else the
/// first tuple (`()` is `null`, which strict mode can say).
pub(crate) fn unexpressible(ty: &Type) -> Option<Unexpressible<'_>> {
    match ty {
        Type::Path(path) => {
            for segment in &path.path.segments {
                if let PathArguments::AngleBracketed(args) = &segment.arguments {
                    for arg in &args.args {
                        if let GenericArgument::Type(inner) = arg
                            && let Some(found) = unexpressible(inner)
                        {
                            return Some(found);
                        }
                    }
                }
            }
            let last = path.path.segments.last()?;
            let name = last.ident.to_string();
            if MAPS.contains(&name.as_str()) {
                Some(Unexpressible::Map(&last.ident))
            } else if name == "Value" {
                Some(Unexpressible::AnyValue(&last.ident))
            } else {
                None
            }
        }
        Type::Array(array) => unexpressible(&array.elem),
        Type::Slice(slice) => unexpressible(&slice.elem),
        Type::Reference(reference) => unexpressible(&reference.elem),
        Type::Paren(paren) => unexpressible(&paren.elem),
        Type::Group(group) => unexpressible(&group.elem),
        Type::Tuple(tuple) => tuple
            .elems
            .iter()
            .find_map(unexpressible)
            .or_else(|| (!tuple.elems.is_empty()).then_some(Unexpressible::Tuple(tuple))),
        _ => None,
    }
}

/// Whether `ty` is `Option<String>`, `Option<PathBuf>` or `Option<FsRoot>` (by last path
/// segments).
pub(crate) fn is_optional_path_or_string(ty: &Type) -> bool {
    let Some(inner) = option_inner(ty) else {
        return false;
    };
    let Type::Path(path) = inner else {
        return false;
    };
    path.path.segments.last().is_some_and(|s| {
        s.arguments.is_none()
            && (s.ident == "String" || s.ident == "PathBuf" || s.ident == "FsRoot")
    })
}

fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(inner) if args.args.len() == 1 => Some(inner),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(src: &str) -> Type {
        syn::parse_str(src).unwrap()
    }

    #[test]
    fn maps_and_values_are_found_anywhere_in_a_type() {
        assert!(matches!(
            unexpressible(&ty("HashMap<String, u8>")),
            Some(Unexpressible::Map(_))
        ));
        assert!(matches!(
            unexpressible(&ty("Option<Vec<std::collections::BTreeMap<String, u8>>>")),
            Some(Unexpressible::Map(_))
        ));
        assert!(matches!(
            unexpressible(&ty("(u8, serde_json::Value)")),
            Some(Unexpressible::AnyValue(_))
        ));
        assert!(unexpressible(&ty("Vec<Option<String>>")).is_none());
    }

    #[test]
    fn tuples_are_found_anywhere_but_the_unit_type_is_not_one() {
        for src in [
            "(f64, f64)",
            "Vec<(String, u8)>",
            "Option<(u8,)>",
            "[(u8, u8); 2]",
        ] {
            assert!(
                matches!(unexpressible(&ty(src)), Some(Unexpressible::Tuple(_))),
                "{src}"
            );
        }
        assert!(unexpressible(&ty("()")).is_none());
        assert!(unexpressible(&ty("Option<()>")).is_none());
    }

    #[test]
    fn arrays_slices_references_parens_and_groups_are_looked_into() {
        for src in [
            "[serde_json::Value; 2]",
            "Box<[Value]>",
            "&'static Value",
            "(Value)",
        ] {
            assert!(
                matches!(unexpressible(&ty(src)), Some(Unexpressible::AnyValue(_))),
                "{src}"
            );
        }
        // A macro's `$ty` reaches the derive as an invisible group.
        let group = Type::Group(syn::TypeGroup {
            attrs: Vec::new(),
            group_token: Default::default(),
            elem: Box::new(ty("HashMap<String, u8>")),
        });
        assert!(matches!(unexpressible(&group), Some(Unexpressible::Map(_))));
        assert!(unexpressible(&ty("[u8; 2]")).is_none());
        assert!(unexpressible(&ty("&'static str")).is_none());
    }

    #[test]
    fn the_reserved_root_field_type_is_recognised() {
        assert!(is_optional_path_or_string(&ty("Option<String>")));
        assert!(is_optional_path_or_string(&ty(
            "Option<std::path::PathBuf>"
        )));
        assert!(!is_optional_path_or_string(&ty("String")));
        assert!(!is_optional_path_or_string(&ty("Option<u8>")));
        // Not `Option` with one argument: syntax only, but not the reserved field's type.
        assert!(!is_optional_path_or_string(&ty("Option<String, String>")));
    }
}
