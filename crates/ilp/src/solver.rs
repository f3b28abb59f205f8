//! Which HiGHS this binary runs, for result manifests: the library may be the one built from
//! source (1.15.0, bundled with highs-sys) or a system one found by pkg-config at build time
//! and linked dynamically, so the version is asked of the library itself at run time.

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
