//! Pareto figures: per trace, cluster size and checkpoint, the exact power–fragmentation
//! front of each seed — every point marked by its solver status — and the policies' own
//! points. Fronts of different cluster sizes are never drawn together.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use gapbench_results::{PointKind, SolveStatus};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::gap_data::Checkpoint;
use super::gaps::seed_list;
use super::names::file_safe;
use super::pareto_data::{ParetoMark, ParetoTable};
use crate::cluster_size::ClusterSizes;
use crate::draw::Palette;
use crate::draw::*;

/// An exact front and the policies' points at one checkpoint of one trace.
pub(crate) struct ParetoFigure {
    pub(crate) size_px: (u32, u32),
    pub(crate) title: String,
    pub(crate) subtitle: String,
    pub(crate) x: Axis,
    pub(crate) y: Axis,
    pub(crate) fronts: Vec<FrontSeries>,
    /// Policy style, point label and (power_kw, frag) in axis units.
    pub(crate) points: Vec<(PolicyStyle, String, (f64, f64))>,
    pub(crate) legend: Vec<LegendEntry>,
    pub(crate) legend_width_px: u32,
}

pub(crate) struct FrontSeries {
    pub(crate) colour: RGBColor,
    /// (x, y in axis units, how the point is marked), by increasing x.
    pub(crate) points: Vec<(f64, f64, FrontMarker)>,
    /// The proven bound as a staircase (axis units, by increasing power cap): no placement
    /// within a cap has less fragmentation. Between two caps `ε_k < ε_{k+1}` only the
    /// larger cap's bound holds (the least fragmentation falls as the cap grows).
    pub(crate) bound: Vec<(f64, f64)>,
}

/// The staircase through the bounds `(cap, bound)` (sorted by cap): on `[ε_k, ε_{k+1}]`
/// the bound of `ε_{k+1}`.
fn bound_staircase(mut bounds: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    bounds.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut steps = Vec::with_capacity(2 * bounds.len());
    for (k, &(cap, bound)) in bounds.iter().enumerate() {
        if k > 0 {
            steps.push((bounds[k - 1].0, bound));
        }
        steps.push((cap, bound));
    }
    steps
}

/// The least fragmentation found under each power cap, through the front's points
/// `(power, fragmentation)` (by increasing power): a step function, flat from one point's
/// power to the next one's and dropping there. A straight segment between two points would
/// claim placements nobody found; an online policy below a step shows what the front missed.
fn found_staircase(points: &[(f64, f64, FrontMarker)]) -> Vec<(f64, f64)> {
    let mut steps = Vec::with_capacity(2 * points.len());
    for (k, &(power, frag, _)) in points.iter().enumerate() {
        if k > 0 {
            steps.push((power, points[k - 1].1));
        }
        steps.push((power, frag));
    }
    steps
}

/// How a front point is marked: by what its solve proved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum FrontMarker {
    /// Proven optimal (or a proven bound): a filled circle.
    Proven,
    TimeLimit,
    LpBound,
    GapLimit,
    Relaxation,
}

impl FrontMarker {
    /// The marker of a front point with a solution and `status`.
    pub(crate) fn of(status: &SolveStatus) -> FrontMarker {
        match status {
            SolveStatus::TimeLimitWithIncumbent => FrontMarker::TimeLimit,
            SolveStatus::LpBound => FrontMarker::LpBound,
            SolveStatus::GapLimit => FrontMarker::GapLimit,
            SolveStatus::RelaxationBound => FrontMarker::Relaxation,
            _ => FrontMarker::Proven,
        }
    }

    /// Filled when proven; hollow shapes tell the unproven statuses apart.
    pub(crate) fn shape(self) -> (Shape, bool) {
        match self {
            FrontMarker::Proven => (Shape::Circle, true),
            FrontMarker::TimeLimit => (Shape::Circle, false),
            FrontMarker::LpBound => (Shape::Diamond, false),
            FrontMarker::GapLimit => (Shape::Square, false),
            FrontMarker::Relaxation => (Shape::TriangleUp, false),
        }
    }

    pub(crate) fn legend(self) -> &'static str {
        match self {
            FrontMarker::Proven => "front point: optimal",
            FrontMarker::TimeLimit => "front point: time_limit (not proven least)",
            FrontMarker::LpBound => "front point: lp_bound (integer gap open)",
            FrontMarker::GapLimit => "front point: gap_limit (requested MIP gap)",
            FrontMarker::Relaxation => "front point: relaxation_bound",
        }
    }
}

