//! Names the macros derive from user names.

/// `sales_report` -> `SalesReport` (for the structs generated next to a function). `#[tool]`
/// and `#[define_io]` both use it, so the names they derive always agree.
pub(crate) fn pascal_case(snake: &str) -> String {
    snake
        .trim_start_matches("r#")
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::pascal_case;

    #[test]
    fn snake_case_becomes_pascal_case() {
        assert_eq!(pascal_case("sales_report"), "SalesReport");
        assert_eq!(pascal_case("r#type"), "Type");
        assert_eq!(pascal_case("a__b_"), "AB");
    }
}
