//! Carbon-intensity forecasts and the carbon pacing weights of GreenFlow-style allocation
//! (time-and-budgets §4.2, all [D]): the round at `t` may spend
//! `allow(t) = (C_total − C_spent − reserve) · w(t) / Σ_{τ ≥ t, τ < horizon} w(τ)·Δ` grams per
//! second, with `w(τ) = CI_forecast(τ)^(−θ)` over the round grid `τ = start + kΔ`.

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

/// Pacing weights on the round grid, with suffix sums.
#[derive(Debug, Clone)]
pub struct CarbonPacer {
    forecast: Forecast,
    theta: f64,
    start_s: f64,
    round_s: f64,
    /// `Σ_{k' ≥ k} w(t_k')·Δ` for grid point `k` (oracle and noisy).
    suffix: Vec<f64>,
    /// Hourly multiplicative errors (noisy).
    errors: Vec<f64>,
}

impl CarbonPacer {
    pub fn new(
        series: &CarbonSeries,
        forecast: Forecast,
        theta: f64,
        start_s: f64,
        horizon_end_s: f64,
        round_s: f64,
    ) -> CarbonPacer {
        let points = (((horizon_end_s - start_s) / round_s).ceil().max(0.0)) as usize;
        let hours = ((horizon_end_s - start_s).max(0.0) / 3600.0).ceil() as usize + 2;
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
        let mut pacer = CarbonPacer {
            forecast,
            theta,
            start_s,
            round_s,
            suffix: Vec::new(),
            errors,
        };
        let mut suffix = vec![0.0; points + 1];
        for k in (0..points).rev() {
            let t = start_s + k as f64 * round_s;
            suffix[k] = suffix[k + 1] + pacer.weight(pacer.predicted(series, t, t)) * round_s;
        }
        pacer.suffix = suffix;
        pacer
    }

    /// The forecast made at `now_s` of the intensity at `at_s`, gCO2e/kWh.
    pub fn predicted(&self, series: &CarbonSeries, now_s: f64, at_s: f64) -> f64 {
        match self.forecast {
            Forecast::Myopic => series.at(now_s),
            Forecast::Oracle => series.at(at_s),
            Forecast::Noisy { .. } => {
                if at_s <= now_s {
                    return series.at(at_s);
                }
                let hour = (((at_s - self.start_s) / 3600.0).max(0.0)) as usize;
                let e = self.errors.get(hour).copied().unwrap_or(0.0);
                (series.at(at_s) * (1.0 + e)).max(1.0)
            }
        }
    }

    fn weight(&self, intensity: f64) -> f64 {
        intensity.max(1.0).powf(-self.theta)
    }

    /// The share of what is left to spend that the round at `now_s` may spend per second:
    /// `w(now) / Σ_{τ ≥ now} w(τ)·Δ`, 1/Δ past the horizon.
    pub fn share_per_s(&self, series: &CarbonSeries, now_s: f64) -> f64 {
        let k = ((now_s - self.start_s) / self.round_s).floor().max(0.0) as usize;
        if k + 1 >= self.suffix.len() {
            return 1.0 / self.round_s;
        }
        let rest = match self.forecast {
            // The current intensity everywhere: even pacing whatever θ.
            Forecast::Myopic => (self.suffix.len() - 1 - k) as f64 * self.round_s,
            _ => self.suffix[k] / self.weight(self.predicted(series, now_s, now_s)),
        };
        1.0 / rest.max(self.round_s)
    }
}
