//! One node type's exact pricing on the whole cluster: the real 1,213-node openb cluster,
//! the `default` trace tuned to 1.3 × its GPU capacity, FGD at the 100 % checkpoint; the
//! prices are the duals of the master LP over FGD's own configurations (column
//! generation's first exact round), the type the one with the most nodes. Fragmentation is
//! the objective the pattern pricing was built for; power for comparison. Which of the two
//! the search ends with — a proof, or its node budget — is printed.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use gapbench_ilp::{Objective, PricingCase, Snapshot, SolveOptions};

fn cg_pricing(c: &mut Criterion) {
    let (cluster, tasks) = gapbench_benches::openb_default();
    let prepared = gapbench_benches::prepare_paper(&tasks, &cluster);
    let events = gapbench_benches::fgd_sweep_events(&cluster, &prepared);
    let snapshot = Snapshot::at_checkpoint(&cluster, &prepared, &events, 100.0).expect("snapshot");
    let options = SolveOptions {
        threads: Some(1),
        ..SolveOptions::default()
    };
    let mut group = c.benchmark_group("cg_pricing");
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(200));
    group.measurement_time(Duration::from_secs(3));
    for objective in [Objective::Frag, Objective::Power] {
        let case = PricingCase::new(&snapshot, objective, &options).expect("pricing case");
        let outcome = case.price().expect("pricing");
        let (label, nodes) = case.node_type();
        // At the first round's duals the search may stop at its node budget (its
        // Lagrangian bound then stands in): the time is then the budget's.
        eprintln!(
            "cg_pricing/{}: node type {label} ({nodes} nodes), least reduced cost >= {:.1}, {}",
            objective.name(),
            outcome.lower_bound,
            if outcome.proven {
                "proven"
            } else {
                "node budget reached"
            }
        );
        group.bench_function(objective.name(), |b| {
            b.iter(|| case.price().expect("pricing").lower_bound)
        });
    }
    group.finish();
}

criterion_group!(benches, cg_pricing);
criterion_main!(benches);
