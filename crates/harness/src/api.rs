//! The public API: what the `gapbench` CLI and the coming Python binding both call, on
//! owned data. A [`Workload`] (the embedded openb-like default, openb CSVs, or an instance
//! file) and a [`Policy`] (the CLI's policy strings) go into [`sweep`] (an arrival sweep's
//! curve), [`gap`] (heuristic against exact at checkpoints), [`replay`] (time mode, with an
//! optional energy bound) or, for a whole experiment matrix, [`bench()`].
//!
//! Each function is a thin call into the module that does the work (`run`, `gap`,
//! `replay`, `replay_bound`, `bench`); nothing here computes on its own.
//!
//! ```
//! use gapbench::{sweep, Policy, Workload};
//!
//! let workload = Workload::embedded()?;
//! let policy: Policy = "fgd".parse()?;
//! let curve = sweep(&workload, &policy, 42)?;
//! // One row per whole arrived percent, arrivals only growing, allocation a share.
//! assert!(!curve.grid.is_empty());
//! assert!(curve.grid.windows(2).all(|w| w[0].arrived_pct <= w[1].arrived_pct));
//! assert!(curve.grid.iter().all(|s| (0.0..=100.0).contains(&s.alloc_pct)));
//! assert!(curve.curve_csv().starts_with("event,task,outcome"));
//! # anyhow::Ok(())
//! ```

use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{bail, Result};
use gapbench_bounds::replay_bound::BoundOptions;
use gapbench_ilp::Objective;
use gapbench_model::{Cluster, CpuPowerProfile, InputRules, NodeOrder, Task, TaskOrder};
use gapbench_online::PolicySpec;
use gapbench_replay::policies::{time_policy_with, PolicySettings};
use gapbench_replay::{ReplayOptions, ReplayResult, Summary};
use rayon::prelude::*;

pub use crate::bench::{BenchOptions, BenchOutcome};
pub use crate::gap::{FrontRow, GapMethod, GapRow};
pub use crate::replay::Selection;
pub use crate::replay_bound::BoundRecord;
pub use crate::summary::Sample;
pub use gapbench_results::row::{Cell, CsvRow};
pub use gapbench_results::CurveRow;

use crate::gap::GapSettings;
use crate::replay::{ReplayInputs, TimedSource};
use crate::run::{run_seed, seed_summary, RunSettings};
use crate::workload::fingerprint_file;

/// A cluster and its tasks, with where they came from (so that a replay can read the
/// same files' times).
#[derive(Debug, Clone)]
pub struct Workload {
    sweep: crate::workload::Workload,
    source: Source,
    cpu_power: CpuPowerProfile,
    rules: InputRules,
}

/// Where a [`Workload`] came from.
#[derive(Debug, Clone)]
enum Source {
    /// openb CSVs, each `None` falling back to the embedded default.
    Openb {
        nodes: Option<PathBuf>,
        tasks: Option<PathBuf>,
    },
    /// An instance file (a snapshot: no arrival times).
    Instance(PathBuf),
}

impl Workload {
    /// The embedded openb-like default: the 1,213-node openb GPU cluster and the task
    /// shapes of the openb `default` trace.
    pub fn embedded() -> Result<Workload> {
        Workload::openb(None, None)
    }

    /// openb CSVs (`None`: the embedded default's part), reference CPU power profile and
    /// input rules.
    pub fn openb(nodes: Option<&Path>, tasks: Option<&Path>) -> Result<Workload> {
        Workload::openb_with(
            nodes,
            tasks,
            CpuPowerProfile::Reference,
            InputRules::Reference,
        )
    }

    /// openb CSVs under a CPU power profile and input rules; see [`Workload::warnings`]
    /// for the values the rules converted.
    pub fn openb_with(
        nodes: Option<&Path>,
        tasks: Option<&Path>,
        cpu_power: CpuPowerProfile,
        rules: InputRules,
    ) -> Result<Workload> {
        Ok(Workload {
            sweep: crate::workload::Workload::load(nodes, None, tasks, cpu_power, rules)?,
            source: Source::Openb {
                nodes: nodes.map(Path::to_path_buf),
                tasks: tasks.map(Path::to_path_buf),
            },
            cpu_power,
            rules,
        })
    }

    /// The cluster and every arrived task of an instance file (`gapbench gap --export`),
    /// checked as the library index checks it (`export::load_checked`).
    pub fn instance(path: &Path) -> Result<Workload> {
        let file = crate::export::load_checked(path)?;
        let rebuilt = gapbench_ilp::instance::verify_instance(&file)?;
        let cpu_power = rebuilt.cluster.cpu_power_profile;
        Ok(Workload {
            sweep: crate::workload::Workload {
                cluster: rebuilt.cluster,
                tasks: rebuilt.tasks,
                inputs: vec![fingerprint_file("instance", path)?],
            },
            source: Source::Instance(path.to_path_buf()),
            cpu_power,
            rules: InputRules::Reference,
        })
    }

