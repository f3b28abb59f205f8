//! One colour and marker per policy, the same in every figure and every results folder: the
//! built-in policies and the shipped specs' mixes keep fixed ones, and any other name (a new
//! policy, an expression, a time-mode policy) gets its own from a hash of the name, so it
//! looks the same wherever it appears. Only when two such names of one folder hash to the
//! same style does the later one (in natural order) take the next free style.

use std::collections::{BTreeMap, BTreeSet};

use plotters::prelude::*;

use super::*;

/// A colour mixed with white: `amount` 0 keeps it, 1 gives white.
pub(crate) fn lighten(colour: RGBColor, amount: f64) -> RGBColor {
    let mix = |c: u8| (f64::from(c) + (255.0 - f64::from(c)) * amount).round() as u8;
    RGBColor(mix(colour.0), mix(colour.1), mix(colour.2))
}

/// Fixed colours of the canonical policies, in legend order.
pub(crate) const CANONICAL_POLICIES: [(&str, RGBColor); 7] = [
    ("random", RGBColor(127, 127, 127)),
    ("dotprod", RGBColor(140, 86, 75)),
    ("clustering", RGBColor(148, 103, 189)),
    ("packing", RGBColor(174, 176, 24)),
    ("bestfit", RGBColor(23, 176, 196)),
    ("fgd", RGBColor(31, 119, 180)),
    ("pwr", RGBColor(214, 39, 40)),
];

/// Fixed styles of the mixes the shipped specs run (`pwr:200,fgd:800` keeps the orange
/// square it always had in the quick and gap studies).
pub(crate) const PINNED_POLICIES: [(&str, RGBColor, Shape); 4] = [
    ("pwr:200,fgd:800", RGBColor(255, 127, 14), Shape::Square),
    ("pwr:500,fgd:500", RGBColor(44, 160, 44), Shape::TriangleUp),
    ("pwr:100,fgd:900", RGBColor(227, 119, 194), Shape::Diamond),
    ("pwr:50,fgd:950", RGBColor(0, 0, 128), Shape::TriangleDown),
];

/// Colours of every other name, chosen by its hash (none is a fixed colour above).
pub(crate) const NAMED_COLOURS: [RGBColor; 12] = [
    RGBColor(128, 64, 0),
    RGBColor(0, 128, 128),
    RGBColor(106, 61, 154),
    RGBColor(255, 187, 120),
    RGBColor(102, 166, 30),
    RGBColor(231, 41, 138),
    RGBColor(166, 118, 29),
    RGBColor(27, 158, 119),
    RGBColor(117, 112, 179),
    RGBColor(217, 95, 2),
    RGBColor(0, 90, 50),
    RGBColor(152, 0, 67),
];

/// FNV-1a, 64 bits: the same for a name in every build, so its style never moves.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The (colour, shape) index a hashed name starts from: colour `i % 12`, shape `i / 12`.
fn hashed_style(name: &str) -> usize {
    (name_hash(name) % (NAMED_COLOURS.len() * SHAPES.len()) as u64) as usize
}

/// Marker outlines: the built-ins take them in turn, other names by their hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Pentagon,
}

pub(crate) const SHAPES: [Shape; 6] = [
    Shape::Circle,
    Shape::Square,
    Shape::TriangleUp,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Pentagon,
];

impl Shape {
    /// The outline as a polygon around `centre`, about `radius_px` across half.
    pub(crate) fn polygon(self, centre: (i32, i32), radius_px: f64) -> Vec<(i32, i32)> {
        let r = radius_px;
        let unit: Vec<(f64, f64)> = match self {
            Shape::Circle => regular_polygon(16, r, 0.0),
            Shape::Square => {
                let s = 0.88 * r;
                vec![(-s, -s), (s, -s), (s, s), (-s, s)]
            }
            Shape::TriangleUp => vec![(0.0, -1.2 * r), (1.1 * r, 0.8 * r), (-1.1 * r, 0.8 * r)],
            Shape::TriangleDown => vec![(0.0, 1.2 * r), (1.1 * r, -0.8 * r), (-1.1 * r, -0.8 * r)],
            Shape::Diamond => vec![
                (0.0, -1.25 * r),
                (1.1 * r, 0.0),
                (0.0, 1.25 * r),
                (-1.1 * r, 0.0),
            ],
            Shape::Pentagon => regular_polygon(5, 1.1 * r, -std::f64::consts::FRAC_PI_2),
        };
        unit.into_iter()
            .map(|(x, y)| (centre.0 + x.round() as i32, centre.1 + y.round() as i32))
            .collect()
    }
}

pub(crate) fn regular_polygon(corners: usize, radius: f64, start_rad: f64) -> Vec<(f64, f64)> {
    (0..corners)
        .map(|k| {
            let angle = start_rad + 2.0 * std::f64::consts::PI * k as f64 / corners as f64;
            (radius * angle.cos(), radius * angle.sin())
        })
        .collect()
}

/// How one policy is drawn everywhere.
#[derive(Debug, Clone)]
pub(crate) struct PolicyStyle {
    pub(crate) name: String,
    pub(crate) colour: RGBColor,
    pub(crate) shape: Shape,
    /// Position in the legend order.
    pub(crate) rank: usize,
}

/// The policy → style map of one results folder.
pub(crate) struct Palette {
    pub(crate) styles: BTreeMap<String, PolicyStyle>,
}

