//! Grid carbon-intensity series: what one kWh drawn at time `t` emits (gCO2e/kWh).
//!
//! A series is a step function over simulation seconds (each value holds until the next
//! point), extended periodically past its end so a year of hourly data or a synthetic week
//! covers a replay of any length. Carbon of a constant power `P` over `[t0, t1)` is
//! `P / 1000 · ∫ CI(t) dt / 3600` grams (W → kW, s → h), computed exactly from prefix sums.
//!
//! Sources: a simple CSV `time_s,g_per_kwh` (what users bring), the Electricity Maps hourly
//! zone export (its `Datetime (UTC)` and `Carbon Intensity gCO₂eq/kWh (direct)` columns),
//! or the synthetic CAISO-like and GB-like generators of time-and-budgets §4.3.

use std::path::Path;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::error::InputError;

/// A carbon-intensity step function, periodic past its last step.
#[derive(Debug, Clone, PartialEq)]
pub struct CarbonSeries {
    /// Where it came from (a file path, `caiso-like:seed=42`, …), for manifests and plots.
    pub name: String,
    /// Step start times in seconds, strictly increasing, the first 0.
    pub start_s: Vec<f64>,
    /// Intensity of each step, gCO2e/kWh.
    pub g_per_kwh: Vec<f64>,
    /// Length of one period: the last step lasts until here.
    pub period_s: f64,
    /// `prefix[k]` = ∫ CI over `[0, start_s[k])`, in g/kWh · s.
    prefix: Vec<f64>,
}

impl CarbonSeries {
    /// A series from steps; `period_s` ends the last step. Errors say what is wrong.
    pub fn new(
        name: impl Into<String>,
        start_s: Vec<f64>,
        g_per_kwh: Vec<f64>,
        period_s: f64,
    ) -> Result<CarbonSeries, InputError> {
        if start_s.is_empty() || start_s.len() != g_per_kwh.len() {
            return Err(InputError::invalid(
                "a carbon series needs as many intensities as step times, at least one",
            ));
        }
        if start_s[0] != 0.0 {
            return Err(InputError::invalid(format!(
                "the first step must start at 0 s, not {}",
                start_s[0]
            )));
        }
        if let Some(w) = start_s.windows(2).find(|w| w[1] <= w[0]) {
            return Err(InputError::invalid(format!(
                "step times must increase: {} then {}",
                w[0], w[1]
            )));
        }
        let last_step = *start_s.last().expect("non-empty");
        if !period_s.is_finite() || period_s <= last_step {
            return Err(InputError::invalid(format!(
                "the period ({period_s} s) must end after the last step"
            )));
        }
        if let Some(bad) = g_per_kwh.iter().find(|g| !g.is_finite() || **g < 0.0) {
            return Err(InputError::invalid(format!(
                "carbon intensity must be a finite non-negative number, found {bad}"
            )));
        }
        let mut prefix = Vec::with_capacity(start_s.len());
        let mut sum = 0.0;
        for k in 0..start_s.len() {
            prefix.push(sum);
            let end = start_s.get(k + 1).copied().unwrap_or(period_s);
            sum += g_per_kwh[k] * (end - start_s[k]);
        }
        Ok(CarbonSeries {
            name: name.into(),
            start_s,
            g_per_kwh,
            period_s,
            prefix,
        })
    }

    /// A series of equal steps of `step_s` seconds.
    pub fn regular(
        name: impl Into<String>,
        step_s: f64,
        g_per_kwh: Vec<f64>,
    ) -> Result<CarbonSeries, InputError> {
        let start_s = (0..g_per_kwh.len()).map(|k| k as f64 * step_s).collect();
        let period_s = g_per_kwh.len() as f64 * step_s;
        CarbonSeries::new(name, start_s, g_per_kwh, period_s)
    }

    /// The same intensities seen from `offset_s` on: `shifted(o).at(t) == self.at(t + o)`
    /// (for a problem whose clock starts at `o`, such as a frontier of late jobs).
    pub fn shifted(&self, offset_s: f64) -> CarbonSeries {
        let offset = offset_s.rem_euclid(self.period_s);
        let k = self.start_s.partition_point(|&s| s <= offset) - 1;
        let mut start_s = vec![0.0];
        let mut g_per_kwh = vec![self.g_per_kwh[k]];
        let n = self.start_s.len();
        for i in (k + 1..n).chain(0..=k) {
            let start = if i > k {
                self.start_s[i] - offset
            } else {
                self.start_s[i] + self.period_s - offset
            };
            if start > 0.0 && start < self.period_s {
                start_s.push(start);
                g_per_kwh.push(self.g_per_kwh[i]);
            }
        }
        CarbonSeries::new(
            format!("{}+{offset_s}s", self.name),
            start_s,
            g_per_kwh,
            self.period_s,
        )
        .expect("a rotation of a valid series is valid")
    }