/// Line colours of the fronts of successive seeds.
pub(crate) const FRONT_COLOURS: [RGBColor; 3] = [
    RGBColor(20, 20, 20),
    RGBColor(105, 105, 105),
    RGBColor(165, 165, 165),
];

pub(crate) fn pareto_figures(
    pareto: &ParetoTable,
    sizes: &ClusterSizes,
    palette: &Palette,
) -> Result<Vec<(String, ParetoFigure)>> {
    type Key<'a> = (&'a str, Option<usize>, Checkpoint);
    let mut by_key: BTreeMap<Key, Vec<&ParetoMark>> = BTreeMap::new();
    for row in &pareto.rows {
        // Files without a `nodes` column hold the `[gaps]` sub-cluster study alone.
        let nodes = row.nodes.or(sizes.sample_nodes());
        by_key
            .entry((row.trace.as_str(), nodes, row.checkpoint))
            .or_default()
            .push(row);
    }
    // Trace by trace; the whole cluster (most nodes) first.
    let mut keys: Vec<Key> = by_key.keys().copied().collect();
    keys.sort_by(|a, b| {
        natural_cmp(a.0, b.0)
            .then(b.1.cmp(&a.1))
            .then(a.2.cmp(&b.2))
    });
    let mut figures = Vec::new();
    for key @ (trace, nodes, checkpoint) in keys {
        let size = nodes.map_or("cluster size not recorded".to_string(), |n| {
            sizes.describe(trace, n)
        });
        let what = Snapshot {
            trace,
            size: &size,
            checkpoint,
        };
        if let Some(figure) = pareto_figure(&what, &by_key[&key], palette)? {
            let nodes_part = nodes.map_or(String::new(), |n| format!("{n}n_"));
            let stem = format!(
                "pareto_{}_{nodes_part}{}",
                file_safe(trace),
                checkpoint.file_part()
            );
            figures.push((stem, figure));
        }
    }
    Ok(figures)
}

/// Which snapshots a Pareto figure shows: trace, cluster size (as
/// [`ClusterSizes::describe`] writes it) and checkpoint.
pub(crate) struct Snapshot<'a> {
    pub(crate) trace: &'a str,
    pub(crate) size: &'a str,
    pub(crate) checkpoint: Checkpoint,
}

