#!/usr/bin/env bash
# A gapbench bench as a Slurm job array: one array task per shard, then a merge job that
# runs once every shard succeeded (--dependency=afterok). `cargo xtask slurm …` builds the
# binary and calls this script with --gapbench.
#
#   gapbench-slurm.sh submit --run DIR --shards N --spec FILE --gapbench BIN
#                            [--traces DIR] [--cpus-per-task C] [--wait] [-- SBATCH_ARGS…]
#   gapbench-slurm.sh wait   --run DIR     # until the jobs end; lists failed shards, exit 1 then
#   gapbench-slurm.sh status --run DIR     # each shard's state and log, then `bench --status`
#
# The run folder DIR (on a file system every node sees) holds the frozen binary and spec
# (bin/gapbench, spec.toml), shards/I (one results folder per shard, shards/I/done once it
# finished), logs/shard-I.out (every attempt, appended) and logs/merge-JOB.out, merged/ (the results: CSVs, figures,
# REPORT.md) and jobs.txt (the submitted job ids). Submitting again into the same DIR
# submits only the shards that are not done, each resuming where it stopped (finished cells
# are kept), and a new merge job; the binary and spec stay the ones first frozen.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
die() { echo "gapbench-slurm: $*" >&2; exit 1; }

run= shards= spec= gapbench= traces= cpus=1 wait_after=0 sbatch_args=()
command=${1:-}
[ $# -gt 0 ] && shift
while [ $# -gt 0 ]; do
    case "$1" in
        --run) run=$2; shift 2 ;;
        --shards) shards=$2; shift 2 ;;
        --spec) spec=$2; shift 2 ;;
        --gapbench) gapbench=$2; shift 2 ;;
        --traces) traces=$2; shift 2 ;;
        --cpus-per-task) cpus=$2; shift 2 ;;
        --wait) wait_after=1; shift ;;
        --) shift; sbatch_args=("$@"); break ;;
        *) die "unknown argument \`$1\` (see the head of $0)" ;;
    esac
done
[ -n "$run" ] || die "--run DIR is required"

