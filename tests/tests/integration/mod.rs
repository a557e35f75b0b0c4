//! Integration tests of agent-io: the derives, the runtime, tools, files, exports and skills.

mod call_json;
mod call_options;
mod erased;
mod exports;
mod file_hardening;
mod files;
mod hostile;
mod hygiene;
mod pinned;
mod rules;
mod skills;
mod soundness;
mod tool_macro;
mod tools;
mod trust;
