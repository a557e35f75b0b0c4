//! File contracts under attack: concurrent symlink swaps, hard links, FIFOs, oversized and
//! sparse inputs, and outputs the contract's `mutates` does not cover.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::files::Sandbox;
use agentio_core::files::{
    FS_ROOT_FIELD, FileEntry, FileHost, FileRunRecord, IoDefinition, IoHandle, PathError, RunVars,
    define_io_handle, run_with_files,
};
use agentio_core::{AgentError, ErrorCode};
use pollster::block_on;
use serde_json::{Value, json};

fn handle(definition: IoDefinition) -> IoHandle {
    define_io_handle(definition).unwrap()
}

fn vars(run_id: &str) -> RunVars {
    RunVars {
        run_id: run_id.into(),
        unit_id: "unit".into(),
        iso_date: "2026-11-22".into(),
    }
}

fn run<B>(
    io: &IoHandle,
    host: FileHost<'_>,
    run_id: &str,
    body: B,
) -> (Result<Value, AgentError>, FileRunRecord)
where
    B: FnOnce(&Path) -> Result<Value, AgentError>,
{
    block_on(run_with_files(
        io,
        host,
        &vars(run_id),
        json!({}),
        |input: Value| {
            let root = PathBuf::from(input[FS_ROOT_FIELD].as_str().unwrap_or_default());
            let result = body(&root);
            async move { result }
        },
    ))
}

/// Swaps `folder` (a real folder) for a symlink to `target` and back, as fast as it can, until
/// told to stop. Returns how many swaps it made.
#[cfg(unix)]
fn swapper(
    folder: PathBuf,
    target: PathBuf,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let parked = folder.with_extension("parked");
        let mut swaps = 0;
        while !stop.load(Ordering::Relaxed) {
            if std::fs::rename(&folder, &parked).is_ok() {
                let _ = std::os::unix::fs::symlink(&target, &folder);
                std::thread::yield_now();
                let _ = std::fs::remove_file(&folder);
                // A run may have created a real folder in the gap; keep whichever is there.
                if std::fs::rename(&parked, &folder).is_err() {
                    let _ = std::fs::remove_dir_all(&parked);
                }
                swaps += 1;
            } else {
                let _ = std::fs::create_dir_all(&folder);
            }
        }
        swaps
    })
}