    /// The intensity at `time_s` (≥ 0), gCO2e/kWh.
    pub fn at(&self, time_s: f64) -> f64 {
        let t = time_s.rem_euclid(self.period_s);
        let k = self.start_s.partition_point(|&s| s <= t) - 1;
        self.g_per_kwh[k]
    }

    /// ∫ CI over `[0, t)` for `t` within one period.
    fn integral_within_period(&self, t: f64) -> f64 {
        let k = self.start_s.partition_point(|&s| s <= t) - 1;
        self.prefix[k] + self.g_per_kwh[k] * (t - self.start_s[k])
    }

    /// ∫ CI dt over `[0, time_s)`, in g/kWh · s.
    fn integral_from_zero(&self, time_s: f64) -> f64 {
        let periods = (time_s / self.period_s).floor();
        let whole = self.prefix.last().expect("non-empty")
            + self.g_per_kwh.last().expect("non-empty")
                * (self.period_s - self.start_s.last().expect("non-empty"));
        periods * whole + self.integral_within_period(time_s - periods * self.period_s)
    }

    /// Grams of CO2e emitted by a constant `watts` over `[from_s, to_s)`.
    pub fn grams(&self, watts: f64, from_s: f64, to_s: f64) -> f64 {
        let intensity_seconds = self.integral_from_zero(to_s) - self.integral_from_zero(from_s);
        watts / 1000.0 * intensity_seconds / 3600.0
    }

    /// Mean intensity over `[from_s, to_s)`, gCO2e/kWh.
    pub fn mean(&self, from_s: f64, to_s: f64) -> f64 {
        (self.integral_from_zero(to_s) - self.integral_from_zero(from_s)) / (to_s - from_s)
    }
}

/// The parameters of the synthetic generator of time-and-budgets §4.3 (all [D]):
/// `CI(t) = clip(μ − S·solar(h) + A·bump(h; 19 h, 2.5 h) + X(t), min, max)` with
/// `solar(h) = max(0, sin(π (h − 6) / 13))` on hours 6–19, a Gaussian evening bump, and an
/// Ornstein–Uhlenbeck weather term `X` (mean 0, standard deviation σ, correlation time τ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SyntheticGrid {
    pub mean_g_per_kwh: f64,
    pub solar_dip: f64,
    pub evening_bump: f64,
    pub noise_sigma: f64,
    pub noise_correlation_h: f64,
    pub min_g_per_kwh: f64,
    pub max_g_per_kwh: f64,
}

impl SyntheticGrid {
    /// A solar-heavy spring grid: deep midday trough, evening peak ("duck curve").
    pub const CAISO_LIKE: SyntheticGrid = SyntheticGrid {
        mean_g_per_kwh: 260.0,
        solar_dip: 190.0,
        evening_bump: 40.0,
        noise_sigma: 15.0,
        noise_correlation_h: 6.0,
        min_g_per_kwh: 40.0,
        max_g_per_kwh: 340.0,
    };
    /// A wind-driven grid: weak diurnal shape, multi-day swings.
    pub const GB_LIKE: SyntheticGrid = SyntheticGrid {
        mean_g_per_kwh: 160.0,
        solar_dip: 20.0,
        evening_bump: 30.0,
        noise_sigma: 60.0,
        noise_correlation_h: 36.0,
        min_g_per_kwh: 20.0,
        max_g_per_kwh: 350.0,
    };

    /// The deterministic part at hour of day `h` (0 ≤ h < 24).
    pub fn diurnal(&self, hour_of_day: f64) -> f64 {
        let solar = if (6.0..=19.0).contains(&hour_of_day) {
            (std::f64::consts::PI * (hour_of_day - 6.0) / 13.0)
                .sin()
                .max(0.0)
        } else {
            0.0
        };
        let bump = (-(hour_of_day - 19.0).powi(2) / (2.0 * 2.5 * 2.5)).exp();
        self.mean_g_per_kwh - self.solar_dip * solar + self.evening_bump * bump
    }

