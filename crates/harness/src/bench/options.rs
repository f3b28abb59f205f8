//! How to run a bench: the options of `gapbench bench`, as the library takes them.

use std::path::PathBuf;

/// How to run a bench.
#[derive(Debug, Clone, Default)]
pub struct BenchOptions {
    pub spec: PathBuf,
    /// Folder of the openb CSVs; `None` = `$GAPBENCH_TRACES`, else `../shared/traces/openb`
    /// when it exists, else (no traces anywhere) the embedded openb-like workload.
    pub traces_dir: Option<PathBuf>,
    /// Run the embedded openb-like workload in place of every trace, traces or not.
    pub stand_in: bool,
    /// Results folder; `None` = `results/<spec name>-<UTC date>`.
    pub out: Option<PathBuf>,
    /// Worker threads; `None` = all cores.
    pub jobs: Option<usize>,
    /// Run only cells `i` with `i % count == index` (0-based `index/count`).
    pub shard: Option<(usize, usize)>,
    pub progress: bool,
    /// The command line that reproduces the results, for the report.
    pub command: String,
}