impl Palette {
    /// Canonical policies first (fixed colours), then every other name in natural order,
    /// each styled by [`PINNED_POLICIES`] or its hash.
    pub(crate) fn new(names: &BTreeSet<String>) -> Self {
        let mut styles = BTreeMap::new();
        for (rank, (name, colour)) in CANONICAL_POLICIES.iter().enumerate() {
            styles.insert(
                (*name).to_string(),
                PolicyStyle {
                    name: (*name).to_string(),
                    colour: *colour,
                    shape: SHAPES[rank % SHAPES.len()],
                    rank,
                },
            );
        }
        let mut others: Vec<&String> = names
            .iter()
            .filter(|n| !styles.contains_key(n.as_str()))
            .collect();
        others.sort_by(|a, b| natural_cmp(a, b));
        let styles_count = NAMED_COLOURS.len() * SHAPES.len();
        let mut taken = vec![false; styles_count];
        for (i, name) in others.into_iter().enumerate() {
            let (colour, shape) = match PINNED_POLICIES.iter().find(|(n, _, _)| n == name) {
                Some(&(_, colour, shape)) => (colour, shape),
                None => {
                    let start = hashed_style(name);
                    let free = (0..styles_count)
                        .map(|step| (start + step) % styles_count)
                        .find(|&k| !taken[k])
                        .unwrap_or(start);
                    taken[free] = true;
                    (
                        NAMED_COLOURS[free % NAMED_COLOURS.len()],
                        SHAPES[free / NAMED_COLOURS.len()],
                    )
                }
            };
            styles.insert(
                name.clone(),
                PolicyStyle {
                    name: name.clone(),
                    colour,
                    shape,
                    rank: CANONICAL_POLICIES.len() + i,
                },
            );
        }
        Palette { styles }
    }

    pub(crate) fn style(&self, name: &str) -> PolicyStyle {
        self.styles.get(name).cloned().unwrap_or(PolicyStyle {
            name: name.to_string(),
            colour: INK,
            shape: Shape::Circle,
            rank: usize::MAX,
        })
    }

    /// The styles of `names`, in legend order.
    pub(crate) fn ordered<'a>(
        &self,
        names: impl IntoIterator<Item = &'a String>,
    ) -> Vec<PolicyStyle> {
        let mut styles: Vec<PolicyStyle> = names.into_iter().map(|n| self.style(n)).collect();
        styles.sort_by(|a, b| a.rank.cmp(&b.rank).then_with(|| a.name.cmp(&b.name)));
        styles.dedup_by(|a, b| a.name == b.name);
        styles
    }
}

/// Orders strings with embedded numbers by value: `gpushare20` < `gpushare100`.
pub(crate) fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    pub(crate) fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(&cb) {
        let ord = match (x, y) {
            ((true, p), (true, q)) => {
                let (p, q) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                p.len().cmp(&q.len()).then_with(|| p.cmp(q))
            }
            ((_, p), (_, q)) => p.cmp(q),
        };
        if ord.is_ne() {
            return ord;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn natural_order_compares_numbers_by_value() {
        let mut names = vec![
            "gpushare100",
            "gpushare20",
            "gpushare40",
            "default",
            "gpushare5",
        ];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            names,
            [
                "default",
                "gpushare5",
                "gpushare20",
                "gpushare40",
                "gpushare100"
            ]
        );
    }

    #[test]
    fn canonical_colours_do_not_depend_on_the_other_names() {
        let few: BTreeSet<String> = ["fgd".to_string()].into();
        let many: BTreeSet<String> = ["pwr:200,fgd:800", "fgd", "random", "zzz"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (a, b) = (Palette::new(&few), Palette::new(&many));
        for (name, _) in CANONICAL_POLICIES {
            assert_eq!(a.style(name).colour, b.style(name).colour);
        }
        assert_ne!(b.style("pwr:200,fgd:800").colour, b.style("zzz").colour);
    }

    #[test]
    fn any_name_keeps_its_style_in_every_folder_and_styles_stay_distinct() {
        let few: BTreeSet<String> = ["expr:idle_gpus".to_string()].into();
        let many: BTreeSet<String> = (0..40)
            .map(|i| format!("expr:idle_gpus * {i}"))
            .chain(["expr:idle_gpus".to_string(), "fgd".to_string()])
            .collect();
        let (a, b) = (Palette::new(&few), Palette::new(&many));
        let (x, y) = (a.style("expr:idle_gpus"), b.style("expr:idle_gpus"));
        assert_eq!((x.colour, x.shape), (y.colour, y.shape));
        let mut seen = std::collections::BTreeSet::new();
        for name in &many {
            let style = b.style(name);
            assert!(
                seen.insert((
                    style.colour.0,
                    style.colour.1,
                    style.colour.2,
                    style.shape as u8
                )),
                "{name} shares its style"
            );
        }
        // The shipped mixes and the built-ins keep theirs.
        assert_eq!(b.style("fgd").colour, RGBColor(31, 119, 180));
        let mix: BTreeSet<String> = ["pwr:200,fgd:800".to_string(), "zzz".to_string()].into();
        let style = Palette::new(&mix).style("pwr:200,fgd:800");
        assert_eq!(
            (style.colour, style.shape),
            (RGBColor(255, 127, 14), Shape::Square)
        );
    }
}