/// Output sync race (hardening finding): while another thread swaps `reports/` for a symlink
/// to a folder outside, no synced output may land outside. Thousands of runs, zero escapes.
#[cfg(unix)]
#[test]
fn an_output_sync_racing_a_symlink_swap_never_writes_outside() {
    let sandbox = Sandbox::new("sync-race");
    std::fs::create_dir_all(sandbox.ws("reports")).unwrap();
    let before = sandbox.outside_snapshot();
    let io =
        handle(IoDefinition::default().output_file("out", FileEntry::new("reports/<runId>.txt")));
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = swapper(sandbox.ws("reports"), sandbox.outside(), stop.clone());
    let synced = AtomicUsize::new(0);
    let runs = 5000;
    for i in 0..runs {
        let host = FileHost::new(&sandbox.workspace);
        let (result, record) = run(&io, host, &format!("r{i}"), |root| {
            std::fs::write(root.join("out"), "payload").unwrap();
            Ok(json!({}))
        });
        assert!(result.is_ok());
        synced.fetch_add(record.synced.len(), Ordering::Relaxed);
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swaps.join().unwrap();
    assert!(swaps >= 100, "the swapper made only {swaps} swaps");
    assert_eq!(
        sandbox.outside_snapshot(),
        before,
        "outputs escaped the workspace ({swaps} swaps, {} synced)",
        synced.load(Ordering::Relaxed)
    );
}

/// Input staging race: while `data/` is swapped for a symlink to an outside folder holding a
/// file of the same name, a body never receives the outside file's bytes.
#[cfg(unix)]
#[test]
fn an_input_staging_racing_a_symlink_swap_never_reads_outside() {
    let sandbox = Sandbox::new("stage-race");
    std::fs::create_dir_all(sandbox.ws("data")).unwrap();
    std::fs::write(sandbox.ws("data/in.txt"), "inside").unwrap();
    std::fs::write(sandbox.outside().join("in.txt"), "SECRET").unwrap();
    let io = handle(IoDefinition::default().input_file("in", FileEntry::new("data/in.txt")));
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = swapper(sandbox.ws("data"), sandbox.outside(), stop.clone());
    let (mut staged, mut refused) = (0, 0);
    for i in 0..3000 {
        let host = FileHost::new(&sandbox.workspace);
        let (result, _) = run(&io, host, &format!("r{i}"), |root| {
            Ok(json!(std::fs::read_to_string(root.join("in")).unwrap()))
        });
        match result {
            Ok(content) => {
                assert_eq!(content, json!("inside"), "run {i} staged an outside file");
                staged += 1;
            }
            Err(err) => {
                assert!(
                    matches!(err.code(), ErrorCode::InputInvalid | ErrorCode::NotFound),
                    "{err}"
                );
                refused += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swaps.join().unwrap();
    assert!(swaps >= 100, "the swapper made only {swaps} swaps");
    assert!(
        staged > 0 && staged + refused == 3000,
        "{staged} staged, {refused} refused"
    );
}

/// A folder created concurrently by another run (the walk finds it exists) is used; one
/// planted as a symlink to the outside is refused.
#[cfg(unix)]
#[test]
fn a_folder_that_appears_concurrently_is_used_and_a_planted_link_is_refused() {
    let sandbox = Sandbox::new("concurrent-create");
    let before = sandbox.outside_snapshot();
    let workspace = &sandbox.workspace;
    std::thread::scope(|scope| {
        for t in 0..8 {
            scope.spawn(move || {
                for i in 0..50 {
                    let path = format!("shared/deep/{t}-{i}.txt");
                    let (bytes, _) = workspace
                        .write_file(&path, &mut "x".as_bytes())
                        .unwrap_or_else(|e| panic!("{path}: {e}"));
                    assert_eq!(bytes, 1);
                }
            });
        }
    });
    assert_eq!(
        std::fs::read_dir(sandbox.ws("shared/deep"))
            .unwrap()
            .count(),
        400
    );
    std::os::unix::fs::symlink(sandbox.outside(), sandbox.ws("planted")).unwrap();
    let err = workspace
        .write_file("planted/x.txt", &mut "x".as_bytes())
        .unwrap_err();
    assert!(err.to_string().contains("outside the workspace"), "{err}");
    assert_eq!(sandbox.outside_snapshot(), before);
}

/// A workspace file hard-linked to a file outside is refused as an input, unless the host opts
/// in; the run never starts.
#[cfg(unix)]
#[test]
fn a_hard_linked_input_is_refused_unless_the_host_allows_it() {
    let sandbox = Sandbox::new("hard-link");
    std::fs::write(sandbox.outside().join("secret.txt"), "SECRET").unwrap();
    std::fs::hard_link(
        sandbox.outside().join("secret.txt"),
        sandbox.ws("linked.txt"),
    )
    .unwrap();
    let io = handle(IoDefinition::default().input_file("in", FileEntry::new("linked.txt")));
    let (result, record) = run(&io, FileHost::new(&sandbox.workspace), "r", |_| {
        panic!("the body must not run")
    });
    let err = result.unwrap_err();
    assert_eq!(err.code(), &ErrorCode::InputInvalid);
    assert!(
        err.message().contains("more than one hard link"),
        "{}",
        err.message()
    );
    assert_eq!(err.violations()[0].pointer, "/inputsFiles/in/path");
    assert!(record.staged.is_empty());

    let trusting = sandbox.workspace.clone().allow_hard_links(true);
    let (result, _) = run(&io, FileHost::new(&trusting), "r", |root| {
        Ok(json!(std::fs::read_to_string(root.join("in")).unwrap()))
    });
    assert_eq!(result.unwrap(), json!("SECRET"));
}

/// A body that hard-links a file into its scratch root does not get it synced.
#[cfg(unix)]
#[test]
fn a_hard_linked_scratch_output_is_not_synced() {
    let sandbox = Sandbox::new("hard-link-out");
    std::fs::write(sandbox.outside().join("secret.txt"), "SECRET").unwrap();
    let outside = sandbox.outside().join("secret.txt");
    let io = handle(IoDefinition::default().output_file("out", FileEntry::new("copied.txt")));
    let (result, record) = run(&io, FileHost::new(&sandbox.workspace), "r", move |root| {
        std::fs::hard_link(&outside, root.join("out")).unwrap();
        Ok(json!({}))
    });
    assert!(result.is_ok());
    assert!(record.synced.is_empty());
    assert!(
        record.warnings[0].contains("more than one hard link"),
        "{:?}",
        record.warnings
    );
    assert!(!sandbox.ws("copied.txt").exists());
}

/// A FIFO in the workspace is refused at once (opening it for reading would block).
#[cfg(unix)]
#[test]
fn a_fifo_input_is_refused_without_blocking() {
    let sandbox = Sandbox::new("fifo");
    rustix_mkfifo(&sandbox.ws("pipe"));
    let io = handle(IoDefinition::default().input_file("in", FileEntry::new("pipe")));
    let (result, _) = run(&io, FileHost::new(&sandbox.workspace), "r", |_| {
        panic!("the body must not run")
    });
    let err = result.unwrap_err();
    assert!(
        err.message().contains("not a regular file"),
        "{}",
        err.message()
    );
}

#[cfg(unix)]
fn rustix_mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Input files over the host limit, or the contract's own, are refused before any byte is
/// copied; a sparse file is measured by its size, so it is refused at once, not copied.
#[test]
fn oversized_and_sparse_inputs_are_refused_before_copying() {
    let sandbox = Sandbox::new("sizes");
    std::fs::write(sandbox.ws("small.txt"), "0123456789").unwrap();
    let sparse = std::fs::File::create(sandbox.ws("sparse.bin")).unwrap();
    sparse.set_len(64 * 1024 * 1024 * 1024).unwrap();

    // The host limit (default 256 MiB) refuses the 64 GiB sparse file without reading it.
    let io = handle(IoDefinition::default().input_file("in", FileEntry::new("sparse.bin")));
    let (result, record) = run(&io, FileHost::new(&sandbox.workspace), "r", |_| {
        panic!("the body must not run")
    });
    let err = result.unwrap_err();
    assert_eq!(err.code(), &ErrorCode::InputInvalid);
    assert!(
        err.message()
            .contains("68719476736 bytes, over the limit of 268435456 bytes"),
        "{}",
        err.message()
    );
    assert!(record.staged.is_empty());

    // A host limit of 9 bytes refuses a 10-byte file; 10 accepts it.
    let io = handle(IoDefinition::default().input_file("in", FileEntry::new("small.txt")));
    let strict = sandbox.workspace.clone().with_max_input_bytes(9);
    let (result, _) = run(&io, FileHost::new(&strict), "r", |_| panic!("must not run"));
    assert!(
        result
            .unwrap_err()
            .message()
            .contains("10 bytes, over the limit of 9 bytes")
    );
    let exact = sandbox.workspace.clone().with_max_input_bytes(10);
    let (result, record) = run(&io, FileHost::new(&exact), "r", |_| Ok(json!({})));
    assert!(result.is_ok());
    assert_eq!(record.staged[0].bytes, 10);

    // The contract's own limit applies under a generous host limit.
    let io = handle(
        IoDefinition::default()
            .input_file("in", FileEntry::new("small.txt"))
            .max_input_bytes(4),
    );
    let (result, _) = run(&io, FileHost::new(&sandbox.workspace), "r", |_| {
        panic!("must not run")
    });
    let err = result.unwrap_err();
    assert!(
        err.message()
            .contains("10 bytes, over the limit of 4 bytes"),
        "{}",
        err.message()
    );
    assert!(matches!(
        sandbox.workspace.open_input("sparse.bin"),
        Err(PathError::TooLarge {
            bytes: 68_719_476_736,
            limit: 268_435_456
        })
    ));
}

/// A declared output file is a workspace mutation: a host that knows the unit's `mutates`
/// syncs only covered paths; `workspace:/journal/*` covers files in `journal/`.
#[test]
fn synced_outputs_must_be_covered_by_the_contract_mutates() {
    let sandbox = Sandbox::new("mutates");
    let io = handle(
        IoDefinition::default()
            .output_file("entry", FileEntry::new("journal/<isoDate>.md"))
            .output_file("stray", FileEntry::new("elsewhere/x.md")),
    );
    let mutates = vec!["workspace:/journal/*".to_owned()];
    let host = FileHost::new(&sandbox.workspace).with_mutates(&mutates);
    let (result, record) = run(&io, host, "r", |root| {
        std::fs::write(root.join("entry"), "dear diary").unwrap();
        std::fs::write(root.join("stray"), "nope").unwrap();
        Ok(json!({}))
    });
    assert!(result.is_ok());
    assert_eq!(record.synced.len(), 1);
    assert_eq!(record.synced[0].workspace_path, "journal/2026-11-22.md");
    assert_eq!(
        std::fs::read_to_string(sandbox.ws("journal/2026-11-22.md")).unwrap(),
        "dear diary"
    );
    assert!(!sandbox.ws("elsewhere/x.md").exists());
    assert_eq!(
        record.warnings,
        [
            "output `stray` was not synced: `workspace:/elsewhere/x.md` is not covered by the contract's `mutates`; declare it to write there"
        ]
    );

    // No `mutates` at all: nothing is synced.
    let none: Vec<String> = Vec::new();
    let host = FileHost::new(&sandbox.workspace).with_mutates(&none);
    let (_, record) = run(&io, host, "r2", |root| {
        std::fs::write(root.join("entry"), "x").unwrap();
        Ok(json!({}))
    });
    assert!(record.synced.is_empty(), "{record:?}");
}

/// A symlink at the target is replaced by the new file, never written through; a folder at
/// the target is refused.
#[cfg(unix)]
#[test]
fn writes_replace_nothing_outside_and_refuse_folders() {
    let sandbox = Sandbox::new("targets");
    std::fs::create_dir_all(sandbox.ws("adir")).unwrap();
    let err = sandbox
        .workspace
        .write_file("adir", &mut "x".as_bytes())
        .unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
    // A path that names a folder (found by the fuzzer: `link/` wrote a file named `link`).
    for folder in ["fresh/", "fresh/.", "."] {
        let err = sandbox
            .workspace
            .write_file(folder, &mut "x".as_bytes())
            .unwrap_err();
        assert!(
            err.to_string().contains("names a folder"),
            "{folder}: {err}"
        );
    }
    let (bytes, sha) = sandbox
        .workspace
        .write_file("fresh/new.txt", &mut "abc".as_bytes())
        .unwrap();
    assert_eq!(bytes, 3);
    assert_eq!(
        sha,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    // No temporary files are left beside it.
    let names: Vec<_> = std::fs::read_dir(sandbox.ws("fresh"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["new.txt"]);
}

/// A hand-built tool whose declared output files are not covered by its `mutates` is refused
/// at registration, with a pointer to each uncovered output.
#[test]
fn registration_refuses_output_files_the_contract_does_not_declare_as_mutations() {
    use agentio_core::BoxFuture;
    use agentio_tools::{ToolContext, ToolContract, ToolError, ToolPlugin, ToolRegistry};

    struct Writer {
        mutates: Vec<String>,
    }
    impl ToolPlugin for Writer {
        fn tool_contract(&self) -> ToolContract {
            let mut contract = ToolContract::new(
                "notes.write",
                "1.0.0",
                "Writes notes.",
                json!({ "type": "object" }),
                json!({ "type": "object" }),
            );
            contract.mutates = self.mutates.clone();
            contract.approval = agentio_tools::Approval::default_for(&contract.mutates);
            contract
        }
        fn file_contract(&self) -> Option<&'static IoHandle> {
            static IO: std::sync::OnceLock<IoHandle> = std::sync::OnceLock::new();
            Some(IO.get_or_init(|| {
                handle(
                    IoDefinition::default()
                        .output_file("entry", FileEntry::new("journal/<runId>.md"))
                        .output_file("index", FileEntry::new("index.md")),
                )
            }))
        }
        fn execute<'a>(
            &'a self,
            _: Value,
            _: &'a ToolContext,
        ) -> BoxFuture<'a, Result<Value, ToolError>> {
            Box::pin(async { Ok(json!({})) })
        }
    }

    let mut registry = ToolRegistry::new();
    let err = registry
        .register_plugin(Arc::new(Writer { mutates: vec![] }))
        .unwrap_err();
    let pointers: Vec<&str> = err.problems.iter().map(|p| p.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        ["/outputsFiles/entry/path", "/outputsFiles/index/path"]
    );
    assert!(
        err.problems[0]
            .message
            .contains("no `mutates` entry covers"),
        "{err}"
    );

    let err = registry
        .register_plugin(Arc::new(Writer {
            mutates: vec!["workspace:/journal/*".into()],
        }))
        .unwrap_err();
    let pointers: Vec<&str> = err.problems.iter().map(|p| p.pointer.as_str()).collect();
    assert_eq!(pointers, ["/outputsFiles/index/path"]);

    registry
        .register_plugin(Arc::new(Writer {
            mutates: vec!["workspace:/journal/*".into(), "workspace:/index.md".into()],
        }))
        .unwrap();
}

/// `#[define_io(max_input_bytes = N)]` sets the contract's own limit.
#[test]
fn define_io_sets_a_per_contract_input_limit() {
    #[derive(
        serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput,
    )]
    struct In {
        #[serde(
            rename = "_workflowFsRoot",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        root: Option<String>,
    }
    #[derive(
        serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentOutput,
    )]
    struct Out {}
    #[agentio_core::define_io(inputs = In, outputs = Out, inputs_files = { data => { path = "big.bin" } }, max_input_bytes = 8)]
    struct Limited;

    let io = <Limited as agentio_core::files::DefinesIo>::io_handle();
    assert_eq!(io.max_input_bytes(), Some(8));
    let sandbox = Sandbox::new("macro-limit");
    std::fs::write(sandbox.ws("big.bin"), "123456789").unwrap();
    let (result, _) = run(io, FileHost::new(&sandbox.workspace), "r", |_| {
        panic!("must not run")
    });
    let err = result.unwrap_err();
    assert!(
        err.message().contains("9 bytes, over the limit of 8 bytes"),
        "{}",
        err.message()
    );
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput)]
struct CopyIn {
    #[serde(
        rename = "_workflowFsRoot",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    root: Option<agentio_core::files::FsRoot>,
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentOutput)]
struct CopyOut {
    copied: bool,
}