    pub fn cluster(&self) -> &Cluster {
        &self.sweep.cluster
    }

    pub fn tasks(&self) -> &[Task] {
        &self.sweep.tasks
    }

    /// The values the loader converted, one line each.
    pub fn warnings(&self) -> Vec<String> {
        self.sweep.warnings()
    }

    /// A one-line description: nodes, GPUs, tasks and sources.
    pub fn describe(&self) -> String {
        self.sweep.describe()
    }

    /// The runner's workload (cluster, tasks and input fingerprints).
    pub fn as_sweep_workload(&self) -> &crate::workload::Workload {
        &self.sweep
    }

    /// The timed inputs of a replay of this workload's files.
    fn replay_inputs(&self, config: &ReplayConfig) -> Result<ReplayInputs> {
        let (nodes, tasks) = match &self.source {
            Source::Openb { nodes, tasks } => (nodes.clone(), tasks.clone()),
            Source::Instance(path) => bail!(
                "{}: an instance file is a snapshot without arrival times; replay its trace's CSVs",
                path.display()
            ),
        };
        ReplayInputs::load(
            TimedSource::Openb {
                nodes,
                gpu_models: None,
                tasks,
            },
            config.arrival_scale,
            config.selection,
            self.rules,
            self.cpu_power,
        )
    }
}

/// A policy as the CLI's `--policy` takes it: a sweep policy spec (`fgd`,
/// `pwr:200,fgd:800`, `expr:…`), which every command runs, or a time-mode policy name
/// (`fifo`, `eaco-r`, `powerflow`, …), which only [`replay`] runs.
#[derive(Debug, Clone)]
pub struct Policy {
    name: String,
    sweep: Option<PolicySpec>,
}

impl FromStr for Policy {
    type Err = anyhow::Error;

    fn from_str(text: &str) -> Result<Policy> {
        let name = text.trim().to_string();
        if let Ok(spec) = name.parse::<PolicySpec>() {
            return Ok(Policy {
                name,
                sweep: Some(spec),
            });
        }
        // A time policy's constructor does not look at the cluster: an empty one checks
        // the name (the error lists every policy time mode knows).
        let empty =
            Cluster::new(Vec::new(), CpuPowerProfile::Reference).map_err(anyhow::Error::msg)?;
        time_policy_with(&name, &empty, &PolicySettings::default()).map_err(anyhow::Error::msg)?;
        Ok(Policy { name, sweep: None })
    }
}

impl Policy {
    /// A sweep policy built in code (a mix with external scorers, which no text spells);
    /// its name is the spec's text.
    pub fn from_spec(spec: PolicySpec) -> Policy {
        Policy {
            name: spec.to_string(),
            sweep: Some(spec),
        }
    }

    /// The name as given (trimmed).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The sweep policy spec; an error for a time-mode-only policy.
    pub fn sweep_spec(&self) -> Result<&PolicySpec> {
        match &self.sweep {
            Some(spec) => Ok(spec),
            None => bail!(
                "`{}` is a time-mode policy: only a replay runs it (an arrival sweep takes a sweep policy spec such as fgd)",
                self.name
            ),
        }
    }

    /// The run settings of the CLI's defaults: tuned to 1.3 × GPU capacity, shuffled
    /// arrivals, random node tie-break.
    fn run_settings(&self) -> Result<RunSettings> {
        Ok(RunSettings::new(
            self.sweep_spec()?.clone(),
            Some(1.3),
            TaskOrder::Shuffled,
            NodeOrder::Random,
        ))
    }
}

/// One seed's arrival sweep (`gapbench run`'s defaults: tune 1.3, shuffled arrivals).
#[derive(Debug, Clone)]
pub struct SweepCurve {
    pub seed: u64,
    /// The curve at each whole arrived percent: the values after the last event at or
    /// below it (`grid.csv`'s rows).
    pub grid: Vec<Sample>,
    /// The values after the last event.
    pub final_sample: Sample,
    /// Failed task events, of `events`.
    pub failed: usize,
    pub events: usize,
    /// Every event as `curve.csv` holds it.
    pub curve: Vec<CurveRow>,
}

impl SweepCurve {
    /// `curve.csv`'s text, as `gapbench run` writes it.
    pub fn curve_csv(&self) -> String {
        CurveRow::csv(&self.curve)
    }
}

