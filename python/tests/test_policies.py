"""Python score functions run through the scheduler like the built-in policies."""

import pandas as pd
import pytest

import gapbench


def best_fit(node, task):
    """BestFit (reference-semantics §5.6) in Python, term for term as the Rust policy."""
    left = 0.0
    left += node.cpu_free_after_milli / 128000 * 0.5
    left += node.gpu_free_after_milli / 8000 * 0.5
    return (1.0 - left) * 100.0


def test_python_best_fit_places_every_task_where_bestfit_does(default_trace):
    scorer = gapbench.Scorer(best_fit)
    ours = gapbench.sweep(default_trace, policy=scorer, seeds=[42])
    native = gapbench.sweep(default_trace, policy="bestfit", seeds=[42])
    assert len(ours) > 1000
    pd.testing.assert_frame_equal(ours, native)
    # Memoised: far fewer calls than (task, feasible node) pairs.
    assert 0 < scorer.calls < 100 * len(ours)


def test_a_callable_mixes_with_built_ins(default_trace):
    def fgd_again(node, task):
        return -node.frag_delta_milli

    spec = "expr{-frag_delta_milli}:300,pwr:700"
    as_expr = gapbench.sweep(default_trace, policy=spec, seeds=[7])
    as_python = gapbench.sweep(default_trace, policy=[(fgd_again, 300), ("pwr", 700)], seeds=[7])
    pd.testing.assert_frame_equal(as_python, as_expr)


class Enough(Exception):
    """Stops a run after a look at the first call."""


def first_call(function):
    """Runs a sweep of the embedded workload until `function` returned once; its value."""
    seen = []

    def once(node, task):
        seen.append(function(node, task))
        raise Enough

    with pytest.raises(gapbench.ScoreError) as raised:
        gapbench.sweep(gapbench.Workload.embedded(), policy=gapbench.Scorer(once, memoize=False))
    assert isinstance(raised.value.__cause__, Enough)
    return seen[0]


def test_the_features_are_those_of_expr():
    def every_feature(node, task):
        return {name: getattr(obj, name) for obj in (node, task) for name in dir(obj)
                if name != "name"}

    seen = first_call(every_feature)
    assert set(seen) == set(gapbench.features().feature) | {"node_in_use"}
    assert isinstance(seen["node_in_use"], bool)
    # The first task lands on an empty cluster: nothing in use, free = capacity.
    assert seen["node_in_use"] is False
    assert seen["cpu_free_milli"] == seen["node_cpu_milli"]
    assert seen["gpu_free_after_milli"] == seen["gpu_free_milli"] - seen["task_gpu_total_milli"]


def test_memoised_functions_cannot_read_memory():
    def memory(node, task):
        return node.mem_free_mib

    with pytest.raises(gapbench.ScoreError, match="not memoised") as raised:
        gapbench.sweep(gapbench.Workload.embedded(), policy=memory, seeds=[1])
    assert isinstance(raised.value.__cause__, AttributeError)
    assert first_call(memory) > 0


def test_an_exception_names_the_task_and_the_node():
    def broken(node, task):
        if node.node_in_use:
            return 1 / 0
        return 1.0

    with pytest.raises(gapbench.ScoreError) as raised:
        gapbench.sweep(gapbench.Workload.embedded(), policy=broken, seeds=[1])
    message = str(raised.value)
    assert "python:broken raised ZeroDivisionError" in message
    assert "for task `" in message and "on node `" in message
    assert isinstance(raised.value.__cause__, ZeroDivisionError)


def test_bad_policies_are_refused_with_a_reason():
    w = gapbench.Workload.embedded()
    with pytest.raises(ValueError, match="unknown policy"):
        gapbench.sweep(w, policy="tetris")
    with pytest.raises(ValueError, match="weight must be positive"):
        gapbench.sweep(w, policy=[(best_fit, 0), ("fgd", 10)])
    with pytest.raises(TypeError, match="score function"):
        gapbench.sweep(w, policy=3)
    with pytest.raises(gapbench.GapbenchError, match="time-mode policy"):
        gapbench.sweep(w, policy="fifo")


def test_a_long_call_shows_its_progress_unless_told_not_to(default_trace, capsys):
    """A sweep kept busy past the progress line's 3 s (its scorer sleeps 4.5 s once) shows
    the line and its end on stderr; with progress=False, none."""
    import time

    slept = []

    def slow_first(node, task):
        if not slept:
            slept.append(True)
            time.sleep(4.5)
        return -node.gpu_free_after_milli

    gapbench.sweep(default_trace, policy=slow_first, seeds=[42])
    err = capsys.readouterr().err
    assert "gapbench.sweep(" in err and "0/1 seeds" in err and "1/1 seeds" in err
    assert err.rstrip().endswith("done")

    slept.clear()
    gapbench.sweep(default_trace, policy=slow_first, seeds=[42], progress=False)
    assert "gapbench.sweep(" not in capsys.readouterr().err
