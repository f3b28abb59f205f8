//! How figures name their files and count their seeds: shared by every figure family, so it
//! sits below them all (the families never reach back into `figures`' own module).

use std::collections::BTreeSet;

/// The longest name piece [`file_safe`] keeps whole: a figure's file name joins a few
/// pieces and must stay within file systems' 255 bytes.
const FILE_PART_MAX: usize = 64;

/// Keeps file names portable: letters, digits, `-`, `_` and `.`; anything else becomes `_`.
/// A name longer than 64 characters keeps its first 55 and a hash of the whole (FNV-1a),
/// so names that differ still differ.
pub(crate) fn file_safe(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.len() <= FILE_PART_MAX {
        return safe;
    }
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{}-{:08x}", &safe[..FILE_PART_MAX - 9], hash as u32)
}

/// `3 seeds`, `1 seed`, `3–10 seeds`.
pub(crate) fn seeds_phrase(counts: &BTreeSet<u64>) -> String {
    match (counts.first(), counts.last()) {
        (Some(1), Some(1)) => "1 seed".to_string(),
        (Some(a), Some(b)) if a == b => format!("{a} seeds"),
        (Some(a), Some(b)) => format!("{a}–{b} seeds"),
        _ => "no seeds".to_string(),
    }
}
