//! Policy specifications as users write them: `fgd`, `bestfit`, `pwr:200,fgd:800`.

use std::fmt;
use std::str::FromStr;

/// The score plugins, in the reference's visiting order (which decides GPU selection on a
/// weight tie, reference-semantics §5.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PolicyKind {
    Random,
    DotProduct,
    GpuClustering,
    GpuPacking,
    BestFit,
    Fgd,
    Pwr,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 7] = [
        PolicyKind::Random,
        PolicyKind::DotProduct,
        PolicyKind::GpuClustering,
        PolicyKind::GpuPacking,
        PolicyKind::BestFit,
        PolicyKind::Fgd,
        PolicyKind::Pwr,
    ];

    /// The canonical name used in specs and file names.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Random => "random",
            PolicyKind::DotProduct => "dotprod",
            PolicyKind::GpuClustering => "clustering",
            PolicyKind::GpuPacking => "packing",
            PolicyKind::BestFit => "bestfit",
            PolicyKind::Fgd => "fgd",
            PolicyKind::Pwr => "pwr",
        }
    }

    /// Accepts the canonical name and common spellings, case-insensitively.
    pub fn parse(name: &str) -> Option<PolicyKind> {
        let name = name.trim().to_ascii_lowercase().replace(['-', '_'], "");
        Some(match name.as_str() {
            "random" => PolicyKind::Random,
            "dotprod" | "dotproduct" => PolicyKind::DotProduct,
            "clustering" | "gpuclustering" => PolicyKind::GpuClustering,
            "packing" | "gpupacking" => PolicyKind::GpuPacking,
            "bestfit" => PolicyKind::BestFit,
            "fgd" => PolicyKind::Fgd,
            "pwr" => PolicyKind::Pwr,
            _ => return None,
        })
    }
}

/// The weight of a policy used alone (the reference's single-policy runs).
pub const SOLO_WEIGHT: u32 = 1000;

/// A weighted combination of score plugins: total score = Σ weight · normalised score.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PolicySpec {
    /// Distinct kinds with positive weights, in the order written.
    pub terms: Vec<(PolicyKind, u32)>,
}

impl PolicySpec {
    pub fn solo(kind: PolicyKind) -> Self {
        PolicySpec {
            terms: vec![(kind, SOLO_WEIGHT)],
        }
    }

    /// A name safe for file and folder names, e.g. `pwr200-fgd800`.
    pub fn slug(&self) -> String {
        if let [(kind, SOLO_WEIGHT)] = self.terms[..] {
            return kind.name().to_string();
        }
        self.terms
            .iter()
            .map(|(k, w)| format!("{}{w}", k.name()))
            .collect::<Vec<_>>()
            .join("-")
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [(kind, SOLO_WEIGHT)] = self.terms[..] {
            return f.write_str(kind.name());
        }
        let terms: Vec<String> = self
            .terms
            .iter()
            .map(|(k, w)| format!("{}:{w}", k.name()))
            .collect();
        f.write_str(&terms.join(","))
    }
}

impl FromStr for PolicySpec {
    type Err = String;

    /// `NAME` (weight 1000) or `NAME:WEIGHT,NAME:WEIGHT,…`.
    fn from_str(text: &str) -> Result<Self, String> {
        let known = PolicyKind::ALL.map(PolicyKind::name).join(", ");
        let mut terms: Vec<(PolicyKind, u32)> = Vec::new();
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (name, weight) = match term.split_once(':') {
                Some((name, weight)) => {
                    let weight = weight.trim();
                    let whole = !weight.is_empty() && weight.bytes().all(|b| b.is_ascii_digit());
                    let weight = match weight.parse::<u32>() {
                        Ok(weight) => weight,
                        // Digits only, yet no u32: too large (the check below says how large).
                        Err(_) if whole => u32::MAX,
                        Err(_) => {
                            return Err(format!(
                                "policy `{term}`: weight `{weight}` is not a whole number"
                            ))
                        }
                    };
                    (name, weight)
                }
                None => (term, SOLO_WEIGHT),
            };
            let kind = PolicyKind::parse(name)
                .ok_or_else(|| format!("unknown policy `{name}` (known: {known})"))?;
            if terms.iter().any(|(k, _)| *k == kind) {
                return Err(format!(
                    "policy `{}` appears twice in `{text}`",
                    kind.name()
                ));
            }
            if weight == 0 {
                return Err(format!("policy `{term}`: weight must be positive"));
            }
            if weight > 1_000_000 {
                return Err(format!(
                    "policy `{term}`: weight {} is too large (at most 1000000)",
                    term.split_once(':').map_or("", |(_, w)| w.trim())
                ));
            }
            terms.push((kind, weight));
        }
        if terms.is_empty() {
            return Err(format!("empty policy spec (known policies: {known})"));
        }
        Ok(PolicySpec { terms })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_mixes() {
        let spec: PolicySpec = "PWR:200, fgd:800".parse().unwrap();
        assert_eq!(
            spec.terms,
            vec![(PolicyKind::Pwr, 200), (PolicyKind::Fgd, 800)]
        );
        assert_eq!(spec.to_string(), "pwr:200,fgd:800");
        assert_eq!(spec.slug(), "pwr200-fgd800");
        assert_eq!(
            "best-fit".parse::<PolicySpec>().unwrap().to_string(),
            "bestfit"
        );
    }

    #[test]
    fn rejects_bad_specs_with_a_reason() {
        assert!("fgd:x"
            .parse::<PolicySpec>()
            .unwrap_err()
            .contains("weight"));
        assert!("tetris"
            .parse::<PolicySpec>()
            .unwrap_err()
            .contains("unknown policy"));
        assert!("fgd,fgd:3"
            .parse::<PolicySpec>()
            .unwrap_err()
            .contains("twice"));
        assert!("".parse::<PolicySpec>().is_err());
        // A whole number too large for a weight is too large, not "not a whole number".
        for text in ["pwr:4294967296", "pwr:99999999999999999999999"] {
            let error = text.parse::<PolicySpec>().unwrap_err();
            assert!(error.contains("is too large (at most 1000000)"), "{error}");
        }
        assert!("pwr:-3"
            .parse::<PolicySpec>()
            .unwrap_err()
            .contains("not a whole number"));
    }
}
