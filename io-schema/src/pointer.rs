//! JSON pointers (RFC 6901), as the engine writes them into errors and reports: the vocabulary
//! every walk over a schema or a value shares, kept below all of them.

/// Escapes one reference token of a JSON pointer (`~` -> `~0`, `/` -> `~1`).
///
/// ```
/// assert_eq!(agentio_schema::pointer::escape_token("a/b~c"), "a~1b~0c");
/// ```
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Appends `/token`, escaped, to `pointer`.
///
/// ```
/// let mut at = String::from("/properties");
/// agentio_schema::pointer::push_token(&mut at, "a/b");
/// assert_eq!(at, "/properties/a~1b");
/// ```
pub fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    pointer.push_str(&escape_token(token));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_escaped_tilde_first() {
        assert_eq!(escape_token("~1"), "~01");
        assert_eq!(escape_token("a/b~c"), "a~1b~0c");
        let mut at = String::new();
        push_token(&mut at, "");
        assert_eq!(at, "/");
    }
}
