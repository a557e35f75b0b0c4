//! File contracts (AIP-16): the lifecycle clause by clause, hostile paths, and concurrent runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agentio_core::files::{
    FS_ROOT_FIELD, FileEntry, FileEvent, FileHost, FileObserver, FileRunRecord, IoDefinition,
    IoHandle, PathError, RunVars, Workspace, define_io_handle, interpolate, run_with_files,
};
use agentio_core::{AgentError, ErrorCode};
use pollster::block_on;
use serde_json::{Value, json};

/// A workspace and, beside it, a directory that must never change (shared with
/// `file_hardening.rs`).
pub(super) struct Sandbox {
    pub(super) base: PathBuf,
    pub(super) workspace: Workspace,
}

impl Sandbox {
    pub(super) fn new(name: &str) -> Self {
        let base =
            std::env::temp_dir().join(format!("agent-io-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("workspace")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/secret.txt"), "top secret").unwrap();
        let workspace = Workspace::open(base.join("workspace")).unwrap();
        Sandbox { base, workspace }
    }

    pub(super) fn ws(&self, relative: &str) -> PathBuf {
        self.workspace.root().join(relative)
    }

    pub(super) fn outside(&self) -> PathBuf {
        std::fs::canonicalize(self.base.join("outside")).unwrap()
    }

