//! EaCO, energy-aware co-allocation (Haghshenas & Hashemi, arXiv 2412.08294; spec
//! time-and-budgets §2.3–2.6), on the engine's events.
//!
//! For the queue head `j`:
//! 1. Candidates (per node, spec §2.3 [D]): devices whose actual utilisation is at most
//!    `U_threshold` and whose tenants' peak memory plus `j`'s stays within `mem_threshold`
//!    (and, in EaCO-R, whose free reservation holds `j`'s). A one-GPU task may take any such
//!    device; a `g`-GPU task takes the `g` least-utilised ones of a node.
//! 2. Most-utilised candidate first (summed utilisation of the set; ties: nodes already
//!    hosting work, then lower node id, then lower device index).
//! 3. Predict the slowdown of the set with `j` from the history `H` (key: the sorted classes
//!    `(g, m/100, u/100)` of the tenants); an unseen key gets the co-location model plus
//!    `N(0, σ)` noise, stored as a prediction. Accept the first set where no tenant (nor `j`)
//!    would finish later than both its deadline and its finish without `j`.
//! 4. A co-location is observed one epoch later (the longest epoch of the set, at its
//!    speed): the true slowdowns go into `H`, and if a deadline now fails the placement is
//!    undone (progress kept) and `j` retries at the head of the queue.
//!
//! `j` waits when no candidate passes. A job with no slack (σ ≤ 1: LS and Guaranteed by
//! default, or already late) gets devices of its own and nobody joins it there (the paper
//! gives high-priority jobs exclusive resources). CPU-only tasks pack onto the busiest
//! fitting node.

use std::collections::HashMap;

use rand_distr::{Distribution, Normal};

use gapbench_model::rng::SimRng;
use gapbench_model::{DeviceSet, NodeId, Placement, MAX_GPUS_PER_NODE};

use crate::policies::gpu_sets::{device_has_room, host_fits};
use crate::policy::{Action, CapacityMode, ReplayView, TimePolicy};

/// EaCO's thresholds and modes (the paper gives no threshold values; ours are [D]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EacoConfig {
    /// `Reserved` = EaCO-R (comparable with FGD/PWR), `Oversubscribed` = EaCO-O (the paper).
    pub capacity: CapacityMode,
    pub util_threshold_permille: u32,
    pub memory_threshold_permille: u32,
    /// σ of the noise on predictions for unseen co-location sets.
    pub prediction_noise: f64,
}

impl EacoConfig {
    pub fn reserved() -> Self {
        EacoConfig {
            capacity: CapacityMode::Reserved,
            util_threshold_permille: 800,
            memory_threshold_permille: 900,
            prediction_noise: 0.02,
        }
    }

    pub fn oversubscribed() -> Self {
        EacoConfig {
            capacity: CapacityMode::Oversubscribed,
            ..Self::reserved()
        }
    }
}

/// A task's class in the history key: GPU count, milli bucket, utilisation bucket.
type TaskClass = (u8, u16, u16);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct CandidateKey {
    util_permille: u32,
    hosts_work: bool,
    /// Reversed so that the max-heap order prefers the lower node and device.
    node: std::cmp::Reverse<NodeId>,
    first_device: std::cmp::Reverse<u8>,
    devices: DeviceSet,
}

/// A set of devices with no tenant was refused: the search must see every such set.
struct UnsharedRefused;

pub struct Eaco {
    config: EacoConfig,
    /// Slowdown per co-location set: observed, or a (noisy) model prediction.
    history: HashMap<Vec<TaskClass>, f64>,
    candidates: Vec<CandidateKey>,
    /// The best candidate set of devices with no tenant, kept apart from `candidates` when
    /// they are collected without such sets (see `schedule`).
    best_unshared: Option<CandidateKey>,
    /// Observations that found the prediction wrong.
    pub mispredictions: u32,
}

impl Eaco {
    pub fn new(config: EacoConfig) -> Self {
        Eaco {
            config,
            history: HashMap::new(),
            candidates: Vec::new(),
            best_unshared: None,
            mispredictions: 0,
        }
    }

    fn class(view: &ReplayView<'_>, task: u32) -> TaskClass {
        let timed = &view.tasks[task as usize].task;
        let util = view.attributes[task as usize].util_permille;
        (
            timed.gpu_count,
            timed.gpu_milli / 100,
            (util / 100).min(10) as u16,
        )
    }

    fn key(view: &ReplayView<'_>, tenants: impl Iterator<Item = u32>) -> Vec<TaskClass> {
        let mut key: Vec<TaskClass> = tenants.map(|t| Self::class(view, t)).collect();
        key.sort_unstable();
        key
    }

    /// Predicted slowdown of `device` if `task` joins it.
    fn predict(
        &mut self,
        view: &ReplayView<'_>,
        node: NodeId,
        device: usize,
        task: u32,
        rng: &mut SimRng,
    ) -> f64 {
        let load = view.devices.device(node, device);
        if load.tenants.is_empty() {
            return 1.0;
        }
        let key = Self::key(view, load.tenants.iter().copied().chain([task]));
        let util = load.util_permille + view.attributes[task as usize].util_permille;
        let noise = self.config.prediction_noise;
        *self.history.entry(key).or_insert_with(|| {
            let model = view.colocation.slowdown(load.tenants.len() + 1, util);
            let normal = Normal::new(0.0, noise.max(0.0)).expect("valid noise");
            (model + normal.sample(rng)).max(1.0)
        })
    }

