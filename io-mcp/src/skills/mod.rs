//! Skills over MCP: the Skills extension (SEP-2640, `io.modelcontextprotocol/skills`), served
//! and loaded.
//!
//! A skill is a folder of files whose `SKILL.md` starts with YAML frontmatter (`name`,
//! `description`): instructions an agent loads when it needs them. The extension serves each
//! skill over the Resources primitive, at `skill://<path>/<name>/SKILL.md`: `skills/list` and
//! `skills/get` give each skill's entry (its frontmatter, and every file with its SHA-256
//! digest and size), `resources/read` the bytes, and `resources/directory/read` a folder's
//! children.
//!
//! **Serving.** [`McpServer::with_skills`] serves a [`SkillCatalog`] (rmcp's: a snapshot of the
//! skills below one directory, opened beneath it without following symlinks, hidden entries
//! left out, a skill over 512 files or 16 MiB skipped) beside the registry's tools and any
//! [handler](McpServer::with_handler)'s resources: the catalog answers `skills/*` and
//! `resources/directory/read`, its `SKILL.md`s come first in `resources/list` (then the
//! handler's pages), and `resources/read` is the catalog's for its files and the handler's for
//! the rest. A handler that serves skills itself needs no `with_skills`: its `skills/*` and
//! `resources/directory/read` are forwarded as they are; with `with_skills`, the catalog's
//! answer those methods instead.
//!
//! **Loading.** On the client, [`McpClient::list_skills`] lists the server's skills and reads
//! none of their files (the extension: no file is fetched before its skill is loaded).
//! [`McpClient::load_skill`] reads one skill's `SKILL.md` and checks it before anything else is
//! read: its size and digest against the entry (a wrong size is refused without hashing), then
//! its frontmatter, field by field, against the entry's frontmatter; any difference refuses the
//! skill ([`SkillError`]). [`McpClient::read_skill_file`] reads one more file of a loaded skill
//! under the same checks, and only a file its manifest lists. A skill whose files are
//! `"dynamic"` has no digests: its `SKILL.md`'s frontmatter is still compared, and its files
//! are read only within its folder, unverified ([`SkillFile::digest`] is `None`).
//!
//! Decisions the extension leaves open, taken here:
//! - A `SKILL.md`'s frontmatter is read as a TOOL.md's is
//!   ([`agentio_tools::manifest_limits`]): its fences, and within its limits (1 MiB, 32 levels,
//!   4 MiB once aliases are expanded), since the text is the server's.
//! - Frontmatter values are compared as JSON Schema compares instances, numbers by value (`1`
//!   and `1.0` are the same, as the YAML and JSON texts of one number may differ in form).
//! - A file's bytes are the text of a text answer, or the decoded base64 of a blob answer; an
//!   answer whose contents name another URI, or that holds no contents, is refused.
//! - A file whose entry claims more than [`SKILL_BYTE_LIMIT`] bytes is not read at all.
//! - `list_skills` leaves out an entry that breaks the extension's rules (its name, its URI,
//!   its manifest), follows at most [`ImportOptions::max_pages`] pages and refuses a cursor
//!   that repeats.

use std::sync::Arc;

use agentio_core::compat::same_instance;
use agentio_tools::manifest_limits::{self, MissingFence};
use base64::Engine;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientRequest, GetSkillRequest, GetSkillRequestParams, ListSkillsRequest, ReadResourceRequest,
    ReadResourceRequestParams, ResourceContents, SKILL_MD, ServerResult, Skill, SkillResource,
    SkillResources,
};
use serde_json::Value;

use crate::answer::clipped;
use crate::client::Pages;
use crate::{ClientError, DEFAULT_REQUEST_TIMEOUT, ImportOptions, McpClient, McpServer};

pub use rmcp::handler::server::skill_catalog::{
    SKILL_BYTE_LIMIT, SKILL_FILE_LIMIT, SkillCatalog, SkillCatalogError,
};
pub use rmcp::model::SKILLS_EXTENSION_ID;