# The ids of the last submission, from jobs.txt ("array ID SHARDS" and "merge ID" lines).
last_job() { awk -v kind="$1" '$1 == kind { id = $2 } END { print id }' "$run/jobs.txt" 2>/dev/null; }
# Slurm's state of a job (or array task ARRAY_I): PENDING, RUNNING, FAILED, …; empty once
# the controller has forgotten it.
job_state() { scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -1 | cut -d= -f2 || true; }
# Whether any of the given jobs still has a task queued or running.
in_queue() { [ -n "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; }
shard_count() { cat "$run/shard-count"; }

submit() {
    [ -n "$shards" ] && [ "$shards" -ge 1 ] 2>/dev/null || die "--shards N (N ≥ 1) is required"
    command -v sbatch >/dev/null || die "sbatch not found: not on a Slurm login node?"
    mkdir -p "$run"
    run=$(cd "$run" && pwd)
    mkdir -p "$run/bin" "$run/shards" "$run/logs"
    if [ -f "$run/spec.toml" ]; then
        # A re-submission: the same spec and shard count, the binary first frozen.
        [ "$(shard_count)" = "$shards" ] || die "$run was cut into $(shard_count) shards, not $shards"
        [ -z "$spec" ] || cmp -s "$spec" "$run/spec.toml" \
            || die "$spec differs from the spec $run already runs ($run/spec.toml): use another --run"
        [ -z "$traces" ] || [ "$(cd "$traces" && pwd)" = "$(cat "$run/traces-dir")" ] \
            || die "$run runs on the traces in $(cat "$run/traces-dir"), not $traces"
        local array
        array=$(last_job array)
        if [ -n "$array" ] && in_queue "$array"; then
            die "array job $array still has shards queued or running: wait for it (\`$0 wait --run $run\`) or scancel it"
        fi
        local merge
        merge=$(last_job merge)
        if [ -n "$merge" ] && [ "$(job_state "$merge")" = PENDING ]; then
            # Its dependency failed: it would never run. The new submission has its own.
            echo "cancelling merge job $merge (it waited on shards that failed)"
            scancel "$merge"
        fi
    else
        [ -n "$spec" ] || die "--spec FILE is required"
        [ -n "$gapbench" ] || die "--gapbench BIN is required (cargo xtask slurm builds it)"
        cp "$spec" "$run/spec.toml"
        cp "$gapbench" "$run/bin/gapbench"
        echo "$shards" > "$run/shard-count"
        # Absolute, as the jobs run in $run; empty: the embedded stand-in (or $GAPBENCH_TRACES).
        if [ -n "$traces" ]; then (cd "$traces" && pwd); else echo; fi > "$run/traces-dir"
    fi

    local todo=()
    for ((i = 0; i < shards; i++)); do
        [ -f "$run/shards/$i/done" ] || todo+=("$i")
    done
    local traces_arg=()
    [ -n "$(cat "$run/traces-dir")" ] && traces_arg=("$(cat "$run/traces-dir")")
    local array_id=
    if [ ${#todo[@]} -gt 0 ]; then
        local list
        list=$(IFS=,; echo "${todo[*]}")
        array_id=$(sbatch --parsable --array="$list" --chdir="$run" --cpus-per-task="$cpus" \
            --output="$run/logs/shard-%a.out" --open-mode=append "${sbatch_args[@]}" \
            "$here/shard.sbatch" "$shards" "${traces_arg[@]}") || die "sbatch of the shards failed"
        array_id=${array_id%%;*}
        echo "array $array_id $list" >> "$run/jobs.txt"
        echo "submitted shards $list of $shards as array job $array_id"
    else
        echo "every shard is done already"
    fi
    local dependency=()
    [ -n "$array_id" ] && dependency=(--dependency="afterok:$array_id")
    local merge_id
    merge_id=$(sbatch --parsable "${dependency[@]}" --chdir="$run" --output="$run/logs/merge-%j.out" \
        "${sbatch_args[@]}" "$here/merge.sbatch" "$shards") || die "sbatch of the merge failed"
    merge_id=${merge_id%%;*}
    echo "merge $merge_id" >> "$run/jobs.txt"
    echo "submitted the merge as job $merge_id${array_id:+ (after every shard of $array_id succeeded)}; results in $run/merged"
    if [ "$wait_after" = 1 ]; then wait_jobs; fi
}

# Each shard's state: done, queued/running (with Slurm's state) or failed (with its log).
# Returns the number of failed shards.
shard_states() {
    local failed=0 array
    array=$(last_job array)
    for ((i = 0; i < $(shard_count); i++)); do
        local log="$run/logs/shard-$i.out"
        if [ -f "$run/shards/$i/done" ]; then
            echo "shard $i: done"
            continue
        fi
        local state=
        [ -n "$array" ] && state=$(job_state "${array}_$i")
        case "$state" in
            PENDING | RUNNING | CONFIGURING | COMPLETING | SUSPENDED)
                echo "shard $i: ${state,,} (job ${array}_$i)" ;;
            *)
                echo "shard $i: FAILED${state:+ ($state)}, not done; log: $log"
                [ -f "$log" ] && tail -n 3 "$log" | sed 's/^/    /'
                failed=$((failed + 1)) ;;
        esac
    done
    return "$failed"
}

wait_jobs() {
    [ -f "$run/jobs.txt" ] || die "$run holds no submission (jobs.txt)"
    local array merge
    array=$(last_job array)
    merge=$(last_job merge)
    while [ -n "$array" ] && in_queue "$array"; do sleep 2; done
    local failed=0
    shard_states || failed=$?
    if [ "$failed" -gt 0 ]; then
        echo "$failed shard(s) failed: re-submit (\`$0 submit --run $run --shards $(shard_count)\`) to re-run only their unfinished cells" >&2
        return 1
    fi
    while in_queue "$merge"; do
        [ "$(job_state "$merge")" = PENDING ] && squeue -h -j "$merge" -o %r | grep -q DependencyNeverSatisfied \
            && die "merge job $merge can never run (a shard failed)"
        sleep 2
    done
    local log="$run/logs/merge-$merge.out"
    if [ ! -f "$run/merged/REPORT.md" ] || ! grep -q '^merged into' "$log" 2>/dev/null; then
        echo "merge job $merge failed; log: $log" >&2
        [ -f "$log" ] && tail -n 5 "$log" >&2
        return 1
    fi
    echo "merged: $run/merged/REPORT.md"
}

status() {
    [ -f "$run/shard-count" ] || die "$run holds no submission"
    shard_states || true
    local dirs=()
    for ((i = 0; i < $(shard_count); i++)); do dirs+=("$run/shards/$i"); done
    "$run/bin/gapbench" bench --status "${dirs[@]}"
}

case "$command" in
    submit) submit ;;
    wait) wait_jobs ;;
    status) status ;;
    *) die "usage: $0 submit|wait|status --run DIR … (see the head of this script)" ;;
esac