    /// Whether a task finishing at `end_s` is acceptable: by its deadline, or no later than
    /// it would finish anyway at `baseline_end_s`.
    fn acceptable(view: &ReplayView<'_>, task: u32, end_s: f64, baseline_end_s: f64) -> bool {
        let deadline = view.attributes[task as usize].deadline_s;
        end_s <= deadline.max(baseline_end_s) * (1.0 + 1e-12)
    }

    /// Whether the task's deadline allows no slowdown at all (σ ≤ 1).
    fn needs_exclusive(view: &ReplayView<'_>, task: u32) -> bool {
        let timed = &view.tasks[task as usize];
        view.attributes[task as usize].deadline_s - timed.arrival_s
            <= timed.duration_s * (1.0 + 1e-12)
    }

    /// Collects the candidate sets for `task` into `candidates`; with `all_unshared` false,
    /// of the sets whose devices have no tenant only the best goes to `best_unshared`.
    fn collect_candidates(&mut self, view: &ReplayView<'_>, task: u32, all_unshared: bool) {
        self.candidates.clear();
        self.best_unshared = None;
        let timed = &view.tasks[task as usize].task;
        let memory = view.attributes[task as usize].gpu_memory_permille;
        let no_slack = {
            let remaining = view.progress[task as usize].remaining_work_s;
            view.attributes[task as usize].deadline_s <= view.now_s + remaining * (1.0 + 1e-12)
                || Self::needs_exclusive(view, task)
        };
        let wanted = usize::from(timed.gpu_count);
        for node in 0..view.cluster.len() as NodeId {
            let hosts_work = view.state.node(node).task_count > 0;
            // An idle node's sets have no tenant, utilisation 0 and no work: the least key
            // of all, so after a first unshared set it cannot give a better one.
            if !hosts_work && !all_unshared && self.best_unshared.is_some() {
                continue;
            }
            if !host_fits(view, node, timed) {
                continue;
            }
            // (utilisation, device, whether it has tenants)
            let mut feasible = [(0u32, 0usize, false); MAX_GPUS_PER_NODE];
            let mut count = 0;
            for (device, load) in view.devices.node(node).iter().enumerate() {
                let ok = load.util_permille <= self.config.util_threshold_permille
                    && load.memory_permille + memory <= self.config.memory_threshold_permille
                    && device_has_room(view, node, device, task, self.config.capacity)
                    && (!no_slack || load.tenants.is_empty())
                    && load
                        .tenants
                        .iter()
                        .all(|&t| !Self::needs_exclusive(view, t));
                if ok {
                    feasible[count] = (load.util_permille, device, !load.tenants.is_empty());
                    count += 1;
                }
            }
            let mut push = |devices: DeviceSet, util_permille: u32, first: usize, shared: bool| {
                let key = CandidateKey {
                    util_permille,
                    hosts_work,
                    node: std::cmp::Reverse(node),
                    first_device: std::cmp::Reverse(first as u8),
                    devices,
                };
                if shared || all_unshared {
                    self.candidates.push(key);
                } else if self.best_unshared.is_none_or(|best| {
                    // Sets come by node, then first device: of two with the same
                    // utilisation and node kind, the earlier is the better.
                    (util_permille, hosts_work) > (best.util_permille, best.hosts_work)
                }) {
                    self.best_unshared = Some(key);
                }
            };
            if wanted == 1 {
                for &(util, device, shared) in &feasible[..count] {
                    push(DeviceSet::single(device), util, device, shared);
                }
            } else if count >= wanted {
                let chosen = &mut feasible[..count];
                chosen.sort_unstable();
                let chosen = &chosen[..wanted];
                let devices = chosen
                    .iter()
                    .fold(DeviceSet::EMPTY, |set, &(_, d, _)| set.with(d));
                let util = chosen.iter().map(|&(u, _, _)| u).sum();
                let shared = chosen.iter().any(|&(_, _, shared)| shared);
                push(devices, util, devices.iter().next().unwrap_or(0), shared);
            }
        }
    }

