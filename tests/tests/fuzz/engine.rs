//! A small mutation fuzzer that runs under `cargo test` on stable Rust: no coverage feedback,
//! a checked-in corpus per target, structure-blind mutations plus a dictionary of the tokens
//! each format cares about, and a time budget.
//!
//! - `AGENT_IO_FUZZ_SECONDS` (default 1, fractions allowed): how long each target runs after its
//!   corpus.
//! - `AGENT_IO_FUZZ_SEED`: a seed to replay a run (each run prints the seed it used).
//!
//! Before each execution the input is written to `target/fuzz/current-<target>`, so an abort
//! (a stack overflow cannot be caught) leaves its reproducer behind; a panic or an execution
//! slower than [`HANG`] is saved under `target/fuzz/findings/<target>/` and fails the test.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One execution slower than this is a finding (a hang, or time that grows with the input).
pub(crate) const HANG: Duration = Duration::from_secs(10);

pub(crate) struct Target<'a> {
    pub(crate) name: &'a str,
    /// Tokens the mutator inserts (format keywords, hostile characters).
    pub(crate) dictionary: &'a [&'a [u8]],
    /// The largest input tried, in bytes.
    pub(crate) max_len: usize,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../target"))
        .join("fuzz")
}

/// The checked-in corpus of a target, in file-name order.
pub(crate) fn corpus(name: &str) -> Vec<Vec<u8>> {
    let dir = root().join("fuzz/corpus").join(name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let inputs: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert!(!inputs.is_empty(), "the corpus of `{name}` is empty");
    inputs
}

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, corpus: &[Vec<u8>], target: &Target<'_>) {
    for _ in 0..=rng.below(4) {
        let len = input.len();
        match rng.below(9) {
            0 if len > 0 => {
                let at = rng.below(len);
                input[at] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let at = rng.below(len);
                input[at] = rng.next() as u8;
            }
            2 => {
                let at = rng.below(len + 1);
                input.insert(at, rng.next() as u8);
            }
            3 if len > 0 => {
                let from = rng.below(len);
                let to = (from + 1 + rng.below(16)).min(len);
                input.drain(from..to);
            }
            4 | 5 if !target.dictionary.is_empty() => {
                let token = target.dictionary[rng.below(target.dictionary.len())];
                let at = rng.below(len + 1);
                input.splice(at..at, token.iter().copied());
            }
            6 if len > 0 => {
                // Repeat a chunk: long runs find size and nesting limits.
                let from = rng.below(len);
                let to = (from + 1 + rng.below(8)).min(len);
                let chunk = input[from..to].to_vec();
                let most = if rng.below(8) == 0 { 4096 } else { 16 };
                let times = 1 + rng.below(most);
                let at = rng.below(len + 1);
                let repeated: Vec<u8> = chunk
                    .iter()
                    .copied()
                    .cycle()
                    .take(chunk.len() * times)
                    .collect();
                input.splice(at..at, repeated);
            }
            7 => {
                // Splice in part of another corpus entry.
                let other = &corpus[rng.below(corpus.len())];
                if !other.is_empty() {
                    let from = rng.below(other.len());
                    let to = (from + 1 + rng.below(64)).min(other.len());
                    let at = rng.below(len + 1);
                    input.splice(at..at, other[from..to].iter().copied());
                }
            }
            _ if len > 1 => {
                // Swap two bytes.
                let (a, b) = (rng.below(len), rng.below(len));
                input.swap(a, b);
            }
            _ => input.push(rng.next() as u8),
        }
    }
    input.truncate(target.max_len);
}

/// The budget of each target after its corpus under a plain `cargo test`: a smoke run that
/// keeps the suite quick on two cores. `.ci/run` gives each target longer (`AGENT_IO_FUZZ_SECONDS`).
const DEFAULT_SECONDS: f64 = 1.0;

/// Runs `check` on the corpus, then on mutated inputs until the time budget is spent.
/// Returns how many inputs ran.
pub(crate) fn fuzz(target: Target<'_>, check: impl Fn(&[u8])) -> usize {
    let seconds: f64 = std::env::var("AGENT_IO_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|s: &f64| s.is_finite() && *s >= 0.0)
        .unwrap_or(DEFAULT_SECONDS);
    let seed: u64 = std::env::var("AGENT_IO_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    eprintln!("fuzz {}: seed {seed}, {seconds} s", target.name);
    let corpus = corpus(target.name);
    let out = target_dir();
    let _ = std::fs::create_dir_all(&out);
    let current = out.join(format!("current-{}", target.name));
    let mut rng = Rng(seed);
    let mut runs = 0usize;
    let mut findings = Vec::new();
    let run_one = |input: &[u8], findings: &mut Vec<String>| {
        let _ = std::fs::write(&current, input);
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| check(input)));
        let elapsed = started.elapsed();
        let problem = match outcome {
            Err(_) => Some("panicked".to_owned()),
            Ok(()) if elapsed > HANG => Some(format!("took {elapsed:?}")),
            Ok(()) => None,
        };
        if let Some(problem) = problem {
            let dir = out.join("findings").join(target.name);
            let _ = std::fs::create_dir_all(&dir);
            let file = dir.join(format!("{:016x}", fxhash(input)));
            let _ = std::fs::write(&file, input);
            findings.push(format!("{problem}: {}", file.display()));
        }
    };
    for input in &corpus {
        run_one(input, &mut findings);
        runs += 1;
    }
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    while Instant::now() < deadline && findings.len() < 8 {
        let mut input = corpus[rng.below(corpus.len())].clone();
        mutate(&mut rng, &mut input, &corpus, &target);
        run_one(&input, &mut findings);
        runs += 1;
    }
    let _ = std::fs::remove_file(&current);
    eprintln!("fuzz {}: {runs} inputs", target.name);
    assert!(
        findings.is_empty(),
        "fuzz {} (seed {seed}) found:\n  {}\nAdd each reproducer to tests/fuzz/corpus/{}/ once fixed.",
        target.name,
        findings.join("\n  "),
        target.name
    );
    runs
}

fn fxhash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}
