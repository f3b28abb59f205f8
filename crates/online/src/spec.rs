//! Policy specifications as users write them: `fgd`, `bestfit`, `pwr:200,fgd:800`,
//! `expr:gpu_free_after_milli / 80`, `pwr:200,expr{-frag_delta_milli}:800`.

use std::fmt;
use std::str::FromStr;

use crate::expr::{ExprScale, ScoreExpr};
use crate::policy::Policy;

pub use crate::policies::PolicyKind;

/// The weight of a policy used alone (the reference's single-policy runs).
pub const SOLO_WEIGHT: u32 = 1000;

/// The largest weight a term may have.
pub const MAX_WEIGHT: u32 = 1_000_000;

/// One scoring plugin of a spec: a native policy or a score expression.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PolicyRef {
    Native(PolicyKind),
    Expr(ScoreExpr),
}

impl PolicyRef {
    /// A fresh instance (an expression's compiled program is shared, not recompiled).
    pub fn new_policy(&self) -> Box<dyn Policy> {
        match self {
            PolicyRef::Native(kind) => kind.new_policy(),
            PolicyRef::Expr(expr) => expr.new_policy(),
        }
    }

    /// Who chooses the GPUs when terms of a mix tie on the largest weight: the smallest rank
    /// (reference-semantics §5.9). Expressions come after every native policy.
    pub fn selection_tie_rank(&self) -> u16 {
        match self {
            PolicyRef::Native(kind) => u16::from(kind.selection_tie_rank()),
            PolicyRef::Expr(_) => u16::from(u8::MAX) + 1,
        }
    }

    /// A file-safe name: the policy's name, or `expr-<hash>` (`exprraw-<hash>`) of the
    /// expression text.
    pub fn slug(&self) -> String {
        match self {
            PolicyRef::Native(kind) => kind.name().to_string(),
            PolicyRef::Expr(expr) => {
                let prefix = expr.scale().keyword().replace('-', "");
                format!("{prefix}-{:08x}", fnv1a(expr.source()) as u32)
            }
        }
    }
}

impl From<PolicyKind> for PolicyRef {
    fn from(kind: PolicyKind) -> Self {
        PolicyRef::Native(kind)
    }
}

/// FNV-1a, 64 bits: a hash that never changes between builds or platforms (file names
/// depend on it).
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A weighted combination of score plugins: total score = Σ weight · normalised score.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PolicySpec {
    /// Distinct plugins with positive weights, in the order written.
    pub terms: Vec<(PolicyRef, u32)>,
}

impl PolicySpec {
    pub fn solo(policy: impl Into<PolicyRef>) -> Self {
        PolicySpec {
            terms: vec![(policy.into(), SOLO_WEIGHT)],
        }
    }

    /// A name safe for file and folder names, e.g. `pwr200-fgd800`.
    pub fn slug(&self) -> String {
        if let [(policy, SOLO_WEIGHT)] = &self.terms[..] {
            return policy.slug();
        }
        self.terms
            .iter()
            .map(|(policy, w)| match policy {
                PolicyRef::Native(_) => format!("{}{w}", policy.slug()),
                PolicyRef::Expr(_) => format!("{}w{w}", policy.slug()),
            })
            .collect::<Vec<_>>()
            .join("-")
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [(policy, SOLO_WEIGHT)] = &self.terms[..] {
            return match policy {
                PolicyRef::Native(kind) => f.write_str(kind.name()),
                PolicyRef::Expr(expr) => write!(f, "{}:{}", expr.scale().keyword(), expr.source()),
            };
        }
        let terms: Vec<String> = self
            .terms
            .iter()
            .map(|(policy, w)| match policy {
                PolicyRef::Native(kind) => format!("{}:{w}", kind.name()),
                PolicyRef::Expr(expr) => {
                    format!("{}{{{}}}:{w}", expr.scale().keyword(), expr.source())
                }
            })
            .collect();
        f.write_str(&terms.join(","))
    }
}

