//! File contracts (AIP-16): declared files staged into a private scratch root before a run and
//! synced back after it, with every path kept inside the workspace.
//!
//! - [`define_io_handle`] / [`IoHandle`]: the four IO blocks in canonical form (`#[define_io]`
//!   builds one from Rust types at compile time).
//! - [`Workspace`]: descriptor-relative reads and writes beneath the workspace root that refuse
//!   `..`, absolute paths, NUL bytes, symlinks that lead out (even when swapped in while a run
//!   is under way), hard-linked inputs, non-regular files, oversized inputs, and interpolated
//!   values that would lead out.
//! - [`run_with_files`]: the host lifecycle, with attestation ([`FileRunRecord`]) and events
//!   ([`FileObserver`]).
//!
//! Decisions: outputs are synced whether the body succeeds or fails (the adapter guide); a key
//! is a plain file name; workspace paths refuse `\\` as well as `/`-separated `..`, so a manifest
//! means the same on every host; synced outputs must be regular files inside the scratch root
//! (a body cannot export `/etc/passwd` by linking to it, symbolically or hard); writes go through
//! a temporary file and a rename in the parent folder's descriptor, which never follows a
//! symlink at the target; a declared output file is a workspace mutation, so a tool's
//! `outputsFiles` must be covered by its `mutates` (checked by `#[define_io]` at compile time,
//! by the registry at registration, and by the host at sync).
//!
//! # AIP-16 clauses and the tests that hold them
//!
#![doc = include_str!("../../FILE_CLAUSES.md")]

mod handle;
mod lifecycle;
mod mutates;
mod path;

pub(crate) use handle::build_io;
pub use handle::{
    FS_ROOT_FIELD, FileEntry, FileMode, FsRoot, IoDefinition, IoDefinitionError, IoHandle,
    define_io_handle, refuse_caller_fs_root,
};
pub use lifecycle::{FileEvent, FileHost, FileObserver, FileRecord, FileRunRecord, run_with_files};
pub use mutates::{MUTATION_CLASSES, covers_workspace_path, mutation_covers};
pub use path::{
    DEFAULT_MAX_INPUT_BYTES, MAX_COMPONENT_BYTES, MAX_KEY_BYTES, MAX_PATH_BYTES, OpenedInput,
    PathError, RunVars, TOKENS, Workspace, WriteError, check_key, check_relative, check_template,
    interpolate, today_utc,
};

/// A type that declares IO blocks with `#[define_io(...)]`.
pub trait DefinesIo {
    /// The structured input type.
    type Input: crate::AgentInput;
    /// The structured output type.
    type Output: crate::AgentOutput;

    /// The handle, built once.
    fn io_handle() -> &'static IoHandle;
}
