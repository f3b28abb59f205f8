//! Dual-optimal inequalities between shapes (Ben Amor, Desrosiers and Valério de Carvalho,
//! 2006): when a task of shape `s'` can take the place of a task of shape `s` in every
//! configuration at no higher cost, some optimal duals satisfy `y_s ≥ y_s'`. Adding them to
//! the master as exchange columns (cost 0, `−1` in row `s`, `+1` in row `s'`: a slot of `s`
//! serves a task of `s'`) leaves its optimum unchanged and cuts off the oscillating duals
//! that make plain column generation tail off.
//!
//! Power is monotone in what a node holds (sockets and busy GPUs only grow with CPU and
//! devices used), so the inequalities hold for it; the FGD fragment amount is not monotone
//! and gets none, and allocation (`≤` rows) needs none.

use crate::shapes::Shape;

/// Dominators kept per shape: the smallest ones; longer chains follow by transitivity.
const DOMINATORS_PER_SHAPE: usize = 3;

/// Whether a task of `small` fits wherever a task of `large` sits, using a subset of its
/// CPU, memory and GPU capacity (on a subset of its devices), on any GPU model `large`
/// may use.
pub(crate) fn can_replace(small: &Shape, large: &Shape) -> bool {
    let models = small.gpu_models.mask() == 0
        || (large.gpu_models.mask() != 0
            && large.gpu_models.mask() & !small.gpu_models.mask() == 0);
    let gpus = small.gpu_count == 0
        || (small.gpu_count <= large.gpu_count && small.gpu_milli <= large.gpu_milli);
    small.cpu_milli <= large.cpu_milli && small.memory_mib <= large.memory_mib && gpus && models
}

/// Exchange pairs `(s, s')`: `s'` can replace `s` (and they differ), at most
/// [`DOMINATORS_PER_SHAPE`] smallest dominators `s` per `s'`.
pub(crate) fn exchange_pairs(shapes: &[Shape]) -> Vec<(usize, usize)> {
    let size = |s: &Shape| (s.total_gpu_milli(), s.cpu_milli, s.memory_mib);
    let mut pairs = Vec::new();
    for (small_index, small) in shapes.iter().enumerate() {
        let mut dominators: Vec<usize> = (0..shapes.len())
            .filter(|&l| l != small_index && can_replace(small, &shapes[l]))
            .filter(|&l| !can_replace(&shapes[l], small)) // equal shapes are one shape
            .collect();
        dominators.sort_by_key(|&l| (size(&shapes[l]), l));
        pairs.extend(
            dominators
                .into_iter()
                .take(DOMINATORS_PER_SHAPE)
                .map(|large| (large, small_index)),
        );
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use gapbench_model::GpuModelSet;

    fn shape(cpu_milli: u32, gpu_count: u8, gpu_milli: u16, models: &str) -> Shape {
        Shape {
            cpu_milli,
            memory_mib: 1024,
            gpu_count,
            gpu_milli,
            gpu_models: GpuModelSet::parse(models).unwrap(),
            tasks: vec![0],
        }
    }

    #[test]
    fn a_smaller_task_replaces_a_larger_one_only_where_it_may_run() {
        let whole_two = shape(8000, 2, 1000, "");
        let share = shape(4000, 1, 500, "");
        let cpu_only = shape(2000, 0, 0, "");
        assert!(can_replace(&share, &whole_two));
        assert!(can_replace(&cpu_only, &share));
        assert!(!can_replace(&whole_two, &share));
        // More CPU than the slot had: no.
        assert!(!can_replace(&shape(9000, 1, 500, ""), &whole_two));
        // A share larger than the slot's share: no.
        assert!(!can_replace(&shape(1000, 1, 600, ""), &share));
        // Model constraints: the replacement must be allowed wherever the slot's task was.
        let on_v100 = shape(8000, 2, 1000, "V100M32");
        assert!(can_replace(&share, &on_v100));
        assert!(!can_replace(&shape(1000, 1, 500, "T4"), &on_v100));
        assert!(!can_replace(&shape(1000, 1, 500, "T4"), &whole_two));

        let pairs = exchange_pairs(&[whole_two, share, cpu_only]);
        assert!(pairs.contains(&(0, 1)) && pairs.contains(&(1, 2)) && pairs.contains(&(0, 2)));
        assert!(pairs.iter().all(|&(large, small)| large != small));
    }
}