/// `expr-raw` before `expr`: the longer keyword first.
const SCALES: [ExprScale; 2] = [ExprScale::Raw, ExprScale::MinMax];

/// The keyword an expression term starts with (case-insensitive), and what follows it.
fn expression_keyword(term: &str) -> Option<(ExprScale, &str)> {
    SCALES.into_iter().find_map(|scale| {
        let keyword = scale.keyword();
        let head = term.get(..keyword.len())?;
        let rest = &term[keyword.len()..];
        (head.eq_ignore_ascii_case(keyword) && (rest.starts_with(':') || rest.starts_with('{')))
            .then_some((scale, rest))
    })
}

fn parse_weight(term: &str, weight: &str) -> Result<u32, String> {
    let text = weight.trim();
    let whole = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    let weight = match text.parse::<u32>() {
        Ok(weight) => weight,
        // Digits only, yet no u32: too large, not "not a whole number".
        Err(_) if whole => u32::MAX,
        Err(_) => {
            return Err(format!(
                "policy `{term}`: weight `{text}` is not a whole number"
            ))
        }
    };
    if weight == 0 {
        return Err(format!("policy `{term}`: weight must be positive"));
    }
    if weight > MAX_WEIGHT {
        return Err(format!(
            "policy `{term}`: weight {text} is too large (at most {MAX_WEIGHT})"
        ));
    }
    Ok(weight)
}

/// Parses one expression term at the start of `text` (which starts with its keyword);
/// returns it and the text after it.
fn expression_term(text: &str) -> Result<((PolicyRef, u32), &str), String> {
    let (scale, rest) = expression_keyword(text).expect("called on an expression term");
    let keyword = scale.keyword();
    let compile = |source: &str| {
        ScoreExpr::parse(source, scale)
            .map(PolicyRef::Expr)
            .map_err(|e| format!("expression `{}`: {e}", source.trim()))
    };
    if let Some(source) = rest.strip_prefix(':') {
        // `expr:EXPR` runs to the end of the spec, weight 1000.
        return Ok(((compile(source)?, SOLO_WEIGHT), ""));
    }
    // `expr{EXPR}` with an optional `:WEIGHT`.
    let mut depth = 0usize;
    let close = rest
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            depth == 0
        })
        .map(|(i, _)| i)
        .ok_or_else(|| format!("`{keyword}{{…` has no closing `}}`"))?;
    let policy = compile(&rest[1..close])?;
    let after = &rest[close + 1..];
    let (weight_text, after) = match after.trim_start().strip_prefix(':') {
        Some(weighted) => match weighted.split_once(',') {
            Some((weight, tail)) => (Some(weight), tail),
            None => (Some(weighted), ""),
        },
        None => match after.trim_start().strip_prefix(',') {
            Some(tail) => (None, tail),
            None if after.trim().is_empty() => (None, ""),
            None => {
                return Err(format!(
                    "unexpected `{}` after `{keyword}{{…}}` (a weight is written `:800`)",
                    after.trim()
                ))
            }
        },
    };
    let weight = match weight_text {
        Some(weight) => parse_weight(&format!("{keyword}{{…}}"), weight)?,
        None => SOLO_WEIGHT,
    };
    Ok(((policy, weight), after))
}

impl FromStr for PolicySpec {
    type Err = String;

