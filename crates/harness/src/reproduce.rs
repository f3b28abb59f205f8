//! The command a results folder records as the way to reproduce it (`matrix.json`, and the
//! report's "Reproduce" line).
//!
//! A merged folder holds what one unsharded bench into that folder would have written, so it
//! records that bench: its shards' command without `--shard` and `--jobs` (neither changes a
//! number: cells are independent and deterministic on any thread count) and with the merged
//! folder as its `--out` (when the shards named theirs). Run unsharded with the same arguments, a bench records the same command,
//! so the two folders are byte-identical.

use std::path::Path;

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
    use std::path::Path;

    use super::unsharded;

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
