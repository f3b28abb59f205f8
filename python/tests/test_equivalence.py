"""The package runs the CLI's engine: the same inputs give the CLI's rows."""

import io

import pandas as pd
import pytest

import gapbench

from conftest import run_cli


def read(path) -> pd.DataFrame:
    return pd.read_csv(path)


def test_sweep_gives_the_cli_curve_for_every_seed(cli, traces, default_trace, tmp_path):
    nodes = traces / "openb_node_list_gpu_node.csv"
    tasks = traces / "openb_pod_list_default.csv"
    for policy in ["fgd", "pwr:200,fgd:800", "expr:gpu_free_after_milli / 80"]:
        out = tmp_path / f"run-{abs(hash(policy))}"
        run_cli(cli, "run", "--nodes", nodes, "--tasks", tasks, "--policy", policy,
                "--seeds", "42..43", "--out", out)
        curve = gapbench.sweep(default_trace, policy=policy, seeds=[42, 43])
        assert list(curve.columns) == ["seed"] + list(read(out / "seed-42" / "curve.csv").columns)
        for seed in (42, 43):
            ours = curve[curve.seed == seed].drop(columns="seed").reset_index(drop=True)
            # Exactly: the frame holds the values the file's rounded decimals read back as.
            pd.testing.assert_frame_equal(ours, read(out / f"seed-{seed}" / "curve.csv"),
                                          check_exact=True)


def test_gap_gives_the_cli_rows_and_shares_instances(cli, default_trace, traces, tmp_path):
    """One policy: the `gap` command's rows — every row's deterministic columns, and the
    solve's columns where both proved optimality (what a clock-limited solve proves is not
    asserted). Several policies: each one's rows as alone, each shared instance solved once."""
    args = dict(seed=42, checkpoints=[30, 50], objectives=["power", "frag"], time_limit=10,
                sample_nodes=8, threads=1)
    deterministic = ["checkpoint_pct", "objective", "policy", "seed", "nodes", "tasks",
                     "heuristic_value", "instance"]
    solved = ["incumbent", "bound", "gap_low_pct", "gap_high_pct"]
    cli_rows = {}
    for policy in ("fgd", "pwr"):
        out = tmp_path / f"gap-{policy}"
        run_cli(cli, "gap", "--nodes", traces / "openb_node_list_gpu_node.csv",
                "--tasks", traces / "openb_pod_list_default.csv", "--policy", policy,
                "--seed", 42, "--checkpoints", "30,50", "--objectives", "power,frag",
                "--time-limit", 10, "--sample-nodes", 8, "--threads", 1,
                "--pareto-points", 0, "--out", out)
        cli_rows[policy] = read(out / "gaps.csv")
        ours = gapbench.gap(default_trace, policy=policy, **args)
        assert list(ours.columns) == list(cli_rows[policy].columns)
        assert len(ours) == 4
        pd.testing.assert_frame_equal(ours[deterministic], cli_rows[policy][deterministic])
        proven = (ours.status == "optimal") & (cli_rows[policy].status == "optimal")
        pd.testing.assert_frame_equal(ours.loc[proven, solved], cli_rows[policy].loc[proven, solved],
                                      rtol=1e-9)
    both = gapbench.gap(default_trace, policy=["fgd", "pwr"], **args)
    assert list(both.policy.drop_duplicates()) == ["fgd", "pwr"]
    for policy, alone in cli_rows.items():
        mine = both[both.policy == policy].reset_index(drop=True)
        pd.testing.assert_frame_equal(mine[deterministic], alone[deterministic])
        proven = (mine.status == "optimal") & (alone.status == "optimal")
        pd.testing.assert_frame_equal(mine.loc[proven, solved], alone.loc[proven, solved],
                                      rtol=1e-6)
    # An instance both policies reach is solved once: one bound, one status, one solve time.
    for _, rows in both.groupby(["instance", "objective"]):
        assert rows.bound.nunique(dropna=False) == 1
        assert rows.status.nunique() == 1 and rows.solve_s.nunique() == 1


def test_replay_gives_the_cli_files(cli, tmp_path):
    embedded = gapbench.Workload.embedded()
    out = tmp_path / "replay"
    run_cli(cli, "replay", "--policy", "pwr", "--idle", "sleep-when-empty", "--seed", 42,
            "--gpus", 64, "--out", out)
    r = gapbench.replay(embedded, policy="pwr", idle="sleep-when-empty", seed=42, gpus=64)
    pd.testing.assert_frame_equal(r.tasks, read(out / "tasks.csv"))
    pd.testing.assert_frame_equal(r.timeline, read(out / "timeline.csv"))
    import json
    cli_summary = json.loads((out / "summary.json").read_text())["runs"][0]
    assert cli_summary.pop("seed") == 42
    assert r.summary == cli_summary


def test_replay_bound_holds(tmp_path):
    embedded = gapbench.Workload.embedded()
    r = gapbench.replay(embedded, policy="fifo", seed=42, gpus=16, first_jobs=40, bound=True,
                        bound_time_limit=20)
    assert r.bound is not None
    assert r.bound["energy_kwh"] <= r.summary["total_energy_kwh"] + 1e-9


def test_load_results_reads_every_csv(cli, tmp_path):
    out = tmp_path / "run"
    run_cli(cli, "run", "--policy", "bestfit", "--seeds", "1..2", "--out", out)
    res = gapbench.load_results(out)
    assert set(res.tables) == {"mean_curve", "seed-1/curve", "seed-2/curve"}
    pd.testing.assert_frame_equal(res.mean_curve, read(out / "mean_curve.csv"))
    with pytest.raises(AttributeError, match="mean_curve"):
        res.grid


def test_bench_writes_the_cli_tables(cli, traces, tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(
        'name = "tiny"\n'
        'description = "default trace, 2 seeds, FGD and BestFit sweeps"\n'
        'nodes = "openb_node_list_gpu_node.csv"\n'
        'traces = ["default"]\n'
        'policies = ["fgd", "bestfit"]\n'
        'seeds = "42..43"\n'
        "tune = 1.3\n"
    )
    run_cli(cli, "bench", "--spec", spec, "--traces", traces, "--out", tmp_path / "cli")
    res = gapbench.bench(spec, out=tmp_path / "py", traces=traces, progress=False)
    for table in ("grid", "mean_grid", "runs"):
        pd.testing.assert_frame_equal(res[table], read(tmp_path / "cli" / f"{table}.csv"))
    assert set(res.runs.policy) == {"fgd", "bestfit"} and set(res.runs.seed) == {42, 43}