    /// The first acceptable candidate, most utilised first (steps 2–3): its placement and
    /// when to observe it. With `stop_at_unshared_refusal`, a refused set of devices with
    /// no tenant stops the search (`UnsharedRefused`): the sets kept apart must be tried.
    fn first_acceptable(
        &mut self,
        view: &ReplayView<'_>,
        task: u32,
        rng: &mut SimRng,
        stop_at_unshared_refusal: bool,
    ) -> Result<Option<(Placement, Option<f64>)>, UnsharedRefused> {
        let mut candidates = std::mem::take(&mut self.candidates);
        candidates.extend(self.best_unshared.take());
        let mut heap = std::collections::BinaryHeap::from(candidates);
        let now = view.now_s;
        let remaining = view.progress[task as usize].remaining_work_s;
        let mut chosen = Ok(None);
        while let Some(candidate) = heap.pop() {
            let node = candidate.node.0;
            let mut slowdown: f64 = 1.0;
            for device in candidate.devices.iter() {
                slowdown = slowdown.max(self.predict(view, node, device, task, rng));
            }
            let mut ok = Self::acceptable(view, task, now + remaining * slowdown, now + remaining);
            for device in candidate.devices.iter() {
                for &tenant in &view.devices.device(node, device).tenants {
                    if !ok {
                        break;
                    }
                    let progress = &view.progress[tenant as usize];
                    let left = progress.remaining_at(now);
                    let current = progress.slowdown;
                    let end = now + left * current.max(slowdown);
                    ok = Self::acceptable(view, tenant, end, now + left * current);
                }
            }
            let shared = candidate
                .devices
                .iter()
                .any(|d| !view.devices.device(node, d).tenants.is_empty());
            if !ok && !shared && stop_at_unshared_refusal {
                chosen = Err(UnsharedRefused);
                break;
            }
            if ok {
                let observe_after_s = shared.then(|| {
                    let longest_epoch = candidate
                        .devices
                        .iter()
                        .flat_map(|d| view.devices.device(node, d).tenants.iter().copied())
                        .chain([task])
                        .map(|t| view.attributes[t as usize].epoch_s)
                        .fold(0.0, f64::max);
                    longest_epoch * slowdown
                });
                let devices = candidate.devices;
                chosen = Ok(Some((Placement { node, devices }, observe_after_s)));
                break;
            }
        }
        // Keep the buffer's capacity for the next task.
        self.candidates = heap.into_vec();
        chosen
    }

    /// Places a CPU-only task on the busiest node it fits (most CPU in use, lowest id).
    fn place_cpu_only(&self, view: &ReplayView<'_>, task: u32) -> Action {
        let timed = &view.tasks[task as usize].task;
        let best = (0..view.cluster.len() as NodeId)
            .filter(|&n| host_fits(view, n, timed))
            .max_by_key(|&n| {
                let state = view.state.node(n);
                let used = view.cluster.node_type(n).cpu_milli - state.cpu_left_milli;
                (state.task_count > 0, used, std::cmp::Reverse(n))
            });
        match best {
            Some(node) => Action::Place {
                task,
                placement: Placement {
                    node,
                    devices: DeviceSet::EMPTY,
                },
                capacity: self.config.capacity,
                observe_after_s: None,
                option: None,
            },
            None => Action::Queue { task },
        }
    }
}

impl TimePolicy for Eaco {
    fn name(&self) -> String {
        match self.config.capacity {
            CapacityMode::Reserved => "eaco-r".to_string(),
            CapacityMode::Oversubscribed => "eaco-o".to_string(),
        }
    }

    fn capacity(&self) -> CapacityMode {
        self.config.capacity
    }

    fn schedule(&mut self, view: &ReplayView<'_>, task: u32, rng: &mut SimRng) -> Action {
        if view.tasks[task as usize].task.is_cpu_only() {
            return self.place_cpu_only(view, task);
        }
        // A set of devices with no tenant is predicted at 1.0 and delays nobody, so it is
        // accepted when reached, and the first one reached ends the search: most tasks are
        // decided without ordering the (many) others. Should it be refused after all, the
        // search runs again over every set, in the same order; the predictions it made are
        // in the history by then, so it draws the same noise as one search over all.
        self.collect_candidates(view, task, false);
        let chosen = match self.first_acceptable(view, task, rng, true) {
            Err(UnsharedRefused) => {
                self.collect_candidates(view, task, true);
                self.first_acceptable(view, task, rng, false)
                    .unwrap_or(None)
            }
            Ok(chosen) => chosen,
        };
        match chosen {
            Some((placement, observe_after_s)) => Action::Place {
                task,
                placement,
                capacity: self.config.capacity,
                observe_after_s,
                option: None,
            },
            None => Action::Queue { task },
        }
    }

    fn on_observation(&mut self, view: &ReplayView<'_>, task: u32) -> Vec<Action> {
        let Some(placement) = view.progress[task as usize].placement else {
            return Vec::new();
        };
        let now = view.now_s;
        let mut keep = true;
        for device in placement.devices.iter() {
            let load = view.devices.device(placement.node, device);
            let truth = view.device_slowdown(placement.node, device);
            let key = Self::key(view, load.tenants.iter().copied());
            if let Some(old) = self.history.insert(key, truth) {
                if (old - truth).abs() > 1e-9 {
                    self.mispredictions += 1;
                }
            }
            for &tenant in &load.tenants {
                let progress = &view.progress[tenant as usize];
                let left = progress.remaining_at(now);
                keep &= Self::acceptable(view, tenant, now + left * progress.slowdown, now + left);
            }
        }
        if keep {
            Vec::new()
        } else {
            vec![Action::Undo { task }]
        }
    }
}