/// Runs `policy`'s arrival sweep of `workload` with `seed` (see [`SweepCurve`]).
pub fn sweep(workload: &Workload, policy: &Policy, seed: u64) -> Result<SweepCurve> {
    workload.sweep.require_gpus()?;
    let settings = policy.run_settings()?;
    crate::run::check_sweep_memory(&workload.sweep, &settings, 1)?;
    let run = run_seed(&workload.sweep, &settings, seed);
    let summary = seed_summary(&workload.sweep.cluster, &run);
    let curve = crate::summary::curve_rows(&workload.sweep.cluster, &run.prepared, &run.result);
    Ok(SweepCurve {
        seed,
        grid: summary.grid,
        final_sample: summary.final_sample,
        failed: summary.failed,
        events: summary.events,
        curve,
    })
}

/// [`sweep`] for each of `seeds`, in seed order: side by side on rayon's threads when
/// `parallel`, as `gapbench run` runs its seeds (a caller whose policy calls back into an
/// interpreter that must see Ctrl-C on its own thread runs them one after another).
pub fn sweeps(
    workload: &Workload,
    policy: &Policy,
    seeds: &[u64],
    parallel: bool,
) -> Result<Vec<SweepCurve>> {
    sweeps_observed(workload, policy, seeds, parallel, &|_| {})
}

/// [`sweeps`], calling `seed_done` with each seed as its sweep ends (progress, from any of
/// the threads).
pub fn sweeps_observed(
    workload: &Workload,
    policy: &Policy,
    seeds: &[u64],
    parallel: bool,
    seed_done: &(dyn Fn(u64) + Sync),
) -> Result<Vec<SweepCurve>> {
    let one = |&seed: &u64| {
        let curve = sweep(workload, policy, seed);
        seed_done(seed);
        curve
    };
    if !parallel {
        return seeds.iter().map(one).collect();
    }
    let settings = policy.run_settings()?;
    crate::run::check_sweep_memory(
        &workload.sweep,
        &settings,
        rayon::current_num_threads().min(seeds.len()),
    )?;
    seeds.par_iter().map(one).collect()
}

/// How a [`gap`] study solves, besides its checkpoints and objectives. The defaults are
/// the `gap` command's.
#[derive(Debug, Clone)]
pub struct GapOptions {
    /// Draw a sub-cluster of this many nodes (the cluster's node-type mix, seeded).
    pub sample_nodes: Option<usize>,
    pub time_limit_s: f64,
    pub mip_rel_gap: f64,
    pub threads: Option<u32>,
    /// Points of the power–fragmentation front per checkpoint (0: none).
    pub pareto_points: usize,
    pub front_time_limit_s: Option<f64>,
    pub exact_max_nodes: usize,
    pub method: GapMethod,
}

impl Default for GapOptions {
    fn default() -> Self {
        GapOptions {
            sample_nodes: None,
            time_limit_s: 60.0,
            mip_rel_gap: 0.0,
            threads: None,
            pareto_points: 5,
            front_time_limit_s: None,
            exact_max_nodes: 128,
            method: GapMethod::Auto,
        }
    }
}

/// A gap study's rows (one per policy, checkpoint and objective) and front points.
#[derive(Debug, Clone)]
pub struct GapStudy {
    pub rows: Vec<GapRow>,
    pub fronts: Vec<FrontRow>,
}

/// Heuristic against exact: each policy's sweep of `workload` with `seed`, and at each
/// checkpoint (arrived GPU demand in % of capacity) every objective solved exactly. One
/// policy is studied as `gapbench gap` does; several as the bench does (each distinct
/// instance solved once, [`GapMethod::Auto`] only).
///
/// ```
/// use gapbench::{gap, GapOptions, Policy, Workload};
/// use gapbench_ilp::Objective;
///
/// let workload = Workload::embedded()?;
/// let policies = ["fgd".parse::<Policy>()?];
/// let options = GapOptions {
///     sample_nodes: Some(5),
///     time_limit_s: 20.0,
///     pareto_points: 0,
///     threads: Some(1),
///     ..GapOptions::default()
/// };
/// let study = gap(&workload, &policies, 42, &[50.0], &[Objective::Power], &options)?;
/// let row = &study.rows[0];
/// // Whatever the clock allowed: the proven bound is at most the incumbent (power is
/// // minimised), and the gap is an interval, low end first.
/// if let (Some(bound), Some(incumbent)) = (row.bound, row.incumbent) {
///     assert!(bound <= incumbent + 1e-6);
/// }
/// if let (Some(low), Some(high)) = (row.gap_low_pct, row.gap_high_pct) {
///     assert!(low <= high);
/// }
/// # anyhow::Ok(())
/// ```
pub fn gap(
    workload: &Workload,
    policies: &[Policy],
    seed: u64,
    checkpoints: &[f64],
    objectives: &[Objective],
    options: &GapOptions,
) -> Result<GapStudy> {
    let settings = GapSettings {
        checkpoints: checkpoints.to_vec(),
        objectives: objectives.to_vec(),
        sample_nodes: options.sample_nodes,
        time_limit_s: options.time_limit_s,
        mip_rel_gap: options.mip_rel_gap,
        threads: options.threads,
        pareto_points: options.pareto_points,
        front_time_limit_s: options.front_time_limit_s,
        exact_max_nodes: options.exact_max_nodes,
    };
    settings.validate()?;
    workload.sweep.require_gpus()?;
    let runs = policies
        .iter()
        .map(Policy::run_settings)
        .collect::<Result<Vec<_>>>()?;
    let (rows, fronts) = match runs.as_slice() {
        [] => bail!("no policy to study"),
        [run] => crate::gap::gap_study_observed(
            &workload.sweep,
            run,
            &settings,
            options.method,
            seed,
            &mut |_| {},
            &mut |_| Ok(()),
        )?,
        _ if options.method != GapMethod::Auto => {
            bail!("several policies are studied as the bench does, by the auto method")
        }
        _ => crate::gap::gap_studies(&workload.sweep, &runs, &settings, seed, false)?,
    };
    Ok(GapStudy { rows, fronts })
}