    pub(super) fn write(&self, relative: &str, content: &str) {
        let path = self.ws(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// Every file under `outside/`, with its content: must not change in any test.
    pub(super) fn outside_snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        let mut stack = vec![self.outside()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    files.insert(path.clone(), std::fs::read(&path).unwrap());
                }
            }
        }
        files
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

#[derive(Default)]
struct Events(Mutex<Vec<FileEvent>>);

impl FileObserver for Events {
    fn observe(&self, event: &FileEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

impl Events {
    fn all(&self) -> Vec<FileEvent> {
        self.0.lock().unwrap().clone()
    }
}

fn io(inputs: &[(&str, &str)], outputs: &[(&str, &str)]) -> IoHandle {
    let mut definition = IoDefinition::default();
    for (key, path) in inputs {
        definition = definition.input_file(*key, FileEntry::new(*path));
    }
    for (key, path) in outputs {
        definition = definition.output_file(*key, FileEntry::new(*path));
    }
    define_io_handle(definition).unwrap()
}

/// A handle built without definition-time checks, to show the run-time checks hold on their own.
fn unchecked(
    inputs: &[(&'static str, &'static str)],
    outputs: &[(&'static str, &'static str)],
) -> IoHandle {
    let entries = |files: &[(&'static str, &'static str)]| {
        files
            .iter()
            .map(|(k, p)| (*k, *p, None, None))
            .collect::<Vec<_>>()
    };
    agentio_core::__private::io_handle::<Value, Value>(&entries(inputs), &entries(outputs))
}

fn vars(run_id: &str) -> RunVars {
    RunVars {
        run_id: run_id.into(),
        unit_id: "report".into(),
        iso_date: "2026-11-22".into(),
    }
}

/// Runs `body` under `io` in `sandbox`; the body gets the scratch root and the input.
fn run<B>(
    io: &IoHandle,
    sandbox: &Sandbox,
    run_id: &str,
    input: Value,
    events: &Events,
    body: B,
) -> (Result<Value, AgentError>, FileRunRecord)
where
    B: FnOnce(&Path, Value) -> Result<Value, AgentError>,
{
    let host = FileHost::new(&sandbox.workspace).with_observer(events);
    block_on(run_with_files(
        io,
        host,
        &vars(run_id),
        input,
        |input: Value| {
            let root = PathBuf::from(input[FS_ROOT_FIELD].as_str().unwrap_or_default());
            let result = body(&root, input);
            async move { result }
        },
    ))
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

// ---- The lifecycle, clause by clause ------------------------------------------------------

#[test]
fn define_io_returns_the_four_blocks_with_file_maps_never_absent() {
    let handle = define_io_handle(IoDefinition::default()).unwrap();
    assert_eq!(
        handle.inputs(),
        &json!({ "type": "object", "properties": {} })
    );
    assert_eq!(
        handle.outputs(),
        &json!({ "type": "object", "properties": {} })
    );
    assert!(handle.inputs_files().is_empty() && handle.outputs_files().is_empty());
    assert!(!handle.has_files());
    // No files: no `_workflowFsRoot` is added.
    assert!(handle.inputs()["properties"].get(FS_ROOT_FIELD).is_none());
    let blocks = handle.to_blocks();
    assert_eq!(blocks["inputsFiles"], json!({}));
    assert_eq!(blocks["outputsFiles"], json!({}));
}

#[test]
fn either_file_map_alone_adds_the_reserved_field_and_injection() {
    for (inputs, outputs) in [
        (vec![("data", "in.csv")], vec![]),
        (vec![], vec![("report", "out.md")]),
    ] {
        let handle = io(&inputs, &outputs);
        assert_eq!(
            handle.inputs()["properties"][FS_ROOT_FIELD]["type"],
            "string"
        );
    }
    let sandbox = Sandbox::new("outputs-only");
    let events = Events::default();
    let handle = io(&[], &[("report", "out.md")]);
    let (result, _) = run(
        &handle,
        &sandbox,
        "r1",
        json!({}),
        &events,
        |root, input| {
            assert!(root.is_dir(), "the body gets a real scratch root");
            Ok(json!({ "root": input[FS_ROOT_FIELD] }))
        },
    );
    assert!(result.unwrap()["root"].is_string());
}

#[test]
fn a_handle_checks_outputs_and_names_the_staged_path_of_each_declared_key() {
    let handle = define_io_handle(IoDefinition {
        outputs: Some(json!({ "type": "object", "required": ["n"],
            "properties": { "n": { "type": "integer" } } })),
        ..IoDefinition::default()
    })
    .unwrap();
    assert!(handle.validate_output(&json!({ "n": 1 })).is_ok());
    let err = handle.validate_output(&json!({ "n": "one" })).unwrap_err();
    assert_eq!(err.code().as_str(), "output_invalid");
    assert_eq!(err.violations()[0].pointer, "/n");

    let handle = io(&[("data", "in/data.csv")], &[("report", "out/report.md")]);
    let root = Path::new("/scratch/run-1");
    // `<root>/<key>`, for a key of either map; the key, not the workspace path.
    assert_eq!(handle.staged_path(root, "data"), Some(root.join("data")));
    assert_eq!(
        handle.staged_path(root, "report"),
        Some(root.join("report"))
    );
    assert_eq!(handle.staged_path(root, "other"), None);
}

#[test]
fn an_input_that_is_a_folder_is_named_as_not_a_regular_file_and_the_record_keeps_the_run() {
    let sandbox = Sandbox::new("folder-input");
    std::fs::create_dir_all(sandbox.ws("adir")).unwrap();
    let events = Events::default();
    let handle = io(&[("in", "adir")], &[]);
    let (result, record) = run(&handle, &sandbox, "run-7", json!({}), &events, |_, _| {
        panic!("the body must not run")
    });
    let err = result.unwrap_err();
    assert_eq!(*err.code(), ErrorCode::InputInvalid);
    assert_eq!(
        err.message(),
        "input file `in` (`adir`) is not a regular file"
    );
    assert_eq!(record.run_id, "run-7");
    // Without files, the record still names its run.
    let (result, record) = run(
        &io(&[], &[]),
        &sandbox,
        "run-8",
        json!({}),
        &events,
        |_, _| Ok(json!({})),
    );
    assert_eq!(result.unwrap(), json!({}));
    assert_eq!(record.run_id, "run-8");
}

#[test]
fn workspaces_are_equal_by_root_and_settings_and_debug_shows_them() {
    let sandbox = Sandbox::new("workspace-eq");
    let root = sandbox.ws("");
    let a = Workspace::open(&root).unwrap();
    let b = Workspace::open(&root).unwrap();
    assert_eq!(a, b, "two descriptors of one root, same settings");
    assert_ne!(a, b.clone().allow_hard_links(true));
    assert_ne!(a, b.clone().with_max_input_bytes(1));
    let other = Sandbox::new("workspace-eq-other");
    assert_ne!(a, other.workspace);
    let debug = format!("{:?}", a.clone().with_max_input_bytes(7));
    assert_eq!(
        debug,
        format!(
            "Workspace {{ root: {:?}, allow_hard_links: false, max_input_bytes: 7, .. }}",
            a.root()
        )
    );
}

#[test]
fn a_scratch_root_that_cannot_be_removed_is_reported() {
    let sandbox = Sandbox::new("cleanup-failed");
    let events = Events::default();
    let handle = io(&[], &[("report", "out/report.md")]);
    // The body removes its own scratch root: the host's removal then fails, and says so.
    let (result, record) = run(&handle, &sandbox, "run-9", json!({}), &events, |root, _| {
        std::fs::remove_dir_all(root).unwrap();
        Ok(json!({}))
    });
    assert_eq!(result.unwrap(), json!({}));
    assert!(
        record
            .warnings
            .iter()
            .any(|w| w.starts_with("the scratch root could not be removed: ")),
        "{:?}",
        record.warnings
    );
    assert!(
        events
            .all()
            .iter()
            .any(|e| matches!(e, FileEvent::CleanupFailed { run_id, .. } if run_id == "run-9")),
        "{:?}",
        events.all()
    );
}

#[test]
fn a_closure_observes_and_the_scratch_root_is_named_after_the_run() {
    let sandbox = Sandbox::new("closure-observer");
    let seen = Mutex::new(Vec::new());
    let observer = |event: &FileEvent| seen.lock().unwrap().push(event.clone());
    let handle = io(&[], &[("report", "out/report.md")]);
    let host = FileHost::new(&sandbox.workspace).with_observer(&observer);
    let (result, _) = block_on(run_with_files(
        &handle,
        host,
        &vars("run-1_a.b/c"),
        json!({}),
        |input: Value| {
            let root = PathBuf::from(input[FS_ROOT_FIELD].as_str().unwrap());
            std::fs::write(root.join("report"), "done").unwrap();
            let name = root.file_name().unwrap().to_string_lossy().into_owned();
            async move { Ok(json!({ "root": name })) }
        },
    ));
    // The run id's letters, digits, `-` and `_` name the scratch root; the rest is dropped.
    let name = result.unwrap()["root"].as_str().unwrap().to_owned();
    assert!(name.starts_with("agent-io-run-1_abc-"), "{name}");
    let seen = seen.into_inner().unwrap();
    assert!(
        seen.iter()
            .any(|e| matches!(e, FileEvent::Synced { key, .. } if key == "report")),
        "{seen:?}"
    );
}

#[test]
fn a_declared_fs_root_is_left_in_place_and_must_accept_a_string() {
    let declared = json!({ "type": "object", "properties": {
        FS_ROOT_FIELD: { "type": "string", "description": "mine" } } });
    let handle = define_io_handle(
        IoDefinition {
            inputs: Some(declared),
            ..IoDefinition::default()
        }
        .input_file("a", FileEntry::new("a.txt")),
    )
    .unwrap();
    assert_eq!(
        handle.inputs()["properties"][FS_ROOT_FIELD]["description"],
        "mine"
    );

    let wrong = json!({ "type": "object", "properties": { FS_ROOT_FIELD: { "type": "integer" } } });
    assert_root_refused(wrong);
}

/// A file-declaring definition with these input schemas is refused for its `_workflowFsRoot`.
fn assert_root_refused(inputs: Value) {
    let err = define_io_handle(
        IoDefinition {
            inputs: Some(inputs),
            ..IoDefinition::default()
        }
        .input_file("a", FileEntry::new("a.txt")),
    )
    .unwrap_err();
    assert_eq!(err.problems[0].0, "/inputs/properties/_workflowFsRoot");
}

#[test]
fn a_derived_fs_root_field_is_accepted_through_its_reference() {
    // `Option<FsRoot>` derives to `anyOf [{ $ref: #/$defs/FsRoot }, null]`: the check must
    // resolve the reference in the input schema, not refuse the field it cannot see into.
    use agentio_core::files::FsRoot;
    use agentio_core::{AgentInput, AgentOutput};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
    struct WithRoot {
        #[serde(
            rename = "_workflowFsRoot",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        root: Option<FsRoot>,
    }
    #[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
    struct Nothing {}
    let schema = WithRoot::input_schema();
    assert!(
        schema["properties"][FS_ROOT_FIELD]
            .to_string()
            .contains("$ref"),
        "the field is a reference: {schema}"
    );
    // A model reads a short description, not the type's Rust documentation.
    assert_eq!(
        schema["$defs"]["FsRoot"]["description"],
        "Reserved: the host-injected scratch root path."
    );
    let handle = define_io_handle(
        IoDefinition::typed::<WithRoot, Nothing>().input_file("a", FileEntry::new("a.txt")),
    )
    .unwrap();
    assert!(
        handle
            .validate_input(&json!({ FS_ROOT_FIELD: "/scratch/r1" }))
            .is_ok()
    );

    // A reference to something that is not a string is still refused.
    let wrong = json!({
        "type": "object",
        "properties": { FS_ROOT_FIELD: { "$ref": "#/$defs/Port" } },
        "$defs": { "Port": { "type": "integer" } }
    });
    assert_root_refused(wrong);
}

#[test]
fn the_lifecycle_runs_in_the_spec_order_and_attests_every_file() {
    let sandbox = Sandbox::new("lifecycle");
    sandbox.write("data/sales.csv", "region,total\nnorth,10\n");
    let events = Events::default();
    let handle = io(
        &[("sales", "data/sales.csv")],
        &[("report", "reports/<workflowId>/<isoDate>/<runId>.md")],
    );
    let seen_root = Arc::new(Mutex::new(PathBuf::new()));
    let seen = seen_root.clone();
    let (result, record) = run(
        &handle,
        &sandbox,
        "run-7",
        json!({ "title": "Q3" }),
        &events,
        move |root, input| {
            *seen.lock().unwrap() = root.to_owned();
            // Staged before the body, at <root>/<key>.
            let csv = std::fs::read_to_string(root.join("sales")).unwrap();
            std::fs::write(
                root.join("report"),
                format!(
                    "# {}\n{}",
                    input["title"].as_str().unwrap(),
                    csv.lines().count()
                ),
            )
            .unwrap();
            // Undeclared scratch files are allowed, and discarded.
            std::fs::write(root.join("scratch.tmp"), "x").unwrap();
            Ok(json!({ "ok": true }))
        },
    );
    assert_eq!(result.unwrap(), json!({ "ok": true }));
    let root = seen_root.lock().unwrap().clone();
    assert!(!root.exists(), "the scratch root is removed after the run");
    assert_eq!(
        std::fs::read_to_string(sandbox.ws("reports/report/2026-11-22/run-7.md")).unwrap(),
        "# Q3\n2"
    );
    assert!(!sandbox.ws("scratch.tmp").exists());

    // Attestation: sizes and SHA-256 of what was staged and synced.
    let csv = "region,total\nnorth,10\n";
    assert_eq!(record.staged.len(), 1);
    assert_eq!(
        (record.staged[0].bytes, record.staged[0].sha256.clone()),
        (csv.len() as u64, sha256_hex(csv.as_bytes()))
    );
    assert_eq!(
        record.synced[0].workspace_path,
        "reports/report/2026-11-22/run-7.md"
    );
    assert_eq!(record.synced[0].sha256, sha256_hex(b"# Q3\n2"));
    // Events: one per staged read and synced write, with the run id.
    let kinds: Vec<String> = events
        .all()
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(kinds, ["staged", "synced"]);
    assert!(
        events
            .all()
            .iter()
            .all(|e| serde_json::to_value(e).unwrap()["run_id"] == "run-7")
    );
}

#[test]
fn a_caller_supplied_fs_root_is_overwritten() {
    let sandbox = Sandbox::new("overwrite");
    let events = Events::default();
    let handle = io(&[], &[("out", "out.txt")]);
    let (result, _) = run(
        &handle,
        &sandbox,
        "r",
        json!({ FS_ROOT_FIELD: "/etc" }),
        &events,
        |root, _| Ok(json!({ "root": root.to_string_lossy() })),
    );
    let root = result.unwrap()["root"].as_str().unwrap().to_owned();
    assert_ne!(root, "/etc");
    assert!(root.contains("agent-io-r-"), "{root}");
}

#[test]
fn a_missing_input_file_fails_before_the_body_starts() {
    let sandbox = Sandbox::new("missing-input");
    let events = Events::default();
    let handle = io(&[("data", "data/absent.csv")], &[]);
    let ran = Arc::new(Mutex::new(false));
    let flag = ran.clone();
    let (result, record) = run(&handle, &sandbox, "r", json!({}), &events, move |_, _| {
        *flag.lock().unwrap() = true;
        Ok(json!({}))
    });
    let err = result.unwrap_err();
    assert_eq!(err.code(), &ErrorCode::NotFound);
    assert_eq!(
        err.message(),
        "input file `data` (`data/absent.csv`) does not exist in the workspace"
    );
    assert!(
        !*ran.lock().unwrap(),
        "the body ran although an input was missing"
    );
    assert!(record.staged.is_empty());
    assert!(matches!(&events.all()[0], FileEvent::StageFailed { key, .. } if key == "data"));
}

#[test]
fn an_output_not_produced_is_a_warning_and_the_run_succeeds() {
    let sandbox = Sandbox::new("not-produced");
    let events = Events::default();
    let handle = io(&[], &[("report", "report.md")]);
    let (result, record) = run(&handle, &sandbox, "r", json!({}), &events, |_, _| {
        Ok(json!({ "done": true }))
    });
    assert_eq!(result.unwrap(), json!({ "done": true }));
    assert_eq!(
        record.warnings,
        ["output `report` was declared but not produced"]
    );
    assert!(matches!(&events.all()[0], FileEvent::OutputMissing { key, .. } if key == "report"));
}

#[test]
fn a_sync_failure_is_logged_and_does_not_fail_the_run() {
    let sandbox = Sandbox::new("sync-failure");
    // The target's parent is a file, so the write cannot happen.
    sandbox.write("reports", "I am a file, not a folder");
    let events = Events::default();
    let handle = io(&[], &[("report", "reports/q3.md")]);
    let (result, record) = run(&handle, &sandbox, "r", json!({}), &events, |root, _| {
        std::fs::write(root.join("report"), "content").unwrap();
        Ok(json!({ "done": true }))
    });
    assert_eq!(result.unwrap(), json!({ "done": true }));
    assert!(record.synced.is_empty());
    assert_eq!(record.warnings.len(), 1, "{:?}", record.warnings);
    assert!(matches!(&events.all()[0], FileEvent::SyncFailed { key, .. } if key == "report"));
}

#[test]
fn outputs_are_synced_even_when_the_body_fails() {
    let sandbox = Sandbox::new("body-fails");
    let events = Events::default();
    let handle = io(&[], &[("log", "logs/<runId>.log")]);
    let (result, record) = run(&handle, &sandbox, "r9", json!({}), &events, |root, _| {
        std::fs::write(root.join("log"), "step 1 ok\nstep 2 failed\n").unwrap();
        Err(AgentError::new(ErrorCode::UpstreamError, "step 2 failed"))
    });
    assert_eq!(result.unwrap_err().code(), &ErrorCode::UpstreamError);
    assert_eq!(record.synced.len(), 1);
    assert!(sandbox.ws("logs/r9.log").is_file());
}

#[test]
fn the_input_is_validated_after_injection_and_before_the_body() {
    let sandbox = Sandbox::new("validation");
    sandbox.write("in.txt", "x");
    let events = Events::default();
    let inputs = json!({ "type": "object", "properties": { "n": { "type": "integer" } }, "required": ["n"],
        "additionalProperties": false });
    let handle = define_io_handle(
        IoDefinition {
            inputs: Some(inputs),
            ..IoDefinition::default()
        }
        .input_file("in", FileEntry::new("in.txt")),
    )
    .unwrap();
    // `additionalProperties: false` and yet the injected root passes: the schema was augmented.
    let (ok, _) = run(
        &handle,
        &sandbox,
        "r",
        json!({ "n": 1 }),
        &events,
        |_, input| Ok(input),
    );
    assert!(ok.is_ok());
    let (bad, _) = run(
        &handle,
        &sandbox,
        "r",
        json!({ "n": "one" }),
        &events,
        |_, _| panic!("the body must not run"),
    );
    let err = bad.unwrap_err();
    assert_eq!(err.code(), &ErrorCode::InputInvalid);
    assert_eq!(err.violations()[0].pointer, "/n");
}

#[test]
fn empty_and_absent_file_maps_are_equivalent() {
    // Absent: the blocks never mention files. The handle still has both maps, empty.
    let handle = define_io_handle(IoDefinition {
        inputs: Some(json!({ "type": "object", "properties": { "q": { "type": "string" } } })),
        ..IoDefinition::default()
    })
    .unwrap();
    let blocks = handle.to_blocks();
    assert_eq!(blocks["inputsFiles"], json!({}), "never absent");
    assert_eq!(blocks["outputsFiles"], json!({}), "never absent");
    // Empty maps declare no files: no `_workflowFsRoot`, no scratch root, no injection.
    assert!(!handle.has_files());
    assert!(handle.inputs()["properties"].get(FS_ROOT_FIELD).is_none());
    let sandbox = Sandbox::new("no-files");
    let events = Events::default();
    let (result, record) = run(
        &handle,
        &sandbox,
        "r",
        json!({ "q": "x" }),
        &events,
        |_, input| Ok(input),
    );
    assert_eq!(
        result.unwrap(),
        json!({ "q": "x" }),
        "the input is passed through unchanged"
    );
    assert!(record.staged.is_empty() && record.synced.is_empty() && record.warnings.is_empty());
    assert!(events.all().is_empty());
    // And the explicit empty maps of a definition built from parts mean the same.
    let explicit = define_io_handle(IoDefinition {
        inputs: Some(json!({ "type": "object", "properties": { "q": { "type": "string" } } })),
        inputs_files: BTreeMap::new(),
        outputs_files: BTreeMap::new(),
        ..IoDefinition::default()
    })
    .unwrap();
    assert_eq!(explicit.to_blocks(), blocks);
}

#[test]
fn interpolation_is_one_pass_in_the_lifecycle_too() {
    let sandbox = Sandbox::new("one-pass");
    let events = Events::default();
    let handle = io(&[], &[("out", "out/<runId>.txt")]);
    // A run id that looks like a token is written as it is, not expanded again.
    let (result, record) = run(
        &handle,
        &sandbox,
        "<isoDate>",
        json!({}),
        &events,
        |root, _| {
            std::fs::write(root.join("out"), "x").unwrap();
            Ok(json!({}))
        },
    );
    result.unwrap();
    assert_eq!(record.synced[0].workspace_path, "out/<isoDate>.txt");
    assert!(sandbox.ws("out/<isoDate>.txt").is_file());
}

#[test]
fn the_blocks_validate_against_the_published_io_schema() {
    let handle = io(
        &[("source", "uploads/scan.png")],
        &[("image", "images/<isoDate>-<toolId>.png")],
    );
    let schema: Value = serde_json::from_str(include_str!(
        "../../../io-typed-tool/schemas/IO.schema.json"
    ))
    .unwrap();
    let entry = json!({ "$ref": "#/$defs/inputsFiles", "$defs": schema["$defs"] });
    let boundary = agentio_core::BoundarySchema::from_value(
        "inputsFiles",
        agentio_core::Direction::Input,
        entry,
    );
    assert!(
        boundary
            .validate(&handle.to_blocks()["inputsFiles"])
            .is_ok()
    );
    assert!(
        boundary
            .validate(&handle.to_blocks()["outputsFiles"])
            .is_ok()
    );
}

// ---- Hostile paths ------------------------------------------------------------------------

/// One hostile case: what it does, and what must come out.
enum Expect {
    /// Refused when the handle is defined (lexically), naming this problem.
    Definition(&'static str),
    /// The run fails before the body, with this code and a message containing this text.
    RunFails(ErrorCode, &'static str),
    /// The run succeeds, but the output is not synced: a warning containing this text.
    NotSynced(&'static str),
}

struct Case {
    name: &'static str,
    inputs: Vec<(&'static str, &'static str)>,
    outputs: Vec<(&'static str, &'static str)>,
    run_id: &'static str,
    setup: fn(&Sandbox),
    body: fn(&Path),
    expect: Expect,
}

fn nothing(_: &Sandbox) {}

fn writes_out(root: &Path) {
    std::fs::write(root.join("out"), "payload").unwrap();
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) {
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, link).unwrap();
}

fn long_name() -> &'static str {
    Box::leak(format!("{}.txt", "n".repeat(300)).into_boxed_str())
}

fn long_path() -> &'static str {
    Box::leak(vec!["segment"; 200].join("/").into_boxed_str())
}

#[cfg(unix)]
fn hostile_cases() -> Vec<Case> {
    let case = |name, inputs, outputs, expect| Case {
        name,
        inputs,
        outputs,
        run_id: "r",
        setup: nothing,
        body: writes_out,
        expect,
    };
    vec![
        case(
            "input traversal",
            vec![("in", "../outside/secret.txt")],
            vec![],
            Expect::Definition("`..`"),
        ),
        case(
            "input nested traversal",
            vec![("in", "a/../../outside/secret.txt")],
            vec![],
            Expect::Definition("`..`"),
        ),
        case(
            "input absolute",
            vec![("in", "/etc/passwd")],
            vec![],
            Expect::Definition("absolute"),
        ),
        case(
            "input backslash traversal",
            vec![("in", "..\\outside\\secret.txt")],
            vec![],
            Expect::Definition("`..`"),
        ),
        case(
            "input NUL",
            vec![("in", "in\0.txt")],
            vec![],
            Expect::Definition("NUL"),
        ),
        case(
            "input unknown token",
            vec![("in", "in/<home>.txt")],
            vec![],
            Expect::Definition("<home>"),
        ),
        case(
            "input empty path",
            vec![("in", "")],
            vec![],
            Expect::Definition("empty"),
        ),
        case(
            "input very long name",
            vec![("in", long_name())],
            vec![],
            Expect::Definition("too long"),
        ),
        case(
            "input very long path",
            vec![("in", long_path())],
            vec![],
            Expect::Definition("too long"),
        ),
        case(
            "key with a slash",
            vec![("../in", "in.txt")],
            vec![],
            Expect::Definition("plain file name"),
        ),
        case(
            "key starting with a dot",
            vec![],
            vec![(".bashrc", "out.txt")],
            Expect::Definition("plain file name"),
        ),
        case(
            "output traversal",
            vec![],
            vec![("out", "../outside/pwned.txt")],
            Expect::Definition("`..`"),
        ),
        case(
            "output absolute",
            vec![],
            vec![("out", "/tmp/pwned.txt")],
            Expect::Definition("absolute"),
        ),
        Case {
            run_id: "../../outside",
            ..case(
                "output token expanding to ..",
                vec![],
                vec![("out", "reports/<runId>/pwned.txt")],
                Expect::NotSynced("`..`"),
            )
        },
        Case {
            run_id: "/etc",
            ..case(
                "output token expanding to an absolute path",
                vec![],
                vec![("out", "<runId>/pwned")],
                Expect::NotSynced("absolute"),
            )
        },
        Case {
            run_id: "../..",
            ..case(
                "input token expanding to ..",
                vec![("in", "in/<runId>/secret.txt")],
                vec![],
                Expect::RunFails(ErrorCode::InputInvalid, "`..`"),
            )
        },
        Case {
            run_id: "a\0b",
            ..case(
                "output token carrying a NUL",
                vec![],
                vec![("out", "out/<runId>.txt")],
                Expect::NotSynced("NUL"),
            )
        },
        Case {
            setup: |s| symlink(&s.outside().join("secret.txt"), &s.ws("link.txt")),
            ..case(
                "input symlink to a file outside",
                vec![("in", "link.txt")],
                vec![],
                Expect::RunFails(ErrorCode::InputInvalid, "outside the workspace"),
            )
        },
        Case {
            setup: |s| symlink(&s.outside(), &s.ws("linkdir")),
            ..case(
                "input through a symlinked folder",
                vec![("in", "linkdir/secret.txt")],
                vec![],
                Expect::RunFails(ErrorCode::InputInvalid, "outside the workspace"),
            )
        },
        Case {
            setup: |s| symlink(&s.base.join("nowhere"), &s.ws("dangling.txt")),
            ..case(
                "input dangling symlink",
                vec![("in", "dangling.txt")],
                vec![],
                Expect::RunFails(ErrorCode::InputInvalid, "outside the workspace"),
            )
        },
        Case {
            setup: |s| std::fs::create_dir_all(s.ws("adir")).unwrap(),
            ..case(
                "input that is a folder",
                vec![("in", "adir")],
                vec![],
                Expect::RunFails(ErrorCode::InputInvalid, "not a regular file"),
            )
        },
        Case {
            setup: |s| symlink(&s.outside(), &s.ws("exports")),
            ..case(
                "output through a symlinked folder",
                vec![],
                vec![("out", "exports/pwned.txt")],
                Expect::NotSynced("outside the workspace"),
            )
        },
        Case {
            setup: |s| symlink(&s.outside(), &s.ws("deep/exports")),
            ..case(
                "output through a nested symlinked folder",
                vec![],
                vec![("out", "deep/exports/new/pwned.txt")],
                Expect::NotSynced("outside the workspace"),
            )
        },
        Case {
            setup: |s| symlink(&s.outside().join("secret.txt"), &s.ws("report.txt")),
            ..case(
                "output target is a symlink to a file outside",
                vec![],
                vec![("out", "report.txt")],
                Expect::NotSynced("outside the workspace"),
            )
        },
        Case {
            body: |root| std::os::unix::fs::symlink("/etc/passwd", root.join("out")).unwrap(),
            ..case(
                "scratch output is a symlink to a file outside",
                vec![],
                vec![("out", "copied.txt")],
                Expect::NotSynced("not a regular file"),
            )
        },
        Case {
            body: |root| std::fs::create_dir(root.join("out")).unwrap(),
            ..case(
                "scratch output is a folder",
                vec![],
                vec![("out", "copied.txt")],
                Expect::NotSynced("not a regular file"),
            )
        },
        Case {
            body: |root| {
                std::os::unix::fs::symlink(root.join("../../.."), root.join("out")).unwrap()
            },
            ..case(
                "scratch output is a symlink to a folder outside",
                vec![],
                vec![("out", "copied")],
                Expect::NotSynced("not a regular file"),
            )
        },
        Case {
            // Inside the scratch root, so a descriptor-relative open would follow it: the
            // link itself is refused, not only where it leads.
            body: |root| {
                std::fs::write(root.join("real.txt"), "data").unwrap();
                std::os::unix::fs::symlink("real.txt", root.join("out")).unwrap()
            },
            ..case(
                "scratch output is a symlink to a file beside it",
                vec![],
                vec![("out", "copied.txt")],
                Expect::NotSynced("not a regular file"),
            )
        },
    ]
}

#[cfg(unix)]
#[test]
fn hostile_paths_are_refused_clearly_and_nothing_is_written_outside_the_workspace() {
    let cases = hostile_cases();
    assert!(cases.len() >= 20, "{} cases", cases.len());
    for case in cases {
        let sandbox = Sandbox::new(&case.name.replace(' ', "-"));
        (case.setup)(&sandbox);
        let before = sandbox.outside_snapshot();
        let workspace_before: Vec<PathBuf> = walk(sandbox.workspace.root());

        let mut definition = IoDefinition::default();
        for (key, path) in &case.inputs {
            definition = definition.input_file(*key, FileEntry::new(*path));
        }
        for (key, path) in &case.outputs {
            definition = definition.output_file(*key, FileEntry::new(*path));
        }
        let defined = define_io_handle(definition);
        match case.expect {
            Expect::Definition(text) => {
                let err = defined
                    .err()
                    .unwrap_or_else(|| panic!("{}: the definition was accepted", case.name));
                assert!(err.to_string().contains(text), "{}: {err}", case.name);
                // The run-time checks hold on their own, too: a handle that skipped the
                // definition checks still stages and syncs nothing outside the workspace.
                let handle = unchecked(&case.inputs, &case.outputs);
                let events = Events::default();
                let (result, record) = run(
                    &handle,
                    &sandbox,
                    case.run_id,
                    json!({}),
                    &events,
                    |root, _| {
                        writes_out(root);
                        Ok(json!({}))
                    },
                );
                assert!(
                    result.is_err() || record.synced.is_empty(),
                    "{}: {record:?}",
                    case.name
                );
            }
            Expect::RunFails(code, text) => {
                let handle = defined.unwrap_or_else(|e| panic!("{}: {e}", case.name));
                let events = Events::default();
                let (result, _) = run(
                    &handle,
                    &sandbox,
                    case.run_id,
                    json!({}),
                    &events,
                    |_, _| panic!("the body must not run"),
                );
                let err = result.unwrap_err();
                assert_eq!(err.code(), &code, "{}: {err}", case.name);
                assert!(
                    err.message().contains(text),
                    "{}: {}",
                    case.name,
                    err.message()
                );
            }
            Expect::NotSynced(text) => {
                let handle = defined.unwrap_or_else(|e| panic!("{}: {e}", case.name));
                let events = Events::default();
                let body = case.body;
                let (result, record) = run(
                    &handle,
                    &sandbox,
                    case.run_id,
                    json!({}),
                    &events,
                    move |root, _| {
                        body(root);
                        Ok(json!({ "done": true }))
                    },
                );
                assert_eq!(result.unwrap(), json!({ "done": true }), "{}", case.name);
                assert!(record.synced.is_empty(), "{}: {record:?}", case.name);
                assert!(
                    record.warnings.iter().any(|w| w.contains(text)),
                    "{}: {:?}",
                    case.name,
                    record.warnings
                );
            }
        }
        assert_eq!(
            sandbox.outside_snapshot(),
            before,
            "{}: something outside the workspace changed",
            case.name
        );
        let workspace_after = walk(sandbox.workspace.root());
        let new: Vec<&PathBuf> = workspace_after
            .iter()
            .filter(|p| !workspace_before.contains(p) && p.is_file())
            .collect();
        assert!(
            new.is_empty(),
            "{}: unexpected files written: {new:?}",
            case.name
        );
    }
}

fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                stack.push(path.clone());
            }
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn interpolated_values_are_checked_again() {
    let mut v = vars("../..");
    assert_eq!(
        interpolate("in/<runId>/x", &v),
        Err(PathError::ParentComponent)
    );
    v.run_id = "ok".into();
    assert_eq!(interpolate("in/<runId>/x", &v).unwrap(), "in/ok/x");
}

// ---- Concurrency ------------------------------------------------------------------------

#[test]
fn a_hundred_concurrent_runs_each_see_only_their_own_files() {
    let sandbox = Sandbox::new("concurrent");
    for i in 0..100 {
        sandbox.write(
            &format!("inbox/run-{i}.txt"),
            &format!("payload of run {i}"),
        );
    }
    let handle = io(
        &[("data", "inbox/<runId>.txt")],
        &[("report", "reports/<runId>.md")],
    );
    let events = Events::default();
    let roots = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for i in 0..100 {
            let (handle, sandbox, events, roots) = (&handle, &sandbox, &events, &roots);
            scope.spawn(move || {
                let run_id = format!("run-{i}");
                let (result, record) = run(
                    handle,
                    sandbox,
                    &run_id,
                    json!({ "n": i }),
                    events,
                    |root, input| {
                        // This run's root holds exactly its own staged file, nothing of another run.
                        let mut names: Vec<String> = std::fs::read_dir(root)
                            .unwrap()
                            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                            .collect();
                        names.sort();
                        assert_eq!(names, ["data"]);
                        let data = std::fs::read_to_string(root.join("data")).unwrap();
                        assert_eq!(data, format!("payload of run {}", input["n"]));
                        std::thread::sleep(std::time::Duration::from_millis(2));
                        std::fs::write(root.join("report"), format!("report for {data}")).unwrap();
                        roots.lock().unwrap().push(root.to_owned());
                        Ok(json!({}))
                    },
                );
                result.unwrap();
                assert_eq!(record.synced.len(), 1);
            });
        }
    });
    let roots = roots.into_inner().unwrap();
    let distinct: std::collections::BTreeSet<&PathBuf> = roots.iter().collect();
    assert_eq!(distinct.len(), 100, "every run had its own scratch root");
    assert!(
        roots.iter().all(|r| !r.exists()),
        "every scratch root was removed"
    );
    for i in 0..100 {
        let report = std::fs::read_to_string(sandbox.ws(&format!("reports/run-{i}.md"))).unwrap();
        assert_eq!(report, format!("report for payload of run {i}"));
    }
    let staged = events
        .all()
        .iter()
        .filter(|e| matches!(e, FileEvent::Staged { .. }))
        .count();
    assert_eq!(staged, 100);
}

#[cfg(unix)]
#[test]
fn scratch_roots_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new("private");
    let handle = io(&[], &[("out", "out.txt")]);
    let events = Events::default();
    let (result, _) = run(&handle, &sandbox, "r", json!({}), &events, |root, _| {
        Ok(json!({ "mode": std::fs::metadata(root).unwrap().permissions().mode() & 0o777 }))
    });
    assert_eq!(result.unwrap()["mode"], 0o700);
}