    /// `hours` hourly steps from midnight, the OU term started at its stationary law and
    /// advanced exactly (`X' = X·e^(−1/τ) + σ·√(1 − e^(−2/τ))·N(0,1)`), seeded.
    pub fn generate(&self, name: impl Into<String>, hours: usize, seed: u64) -> CarbonSeries {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let decay = (-1.0 / self.noise_correlation_h).exp();
        let innovation = self.noise_sigma * (1.0 - decay * decay).sqrt();
        let first: f64 = StandardNormal.sample(&mut rng);
        let mut noise = self.noise_sigma * first;
        let mut values = Vec::with_capacity(hours);
        for hour in 0..hours {
            let value = self.diurnal((hour % 24) as f64 + 0.5) + noise;
            values.push(value.clamp(self.min_g_per_kwh, self.max_g_per_kwh));
            let draw: f64 = StandardNormal.sample(&mut rng);
            noise = noise * decay + innovation * draw;
        }
        CarbonSeries::regular(name, 3600.0, values).expect("hourly synthetic series is valid")
    }
}

/// California ISO's hourly direct carbon intensity for 2023 (Electricity Maps, ODbL; see
/// `workloads/carbon/README.md`), shipped so a carbon-budgeted replay needs no download.
pub const CAISO_2023_HOURLY: &str =
    include_str!("../../../workloads/carbon/us-cal-ciso-2023-hourly.csv");

/// The shipped CAISO 2023 series.
pub fn caiso_2023() -> CarbonSeries {
    let mut series = parse_carbon_csv(
        Path::new("<embedded>/workloads/carbon/us-cal-ciso-2023-hourly.csv"),
        CAISO_2023_HOURLY.as_bytes(),
    )
    .expect("the shipped series parses");
    series.name = "us-cal-ciso-2023 (Electricity Maps, ODbL)".to_string();
    series
}

/// Electricity Maps' hourly zone export: the direct-emission column.
const ELECTRICITY_MAPS_TIME: &str = "Datetime (UTC)";
const ELECTRICITY_MAPS_DIRECT: &str = "Carbon Intensity gCO₂eq/kWh (direct)";

/// Reads a carbon-intensity CSV: either `time_s,g_per_kwh` (seconds from the series start,
/// the first row at 0, increasing) or an Electricity Maps hourly export (its direct column;
/// times from the first row). The last step lasts as long as the one before it (one step
/// for a single row: an hour). Errors name the file, line and column.
pub fn parse_carbon_csv(file: &Path, text: &[u8]) -> Result<CarbonSeries, InputError> {
    read_carbon_csv(file, text)
}

/// [`parse_carbon_csv`] from `input`, row by row (it stops at the first bad row).
pub fn read_carbon_csv(file: &Path, input: impl std::io::Read) -> Result<CarbonSeries, InputError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(input);
    let headers = reader
        .headers()
        .map_err(|e| located(file, None, None, format!("malformed CSV: {e}")))?
        .clone();
    let columns = CarbonColumns::find(&headers).ok_or_else(|| {
        located(
            file,
            Some(1),
            None,
            format!(
                "expected columns `time_s,g_per_kwh` (or an Electricity Maps export with `{ELECTRICITY_MAPS_TIME}` and `{ELECTRICITY_MAPS_DIRECT}`); header: {}",
                headers.iter().collect::<Vec<_>>().join(",")
            ),
        )
    })?;
    let mut start_s = Vec::new();
    let mut values = Vec::new();
    let mut first_epoch_s = None;
    for record in reader.records() {
        let record = record.map_err(|e| {
            located(
                file,
                e.position().map(|p| p.line()),
                None,
                format!("malformed CSV: {e}"),
            )
        })?;
        let (time, value) = columns.read_row(file, &headers, &record, &mut first_epoch_s)?;
        let line = record.position().map(|p| p.line());
        let time_name = Some(&headers[columns.time]);
        if start_s.is_empty() && time != 0.0 {
            let message = format!("the first row must be at time 0, found {time}");
            return Err(located(file, line, time_name, message));
        }
        if let Some(&last) = start_s.last().filter(|&&last| time <= last) {
            let message = format!("times must increase, found {time} after {last}");
            return Err(located(file, line, time_name, message));
        }
        start_s.push(time);
        values.push(value);
    }
    let last_step = match start_s.as_slice() {
        [] => {
            return Err(located(
                file,
                None,
                None,
                "no rows: the file has a header but no data".into(),
            ))
        }
        [_] => 3600.0,
        [.., a, b] => b - a,
    };
    let period_s = start_s.last().expect("non-empty") + last_step;
    CarbonSeries::new(file.display().to_string(), start_s, values, period_s)
        .map_err(|error| located(file, None, None, error.message))
}