pub(crate) mod error;
pub use error::SkillError;

/// A skill whose `SKILL.md` was read and checked against its entry
/// ([`McpClient::load_skill`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedSkill {
    skill: Skill,
    instructions: String,
}

impl LoadedSkill {
    /// The skill's entry, as the server listed it.
    pub fn skill(&self) -> &Skill {
        &self.skill
    }

    /// The skill's name (its frontmatter's, and its URI's last folder).
    pub fn name(&self) -> &str {
        self.skill.name()
    }

    /// The whole `SKILL.md`, frontmatter included, as checked.
    pub fn instructions(&self) -> &str {
        &self.instructions
    }

    /// The files the skill lists (`SKILL.md` included); empty for a `"dynamic"` skill.
    pub fn files(&self) -> &[SkillResource] {
        match &self.skill.resources {
            SkillResources::Files(files) => files,
            _ => &[],
        }
    }
}

/// One file of a loaded skill ([`McpClient::read_skill_file`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's URI.
    pub uri: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The media type the server gave it.
    pub mime_type: Option<String>,
    /// The digest the bytes were checked against; `None` for a `"dynamic"` skill's file,
    /// which nothing can check.
    pub digest: Option<String>,
}

impl McpServer {
    /// Serves `catalog`'s skills (the Skills extension, SEP-2640) beside the registry's tools
    /// and any handler's resources: see [`crate::skills`]. The server then declares the
    /// extension (with `directoryRead`) and the resources capability.
    ///
    /// The catalog is a snapshot: keep an `Arc` of it and call [`SkillCatalog::reload`] to
    /// serve the folder's changes (every session sees the new snapshot at its next request;
    /// no `list_changed` notification is sent).
    ///
    /// ```
    /// use agentio_mcp::McpServer;
    /// use agentio_mcp::rmcp::ServerHandler;
    /// use agentio_mcp::skills::{SKILLS_EXTENSION_ID, SkillCatalog};
    /// use agentio_tools::ToolRegistry;
    ///
    /// let root = tempfile::tempdir()?;
    /// std::fs::create_dir(root.path().join("release-notes"))?;
    /// std::fs::write(
    ///     root.path().join("release-notes/SKILL.md"),
    ///     "---\nname: release-notes\ndescription: Write release notes from merged changes\n---\n\nGroup changes by crate.\n",
    /// )?;
    /// let server = McpServer::new(ToolRegistry::new())?.with_skills(SkillCatalog::from_dir(root.path())?);
    /// let capabilities = server.get_info().capabilities;
    /// assert!(capabilities.extensions.unwrap().contains_key(SKILLS_EXTENSION_ID));
    /// assert!(capabilities.resources.is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_skills(mut self, catalog: impl Into<Arc<SkillCatalog>>) -> Self {
        self.set_skills(catalog.into());
        self
    }
}

/// The server side: what [`McpServer`]'s handler methods answer when it serves a catalog.
pub(crate) mod serve {
    use rmcp::model::{ListResourcesResult, PaginatedRequestParams, ServerCapabilities};

    use super::*;

    /// Declares the extension (with `directoryRead`) and the resources capability.
    pub(crate) fn declare(capabilities: &mut ServerCapabilities) {
        let ours = ServerCapabilities::builder()
            .enable_resources()
            .enable_skills_with_directory_read()
            .build();
        if capabilities.resources.is_none() {
            capabilities.resources = ours.resources;
        }
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .extend(ours.extensions.unwrap_or_default());
    }

    /// Whether a list request names a page after the first.
    pub(crate) fn has_cursor(request: &Option<PaginatedRequestParams>) -> bool {
        request.as_ref().is_some_and(|r| r.cursor.is_some())
    }