// ---- Tools and cores with file contracts ------------------------------------------------

mod with_tools_and_cores {
    use super::*;
    use agentio_core::files::{DefinesIo, FsRoot};
    use agentio_core::{AgentContext, AgentCore, AgentInput, AgentOutput, AgentRuntime, define_io};
    use agentio_examples::files::SalesReportTool;
    use agentio_tools::{
        ApprovalDecision, ApprovalRequest, AuditLog, CallOptions, ToolContext, ToolError,
        ToolRegistry, TypedTool, tool,
    };
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    fn sales_registry(sandbox: &Sandbox, audit: Arc<AuditLog>) -> ToolRegistry {
        let approve = |_: &ApprovalRequest| ApprovalDecision::Approve;
        let mut registry = ToolRegistry::new()
            .with_workspace(sandbox.workspace.clone())
            .with_approver(Arc::new(approve))
            .with_audit_sink(audit);
        registry.register(SalesReportTool).unwrap();
        registry
    }

    #[test]
    fn a_tool_with_a_file_contract_is_staged_and_synced_by_the_registry() {
        let sandbox = Sandbox::new("tool-files");
        sandbox.write("data/sales.csv", "region,amount\nnorth,10\nsouth,5.5\n");
        let audit = Arc::new(AuditLog::default());
        let registry = sales_registry(&sandbox, audit.clone());
        let options = CallOptions {
            run_id: Some("t1".into()),
            ..CallOptions::default()
        };
        let input = json!({ "title": "Q3", "_workflowFsRoot": "/etc" });
        let out = runtime()
            .block_on(registry.call_with("sales.report", input, options))
            .unwrap();
        assert_eq!(out, json!({ "rows": 2, "total": 15.5 }));
        let report_path = format!("reports/{}/t1.md", agentio_core::files::today_utc());
        let report = std::fs::read_to_string(sandbox.ws(&report_path)).unwrap();
        assert!(report.starts_with("# Q3\n"), "{report}");
        let files = audit.records()[0].files.clone().unwrap();
        assert_eq!(files.staged[0].workspace_path, "data/sales.csv");
        assert_eq!(files.synced[0].workspace_path, report_path);
        assert_eq!(files.synced[0].sha256, sha256_hex(report.as_bytes()));
    }

