//! Sub-clusters: a smaller cluster with the full cluster's node-type mix, so the exact
//! per-node formulations solve to proven optimality on a representative instance.

use gapbench_model::rng::{seeded, shuffle};
use gapbench_model::{Cluster, NodeId};

use crate::error::SolveError;

/// Nodes per node type for a sub-cluster of `nodes` nodes: Hamilton's largest-remainder
/// apportionment of the type counts (quota `q_τ = nodes·N_τ/N`; each type gets `⌊q_τ⌋`,
/// the remaining seats go to the largest remainders, ties to the larger type, then type
/// order). When `nodes` is at least the number of types, a type left at zero gets one node,
/// taken from the type furthest above its quota (ties: type order) — every type is then
/// represented. Never more nodes of a type than it has.
pub fn type_quota(type_counts: &[usize], nodes: usize) -> Result<Vec<usize>, SolveError> {
    let total: usize = type_counts.iter().sum();
    if nodes == 0 {
        return Err(SolveError::Problem(
            "a sub-cluster needs at least one node".into(),
        ));
    }
    if nodes > total {
        return Err(SolveError::Problem(format!(
            "cannot draw {nodes} nodes from a cluster of {total}"
        )));
    }
    let quota: Vec<f64> = type_counts
        .iter()
        .map(|&c| nodes as f64 * c as f64 / total as f64)
        .collect();
    let mut seats: Vec<usize> = quota.iter().map(|q| q.floor() as usize).collect();
    let mut order: Vec<usize> = (0..type_counts.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (quota[a] - quota[a].floor(), quota[b] - quota[b].floor());
        rb.total_cmp(&ra)
            .then(type_counts[b].cmp(&type_counts[a]))
            .then(a.cmp(&b))
    });
    let mut left = nodes - seats.iter().sum::<usize>();
    for &t in order.iter().cycle().take(order.len() * 2) {
        if left == 0 {
            break;
        }
        if seats[t] < type_counts[t] {
            seats[t] += 1;
            left -= 1;
        }
    }
    let present = type_counts.iter().filter(|&&c| c > 0).count();
    if nodes >= present {
        for t in 0..type_counts.len() {
            if type_counts[t] == 0 || seats[t] > 0 {
                continue;
            }
            let donor = (0..type_counts.len())
                .filter(|&d| seats[d] > 1)
                .max_by(|&a, &b| {
                    (seats[a] as f64 - quota[a])
                        .total_cmp(&(seats[b] as f64 - quota[b]))
                        .then(b.cmp(&a))
                });
            if let Some(donor) = donor {
                seats[donor] -= 1;
                seats[t] = 1;
            }
        }
    }
    Ok(seats)
}

/// Draws a sub-cluster of `nodes` nodes with `cluster`'s node-type mix ([`type_quota`]):
/// within each type, which nodes are taken is a seeded uniform draw. Nodes keep their names
/// and their order in the full cluster. Returns the sub-cluster and, per sub-cluster node,
/// its id in `cluster`. Deterministic in (`cluster`, `nodes`, `seed`).
pub fn sample_sub_cluster(
    cluster: &Cluster,
    nodes: usize,
    seed: u64,
) -> Result<(Cluster, Vec<NodeId>), SolveError> {
    let seats = type_quota(&cluster.type_counts(), nodes)?;
    let mut rng = seeded(seed);
    let mut chosen: Vec<NodeId> = Vec::with_capacity(nodes);
    for (t, &take) in seats.iter().enumerate() {
        let mut members: Vec<NodeId> = (0..cluster.len() as NodeId)
            .filter(|&n| usize::from(cluster.nodes[n as usize].type_id) == t)
            .collect();
        shuffle(&mut rng, &mut members);
        chosen.extend_from_slice(&members[..take]);
    }
    chosen.sort_unstable();
    let sub = cluster
        .sibling(chosen.iter().map(|&n| {
            (
                cluster.nodes[n as usize].name.clone(),
                *cluster.node_type(n),
            )
        }))
        .map_err(|e| SolveError::Problem(e.to_string()))?;
    Ok((sub, chosen))
}
