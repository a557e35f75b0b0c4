//! Three realistic tools: a read-only search, a workspace write that needs approval, and a
//! slow renderer that can outrun its timeout.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use agentio::core::ErrorCode;
use agentio::io;
use agentio::serde_json::json;
use agentio::tools::{ToolContext, ToolError, ToolExample, TypedTool, tool};

/// What to look for in the knowledge base.
#[io(input)]
#[derive(Debug)]
#[serde(deny_unknown_fields)]
pub struct SearchInput {
    /// Words to look for; every word must appear in a hit's title or text.
    #[schemars(length(min = 1, max = 200))]
    pub query: String,
    /// At most this many hits.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 10))]
    pub limit: u8,
}

fn default_limit() -> u8 {
    3
}

/// The matching articles, best first.
#[io(output)]
#[derive(Debug, PartialEq)]
pub struct SearchOutput {
    /// The hits.
    pub hits: Vec<Hit>,
}

/// One matching article.
#[io]
#[derive(Debug, PartialEq)]
pub struct Hit {
    /// The article's title.
    pub title: String,
    /// How many query words it contains.
    pub score: u32,
}

const ARTICLES: &[(&str, &str)] = &[
    (
        "Resetting a password",
        "open settings, choose security, then reset password",
    ),
    (
        "Exporting invoices",
        "invoices can be exported as csv from the billing page",
    ),
    (
        "Billing cycles",
        "billing happens monthly; invoices are issued on the first day",
    ),
    (
        "Two-factor login",
        "security keys and authenticator apps protect your login",
    ),
];

/// Searches the product knowledge base and returns matching article titles, best first. Use it
/// before answering a how-to question.
#[derive(Debug, Default, Clone, Copy)]
pub struct KbSearch;

fn search_examples() -> Vec<ToolExample> {
    vec![ToolExample {
        name: "invoices".into(),
        input: json!({ "query": "invoices", "limit": 2 }),
        output: Some(json!({ "hits": [
            { "title": "Exporting invoices", "score": 1 },
            { "title": "Billing cycles", "score": 1 }
        ] })),
        note: Some("ties keep the knowledge base's order".into()),
    }]
}

/// Searches the product knowledge base and returns matching article titles, best first. Use it
/// before answering a how-to question.
#[tool(
    id = "kb.search",
    version = "1.2.0",
    name = "Knowledge base search",
    idempotent,
    retry(max_attempts = 3, backoff = "exponential", initial_ms = 50),
    timeout_ms = 2000,
    tags = ["read-only", "support"],
    examples = search_examples,
)]
impl TypedTool for KbSearch {
    type Input = SearchInput;
    type Output = SearchOutput;

    async fn execute_typed(
        &self,
        input: SearchInput,
        _ctx: &ToolContext,
    ) -> Result<SearchOutput, ToolError> {
        let words: Vec<String> = input
            .query
            .to_lowercase()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let mut hits: Vec<Hit> = ARTICLES
            .iter()
            .filter_map(|(title, text)| {
                let haystack = format!("{} {text}", title.to_lowercase());
                let score = words
                    .iter()
                    .filter(|w| haystack.contains(w.as_str()))
                    .count();
                (score == words.len() && score > 0).then(|| Hit {
                    title: (*title).to_owned(),
                    score: score as u32,
                })
            })
            .collect();
        hits.sort_by_key(|hit| std::cmp::Reverse(hit.score));
        hits.truncate(usize::from(input.limit));
        Ok(SearchOutput { hits })
    }
}

/// Where the host keeps the workspace; supplied per call, never by the model.
#[io]
#[derive(Debug)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceContext {
    /// Absolute path of the workspace root.
    pub workspace_root: PathBuf,
}

/// A line to add to a note.
#[io(input)]
#[derive(Debug)]
#[serde(deny_unknown_fields)]
pub struct AppendInput {
    /// The note's file name under `notes/`, like `standup.md`.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}\.md$"))]
    pub note: String,
    /// The line to append.
    #[schemars(length(min = 1, max = 2000))]
    pub line: String,
}

/// Where the line went.
#[io(output)]
#[derive(Debug)]
pub struct AppendOutput {
    /// The note's workspace path.
    pub path: String,
    /// The note's size after the append, in bytes.
    pub bytes: u64,
}

fn append_examples() -> Vec<ToolExample> {
    vec![ToolExample {
        name: "new-note".into(),
        input: json!({ "note": "standup.md", "line": "Shipped the importer." }),
        output: Some(json!({ "path": "/notes/standup.md", "bytes": 22 })),
        note: Some("a new note holds the line and a newline".into()),
    }]
}

/// Appends one line to a markdown note in the workspace's `notes/` folder, creating the note if
/// needed. Changes the user's files, so the host asks before it runs.
#[tool(
    id = "notes.append",
    version = "1.0.0",
    name = "Append to note",
    mutates = ["workspace:/notes"],
    approval = "always",
    risk_level = 1,
    timeout_ms = 5000,
    context = WorkspaceContext,
    tags = ["workspace"],
    examples = append_examples,
)]
pub async fn append_note(input: AppendInput, ctx: &ToolContext) -> Result<AppendOutput, ToolError> {
    let workspace: WorkspaceContext = ctx.context()?;
    // The schema already restricts the name; refuse anything that is not one plain file name
    // anyway, so no input can reach outside `notes/`.
    let name = Path::new(&input.note);
    let plain = matches!(
        name.components().collect::<Vec<_>>().as_slice(),
        [Component::Normal(_)]
    );
    if !plain {
        return Err(ToolError::new(
            ErrorCode::InputInvalid,
            "`note` must be a plain file name",
        ));
    }
    let workspace_path = format!("/notes/{}", input.note);
    ctx.authorize_mutation(&format!("workspace:{workspace_path}"))?;
    let dir = workspace.workspace_root.join("notes");
    let path = dir.join(name);
    let write = || -> std::io::Result<u64> {
        use std::io::Write;
        std::fs::create_dir_all(&dir)?;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        writeln!(file, "{}", input.line)?;
        Ok(file.metadata()?.len())
    };
    let bytes = write().map_err(|err| {
        ToolError::new(ErrorCode::UpstreamError, "the note could not be written")
            .with_operator_detail(err.to_string())
    })?;
    Ok(AppendOutput {
        path: workspace_path,
        bytes,
    })
}

/// What to render.
#[io(input)]
#[derive(Debug)]
#[serde(deny_unknown_fields)]
pub struct RenderInput {
    /// The report's title.
    pub title: String,
    /// Pages to render; each takes about 100 ms.
    #[schemars(range(min = 1, max = 50))]
    pub pages: u32,
}

/// The rendered report.
#[io(output)]
#[derive(Debug)]
pub struct RenderOutput {
    /// A summary of what was rendered.
    pub summary: String,
}

fn render_examples() -> Vec<ToolExample> {
    vec![ToolExample {
        name: "one-page".into(),
        input: json!({ "title": "Q3", "pages": 1 }),
        output: Some(json!({ "summary": "Q3: 1 page(s)" })),
        note: None,
    }]
}

/// Renders a report page by page. Slow: about 100 ms a page, within a 300 ms budget, so a
/// long report times out.
#[tool(id = "report.render", version = "0.3.0", timeout_ms = 300, cost_class = "expensive", tags = ["reports"], examples = render_examples)]
pub async fn render_report(input: RenderInput) -> Result<RenderOutput, ToolError> {
    for _ in 0..input.pages {
        agentio::tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(RenderOutput {
        summary: format!("{}: {} page(s)", input.title, input.pages),
    })
}
