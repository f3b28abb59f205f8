//! The command a results folder records as the way to reproduce it (`matrix.json`, and the
//! report's "Reproduce" line): the bench as it ran, with the spec and inputs it used named
//! even when they were defaults ([`bench_command`]).
//!
//! A merged folder holds what one unsharded bench into that folder would have written, so it
//! records that bench: its shards' command without `--shard` and `--jobs` (neither changes a
//! number: cells are independent and deterministic on any thread count) and with the merged
//! folder as its `--out` (when the shards named theirs). Run unsharded with the same arguments, a bench records the same command,
//! so the two folders are byte-identical.

use std::path::Path;

use super::options::BenchOptions;

/// Where a bench's traces came from.
#[derive(Debug, Clone, Copy)]
pub enum TracesUsed<'a> {
    /// The spec names no trace (EaCO replays only).
    NoneNamed,
    /// The embedded openb-like workload stood in for every trace.
    StandIn,
    /// The openb CSVs of this folder.
    Folder(&'a Path),
}

/// The command that reproduces a bench as it ran: the program of the `typed` command line
/// (what precedes `bench`; `gapbench` when none is known), then every argument that decides
/// the results, whether typed or defaulted — the spec (`--quick` and no `--spec` pick one),
/// the traces folder (`$GAPBENCH_TRACES` or the default folder, when it was used) or
/// `--stand-in` (asked, or no traces found), and `--out` as typed. `--jobs` and `--shard`
/// are left out: neither changes a number.
pub fn bench_command(typed: &str, options: &BenchOptions, traces: TracesUsed) -> String {
    let words: Vec<&str> = typed.split_whitespace().collect();
    let program = match words.iter().position(|w| *w == "bench") {
        Some(at) => words[..=at].join(" "),
        None => "gapbench bench".to_string(),
    };
    let mut command = format!("{program} --spec {}", options.spec.display());
    match traces {
        TracesUsed::Folder(dir) => command.push_str(&format!(" --traces {}", dir.display())),
        TracesUsed::StandIn => command.push_str(" --stand-in"),
        TracesUsed::NoneNamed => {}
    }
    // Where the results go changes none of them: the folder as typed, if it was.
    let mut rest = words.iter();
    while let Some(word) = rest.next() {
        if *word == "--out" {
            if let Some(out) = rest.next() {
                command.push_str(&format!(" --out {out}"));
            }
        } else if word.starts_with("--out=") {
            command.push_str(&format!(" {word}"));
        }
    }
    command
}

/// `command` (a shard's `… bench …` command line) as the unsharded bench writing into `out`.
pub fn unsharded(command: &str, out: &Path) -> String {
    let out = out.display().to_string();
    let mut words = command.split_whitespace();
    let mut kept: Vec<String> = Vec::new();
    while let Some(word) = words.next() {
        match word {
            "--shard" | "--jobs" => {
                words.next();
            }
            "--out" => {
                words.next();
                kept.extend(["--out".to_string(), out.clone()]);
            }
            _ if word.starts_with("--shard=") || word.starts_with("--jobs=") => {}
            _ if word.starts_with("--out=") => {
                kept.push(format!("--out={out}"));
            }
            _ => kept.push(word.to_string()),
        }
    }
    kept.join(" ")
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{bench_command, unsharded, TracesUsed};
    use crate::bench::BenchOptions;

    #[test]
    fn the_recorded_command_names_the_spec_and_the_inputs_that_ran() {
        let options = BenchOptions {
            spec: PathBuf::from("my/spec.toml"),
            ..BenchOptions::default()
        };
        // `--quick`, `--jobs` and `--shard` typed; the traces came from the environment.
        assert_eq!(
            bench_command(
                "cargo xtask bench --quick --jobs 4 --shard 0/2 --out out",
                &options,
                TracesUsed::Folder(Path::new("/data/openb"))
            ),
            "cargo xtask bench --spec my/spec.toml --traces /data/openb --out out"
        );
        // The embedded workload stood in, unasked; the binary run directly.
        assert_eq!(
            bench_command("gapbench bench", &options, TracesUsed::StandIn),
            "gapbench bench --spec my/spec.toml --stand-in"
        );
        assert_eq!(
            bench_command("", &options, TracesUsed::NoneNamed),
            "gapbench bench --spec my/spec.toml"
        );
    }

    #[test]
    fn a_shards_command_becomes_the_unsharded_bench_into_the_merged_folder() {
        assert_eq!(
            unsharded(
                "cargo xtask bench --spec spec.toml --out shards/2 --shard 2/4 --jobs 1",
                Path::new("merged")
            ),
            "cargo xtask bench --spec spec.toml --out merged"
        );
        assert_eq!(
            unsharded(
                "cargo xtask bench --quick --shard=0/8 --jobs=4 --out=s0",
                Path::new("m")
            ),
            "cargo xtask bench --quick --out=m"
        );
        // Without --out the shards wrote to their default folder; so does the command.
        assert_eq!(
            unsharded("cargo xtask bench --quick --shard 1/2", Path::new("m")),
            "cargo xtask bench --quick"
        );
        // An unsharded command is kept as it is, but for its folder.
        assert_eq!(
            unsharded("cargo xtask bench --quick --out m", Path::new("m")),
            "cargo xtask bench --quick --out m"
        );
    }
}
