"""Rough sweep timings from Python (not a test): one arrival sweep of the real openb
default trace (seed 42, the CLI's defaults) with BestFit three ways — a Python function,
the same formula as `expr:`, the native policy — which place every task identically, and
the Python function without memoisation; then built-in policies from Python.

    python python/benchmarks/sweep_speed.py [TRACES_DIR] [ROUNDS]

Runs are interleaved round by round so that a drift of the machine's speed hits every
variant alike; the median per variant is printed, with the Python function's calls.
"""

import statistics
import sys
import time
from pathlib import Path

import gapbench

BEST_FIT_EXPR = (
    "expr:(1 - (cpu_free_after_milli / 128000 * 0.5 + gpu_free_after_milli / 8000 * 0.5)) * 100"
)


def best_fit(node, task):
    left = 0.0
    left += node.cpu_free_after_milli / 128000 * 0.5
    left += node.gpu_free_after_milli / 8000 * 0.5
    return (1.0 - left) * 100.0


def main() -> None:
    traces = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/traces/openb")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    workload = gapbench.Workload.openb(
        nodes=traces / "openb_node_list_gpu_node.csv",
        tasks=traces / "openb_pod_list_default.csv",
    )
    variants = {
        "python function (memoised)": lambda: gapbench.Scorer(best_fit),
        "python function (not memoised)": lambda: gapbench.Scorer(best_fit, memoize=False),
        "expr: (same formula)": lambda: BEST_FIT_EXPR,
        "native bestfit": lambda: "bestfit",
        "native fgd": lambda: "fgd",
        "native pwr": lambda: "pwr",
    }
    times = {name: [] for name in variants}
    calls = {}
    reference = None
    for _ in range(rounds):
        for name, make in variants.items():
            policy = make()
            start = time.perf_counter()
            curve = gapbench.sweep(workload, policy=policy, seeds=[42])
            times[name].append(time.perf_counter() - start)
            if isinstance(policy, gapbench.Scorer):
                calls[name] = policy.calls
            if "bestfit" in name or "function" in name or "expr" in name:
                placements = curve[["event", "node", "devices"]]
                if reference is None:
                    reference = placements
                assert placements.equals(reference), f"{name} placed differently"
    events = len(curve)
    print(f"one sweep of {events} task events, median of {rounds} rounds (s):")
    for name, seconds in times.items():
        extra = f"  ({calls[name]:,} Python calls)" if name in calls else ""
        print(f"  {name:32s} {statistics.median(seconds):7.2f}{extra}")


if __name__ == "__main__":
    main()