/// How a [`replay`] runs besides its workload, policy and seed.
#[derive(Debug, Clone)]
pub struct ReplayConfig {
    /// The engine's options (queue, power, budget, …); its seed is the replay's.
    pub options: ReplayOptions,
    /// The budgeted policies' settings.
    pub policy_settings: PolicySettings,
    /// Which part of the cluster and workload to replay.
    pub selection: Selection,
    /// Inter-arrival times divided by this factor.
    pub arrival_scale: f64,
    /// Also prove a lower bound on the energy of the same tasks at the replay's own times.
    pub bound: Option<BoundOptions>,
}

impl Default for ReplayConfig {
    fn default() -> Self {
        ReplayConfig {
            options: ReplayOptions::default(),
            policy_settings: PolicySettings::default(),
            selection: Selection::default(),
            arrival_scale: 1.0,
            bound: None,
        }
    }
}

/// One seed's replay: its tasks and timeline (`result.tasks`, `result.timeline`), its
/// summary, and its energy bound when asked.
pub struct Replay {
    pub seed: u64,
    pub result: ReplayResult,
    pub summary: Summary,
    pub bound: Option<BoundRecord>,
}

/// Replays `policy` on `workload` in time mode with `seed` (the embedded default draws its
/// times from the default trace's statistics; CSVs need their time columns).
///
/// ```
/// use gapbench::{replay, Policy, ReplayConfig, Selection, Workload};
/// use gapbench::replay_bound::bound_options;
///
/// let workload = Workload::embedded()?;
/// let config = ReplayConfig {
///     selection: Selection { gpus: Some(16), first_jobs: Some(40), ..Selection::default() },
///     bound: Some(bound_options(20.0, 4, Some(20), Some(20))),
///     ..ReplayConfig::default()
/// };
/// let run = replay(&workload, &"fifo".parse::<Policy>()?, 42, &config)?;
/// assert_eq!(run.result.tasks.len(), run.summary.tasks);
/// // The bound holds whenever its solve stopped: at most the replay's own energy.
/// let bound = run.bound.expect("asked for");
/// assert!(bound.energy_kwh <= run.summary.total_energy_kwh + 1e-9);
/// # anyhow::Ok(())
/// ```
pub fn replay(
    workload: &Workload,
    policy: &Policy,
    seed: u64,
    config: &ReplayConfig,
) -> Result<Replay> {
    let inputs = workload.replay_inputs(config)?;
    let options = ReplayOptions {
        seed,
        ..config.options.clone()
    };
    crate::replay::check_budget(&inputs, &options, seed)?;
    let name = policy.name();
    let mut runs =
        crate::replay::run_replays(&inputs, name, &config.policy_settings, &options, &[seed])?;
    let bounds = match config.bound {
        Some(bound) => crate::replay_bound::bound_runs(&inputs, name, &options, bound, &mut runs)?,
        None => Vec::new(),
    };
    let Some(run) = runs.pop() else {
        bail!("no replay ran");
    };
    Ok(Replay {
        seed,
        summary: run.result.summary(),
        result: run.result,
        bound: bounds.into_iter().next(),
    })
}

/// Runs the experiment matrix of `options.spec` (`gapbench bench`): resumable, sharded
/// when asked, aggregated into tidy CSVs, figures and REPORT.md when complete.
pub fn bench(options: &BenchOptions) -> Result<BenchOutcome> {
    crate::bench::run_bench(options)
}