/// Copies its input file to its output file.
#[agentio_tools::tool(id = "files.copy-under", mutates = ["workspace:/out"])]
#[agentio_core::define_io(inputs = CopyIn, outputs = CopyOut, inputs_files = { src => { path = "in.txt" } }, outputs_files = { dst => { path = "out/copy.txt" } })]
async fn copy_under(input: CopyIn) -> Result<CopyOut, agentio_tools::ToolError> {
    let root = input
        .root
        .ok_or_else(|| agentio_tools::ToolError::internal("no root"))?;
    std::fs::copy(root.file("src"), root.file("dst"))
        .map_err(|e| agentio_tools::ToolError::internal(e.to_string()))?;
    Ok(CopyOut { copied: true })
}

/// `#[tool]` written above `#[define_io]` used to compile and drop the file contract, so the
/// body got no root. Both orders give the tool its files.
#[test]
fn tool_above_define_io_keeps_the_file_contract() {
    use agentio_tools::TypedTool;
    assert!(CopyUnderTool::file_contract().is_some());
    let sandbox = Sandbox::new("tool-above");
    sandbox.write("in.txt", "payload");
    let approve = |_: &agentio_tools::ApprovalRequest| agentio_tools::ApprovalDecision::Approve;
    let mut registry = agentio_tools::ToolRegistry::new()
        .with_workspace(sandbox.workspace.clone())
        .with_approver(Arc::new(approve));
    registry.register(CopyUnderTool).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let out = runtime
        .block_on(registry.call("files.copy-under", json!({})))
        .unwrap();
    assert_eq!(out, json!({ "copied": true }));
    assert_eq!(
        std::fs::read_to_string(sandbox.ws("out/copy.txt")).unwrap(),
        "payload"
    );
}