    /// `NAME`, `NAME:WEIGHT,NAME:WEIGHT,…`, `expr:EXPR` (the rest of the text, weight
    /// 1000), or `expr{EXPR}[:WEIGHT]` as a term of a mix (`expr-raw` likewise).
    fn from_str(text: &str) -> Result<Self, String> {
        let known = PolicyKind::names();
        let mut terms: Vec<(PolicyRef, u32)> = Vec::new();
        let mut rest = text;
        while !rest.trim().is_empty() {
            let trimmed = rest.trim_start();
            let (term, after) = if expression_keyword(trimmed).is_some() {
                expression_term(trimmed)?
            } else {
                let (term, after) = trimmed.split_once(',').unwrap_or((trimmed, ""));
                let term = term.trim();
                if term.is_empty() {
                    rest = after;
                    continue;
                }
                let (name, weight) = match term.split_once(':') {
                    Some((name, weight)) => (name, parse_weight(term, weight)?),
                    None => (term, SOLO_WEIGHT),
                };
                let kind = PolicyKind::parse(name).ok_or_else(|| {
                    format!(
                        "unknown policy `{}` (known: {known}; or an expression `expr:…`)",
                        name.trim()
                    )
                })?;
                ((PolicyRef::Native(kind), weight), after)
            };
            if terms.iter().any(|(p, _)| *p == term.0) {
                let name = match &term.0 {
                    PolicyRef::Native(kind) => kind.name().to_string(),
                    PolicyRef::Expr(expr) => format!("{expr:?}"),
                };
                return Err(format!("policy `{name}` appears twice in `{text}`"));
            }
            terms.push(term);
            rest = after;
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
            vec![
                (PolicyRef::Native(PolicyKind::Pwr), 200),
                (PolicyRef::Native(PolicyKind::Fgd), 800)
            ]
        );
        assert_eq!(spec.to_string(), "pwr:200,fgd:800");
        assert_eq!(spec.slug(), "pwr200-fgd800");
        assert_eq!(
            "best-fit".parse::<PolicySpec>().unwrap().to_string(),
            "bestfit"
        );
    }

    #[test]
    fn parses_expressions_alone_and_in_mixes() {
        let solo: PolicySpec = "expr: max(gpu_free_after_milli, 1) / 80 ".parse().unwrap();
        assert_eq!(solo.to_string(), "expr:max(gpu_free_after_milli, 1) / 80");
        assert!(solo.slug().starts_with("expr-") && solo.slug().len() == 13);
        let mix: PolicySpec = "pwr:200, expr-raw{if(idle_gpus > 0, 100, 0)}:800, fgd"
            .parse()
            .unwrap();
        assert_eq!(mix.terms.len(), 3);
        assert_eq!(mix.terms[1].1, 800);
        assert!(matches!(&mix.terms[1].0, PolicyRef::Expr(e) if e.scale() == ExprScale::Raw));
        assert_eq!(
            mix.to_string(),
            "pwr:200,expr-raw{if(idle_gpus > 0, 100, 0)}:800,fgd:1000"
        );
        let tail: PolicySpec = "pwr:200,expr:min(idle_gpus, 2)".parse().unwrap();
        assert_eq!(tail.terms[1].1, SOLO_WEIGHT);
        assert!(tail.slug().starts_with("pwr200-expr-") && tail.slug().ends_with("w1000"));
        // Every spec reads back from its own text.
        for spec in [solo, mix, tail] {
            assert_eq!(spec.to_string().parse::<PolicySpec>().unwrap(), spec);
        }
    }

    #[test]
    fn rejects_bad_specs_with_a_reason() {
        let error = |text: &str| text.parse::<PolicySpec>().unwrap_err();
        assert!(error("fgd:x").contains("weight"));
        assert!(error("tetris").contains("unknown policy"));
        assert!(error("fgd,fgd:3").contains("twice"));
        assert!(error("").contains("empty"));
        assert!(error("expr:idle_gpus +").contains("column"));
        assert!(error("expr:frag").contains("unknown name `frag`"));
        assert!(error("expr{idle_gpus").contains("closing"));
        assert!(error("expr{idle_gpus}:0").contains("positive"));
        assert!(error("expr{idle_gpus} 5").contains("unexpected"));
        assert!(error("expr{idle_gpus},expr{idle_gpus}:5").contains("twice"));
        // A whole number too large for a weight is too large, not "not a whole number".
        for text in [
            "pwr:4294967296",
            "pwr:99999999999999999999999",
            "expr{idle_gpus}:4294967296",
        ] {
            assert!(
                error(text).contains("is too large (at most 1000000)"),
                "{}",
                error(text)
            );
        }
        assert!(error("pwr:1000001").contains("is too large (at most 1000000)"));
        assert!(error("pwr:-3").contains("not a whole number"));
    }
}
