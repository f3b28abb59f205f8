"""Sweeps of a built-in policy from Python, as a whole process (not a test): load the openb
default trace, sweep the seeds, get the curve as one DataFrame — what a script does. Timed
against `gapbench run` doing the same sweeps (docs/python.md, "Speed"):

    RAYON_NUM_THREADS=1 python python/benchmarks/sweeps.py TRACES_DIR fgd 42..51
    RAYON_NUM_THREADS=1 gapbench run --nodes TRACES_DIR/openb_node_list_gpu_node.csv \\
        --tasks TRACES_DIR/openb_pod_list_default.csv --policy fgd --seeds 42..51 --out OUT
"""

import sys

import gapbench


def main() -> None:
    traces, policy, seeds = sys.argv[1], sys.argv[2], sys.argv[3]
    first, last = (int(seed) for seed in seeds.split(".."))
    workload = gapbench.Workload.openb(
        nodes=f"{traces}/openb_node_list_gpu_node.csv",
        tasks=f"{traces}/openb_pod_list_default.csv",
    )
    curve = gapbench.sweep(workload, policy=policy, seeds=range(first, last + 1))
    print(f"{curve.seed.nunique()} sweeps, {len(curve)} rows")


if __name__ == "__main__":
    main()
