//! Carbon-intensity forecasts and the carbon pacing weights of GreenFlow-style allocation
//! (time-and-budgets §4.2, all [D]): `w(τ) = CI_forecast(τ)^(−θ)`, and a round at `t` spends
//! in proportion to `w(t) / mean_{τ ∈ [t, t + 24 h)} w(τ)` (a clean hour relative to the day
//! ahead gets more).

use rand_distr::{Distribution, StandardNormal};

use gapbench_model::rng::seeded;
use gapbench_model::CarbonSeries;

/// How the allocator sees future carbon intensity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Forecast {
    /// The current intensity persists.
    Myopic,
    /// The true future series.
    Oracle,
    /// The true series times `1 + e`, `e` an hourly AR(1) error (correlation 0.9 per hour
    /// [D]) of standard deviation `sigma` (a fraction of the value; the spec suggests
    /// 0.1–0.2), seeded.
    Noisy { sigma: f64, seed: u64 },
}

impl Forecast {
    pub fn label(&self) -> &'static str {
        match self {
            Forecast::Myopic => "myopic",
            Forecast::Oracle => "oracle",
            Forecast::Noisy { .. } => "noisy",
        }
    }
}

/// AR(1) correlation of the noisy forecast's error from one hour to the next [D].
const NOISE_CORRELATION_PER_HOUR: f64 = 0.9;

/// The look-ahead window of the pacing weights [D]: one day, the grid's main cycle.
pub const LOOKAHEAD_S: f64 = 24.0 * 3600.0;

/// Points of the look-ahead window (every 15 minutes) [D].
const LOOKAHEAD_POINTS: usize = 96;

/// A forecast with its noise path and the pacing exponent.
#[derive(Debug, Clone)]
pub struct CarbonPacer {
    forecast: Forecast,
    theta: f64,
    start_s: f64,
    /// Hourly multiplicative errors from `start_s` (noisy).
    errors: Vec<f64>,
}

impl CarbonPacer {
    /// A pacer for a replay from `start_s` to about `end_s`.
    pub fn new(forecast: Forecast, theta: f64, start_s: f64, end_s: f64) -> CarbonPacer {
        let hours = ((end_s - start_s).max(0.0) / 3600.0).ceil() as usize + 48;
        let errors = match forecast {
            Forecast::Noisy { sigma, seed } => {
                let mut rng = seeded(seed ^ 0x6f72_6563_6173_7421);
                let mut e = 0.0f64;
                let innovation = (1.0 - NOISE_CORRELATION_PER_HOUR.powi(2)).sqrt();
                (0..hours)
                    .map(|_| {
                        let z: f64 = StandardNormal.sample(&mut rng);
                        e = NOISE_CORRELATION_PER_HOUR * e + innovation * sigma * z;
                        e
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        CarbonPacer {
            forecast,
            theta,
            start_s,
            errors,
        }
    }

    /// The forecast made at `now_s` of the intensity at `at_s`, gCO2e/kWh (the present is
    /// known exactly).
    pub fn predicted(&self, series: &CarbonSeries, now_s: f64, at_s: f64) -> f64 {
        if at_s <= now_s {
            return series.at(now_s);
        }
        match self.forecast {
            Forecast::Myopic => series.at(now_s),
            Forecast::Oracle => series.at(at_s),
            Forecast::Noisy { .. } => {
                let hour = (((at_s - self.start_s) / 3600.0).max(0.0)) as usize;
                let e = self.errors.get(hour).copied().unwrap_or(0.0);
                (series.at(at_s) * (1.0 + e)).max(1.0)
            }
        }
    }

    fn weight(&self, intensity: f64) -> f64 {
        let intensity = intensity.max(1.0);
        // θ = 1 and θ = 0 (the default and even pacing) without a power.
        if self.theta == 1.0 {
            1.0 / intensity
        } else if self.theta == 0.0 {
            1.0
        } else {
            intensity.powf(-self.theta)
        }
    }

    /// The forecast at the look-ahead window's points from `now_s` (every 15 minutes over
    /// a day), read in one walk over the series' steps.
    fn window(&self, series: &CarbonSeries, now_s: f64) -> [f64; LOOKAHEAD_POINTS] {
        let step_s = LOOKAHEAD_S / LOOKAHEAD_POINTS as f64;
        let mut out = [0.0; LOOKAHEAD_POINTS];
        let now = series.at(now_s);
        if matches!(self.forecast, Forecast::Myopic) {
            out.fill(now);
            return out;
        }
        let period = series.period_s;
        let steps = series.start_s.len();
        let mut last_t = now_s.rem_euclid(period);
        let mut k = series.start_s.partition_point(|&s| s <= last_t) - 1;
        out[0] = now;
        for (i, value) in out.iter_mut().enumerate().skip(1) {
            let at_s = now_s + step_s * i as f64;
            let t = at_s.rem_euclid(period);
            if t < last_t {
                k = 0; // wrapped into the next period
            }
            last_t = t;
            while k + 1 < steps && series.start_s[k + 1] <= t {
                k += 1;
            }
            let truth = series.g_per_kwh[k];
            *value = match self.forecast {
                Forecast::Noisy { .. } => {
                    let hour = (((at_s - self.start_s) / 3600.0).max(0.0)) as usize;
                    let e = self.errors.get(hour).copied().unwrap_or(0.0);
                    (truth * (1.0 + e)).max(1.0)
                }
                _ => truth,
            };
        }
        out
    }

    /// Mean forecast intensity over the look-ahead window from `now_s`, and `w(now) /
    /// mean w` over it (above 1 when now is cleaner than the day ahead is forecast to be; 1
    /// under the myopic forecast).
    pub fn pacing(&self, series: &CarbonSeries, now_s: f64) -> (f64, f64) {
        let window = self.window(series, now_s);
        let n = LOOKAHEAD_POINTS as f64;
        let mean = window.iter().sum::<f64>() / n;
        let mean_weight = window.iter().map(|&c| self.weight(c)).sum::<f64>() / n;
        (mean, self.weight(window[0]) / mean_weight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gapbench_model::SyntheticGrid;

    /// The one-walk window equals the forecast read point by point.
    #[test]
    fn pacing_reads_the_forecast_at_every_window_point() {
        let series = SyntheticGrid::GB_LIKE.generate("gb", 72, 3);
        for forecast in [
            Forecast::Myopic,
            Forecast::Oracle,
            Forecast::Noisy {
                sigma: 0.2,
                seed: 9,
            },
        ] {
            for theta in [0.0, 1.0, 2.5] {
                let pacer = CarbonPacer::new(forecast, theta, 0.0, 200_000.0);
                for now in [0.0, 3600.0, 12_345.6, 250_000.0] {
                    let points: Vec<f64> = (0..LOOKAHEAD_POINTS)
                        .map(|k| {
                            let at = now + LOOKAHEAD_S * k as f64 / LOOKAHEAD_POINTS as f64;
                            pacer.predicted(&series, now, at)
                        })
                        .collect();
                    let n = LOOKAHEAD_POINTS as f64;
                    let mean = points.iter().sum::<f64>() / n;
                    let weight = |c: f64| c.max(1.0).powf(-theta);
                    let relative =
                        weight(points[0]) / (points.iter().map(|&c| weight(c)).sum::<f64>() / n);
                    let (m, r) = pacer.pacing(&series, now);
                    assert!((m - mean).abs() < 1e-9 * mean, "{forecast:?} {now}");
                    assert!(
                        (r - relative).abs() < 1e-9 * relative,
                        "{forecast:?} θ={theta}"
                    );
                }
            }
        }
    }
}
