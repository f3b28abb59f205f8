//! What the `highs` crate's safe API leaves out, from HiGHS's C API: which HiGHS this binary
//! runs, for result manifests (the library may be the one built from source, 1.15.0 bundled
//! with highs-sys, or a system one found by pkg-config at build time and linked
//! dynamically, so the version is asked of the library itself at run time), and a time
//! limit that holds for one solve of a model solved again and again; and the HiGHS run
//! every formulation shares (`gapbench_bounds` builds its own models on it).

pub use crate::solve::{run_highs, RawSolve, RawStatus};

use crate::error::SolveError;

/// Sets `model`'s `time_limit` option for its next solve (at least 10 ms).
///
/// HiGHS 1.x compares `time_limit` with the run time of every solve of the same instance
/// added up (HiGHS issues #1331 and #1477; to change in 2.0): a master LP re-solved after
/// every pricing round or dive fixing would see a limit of a few seconds reached at once
/// after enough cheap solves, and report `ReachedTimeLimit` without solving. So HiGHS's
/// clocks are zeroed first (`Highs_zeroAllClocks`, the C API's own work-around).
#[allow(unsafe_code)]
pub fn set_time_limit(model: &mut highs::Model, seconds: f64) -> Result<(), SolveError> {
    // SAFETY: `as_mut_ptr` is the live HiGHS instance `model` owns; zeroing its clocks
    // touches nothing else.
    unsafe {
        highs_sys::Highs_zeroAllClocks(model.as_mut_ptr());
    }
    model
        .try_set_option("time_limit", seconds.max(0.01))
        .map_err(|e| SolveError::Solver(format!("HiGHS option time_limit: {e:?}")))
}

/// The linked HiGHS's version, `major.minor.patch` (e.g. `1.15.1`), from its C API.
#[allow(unsafe_code)]
pub fn highs_version() -> String {
    // SAFETY: the three functions take no arguments, touch no state and return constants
    // compiled into the library.
    let (major, minor, patch) = unsafe {
        (
            highs_sys::Highs_versionMajor(),
            highs_sys::Highs_versionMinor(),
            highs_sys::Highs_versionPatch(),
        )
    };
    format!("{major}.{minor}.{patch}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HiGHS's run time of `model` so far, as its limit sees it.
    #[allow(unsafe_code)]
    fn run_time_s(model: &highs::Model) -> f64 {
        // SAFETY: reads a clock of the live instance `model` owns.
        unsafe { highs_sys::Highs_getRunTime(model.as_ptr()) }
    }

    /// A model solved again keeps the run time of its earlier solves unless its clocks are
    /// zeroed: with HiGHS 1.x's cumulative limit, 100 solves of a few ms each would hit a
    /// limit of a few hundred ms; with `set_time_limit` each solve starts from zero.
    #[test]
    fn a_time_limit_holds_for_one_solve() {
        let mut problem = highs::RowProblem::default();
        let x = problem.add_column(1.0, 0.0..);
        let y = problem.add_column(2.0, 0.0..);
        problem.add_row(1.0.., [(x, 1.0), (y, 1.0)]);
        let mut model = highs::Model::new(problem);
        model.make_quiet();
        for _ in 0..20 {
            let solved = model.solve();
            assert_eq!(solved.status(), highs::HighsModelStatus::Optimal);
            model = highs::Model::from(solved);
        }
        let cumulative = run_time_s(&model);
        assert!(cumulative > 0.0, "HiGHS counted no run time: {cumulative}");
        set_time_limit(&mut model, 1.0).unwrap();
        assert!(
            run_time_s(&model) < cumulative,
            "zeroed: {} s, before: {cumulative} s",
            run_time_s(&model)
        );
        let solved = model.solve();
        assert_eq!(solved.status(), highs::HighsModelStatus::Optimal);
    }

    /// The library the binary runs is the one whose headers the bindings were generated from
    /// (`HConfig.h`'s version macros, bound as constants): a dynamically linked HiGHS swapped
    /// after the build would fail here.
    #[test]
    fn runs_the_version_it_was_built_against() {
        let built_against = format!(
            "{}.{}.{}",
            highs_sys::HIGHS_VERSION_MAJOR,
            highs_sys::HIGHS_VERSION_MINOR,
            highs_sys::HIGHS_VERSION_PATCH
        );
        assert_eq!(highs_version(), built_against);
        assert!(highs_version().starts_with("1."), "{}", highs_version());
    }
}