/// An input error of `file` at `line` and `column` (where known).
fn located(file: &Path, line: Option<u64>, column: Option<&str>, message: String) -> InputError {
    let mut error = InputError::new(file, message);
    error.line = line;
    error.column = column.map(str::to_string);
    error
}

/// Where a carbon CSV keeps its times and intensities, and how it writes times.
struct CarbonColumns {
    time: usize,
    value: usize,
    /// An Electricity Maps export: UTC date-times (seconds from the first row), not seconds.
    electricity_maps: bool,
}

impl CarbonColumns {
    /// Our own `time_s,g_per_kwh` columns first, then an Electricity Maps export's.
    fn find(headers: &csv::StringRecord) -> Option<CarbonColumns> {
        let find = |name: &str| headers.iter().position(|h| h == name);
        match (
            find("time_s"),
            find("g_per_kwh"),
            find(ELECTRICITY_MAPS_TIME),
            find(ELECTRICITY_MAPS_DIRECT),
        ) {
            (Some(time), Some(value), _, _) => Some(CarbonColumns {
                time,
                value,
                electricity_maps: false,
            }),
            (_, _, Some(time), Some(value)) => Some(CarbonColumns {
                time,
                value,
                electricity_maps: true,
            }),
            _ => None,
        }
    }

    /// A row's time (seconds from the first row) and intensity (g/kWh, non-negative).
    fn read_row(
        &self,
        file: &Path,
        headers: &csv::StringRecord,
        record: &csv::StringRecord,
        first_epoch_s: &mut Option<i64>,
    ) -> Result<(f64, f64), InputError> {
        let line = record.position().map(|p| p.line());
        let (time_name, value_name) = (&headers[self.time], &headers[self.value]);
        let field = |column: usize, name: &str| {
            record.get(column).ok_or_else(|| {
                located(
                    file,
                    line,
                    Some(name),
                    format!("row has {} fields", record.len()),
                )
            })
        };
        let time_text = field(self.time, time_name)?;
        let time = if self.electricity_maps {
            let epoch = utc_datetime_seconds(time_text)
                .map_err(|message| located(file, line, Some(time_name), message))?;
            (epoch - *first_epoch_s.get_or_insert(epoch)) as f64
        } else {
            time_text
                .parse::<f64>()
                .ok()
                .filter(|t| t.is_finite())
                .ok_or_else(|| {
                    let message = format!("expected seconds, found `{time_text}`");
                    located(file, line, Some(time_name), message)
                })?
        };
        let value_text = field(self.value, value_name)?;
        let value = value_text
            .parse::<f64>()
            .ok()
            .filter(|g| g.is_finite() && *g >= 0.0)
            .ok_or_else(|| {
                let message =
                    format!("expected a non-negative intensity in g/kWh, found `{value_text}`");
                located(file, line, Some(value_name), message)
            })?;
        Ok((time, value))
    }
}

pub fn load_carbon_csv(path: &Path) -> Result<CarbonSeries, InputError> {
    let file = std::fs::File::open(path)
        .map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
    read_carbon_csv(path, file)
}