    #[test]
    fn a_missing_input_file_stops_a_tool_call_before_its_body() {
        let sandbox = Sandbox::new("tool-missing");
        let registry = sales_registry(&sandbox, Arc::new(AuditLog::default()));
        let err = runtime()
            .block_on(registry.call("sales.report", json!({ "title": "Q3" })))
            .unwrap_err();
        assert_eq!(err.code(), &ErrorCode::NotFound);
        assert_eq!(
            err.message(),
            "input file `sales` (`data/sales.csv`) does not exist in the workspace"
        );
    }

    #[test]
    fn a_tool_with_files_needs_a_workspace() {
        let approve = |_: &ApprovalRequest| ApprovalDecision::Approve;
        let mut registry = ToolRegistry::new().with_approver(Arc::new(approve));
        registry.register(SalesReportTool).unwrap();
        let err = runtime()
            .block_on(registry.call("sales.report", json!({ "title": "x" })))
            .unwrap_err();
        assert_eq!(err.code(), &ErrorCode::Internal);
        assert!(err.operator_detail().unwrap().contains("with_workspace"));
    }

    #[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
    struct Text {
        text: String,
    }

    #[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
    #[serde(deny_unknown_fields)]
    struct Echo {
        text: String,
        #[serde(
            rename = "_workflowFsRoot",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        root: Option<FsRoot>,
    }

