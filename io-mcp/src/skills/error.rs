//! [`SkillError`]: why a skill was not loaded, or a file of it not read. Its own module, so
//! that [`ClientError`](crate::ClientError) can carry it without the client depending on the
//! rest of the skills code.

use std::fmt;

use rmcp::model::SkillIntegrityError;

use rmcp::handler::server::skill_catalog::SKILL_BYTE_LIMIT;

/// Why a skill was not loaded, or a file of it not read. Nothing of a refused skill is given
/// to the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillError {
    /// The server does not declare the skills extension.
    NotOffered,
    /// The entry breaks the extension's rules (its name, its URI, its manifest).
    Entry {
        /// The skill's `SKILL.md` URI, as the entry gives it.
        uri: String,
        /// What rule it breaks.
        reason: String,
    },
    /// A file's bytes are not what the manifest says: another size, or another digest.
    Integrity(SkillIntegrityError),
    /// The `SKILL.md` has no frontmatter block, or one that is not a YAML mapping.
    Frontmatter {
        /// The `SKILL.md` URI.
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The `SKILL.md`'s frontmatter differs from the entry's (the first differing field, in
    /// name order).
    FrontmatterMismatch {
        /// The `SKILL.md` URI.
        uri: String,
        /// The field whose values differ (or that only one side has).
        field: String,
    },
    /// The file is not one the loaded skill lists (or, for a `"dynamic"` skill, not within
    /// its folder).
    NotInSkill {
        /// The skill's `SKILL.md` URI.
        skill: String,
        /// The file asked for.
        uri: String,
    },
    /// The file's entry claims more than [`SKILL_BYTE_LIMIT`] bytes; it was not read.
    TooLarge {
        /// The file.
        uri: String,
        /// The size its entry claims.
        size: u64,
    },
    /// The server's answer to `resources/read` holds no contents for the file, or a blob that
    /// is not base64.
    Unreadable {
        /// The file.
        uri: String,
        /// What was wrong with the answer.
        reason: String,
    },
}

impl fmt::Display for SkillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkillError::NotOffered => {
                write!(f, "the server does not offer the skills extension")
            }
            SkillError::Entry { uri, reason } => write!(f, "skill `{uri}` is invalid: {reason}"),
            SkillError::Integrity(e) => write!(f, "{e}"),
            SkillError::Frontmatter { uri, reason } => {
                write!(f, "`{uri}` has no usable frontmatter: {reason}")
            }
            SkillError::FrontmatterMismatch { uri, field } => write!(
                f,
                "the frontmatter of `{uri}` differs from its skill entry at `{field}`"
            ),
            SkillError::NotInSkill { skill, uri } => {
                write!(f, "`{uri}` is not a file of skill `{skill}`")
            }
            SkillError::TooLarge { uri, size } => write!(
                f,
                "`{uri}` is {size} bytes by its entry, more than {SKILL_BYTE_LIMIT}"
            ),
            SkillError::Unreadable { uri, reason } => write!(f, "cannot read `{uri}`: {reason}"),
        }
    }
}

impl std::error::Error for SkillError {}
