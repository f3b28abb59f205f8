//! Checks of what runs the bench beyond one machine and cannot run here: the Kubernetes
//! manifests (`deploy/kubernetes/`) and the sharded CI workflow
//! (`.github/workflows/full-cluster-shards.yml`). Each file is read into structs that mirror
//! the fields it uses and reject any other (`deny_unknown_fields`, so a misspelt key fails),
//! then checked for what sharding needs: every shard index run once, its index in `--shard`
//! and its own folder, the merge after all of them over exactly those folders.
//!
//! The manifests are also checked against Kubernetes' own schemas with `kubernetes-validate
//! --strict` (PyPI) when it is installed; `.ci/run` installs it and sets
//! `GAPBENCH_K8S_SCHEMA_TEST=require`, which makes its absence a failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Deserialize;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn read<T: DeserializeOwned>(relative: &str) -> T {
    let path = root().join(relative);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: cannot read: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

// --- Kubernetes: the batch/v1 Job and v1 PersistentVolumeClaim fields the manifests use.

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Job {
    api_version: String,
    kind: String,
    metadata: Metadata,
    spec: JobSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    name: Option<String>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct JobSpec {
    completion_mode: Option<String>,
    completions: Option<u32>,
    parallelism: Option<u32>,
    backoff_limit: Option<u32>,
    backoff_limit_per_index: Option<u32>,
    max_failed_indexes: Option<u32>,
    template: PodTemplate,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PodTemplate {
    metadata: Option<Metadata>,
    spec: PodSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PodSpec {
    restart_policy: String,
    containers: Vec<Container>,
    volumes: Vec<Volume>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Container {
    name: String,
    image: String,
    #[serde(default)]
    env: Vec<EnvVar>,
    command: Vec<String>,
    args: Vec<String>,
    resources: Resources,
    volume_mounts: Vec<VolumeMount>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct EnvVar {
    name: String,
    value_from: EnvSource,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct EnvSource {
    field_ref: FieldRef,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FieldRef {
    field_path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Resources {
    requests: BTreeMap<String, String>,
    #[serde(default)]
    limits: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct VolumeMount {
    name: String,
    mount_path: String,
    read_only: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Volume {
    name: String,
    config_map: Option<Named>,
    persistent_volume_claim: Option<ClaimRef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Named {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ClaimRef {
    claim_name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Claim {
    api_version: String,
    kind: String,
    metadata: Metadata,
    spec: ClaimSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ClaimSpec {
    access_modes: Vec<String>,
    resources: Resources,
}

/// The value after `flag` in `args`.
fn after<'a>(args: &'a [String], flag: &str) -> &'a str {
    let at = args
        .iter()
        .position(|a| a == flag)
        .unwrap_or_else(|| panic!("{flag} missing from {args:?}"));
    &args[at + 1]
}

/// Every volume a container mounts is declared; returns the claim the pod's data volume uses.
fn mounts_resolve(pod: &PodSpec) -> String {
    for container in &pod.containers {
        for mount in &container.volume_mounts {
            assert!(
                pod.volumes.iter().any(|v| v.name == mount.name),
                "{} mounts an undeclared volume {}",
                container.name,
                mount.name
            );
        }
    }
    pod.volumes
        .iter()
        .find_map(|v| v.persistent_volume_claim.as_ref())
        .expect("a shared volume")
        .claim_name
        .clone()
}

#[test]
fn the_kubernetes_indexed_job_runs_every_shard_once_and_the_merge_joins_them() {
    let claim: Claim = read("deploy/kubernetes/volume.yaml");
    assert_eq!(
        (claim.api_version.as_str(), claim.kind.as_str()),
        ("v1", "PersistentVolumeClaim")
    );
    assert_eq!(
        claim.spec.access_modes,
        ["ReadWriteMany"],
        "every pod mounts it"
    );
    assert!(claim.spec.resources.requests.contains_key("storage"));
    let claim_name = claim.metadata.name.clone().expect("the claim's name");

    let shards: Job = read("deploy/kubernetes/shards-job.yaml");
    assert_eq!(
        (shards.api_version.as_str(), shards.kind.as_str()),
        ("batch/v1", "Job")
    );
    let spec = &shards.spec;
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    let count = spec.completions.expect("completions = the shard count");
    assert_eq!(spec.parallelism, Some(count));
    // Per-index retries need pods that are not restarted in place.
    assert!(spec.backoff_limit_per_index.is_some() && spec.max_failed_indexes.is_some());
    let pod = &spec.template.spec;
    assert_eq!(pod.restart_policy, "Never");
    assert_eq!(mounts_resolve(pod), claim_name);
    let [shard] = &pod.containers[..] else {
        panic!("one container per shard pod");
    };
    assert!(!shard.image.is_empty() && shard.command == ["gapbench"]);
    assert!(shard.resources.requests.contains_key("cpu"));
    assert!(shard.resources.limits.contains_key("memory"));
    let index = shard
        .env
        .iter()
        .find(|e| {
            e.value_from.field_ref.field_path
                == "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        })
        .expect("the completion index as an environment variable");
    let index = format!("$({})", index.name);
    let args = &shard.args;
    assert_eq!(args[0], "bench");
    assert_eq!(after(args, "--shard"), format!("{index}/{count}"));
    let out = after(args, "--out");
    let run_folder = out
        .strip_suffix(&format!("/shards/{index}"))
        .unwrap_or_else(|| panic!("each shard writes its own folder: {out}"));
    // The spec comes from the config map, mounted where --spec looks.
    let spec_path = after(args, "--spec");
    let config_map = pod
        .volumes
        .iter()
        .find(|v| v.config_map.is_some())
        .expect("the spec's config map");
    let spec_mount = shard
        .volume_mounts
        .iter()
        .find(|m| m.name == config_map.name)
        .expect("the config map mounted");
    assert!(spec_path.starts_with(&format!("{}/", spec_mount.mount_path)));
    assert_eq!(spec_mount.read_only, Some(true));
    // The name docs/beyond-one-machine.md's `kubectl create configmap` gives it.
    assert_eq!(
        config_map.config_map.as_ref().unwrap().name,
        "gapbench-spec"
    );

    let merge: Job = read("deploy/kubernetes/merge-job.yaml");
    assert_eq!(
        (merge.api_version.as_str(), merge.kind.as_str()),
        ("batch/v1", "Job")
    );
    assert_eq!(merge.spec.completion_mode, None, "one merge pod");
    assert_eq!(
        merge.spec.backoff_limit,
        Some(0),
        "a failed merge is not retried blindly"
    );
    let pod = &merge.spec.template.spec;
    assert_eq!(pod.restart_policy, "Never");
    assert_eq!(mounts_resolve(pod), claim_name);
    let script = pod.containers[0].args.join(" ");
    assert!(script.contains(&format!("cd {run_folder} ")), "{script}");
    let folders: Vec<String> = (0..count).map(|i| format!("shards/{i}")).collect();
    assert!(
        script.contains(&format!(
            "gapbench merge --out merged {}",
            folders.join(" ")
        )),
        "the merge joins exactly shards 0..{count}: {script}"
    );
    assert!(script.contains("test -f merged/REPORT.md"), "{script}");

    // Everything carries the app label, so `kubectl delete … -l app.kubernetes.io/name=gapbench`
    // removes a run's pods and claim.
    let labelled = |m: &Metadata| {
        m.labels.get("app.kubernetes.io/name").map(String::as_str) == Some("gapbench")
    };
    for (what, metadata) in [
        ("volume", Some(&claim.metadata)),
        ("shards", Some(&shards.metadata)),
        ("shard pods", shards.spec.template.metadata.as_ref()),
        ("merge", Some(&merge.metadata)),
        ("merge pod", merge.spec.template.metadata.as_ref()),
    ] {
        assert!(metadata.is_some_and(labelled), "{what} lacks the app label");
    }
}

#[test]
fn the_kubernetes_manifests_pass_the_kubernetes_schemas() {
    let required = std::env::var("GAPBENCH_K8S_SCHEMA_TEST").is_ok_and(|v| v == "require");
    let files: Vec<PathBuf> = ["volume.yaml", "shards-job.yaml", "merge-job.yaml"]
        .iter()
        .map(|f| root().join("deploy/kubernetes").join(f))
        .collect();
    let output = match Command::new("kubernetes-validate")
        .arg("--strict")
        .args(&files)
        .output()
    {
        Ok(output) => output,
        Err(e) if !required => {
            println!("skipped: kubernetes-validate is not installed ({e}; `pip install kubernetes-validate`; GAPBENCH_K8S_SCHEMA_TEST=require makes this a failure)");
            return;
        }
        Err(e) => {
            panic!("GAPBENCH_K8S_SCHEMA_TEST=require, but kubernetes-validate cannot run: {e}")
        }
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{text}");
    assert_eq!(
        text.matches(" passed for resource ").count(),
        files.len(),
        "{text}"
    );
}

// --- GitHub Actions: the workflow fields the sharded study uses.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Workflow {
    name: String,
    on: IgnoredAny,
    jobs: BTreeMap<String, WorkflowJob>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct WorkflowJob {
    runs_on: String,
    timeout_minutes: u32,
    #[serde(default)]
    needs: Option<String>,
    strategy: Option<Strategy>,
    steps: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Strategy {
    fail_fast: bool,
    matrix: ShardMatrix,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShardMatrix {
    shard: Vec<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    name: Option<String>,
    uses: Option<String>,
    run: Option<String>,
    #[serde(rename = "if")]
    condition: Option<String>,
    #[serde(default)]
    with: BTreeMap<String, String>,
}

/// The step that uses `action` (e.g. `actions/upload-artifact`).
fn using<'a>(steps: &'a [Step], action: &str) -> Vec<&'a Step> {
    steps
        .iter()
        .filter(|s| s.uses.as_deref().is_some_and(|u| u.starts_with(action)))
        .collect()
}

#[test]
fn the_ci_matrix_covers_every_shard_and_merges_after_all_of_them() {
    let workflow: Workflow = read(".github/workflows/full-cluster-shards.yml");
    let _ = workflow.on;
    assert!(!workflow.name.is_empty());
    let shard = &workflow.jobs["shard"];
    let strategy = shard.strategy.as_ref().expect("a matrix");
    assert!(
        !strategy.fail_fast,
        "one failed shard must not cancel the others"
    );
    let count = strategy.matrix.shard.len() as u32;
    assert_eq!(
        strategy.matrix.shard,
        (0..count).collect::<Vec<_>>(),
        "every shard once"
    );
    let run = shard
        .steps
        .iter()
        .filter_map(|s| s.run.as_deref())
        .find(|r| r.contains("cargo xtask bench"))
        .expect("the shard's bench");
    assert!(
        run.contains(&format!("--shard ${{{{ matrix.shard }}}}/{count}"))
            && run.contains("--out results/shard-${{ matrix.shard }}"),
        "{run}"
    );
    let spec = run
        .split_whitespace()
        .skip_while(|w| *w != "--spec")
        .nth(1)
        .expect("--spec");
    assert!(
        root().join(spec).is_file(),
        "{spec} is not in the repository"
    );
    let [upload] = &using(&shard.steps, "actions/upload-artifact")[..] else {
        panic!("each shard uploads its folder once");
    };
    assert_eq!(upload.with["name"], "shard-${{ matrix.shard }}");
    assert_eq!(upload.with["path"], "results/shard-${{ matrix.shard }}");
    assert_eq!(
        upload.condition.as_deref(),
        Some("always()"),
        "a failed shard's cells are kept"
    );

    let merge = &workflow.jobs["merge"];
    assert_eq!(
        merge.needs.as_deref(),
        Some("shard"),
        "the merge waits for every shard"
    );
    assert!(merge.strategy.is_none());
    let [download] = &using(&merge.steps, "actions/download-artifact")[..] else {
        panic!("the merge downloads the shards' folders");
    };
    assert_eq!(
        (
            download.with["pattern"].as_str(),
            download.with["path"].as_str()
        ),
        ("shard-*", "results")
    );
    let run = merge
        .steps
        .iter()
        .filter_map(|s| s.run.as_deref())
        .find(|r| r.contains("cargo xtask merge"))
        .expect("the merge");
    let folders: Vec<String> = (0..count).map(|i| format!("results/shard-{i}")).collect();
    assert!(
        run.contains(&format!("--out results/full-cluster {}", folders.join(" "))),
        "the merge joins exactly shards 0..{count}: {run}"
    );
    assert!(
        run.contains("test -f results/full-cluster/REPORT.md"),
        "{run}"
    );
    for job in workflow.jobs.values() {
        assert!(job.runs_on.starts_with("ubuntu") && job.timeout_minutes <= 120);
        assert!(job
            .steps
            .iter()
            .all(|s| s.name.is_some() || s.uses.is_some()));
    }
}