/// The exact fronts, one per seed, and their legend rows: the line with its point count,
/// then one row per kind of point marker.
fn fronts(
    usable: &[&ParetoMark],
    seeds: &[&str],
    to_axes: impl Fn((f64, f64)) -> (f64, f64),
) -> (Vec<FrontSeries>, Vec<LegendEntry>) {
    let mut fronts = Vec::new();
    let mut legend = Vec::new();
    let mut markers = BTreeSet::new();
    for (i, seed) in seeds.iter().enumerate() {
        let bound = bound_staircase(
            usable
                .iter()
                .filter(|r| r.kind == PointKind::Front && r.seed == *seed)
                .filter_map(|r| r.bound.map(&to_axes))
                .collect(),
        );
        let mut points: Vec<(f64, f64, FrontMarker)> = usable
            .iter()
            .filter(|r| r.kind == PointKind::Front && r.seed == *seed)
            .filter_map(|r| {
                let marker = r
                    .status
                    .as_ref()
                    .map_or(FrontMarker::Proven, FrontMarker::of);
                r.point.map(|p| {
                    let (x, y) = to_axes(p);
                    (x, y, marker)
                })
            })
            .collect();
        if points.is_empty() {
            continue;
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        // Caps whose least fragmentation found is the same placement draw one point.
        points.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        markers.extend(points.iter().map(|p| p.2));
        let colour = FRONT_COLOURS[i % FRONT_COLOURS.len()];
        let count = match points.len() {
            1 => "1 point".to_string(),
            n => format!("{n} points"),
        };
        let label = if seeds.len() > 1 {
            format!("ε-constraint front, seed {seed} ({count})")
        } else {
            format!("ε-constraint front ({count})")
        };
        legend.push(LegendEntry::new(Swatch::Front(colour, true), label));
        if !bound.is_empty() {
            legend.push(LegendEntry::new(
                Swatch::Bound(colour),
                "proven bound: no placement within the power cap has less",
            ));
        }
        fronts.push(FrontSeries {
            colour,
            points,
            bound,
        });
    }
    for marker in markers {
        let (shape, filled) = marker.shape();
        legend.push(LegendEntry::new(
            Swatch::FrontPoint(FRONT_COLOURS[0], shape, filled),
            marker.legend(),
        ));
    }
    (fronts, legend)
}

/// Each policy's point in axis units with its style and label (the seed too when several),
/// in palette order.
fn policy_points(
    usable: &[&ParetoMark],
    palette: &Palette,
    several_seeds: bool,
    to_axes: impl Fn((f64, f64)) -> (f64, f64),
) -> Vec<(PolicyStyle, String, (f64, f64))> {
    let mut points = Vec::new();
    for row in usable.iter().filter(|r| r.kind == PointKind::Policy) {
        let style = palette.style(&row.label);
        let label = if several_seeds {
            format!("{} (seed {})", row.label, row.seed)
        } else {
            row.label.clone()
        };
        points.push((style, label, to_axes(row.point.unwrap_or_default())));
    }
    points.sort_by(|a, b| {
        a.0.rank
            .cmp(&b.0.rank)
            .then_with(|| natural_cmp(&a.1, &b.1))
    });
    points
}

/// Axes that hold every front point, bound corner and policy point, with a margin.
fn pareto_axes(
    fronts: &[FrontSeries],
    points: &[(PolicyStyle, String, (f64, f64))],
    frag_unit: &str,
) -> (Axis, Axis) {
    let all_x = fronts
        .iter()
        .flat_map(|f| {
            f.points
                .iter()
                .map(|p| p.0)
                .chain(f.bound.iter().map(|b| b.0))
        })
        .chain(points.iter().map(|p| p.2 .0));
    let all_y = fronts
        .iter()
        .flat_map(|f| {
            f.points
                .iter()
                .map(|p| p.1)
                .chain(f.bound.iter().map(|b| b.1))
        })
        .chain(points.iter().map(|p| p.2 .1));
    let (x_lo, x_hi) = min_max(all_x).unwrap_or((0.0, 1.0));
    let (y_lo, y_hi) = min_max(all_y).unwrap_or((0.0, 1.0));
    let (x_lo, x_hi) = padded(x_lo, x_hi, 0.1);
    let (y_lo, y_hi) = padded(y_lo, y_hi, 0.1);
    let x = Axis::nice(x_lo, x_hi, 8, "power (kW)");
    let y = Axis::nice(y_lo, y_hi, 8, &format!("fragmented GPU ({frag_unit})"));
    (x, y)
}

/// What the steps, the dashed bound and the points are, and how many front points failed.
fn pareto_subtitle(fronts: &[FrontSeries], skipped: usize) -> String {
    let mut subtitle = "steps: the least fragmentation found under each power cap \
                        (ε-constraint solves); points: online policies on the same snapshot"
        .to_string();
    if fronts.iter().any(|f| !f.bound.is_empty()) {
        subtitle.push_str("; dashed: the proven least fragmentation under each power cap");
    }
    if skipped > 0 {
        let noun = if skipped == 1 { "point" } else { "points" };
        subtitle.push_str(&format!(
            "; {skipped} infeasible/failed front {noun} not plotted"
        ));
    }
    subtitle
}

pub(crate) fn pareto_figure(
    what: &Snapshot,
    rows: &[&ParetoMark],
    palette: &Palette,
) -> Result<Option<ParetoFigure>> {
    let usable: Vec<&ParetoMark> = rows.iter().copied().filter(|r| r.point.is_some()).collect();
    let skipped = rows.len() - usable.len();
    let Some((_, max_frag_milli)) = min_max(usable.iter().filter_map(|r| r.point.map(|p| p.1)))
    else {
        return Ok(None);
    };
    let (frag_per_unit, frag_unit) = if max_frag_milli >= 2000.0 {
        (1000.0, "GPUs")
    } else {
        (1.0, "milli-GPU")
    };
    let to_axes =
        |(power_w, frag_milli): (f64, f64)| (power_w / 1000.0, frag_milli / frag_per_unit);

    let seed_set: BTreeSet<&str> = usable.iter().map(|r| r.seed.as_str()).collect();
    let mut seeds: Vec<&str> = seed_set.iter().copied().collect();
    seeds.sort_by(|a, b| natural_cmp(a, b));
    let several_seeds = seeds.len() > 1;
    let (fronts, mut legend) = fronts(&usable, &seeds, to_axes);

    let points = policy_points(&usable, palette, several_seeds, to_axes);
    let policy_names: BTreeSet<&String> = usable
        .iter()
        .filter(|r| r.kind == PointKind::Policy)
        .map(|r| &r.label)
        .collect();
    if !policy_names.is_empty() {
        legend.push(LegendEntry::new(Swatch::Heading, "online policy"));
        for style in palette.ordered(policy_names) {
            let name = style.name.clone();
            legend.push(LegendEntry::new(Swatch::Marker(style), name));
        }
    }
    let (x, y) = pareto_axes(&fronts, &points, frag_unit);
    let title = format!(
        "Power vs fragmentation — trace {}, {}, {}, at {} % arrived",
        what.trace,
        what.size,
        seed_list(&seed_set),
        what.checkpoint.label()
    );
    let subtitle = pareto_subtitle(&fronts, skipped);
    let legend_width_px = legend_width_px(&legend)?;
    let width = (1000 + legend_width_px).max(header_width_px(&title, &subtitle)?);
    let height = HEADER_PX + 700u32.max(legend_height_px(&legend));
    Ok(Some(ParetoFigure {
        size_px: (width, height),
        title,
        subtitle,
        x,
        y,
        fronts,
        points,
        legend,
        legend_width_px,
    }))
}

/// Size of a front point's marker.
const FRONT_POINT_PX: f64 = 4.5;
/// Size of a front point's marker under a policy's (6.5): a ring around it.
const FRONT_RING_PX: f64 = 10.5;

/// Pixel box `(x0, y0, x1, y1)`.
pub(crate) type PixelBox = (i32, i32, i32, i32);

pub(crate) fn overlaps(a: PixelBox, b: PixelBox) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Where a front point sits relative to the policies' markers.
struct Crowding {
    /// The policies' markers, in pixels.
    centres: Vec<(i32, i32)>,
}

impl Crowding {
    /// A front point this close to a policy's marker rings it instead of hiding under it.
    fn near_a_policy(&self, at: (i32, i32)) -> bool {
        self.centres
            .iter()
            .any(|c| (c.0 - at.0).abs() <= 8 && (c.1 - at.1).abs() <= 8)
    }
}

/// A point label's candidate placement: anchor offset, horizontal and vertical anchor.
type LabelSpot = ((i32, i32), HPos, VPos);

/// Candidate label placements around a point, in order of preference.
const LABEL_SPOTS: [LabelSpot; 10] = [
    ((12, 0), HPos::Left, VPos::Center),
    ((-12, 0), HPos::Right, VPos::Center),
    ((0, -11), HPos::Center, VPos::Bottom),
    ((0, 11), HPos::Center, VPos::Top),
    ((8, -8), HPos::Left, VPos::Bottom),
    ((8, 8), HPos::Left, VPos::Top),
    ((-8, -8), HPos::Right, VPos::Bottom),
    ((-8, 8), HPos::Right, VPos::Top),
    ((12, -22), HPos::Left, VPos::Bottom),
    ((12, 22), HPos::Left, VPos::Top),
];

/// The pixel box of a `w`×`h` label placed at `spot` around the centre `(cx, cy)`.
fn label_box((cx, cy): (i32, i32), (w, h): (i32, i32), spot: LabelSpot) -> PixelBox {
    let ((dx, dy), hpos, vpos) = spot;
    let (ax, ay) = (cx + dx, cy + dy);
    let x0 = match hpos {
        HPos::Left => ax,
        HPos::Center => ax - w / 2,
        HPos::Right => ax - w,
    };
    let y0 = match vpos {
        VPos::Top => ay,
        VPos::Center => ay - h / 2,
        VPos::Bottom => ay - h,
    };
    (x0, y0, x0 + w, y0 + h)
}

impl ParetoFigure {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        mode: TextMode,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let plot = frame(
            root,
            &self.title,
            &self.subtitle,
            &self.legend,
            self.legend_width_px,
            mode,
        )?;
        let mut chart = build_chart(root, &plot, None, &self.x, &self.y, mode)?;
        let crowding = Crowding {
            centres: self
                .points
                .iter()
                .map(|p| chart.backend_coord(&p.2))
                .collect(),
        };
        self.draw_fronts(root, &mut chart, &crowding)?;
        // Markers first, then labels placed around them without overlaps where possible.
        let mut taken = self.marker_boxes(&chart, &crowding);
        for ((style, _, _), &centre) in self.points.iter().zip(&crowding.centres) {
            draw_marker(root, style.shape, centre, 6.5, style.colour, INK)?;
        }
        self.draw_point_labels(root, &chart, &crowding, &mut taken, mode)
    }

    /// Each front: its proven bound (dashed), the staircase of what was found and its
    /// points, marked by status.
    fn draw_fronts<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        chart: &mut Chart<'_, DB>,
        crowding: &Crowding,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        for front in &self.fronts {
            chart.draw_series(DashedLineSeries::new(
                front.bound.iter().copied(),
                6,
                4,
                front.colour.stroke_width(1),
            ))?;
            chart.draw_series(LineSeries::new(
                found_staircase(&front.points),
                front.colour.stroke_width(2),
            ))?;
            for &(x, y, marker) in &front.points {
                let (shape, filled) = marker.shape();
                let fill = if filled { front.colour } else { WHITE };
                let at = chart.backend_coord(&(x, y));
                // A policy that reaches the front hides its point: the point then rings the
                // policy's marker, so the front's points and their statuses stay visible.
                let size = if crowding.near_a_policy(at) {
                    FRONT_RING_PX
                } else {
                    FRONT_POINT_PX
                };
                draw_marker(root, shape, at, size, fill, front.colour)?;
            }
        }
        Ok(())
    }

    /// The pixel boxes every marker (policy or front point) covers.
    fn marker_boxes<DB: DrawingBackend>(
        &self,
        chart: &Chart<'_, DB>,
        crowding: &Crowding,
    ) -> Vec<PixelBox> {
        let mut taken: Vec<PixelBox> = crowding
            .centres
            .iter()
            .map(|c| (c.0 - 7, c.1 - 7, c.0 + 7, c.1 + 7))
            .collect();
        for front in &self.fronts {
            for p in &front.points {
                let c = chart.backend_coord(&(p.0, p.1));
                let r = if crowding.near_a_policy(c) {
                    FRONT_RING_PX as i32
                } else {
                    5
                };
                taken.push((c.0 - r, c.1 - r, c.0 + r, c.1 + r));
            }
        }
        taken
    }

    /// Each policy's label at the first free spot around its marker, inside the plot.
    fn draw_point_labels<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        chart: &Chart<'_, DB>,
        crowding: &Crowding,
        taken: &mut Vec<PixelBox>,
        mode: TextMode,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (x_px, y_px) = chart.plotting_area().get_pixel_range();
        let inside = |b: PixelBox| {
            b.0 >= x_px.start && b.2 <= x_px.end && b.1 >= y_px.start && b.3 <= y_px.end
        };
        let label_font = font(POINT_LABEL_PX);
        for ((style, label, _), &centre) in self.points.iter().zip(&crowding.centres) {
            let size = (text_width_px(label, &label_font)?, POINT_LABEL_PX as i32);
            // No free spot: no label (the legend names the marker), rather than text on text.
            let Some(chosen) = LABEL_SPOTS.iter().copied().find(|spot| {
                let b = label_box(centre, size, *spot);
                inside(b) && !taken.iter().any(|t| overlaps(*t, b))
            }) else {
                continue;
            };
            taken.push(label_box(centre, size, chosen));
            let ((dx, dy), hpos, vpos) = chosen;
            draw_text(
                root,
                label,
                &label_font,
                mix_with_ink(style.colour),
                Placement::at(hpos, vpos),
                (centre.0 + dx, centre.1 + dy),
                mode,
            )?;
        }
        Ok(())
    }
}

/// A darker shade of `colour` so that labels stay readable on white.
pub(crate) fn mix_with_ink(colour: RGBColor) -> RGBColor {
    let mix = |c: u8| (f64::from(c) * 0.7).round() as u8;
    RGBColor(mix(colour.0), mix(colour.1), mix(colour.2))
}

#[cfg(test)]
mod tests {
    use super::{found_staircase, FrontMarker};

    #[test]
    fn the_found_front_is_flat_until_the_next_point() {
        let points = [
            (8.2, 2.54, FrontMarker::Proven),
            (8.4, 2.45, FrontMarker::TimeLimit),
            (8.5, 2.38, FrontMarker::LpBound),
        ];
        assert_eq!(
            found_staircase(&points),
            [
                (8.2, 2.54),
                (8.4, 2.54),
                (8.4, 2.45),
                (8.5, 2.45),
                (8.5, 2.38)
            ]
        );
    }
}