/// Found by mutation testing: an existing output is replaced, a path beneath a regular file is
/// "not a folder" (not an escape), and reading beneath a regular file finds nothing.
#[test]
fn existing_targets_are_replaced_and_files_are_not_folders() {
    let sandbox = Sandbox::new("replace");
    let workspace = &sandbox.workspace;
    workspace
        .write_file("out/report.md", &mut "first".as_bytes())
        .unwrap();
    workspace
        .write_file("out/report.md", &mut "second".as_bytes())
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(sandbox.ws("out/report.md")).unwrap(),
        "second"
    );

    sandbox.write("notes.txt", "a file, not a folder");
    for beneath in ["notes.txt/inner.md", "notes.txt/deeper/inner.md"] {
        let err = workspace
            .write_file(beneath, &mut "x".as_bytes())
            .unwrap_err();
        assert!(
            matches!(
                err,
                agentio_core::files::WriteError::Path(PathError::NotRegularFile)
            ),
            "{beneath}: {err:?}"
        );
    }
    assert!(matches!(
        workspace.open_input("notes.txt/inner.md"),
        Ok(None)
    ));
    // A real folder on the way is fine; a symlink leading out is an escape.
    std::fs::create_dir_all(sandbox.ws("real/dir")).unwrap();
    assert!(
        workspace
            .write_file("real/dir/x.md", &mut "x".as_bytes())
            .is_ok()
    );
}