    /// `resources/list`'s first page: the catalog's `SKILL.md`s, then `theirs` (the handler's
    /// first page, with its cursor) when there is a handler.
    pub(crate) fn first_page(
        catalog: &SkillCatalog,
        theirs: Option<ListResourcesResult>,
    ) -> ListResourcesResult {
        let mut page = ListResourcesResult::with_all_items(catalog.resources());
        if let Some(theirs) = theirs {
            page.resources.extend(theirs.resources);
            page.next_cursor = theirs.next_cursor;
        }
        page
    }

    /// A cursor no one gave out: the catalog lists everything on one page.
    pub(crate) fn unknown_cursor(method: &str) -> McpError {
        McpError::invalid_params(
            format!("`{method}` has one page; this cursor is not one of its"),
            None,
        )
    }
}

/// The client side.
impl McpClient {
    /// Every skill the server lists (`skills/list`, all pages), without reading any of their
    /// files. An entry that breaks the extension's rules is left out ([`Self::load_skill`]
    /// would refuse it). Fails with [`SkillError::NotOffered`] when the server does not declare
    /// the extension, and [`ClientError::Bound`] when its pages go on past
    /// [`ImportOptions::max_pages`] or a cursor repeats.
    pub async fn list_skills(&self) -> Result<Vec<Skill>, ClientError> {
        self.offers_skills()?;
        let options = ImportOptions::default();
        let mut skills = Vec::new();
        let mut pages = Pages::new("skills/list", options.max_pages);
        loop {
            let request = ClientRequest::ListSkillsRequest(ListSkillsRequest {
                method: Default::default(),
                params: Some(pages.next_request()?),
                extensions: Default::default(),
            });
            let page = match self
                .ask(request, "skills/list", options.request_timeout)
                .await?
            {
                ServerResult::ListSkillsResult(page) => page,
                _ => {
                    return Err(ClientError::Request(
                        "the answer to `skills/list` is not a list of skills".into(),
                    ));
                }
            };
            skills.extend(page.skills.into_iter().filter(|s| s.validate().is_ok()));
            if !pages.more(page.next_cursor)? {
                return Ok(skills);
            }
        }
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`), reading none of its
    /// files. An entry for another URI, or one that breaks the extension's rules, is
    /// [`SkillError::Entry`].
    pub async fn get_skill(&self, uri: &str) -> Result<Skill, ClientError> {
        self.offers_skills()?;
        let request =
            ClientRequest::GetSkillRequest(GetSkillRequest::new(GetSkillRequestParams::new(uri)));
        match self
            .ask(request, "skills/get", DEFAULT_REQUEST_TIMEOUT)
            .await?
        {
            ServerResult::GetSkillResult(answer) if answer.skill.uri == uri => {
                valid(answer.skill).map_err(ClientError::from)
            }
            ServerResult::GetSkillResult(answer) => Err(SkillError::Entry {
                uri: clipped(uri.to_owned()),
                reason: clipped(format!("the server answered with `{}`", answer.skill.uri)),
            }
            .into()),
            _ => Err(ClientError::Request(
                "the answer to `skills/get` is not a skill".into(),
            )),
        }
    }

    /// Loads `skill`: reads its `SKILL.md` and checks it against the entry (size, digest,
    /// then the frontmatter field by field) before giving it back. A skill that fails any
    /// check is refused ([`SkillError`]) and nothing of it is returned.
    pub async fn load_skill(&self, skill: &Skill) -> Result<LoadedSkill, ClientError> {
        let skill = valid(skill.clone())?;
        let entry = match &skill.resources {
            SkillResources::Files(files) => files.iter().find(|file| file.uri == skill.uri),
            _ => None,
        };
        let (bytes, _) = self.read_bytes(&skill.uri, entry).await?;
        let instructions = String::from_utf8(bytes).map_err(|_| SkillError::Frontmatter {
            uri: clipped(skill.uri.clone()),
            reason: "SKILL.md is not UTF-8".into(),
        })?;
        same_frontmatter(&skill, &instructions)?;
        Ok(LoadedSkill {
            skill,
            instructions,
        })
    }

    /// Reads the file at `uri` of a loaded skill, checked against the skill's manifest (size,
    /// then digest). A file the manifest does not list is [`SkillError::NotInSkill`], and not
    /// asked for. A `"dynamic"` skill's file is read only within the skill's folder, unchecked.
    pub async fn read_skill_file(
        &self,
        skill: &LoadedSkill,
        uri: &str,
    ) -> Result<SkillFile, ClientError> {
        let not_in_skill = || SkillError::NotInSkill {
            skill: clipped(skill.skill.uri.clone()),
            uri: clipped(uri.to_owned()),
        };
        let entry = match &skill.skill.resources {
            SkillResources::Files(files) => Some(
                files
                    .iter()
                    .find(|file| file.uri == uri)
                    .ok_or_else(not_in_skill)?,
            ),
            _ if within_folder(&skill.skill.uri, uri) => None,
            _ => return Err(not_in_skill().into()),
        };
        let (bytes, mime_type) = self.read_bytes(uri, entry).await?;
        Ok(SkillFile {
            uri: uri.to_owned(),
            bytes,
            mime_type,
            digest: entry.map(|entry| entry.digest.clone()),
        })
    }

    fn offers_skills(&self) -> Result<(), SkillError> {
        let offered = self
            .peer()
            .peer_info()
            .is_some_and(|info| info.capabilities.supports_skills());
        if offered {
            Ok(())
        } else {
            Err(SkillError::NotOffered)
        }
    }

    /// `resources/read` of `uri`: its bytes and media type, checked against `entry` (whose
    /// size is first held to [`SKILL_BYTE_LIMIT`]) when there is one.
    async fn read_bytes(
        &self,
        uri: &str,
        entry: Option<&SkillResource>,
    ) -> Result<(Vec<u8>, Option<String>), ClientError> {
        if let Some(entry) = entry
            && entry.size > SKILL_BYTE_LIMIT
        {
            return Err(SkillError::TooLarge {
                uri: clipped(uri.to_owned()),
                size: entry.size,
            }
            .into());
        }
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
            ReadResourceRequestParams::new(uri),
        ));
        let unreadable = |reason: &str| SkillError::Unreadable {
            uri: clipped(uri.to_owned()),
            reason: reason.to_owned(),
        };
        let contents = match self
            .ask(request, "resources/read", DEFAULT_REQUEST_TIMEOUT)
            .await?
        {
            ServerResult::ReadResourceResult(answer) => answer.contents,
            _ => return Err(unreadable("the answer is not a resource's contents").into()),
        };
        let (bytes, mime_type) = match contents.into_iter().next() {
            Some(ResourceContents::TextResourceContents {
                uri: theirs,
                mime_type,
                text,
                ..
            }) if theirs == uri => (text.into_bytes(), mime_type),
            Some(ResourceContents::BlobResourceContents {
                uri: theirs,
                mime_type,
                blob,
                ..
            }) if theirs == uri => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .map_err(|_| unreadable("its blob is not base64"))?;
                (bytes, mime_type)
            }
            Some(_) => {
                return Err(unreadable("the answer's contents are another resource's").into());
            }
            None => return Err(unreadable("the answer holds no contents").into()),
        };
        if let Some(entry) = entry {
            entry.verify(&bytes).map_err(SkillError::Integrity)?;
        }
        Ok((bytes, mime_type))
    }
}

/// `skill`, when it keeps the extension's rules.
fn valid(skill: Skill) -> Result<Skill, SkillError> {
    match skill.validate() {
        Ok(()) => Ok(skill),
        Err(e) => Err(SkillError::Entry {
            uri: clipped(skill.uri.clone()),
            reason: clipped(e.to_string()),
        }),
    }
}

/// Whether `uri` names a file within the folder of the skill whose `SKILL.md` is at
/// `skill_uri`: under its root, without `.` or `..` segments (spelled plainly or
/// percent-encoded), empty segments, encoded slashes, a query or a fragment.
fn within_folder(skill_uri: &str, uri: &str) -> bool {
    let Some(root) = skill_uri.strip_suffix(SKILL_MD) else {
        return false;
    };
    let Some(rest) = uri.strip_prefix(root) else {
        return false;
    };
    let lowered = rest.to_ascii_lowercase();
    !rest.contains(['?', '#', '\\'])
        && !lowered.contains("%2f")
        && !lowered.contains("%5c")
        && rest.split('/').all(|segment| {
            let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
            !decoded.is_empty() && decoded != "." && decoded != ".."
        })
}

/// Whether the `SKILL.md` text's frontmatter is the entry's, field by field.
fn same_frontmatter(skill: &Skill, text: &str) -> Result<(), SkillError> {
    let problem = |reason: &str| SkillError::Frontmatter {
        uri: clipped(skill.uri.clone()),
        reason: reason.to_owned(),
    };
    // Read as a TOOL.md's is: within its limits (size, nesting, aliases expanded), since the
    // text is the server's.
    let yaml = match manifest_limits::split(text) {
        Ok((yaml, _)) => yaml,
        Err(MissingFence::Opening) => return Err(problem("no leading --- line")),
        Err(MissingFence::Closing) => return Err(problem("no --- line closes the frontmatter")),
    };
    let Value::Object(file) =
        manifest_limits::parse(yaml).map_err(|(_, message)| problem(&clipped(message)))?
    else {
        return Err(problem("the block is not a mapping"));
    };
    let Ok(Value::Object(entry)) = serde_json::to_value(&skill.frontmatter) else {
        return Err(problem("the entry's frontmatter is not an object"));
    };
    let mut fields: Vec<&String> = file.keys().chain(entry.keys()).collect();
    fields.sort();
    fields.dedup();
    match fields
        .into_iter()
        .find(|field| !same_value(file.get(*field), entry.get(*field)))
    {
        None => Ok(()),
        Some(field) => Err(SkillError::FrontmatterMismatch {
            uri: clipped(skill.uri.clone()),
            field: clipped(field.clone()),
        }),
    }
}

/// JSON Schema's equality (numbers by value); a missing field is `null`, as the extension's
/// JSON rendering of the frontmatter has it.
fn same_value(a: Option<&Value>, b: Option<&Value>) -> bool {
    same_instance(a.unwrap_or(&Value::Null), b.unwrap_or(&Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::SkillFrontmatter;
    use serde_json::json;

    fn skill(frontmatter: SkillFrontmatter) -> Skill {
        let uri = "skill://pdf-processing/SKILL.md";
        Skill::new(uri, frontmatter, SkillResources::Dynamic)
    }

    #[test]
    fn frontmatter_must_match_the_entry_field_by_field() {
        let entry = SkillFrontmatter::new("pdf-processing", "Extract PDFs")
            .with_field("license", "MIT")
            .with_field("metadata", json!({ "version": 1, "tags": ["a", "b"] }));
        let text = "---\nname: pdf-processing\ndescription: Extract PDFs\nlicense: MIT\nmetadata:\n  version: 1.0\n  tags: [a, b]\n---\nBody\n";
        assert_eq!(same_frontmatter(&skill(entry.clone()), text), Ok(()));

        let changed = text.replace("Extract PDFs", "Exfiltrate credentials");
        assert_eq!(
            same_frontmatter(&skill(entry.clone()), &changed),
            Err(SkillError::FrontmatterMismatch {
                uri: "skill://pdf-processing/SKILL.md".into(),
                field: "description".into(),
            })
        );
        let extra = text.replace("license: MIT\n", "license: MIT\nallowed-tools: Bash\n");
        assert!(matches!(
            same_frontmatter(&skill(entry.clone()), &extra),
            Err(SkillError::FrontmatterMismatch { field, .. }) if field == "allowed-tools"
        ));
        let missing = text.replace("license: MIT\n", "");
        assert!(matches!(
            same_frontmatter(&skill(entry.clone()), &missing),
            Err(SkillError::FrontmatterMismatch { field, .. }) if field == "license"
        ));
        let nested = text.replace("tags: [a, b]", "tags: [a, c]");
        assert!(matches!(
            same_frontmatter(&skill(entry.clone()), &nested),
            Err(SkillError::FrontmatterMismatch { field, .. }) if field == "metadata"
        ));
        for broken in [
            "No frontmatter\n",
            "---\n- a list\n---\n",
            "---\nname: [\n---\n",
        ] {
            assert!(
                matches!(
                    same_frontmatter(&skill(entry.clone()), broken),
                    Err(SkillError::Frontmatter { .. })
                ),
                "{broken:?}"
            );
        }
    }

    #[test]
    fn values_compare_as_json_with_numbers_by_value() {
        let same = |a: Value, b: Value| same_value(Some(&a), Some(&b));
        assert!(same(json!(1), json!(1.0)));
        assert!(!same(json!(1), json!(2)));
        assert!(!same(json!(1), json!("1")));
        assert!(same_value(None, Some(&Value::Null)));
        assert!(!same_value(None, Some(&json!(false))));
        assert!(same(json!([1, {"a": 2}]), json!([1.0, {"a": 2.0}])));
        assert!(!same(json!([1]), json!([1, 1])));
        assert!(!same(json!([1, 2]), json!([1, 3])));
        assert!(!same(json!({"a": 1}), json!({"a": 1, "b": 1})));
        assert!(!same(json!({"a": 1}), json!({"b": 1})));
        assert!(!same(json!({"a": 1}), json!({"a": 2})));
        assert!(same(json!({"a": "x"}), json!({"a": "x"})));
    }

    #[test]
    fn a_dynamic_skill_reads_only_within_its_folder() {
        let skill = "skill://acme/pdf-processing/SKILL.md";
        for (uri, within) in [
            ("skill://acme/pdf-processing/references/FORMS.md", true),
            ("skill://acme/pdf-processing/SKILL.md", true),
            ("skill://acme/pdf-processing/a%20b.md", true),
            ("skill://acme/pdf-processing-2/FORMS.md", false),
            ("skill://acme/other/FORMS.md", false),
            ("skill://acme/pdf-processing/../other/SKILL.md", false),
            ("skill://acme/pdf-processing/%2E%2e/other/SKILL.md", false),
            ("skill://acme/pdf-processing/./FORMS.md", false),
            ("skill://acme/pdf-processing/refs//FORMS.md", false),
            ("skill://acme/pdf-processing/refs%2F..%2FFORMS.md", false),
            ("skill://acme/pdf-processing/refs%5c..%5cFORMS.md", false),
            ("skill://acme/pdf-processing/refs\\FORMS.md", false),
            ("skill://acme/pdf-processing/FORMS.md?x=1", false),
            ("skill://acme/pdf-processing/FORMS.md#top", false),
            ("skill://acme/pdf-processing/", false),
        ] {
            assert_eq!(within_folder(skill, uri), within, "{uri}");
        }
        assert!(!within_folder(
            "skill://acme/pdf-processing/README.md",
            "skill://acme/pdf-processing/a.md"
        ));
    }

    #[test]
    fn errors_name_what_and_where() {
        let shown = SkillError::FrontmatterMismatch {
            uri: "skill://a/SKILL.md".into(),
            field: "description".into(),
        }
        .to_string();
        assert!(
            shown.contains("skill://a/SKILL.md") && shown.contains("description"),
            "{shown}"
        );
        let shown = ClientError::from(SkillError::TooLarge {
            uri: "skill://a/x".into(),
            size: 1 << 30,
        })
        .to_string();
        assert!(
            shown.contains("skill://a/x") && shown.contains("1073741824"),
            "{shown}"
        );
    }
}
