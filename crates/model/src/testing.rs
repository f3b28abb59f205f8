//! Helpers shared by tests and benchmarks: where the real openb traces are.

use std::path::PathBuf;

/// The folder of the real openb traces: `$GAPBENCH_TRACES`, else `../shared/traces/openb`
/// beside the workspace. Panics with a clear message when it is missing, because tests that
/// need the real data must not pass silently without it.
pub fn openb_traces_dir() -> PathBuf {
    let dir = match std::env::var_os("GAPBENCH_TRACES") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/openb"),
    };
    assert!(
        dir.join("openb_node_list_gpu_node.csv").is_file(),
        "the real openb traces are not at {} (set GAPBENCH_TRACES to their folder)",
        dir.display()
    );
    dir
}

/// The real grid carbon-intensity series (Electricity Maps, 2023): `../shared/carbon` beside
/// the workspace. Panics when missing, like [`openb_traces_dir`].
pub fn shared_carbon_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/carbon");
    assert!(
        dir.join("US-CAL-CISO_2023_hourly.csv").is_file(),
        "the real carbon-intensity series are not at {}",
        dir.display()
    );
    dir
}