    struct Copier;

    /// Copies its staged input to its output.
    #[define_io(inputs = Echo, outputs = Text, inputs_files = { src => { path = "in.txt" } }, outputs_files = { dst => { path = "out/<toolId>.txt" } })]
    #[tool(id = "files.copy", mutates = ["workspace:/out"])]
    impl TypedTool for Copier {
        type Input = Echo;
        type Output = Text;

        async fn execute_typed(&self, input: Echo, _ctx: &ToolContext) -> Result<Text, ToolError> {
            let root = input.root.ok_or_else(|| ToolError::internal("no root"))?;
            std::fs::copy(root.file("src"), root.file("dst"))
                .map_err(|e| ToolError::internal(e.to_string()))?;
            Ok(Text { text: input.text })
        }
    }

    #[test]
    fn define_io_on_an_impl_typed_tool_block_gives_the_tool_its_file_contract() {
        assert!(Copier::file_contract().is_some());
        assert!(std::ptr::eq(
            Copier::file_contract().unwrap(),
            <Copier as DefinesIo>::io_handle()
        ));
        // The blocks carry the two types' schemas (the input's with the reserved root field,
        // which `Echo` declares itself).
        let handle = <Copier as DefinesIo>::io_handle();
        assert_eq!(handle.outputs(), Text::output_schema());
        assert_eq!(
            handle.inputs()["properties"]["text"],
            Echo::input_schema()["properties"]["text"]
        );
        assert_eq!(handle.inputs()["required"], json!(["text"]));
        let sandbox = Sandbox::new("impl-files");
        sandbox.write("in.txt", "hello");
        let approve = |_: &ApprovalRequest| ApprovalDecision::Approve;
        let mut registry = ToolRegistry::new()
            .with_workspace(sandbox.workspace.clone())
            .with_approver(Arc::new(approve));
        registry.register(Copier).unwrap();
        let out = runtime()
            .block_on(registry.call("files.copy", json!({ "text": "t" })))
            .unwrap();
        assert_eq!(out, json!({ "text": "t" }));
        assert_eq!(
            std::fs::read_to_string(sandbox.ws("out/files.copy.txt")).unwrap(),
            "hello"
        );
    }

