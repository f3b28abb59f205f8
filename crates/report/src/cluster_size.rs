//! How figures and `REPORT.md` name a cluster size: `1,213 nodes`, or `8-node sampled
//! sub-cluster` when the rows come from a sample. Results of different sizes are never
//! averaged together, so every gap and Pareto title says which one it shows.

use std::collections::BTreeMap;

use gapbench_results::MatrixDescription;

/// What a results folder tells about its cluster sizes.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClusterSizes {
    /// The `[gaps]` study's `sample_nodes` (from `matrix.json`), when known.
    sample_nodes: Option<usize>,
    /// Per trace, the largest node count any row of the folder was solved on.
    largest: BTreeMap<String, usize>,
}

impl ClusterSizes {
    pub(crate) fn new(sample_nodes: Option<usize>) -> Self {
        ClusterSizes {
            sample_nodes,
            largest: BTreeMap::new(),
        }
    }

    /// The sizes of a results folder: the `[gaps]` study's sample size from its
    /// `matrix.json`, and the `(trace, nodes)` its rows were solved on.
    pub(crate) fn of_spec<'a>(
        matrix: &MatrixDescription,
        solved: impl IntoIterator<Item = (&'a str, usize)>,
    ) -> Self {
        let mut sizes = ClusterSizes::new(matrix.spec.gaps.as_ref().and_then(|g| g.sample_nodes));
        for (trace, nodes) in solved {
            sizes.saw(trace, nodes);
        }
        sizes
    }

    /// The `[gaps]` study's sampled sub-cluster size, when `matrix.json` says it.
    pub(crate) fn sample_nodes(&self) -> Option<usize> {
        self.sample_nodes
    }

    /// Records that some row of `trace` was solved on `nodes` nodes.
    pub(crate) fn saw(&mut self, trace: &str, nodes: usize) {
        let largest = self.largest.entry(trace.to_string()).or_default();
        *largest = (*largest).max(nodes);
    }

    /// A sampled sub-cluster: the spec's `sample_nodes`, or smaller than another size the
    /// same trace was solved on (the runner makes smaller instances only by sampling).
    pub(crate) fn is_sample(&self, trace: &str, nodes: usize) -> bool {
        self.sample_nodes == Some(nodes) || self.largest.get(trace).is_some_and(|&n| nodes < n)
    }

    /// `1,213 nodes` or `8-node sampled sub-cluster`.
    pub(crate) fn describe(&self, trace: &str, nodes: usize) -> String {
        if self.is_sample(trace, nodes) {
            format!("{}-node sampled sub-cluster", thousands(nodes as u64))
        } else if nodes == 1 {
            "1 node".to_string()
        } else {
            format!("{} nodes", thousands(nodes as u64))
        }
    }
}

/// `1213` → `1,213`.
pub(crate) fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_say_whether_they_are_samples() {
        let mut sizes = ClusterSizes::new(Some(8));
        sizes.saw("default", 8);
        sizes.saw("default", 1213);
        sizes.saw("gpushare20", 20);
        assert_eq!(sizes.describe("default", 1213), "1,213 nodes");
        assert_eq!(sizes.describe("default", 8), "8-node sampled sub-cluster");
        // Without matrix.json, a size below another of the same trace is still a sample.
        let mut bare = ClusterSizes::new(None);
        bare.saw("default", 20);
        bare.saw("default", 1213);
        assert_eq!(bare.describe("default", 20), "20-node sampled sub-cluster");
        assert_eq!(bare.describe("default", 1213), "1,213 nodes");
        assert_eq!(bare.describe("other", 5), "5 nodes");
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1213), "1,213");
        assert_eq!(thousands(13_926_480), "13,926,480");
    }
}