/// Seconds since 1970-01-01 of `YYYY-MM-DD HH:MM:SS` (UTC), or why it is not such a time:
/// a date that does not exist (`2023-02-31`) or a year outside 1..=9999 is refused, not
/// rolled over or overflowed.
fn utc_datetime_seconds(text: &str) -> Result<i64, String> {
    let malformed = || format!("expected a time like 2023-01-01 00:00:00, found `{text}`");
    let fields = |part: &str, separator: char| -> Option<[i64; 3]> {
        let mut pieces = part.split(separator);
        let mut next = || pieces.next()?.parse::<i64>().ok();
        let values = [next()?, next()?, next()?];
        pieces.next().is_none().then_some(values)
    };
    let (date, time) = text.split_once(' ').ok_or_else(malformed)?;
    let (year_text, _) = date.split_once('-').ok_or_else(malformed)?;
    if year_text.len() > 4 && year_text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("year {year_text} is outside 1..=9999, in `{text}`"));
    }
    let [year, month, day] = fields(date, '-').ok_or_else(malformed)?;
    let [hour, minute, second] = fields(time, ':').ok_or_else(malformed)?;
    if !(1..=9999).contains(&year) {
        return Err(format!("year {year} is outside 1..=9999, in `{text}`"));
    }
    let clock = (0..24).contains(&hour) && (0..60).contains(&minute) && (0..61).contains(&second);
    if !(1..=12).contains(&month) || !clock {
        return Err(malformed());
    }
    let days = days_in_month(year, month);
    if !(1..=days).contains(&day) {
        return Err(format!(
            "no such date in `{text}`: {} {year} has {days} days",
            MONTH_NAMES[month as usize - 1]
        ));
    }
    Ok(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Days of `month` (1–12) in `year`, Gregorian leap years.
fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three_steps() -> CarbonSeries {
        // 100 g/kWh for an hour, 300 for two hours, 200 for an hour; period 4 h.
        CarbonSeries::new(
            "t",
            vec![0.0, 3600.0, 10_800.0],
            vec![100.0, 300.0, 200.0],
            14_400.0,
        )
        .unwrap()
    }

    #[test]
    fn grams_integrate_the_step_function_exactly() {
        let series = three_steps();
        // 1 kW from 0:30 to 1:30: half an hour at 100 and half at 300 → 200 g.
        assert!((series.grams(1000.0, 1800.0, 5400.0) - 200.0).abs() < 1e-9);
        // A whole period at 2 kW: 2 × (100 + 600 + 200) = 1800 g; the next period repeats.
        assert!((series.grams(2000.0, 0.0, 14_400.0) - 1800.0).abs() < 1e-9);
        assert!((series.grams(2000.0, 14_400.0, 28_800.0) - 1800.0).abs() < 1e-9);
        assert_eq!(series.at(3599.0), 100.0);
        assert_eq!(series.at(3600.0), 300.0);
        assert_eq!(series.at(14_400.0 + 11_000.0), 200.0);
        assert!((series.mean(0.0, 14_400.0) - 225.0).abs() < 1e-9);
    }

    #[test]
    fn synthetic_grids_have_their_published_shape() {
        let caiso = SyntheticGrid::CAISO_LIKE.generate("caiso-like", 24 * 28, 7);
        let hourly_mean = |series: &CarbonSeries, hour: usize| {
            (0..28)
                .map(|day| series.at(((day * 24 + hour) * 3600) as f64))
                .sum::<f64>()
                / 28.0
        };
        // Midday solar trough well below the evening peak, inside the clip bounds.
        assert!(
            hourly_mean(&caiso, 12) < 120.0,
            "{}",
            hourly_mean(&caiso, 12)
        );
        assert!(
            hourly_mean(&caiso, 20) > 250.0,
            "{}",
            hourly_mean(&caiso, 20)
        );
        assert!(caiso.g_per_kwh.iter().all(|g| (40.0..=340.0).contains(g)));
        // GB-like: weak diurnal shape, large multi-day swings.
        let gb = SyntheticGrid::GB_LIKE.generate("gb-like", 24 * 28, 7);
        let (lo, hi) = gb
            .g_per_kwh
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), g| (lo.min(*g), hi.max(*g)));
        assert!(hi - lo > 100.0, "swing {lo}..{hi}");
        assert_eq!(gb, SyntheticGrid::GB_LIKE.generate("gb-like", 24 * 28, 7));
        assert_ne!(gb, SyntheticGrid::GB_LIKE.generate("gb-like", 24 * 28, 8));
    }

    #[test]
    fn csv_formats_parse_and_bad_rows_are_located() {
        let simple =
            parse_carbon_csv(Path::new("ci.csv"), b"time_s,g_per_kwh\n0,100\n1800,250\n").unwrap();
        assert_eq!(simple.period_s, 3600.0);
        assert_eq!(simple.at(2000.0), 250.0);
        let maps = "Datetime (UTC),Country,Carbon Intensity gCO₂eq/kWh (direct)\n2023-12-31 23:00:00,X,50\n2024-01-01 00:00:00,X,70.5\n";
        let series = parse_carbon_csv(Path::new("em.csv"), maps.as_bytes()).unwrap();
        assert_eq!(series.start_s, vec![0.0, 3600.0]);
        assert_eq!(series.g_per_kwh, vec![50.0, 70.5]);
        let error = |text: &str| {
            parse_carbon_csv(Path::new("ci.csv"), text.as_bytes())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            error("time_s,g_per_kwh\n0,100\n60,-5\n"),
            "ci.csv:3 (column `g_per_kwh`): expected a non-negative intensity in g/kWh, found `-5`"
        );
        assert!(error("time_s,g_per_kwh\n0,100\n0,90\n")
            .starts_with("ci.csv:3 (column `time_s`): times must increase"));
        assert!(error("time_s,g_per_kwh\n5,100\n")
            .starts_with("ci.csv:2 (column `time_s`): the first row must be at time 0"));
        assert!(
            error("time,ci\n0,1\n").starts_with("ci.csv:1: expected columns `time_s,g_per_kwh`")
        );
        assert!(error("time_s,g_per_kwh\n").contains("no rows"));
        assert!(error(
            "Datetime (UTC),Carbon Intensity gCO₂eq/kWh (direct)\n2023-13-01 00:00:00,5\n"
        )
        .contains("expected a time like"));
    }

    /// The shipped series equals the Electricity Maps file it was derived from, read as
    /// published from `../shared/carbon`.
    #[test]
    fn shipped_caiso_series_matches_its_source() {
        let shipped = caiso_2023();
        assert_eq!(shipped.g_per_kwh.len(), 8760);
        assert_eq!(shipped.period_s, 8760.0 * 3600.0);
        let mean = shipped.mean(0.0, shipped.period_s);
        assert!((mean - 193.96).abs() < 0.01, "{mean}");
        let source = crate::testing::shared_carbon_dir().join("US-CAL-CISO_2023_hourly.csv");
        let published = load_carbon_csv(&source).unwrap();
        assert_eq!(published.start_s, shipped.start_s);
        assert_eq!(published.g_per_kwh, shipped.g_per_kwh);
        for zone in ["GB", "DE-LU"] {
            let series = load_carbon_csv(
                &crate::testing::shared_carbon_dir().join(format!("{zone}_2023_hourly.csv")),
            )
            .unwrap();
            assert_eq!(series.g_per_kwh.len(), 8760, "{zone}");
        }
    }

    #[test]
    fn civil_dates_count_days_correctly() {
        assert_eq!(utc_datetime_seconds("1970-01-01 00:00:00"), Ok(0));
        assert_eq!(
            utc_datetime_seconds("2023-01-01 00:00:00"),
            Ok(1_672_531_200)
        );
        assert_eq!(
            utc_datetime_seconds("2024-03-01 01:00:00"),
            Ok(1_709_254_800)
        );
        assert!(utc_datetime_seconds("2023-01-01T00:00:00").is_err());
        assert_eq!(
            utc_datetime_seconds("2024-02-29 00:00:00"),
            Ok(1_709_164_800)
        );
    }

    /// Dates that do not exist, and years a calendar export never has, are refused with a
    /// reason (they were accepted, or overflowed into nonsense, before).
    #[test]
    fn impossible_dates_and_years_are_refused() {
        let error = |time: &str| {
            let text = format!("Datetime (UTC),Carbon Intensity gCO₂eq/kWh (direct)\n2023-01-01 00:00:00,5\n{time},6\n");
            parse_carbon_csv(Path::new("em.csv"), text.as_bytes())
                .unwrap_err()
                .to_string()
        };
        for (time, reason) in [
            ("2023-02-31 00:00:00", "February 2023 has 28 days"),
            ("2023-02-29 00:00:00", "February 2023 has 28 days"),
            ("2023-04-31 00:00:00", "April 2023 has 30 days"),
            ("99999-01-01 00:00:00", "year 99999 is outside 1..=9999"),
            (
                "123456789012345-01-01 00:00:00",
                "year 123456789012345 is outside 1..=9999",
            ),
            ("2023-01-01 24:00:00", "expected a time like"),
        ] {
            let message = error(time);
            assert!(
                message.starts_with("em.csv:3 (column `Datetime (UTC)`): ")
                    && message.contains(reason),
                "{time}: {message}"
            );
        }
    }

    #[test]
    fn a_shifted_series_reads_the_same_intensities_later() {
        let series = CarbonSeries::new(
            "steps",
            vec![0.0, 100.0, 250.0],
            vec![10.0, 30.0, 20.0],
            400.0,
        )
        .unwrap();
        for offset in [0.0, 50.0, 100.0, 260.0, 399.0, 1234.5] {
            let shifted = series.shifted(offset);
            for t in [0.0, 1.0, 49.0, 99.5, 150.0, 249.0, 300.0, 399.0, 777.0] {
                assert_eq!(
                    shifted.at(t),
                    series.at(t + offset),
                    "offset {offset}, t {t}"
                );
            }
            let (a, b) = (
                shifted.grams(100.0, 10.0, 900.0),
                series.grams(100.0, 10.0 + offset, 900.0 + offset),
            );
            assert!((a - b).abs() < 1e-9 * b, "offset {offset}: {a} vs {b}");
        }
    }
}