    struct Archivist;

    #[define_io(inputs = Echo, outputs = Text, outputs_files = { archive => { path = "archive/<workflowId>-<runId>.txt" } })]
    impl AgentCore for Archivist {
        type Input = Echo;
        type Output = Text;

        fn core_type(&self) -> &str {
            "archivist"
        }

        async fn run_turn(
            &mut self,
            input: Echo,
            _ctx: &mut AgentContext,
        ) -> Result<Text, agentio_core::AgentError> {
            let root = input
                .root
                .ok_or_else(|| agentio_core::AgentError::internal("no root"))?;
            std::fs::write(root.file("archive"), &input.text)
                .map_err(|e| agentio_core::AgentError::internal(e.to_string()))?;
            Ok(Text {
                text: input.text.to_uppercase(),
            })
        }
    }

    #[test]
    fn a_core_with_a_file_contract_runs_under_it_in_the_agent_runtime() {
        let sandbox = Sandbox::new("core-files");
        let mut runtime_ = AgentRuntime::new(Archivist).with_file_contract(
            <Archivist as DefinesIo>::io_handle(),
            sandbox.workspace.clone(),
            None,
        );
        let mut ctx = runtime_.context("turn-1");
        let out = block_on(runtime_.run_turn_in(json!({ "text": "keep me" }), &mut ctx)).unwrap();
        assert_eq!(out, json!({ "text": "KEEP ME" }));
        assert_eq!(
            std::fs::read_to_string(sandbox.ws("archive/archivist-turn-1.txt")).unwrap(),
            "keep me"
        );
        let record = runtime_.last_file_record().unwrap();
        assert_eq!(record.synced[0].bytes, 7);
    }

    #[test]
    fn an_input_type_that_denies_unknown_fields_without_the_root_cannot_take_files() {
        #[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
        #[serde(deny_unknown_fields)]
        struct Closed {
            text: String,
        }
        // Checked at compile time: a wrong value fails the build of the test suite.
        const { assert!(!Closed::ACCEPTS_FS_ROOT) };
        const { assert!(Echo::ACCEPTS_FS_ROOT) };
        const { assert!(<Value as AgentInput>::ACCEPTS_FS_ROOT) };
    }
}
