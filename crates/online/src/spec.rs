//! Policy specifications as users write them: `fgd`, `bestfit`, `pwr:200,fgd:800`,
//! `expr:gpu_free_after_milli / 80`, `pwr:200,expr{-frag_delta_milli}:800`.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::error::OnlineError;
use crate::expr::{excerpt, ExprScale, ScoreExpr};
use crate::external::ExternalScorer;
use crate::policy::Policy;

pub use crate::policies::PolicyKind;

/// The weight of a policy used alone (the reference's single-policy runs).
pub const SOLO_WEIGHT: u32 = 1000;

/// The largest weight a term may have.
pub const MAX_WEIGHT: u32 = 1_000_000;

/// How a mix's weights work, for errors about them.
const WEIGHTS_ARE: &str = "weights are whole numbers, relative to each other: \
    pwr:300,fgd:700 = 0.3 × PWR + 0.7 × FGD";

/// One scoring plugin of a spec: a native policy or a score expression.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PolicyRef {
    Native(PolicyKind),
    Expr(ScoreExpr),
    /// A score from outside the crate (a Python function); no spec text parses to it.
    External(ExternalScorer),
}

impl PolicyRef {
    /// A fresh instance (an expression's compiled program is shared, not recompiled).
    pub fn new_policy(&self) -> Box<dyn Policy> {
        match self {
            PolicyRef::Native(kind) => kind.new_policy(),
            PolicyRef::Expr(expr) => expr.new_policy(),
            PolicyRef::External(scorer) => scorer.new_policy(),
        }
    }

    /// Who chooses the GPUs when terms of a mix tie on the largest weight: the smallest rank
    /// (reference-semantics §5.9). Expressions and external scores come after every native
    /// policy.
    pub fn selection_tie_rank(&self) -> u16 {
        match self {
            PolicyRef::Native(kind) => u16::from(kind.selection_tie_rank()),
            PolicyRef::Expr(_) | PolicyRef::External(_) => u16::from(u8::MAX) + 1,
        }
    }

    /// The term as errors name it: the policy's name, the expression (shortened), or the
    /// external scorer's label.
    pub fn name(&self) -> String {
        match self {
            PolicyRef::Native(kind) => kind.name().to_string(),
            PolicyRef::Expr(expr) => excerpt(&format!("{expr:?}"), 1),
            PolicyRef::External(scorer) => scorer.label().to_string(),
        }
    }

    /// A file-safe name: the policy's name, or `expr-<key>` (`exprraw-<key>`) of the
    /// expression text, [`expression_key`].
    pub fn slug(&self) -> String {
        match self {
            PolicyRef::Native(kind) => kind.name().to_string(),
            PolicyRef::Expr(expr) => {
                let prefix = expr.scale().keyword().replace('-', "");
                format!("{prefix}-{}", expression_key(expr.source()))
            }
            PolicyRef::External(scorer) => scorer.slug(),
        }
    }
}
impl From<PolicyKind> for PolicyRef {
    fn from(kind: PolicyKind) -> Self {
        PolicyRef::Native(kind)
    }
}

/// The key of an expression's text in file names: the first 128 bits of its SHA-256, in
/// hex. Cell and export folders are named by it, so two expressions must never share one (a
/// 32-bit hash did: `35286 - idle_gpus` and `idle_gpus + 8143` overwrote each other's
/// files); it never changes between builds or platforms.
fn expression_key(source: &str) -> String {
    Sha256::digest(source.as_bytes())[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
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

    /// A mix of terms built in code (the Python binding's `[(score, 300), ("fgd", 700)]`),
    /// checked as a parsed mix is: weights positive and at most [`MAX_WEIGHT`], no term twice.
    pub fn mix(terms: Vec<(PolicyRef, u32)>) -> Result<Self, OnlineError> {
        if terms.is_empty() {
            return Err(OnlineError::Spec(format!(
                "empty policy mix (known policies: {})",
                PolicyKind::names()
            )));
        }
        for (i, (policy, weight)) in terms.iter().enumerate() {
            let name = policy.name();
            if *weight == 0 {
                return Err(OnlineError::Spec(format!(
                    "policy `{name}`: weight must be positive"
                )));
            }
            if *weight > MAX_WEIGHT {
                return Err(OnlineError::Spec(format!(
                    "policy `{name}`: weight {weight} is too large (at most {MAX_WEIGHT})"
                )));
            }
            if terms[..i].iter().any(|(p, _)| p == policy) {
                return Err(OnlineError::Spec(format!(
                    "policy `{name}` appears twice in the mix"
                )));
            }
        }
        Ok(PolicySpec { terms })
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
                PolicyRef::Expr(_) | PolicyRef::External(_) => format!("{}w{w}", policy.slug()),
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
                PolicyRef::External(scorer) => f.write_str(scorer.label()),
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
                PolicyRef::External(scorer) => format!("{}:{w}", scorer.label()),
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
                "policy `{term}`: weight `{text}` is not a whole number ({WEIGHTS_ARE})"
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
fn expression_term(text: &str) -> Result<((PolicyRef, Option<u32>), &str), String> {
    let (scale, rest) = expression_keyword(text).expect("called on an expression term");
    let keyword = scale.keyword();
    let compile = |source: &str| {
        let source = source.trim();
        ScoreExpr::parse(source, scale)
            .map(PolicyRef::Expr)
            .map_err(|e| {
                format!(
                    "expression `{}`: {e}",
                    excerpt(source, e.column().unwrap_or(1))
                )
            })
    };
    if let Some(source) = rest.strip_prefix(':') {
        // `expr:EXPR` runs to the end of the spec, without a weight.
        return Ok(((compile(source)?, None), ""));
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
                    excerpt(after.trim(), 1)
                ))
            }
        },
    };
    let weight = match weight_text {
        Some(weight) => Some(parse_weight(&format!("{keyword}{{…}}"), weight)?),
        None => None,
    };
    Ok(((policy, weight), after))
}

impl FromStr for PolicySpec {
    type Err = OnlineError;

    /// `NAME`, `NAME:WEIGHT,NAME:WEIGHT,…`, `expr:EXPR` (the rest of the text), or
    /// `expr{EXPR}:WEIGHT` as a term of a mix (`expr-raw` likewise). A policy alone needs
    /// no weight (it is 1000, [`SOLO_WEIGHT`]); every term of a mix needs one: a silent 1000
    /// beside `pwr:200` would outweigh it fivefold.
    fn from_str(text: &str) -> Result<Self, OnlineError> {
        parse_spec(text).map_err(OnlineError::Spec)
    }
}

/// [`PolicySpec::from_str`], with the refusal as its message.
fn parse_spec(text: &str) -> Result<PolicySpec, String> {
    let known = PolicyKind::names();
    let mut terms: Vec<(PolicyRef, Option<u32>)> = Vec::new();
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
                Some((name, weight)) => (name, Some(parse_weight(term, weight)?)),
                None => (term, None),
            };
            let kind = PolicyKind::parse(name).ok_or_else(|| {
                format!(
                    "unknown policy `{}` (known: {known}; or an expression `expr:…`)",
                    excerpt(name.trim(), 1)
                )
            })?;
            ((PolicyRef::Native(kind), weight), after)
        };
        if terms.iter().any(|(p, _)| *p == term.0) {
            return Err(format!(
                "policy `{}` appears twice in `{}`",
                term.0.name(),
                excerpt(text, 1)
            ));
        }
        terms.push(term);
        rest = after;
    }
    match &terms[..] {
        [] => Err(format!("empty policy spec (known policies: {known})")),
        [(policy, weight)] => Ok(PolicySpec {
            terms: vec![(policy.clone(), weight.unwrap_or(SOLO_WEIGHT))],
        }),
        _ => {
            let terms = terms
                .into_iter()
                .map(|(policy, weight)| match weight {
                    Some(weight) => Ok((policy, weight)),
                    None => Err(policy),
                })
                .collect::<Result<Vec<_>, PolicyRef>>()
                .map_err(|policy| {
                    let written = match &policy {
                        PolicyRef::Native(kind) => format!("`{}:500`", kind.name()),
                        PolicyRef::Expr(expr) => {
                            format!("`{}{{…}}:500`", expr.scale().keyword())
                        }
                        PolicyRef::External(scorer) => format!("`{}:500`", scorer.label()),
                    };
                    format!("every policy of a mix needs a weight, e.g. {written} ({WEIGHTS_ARE})")
                })?;
            Ok(PolicySpec { terms })
        }
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
        assert!(solo.slug().starts_with("expr-") && solo.slug().len() == 5 + 32);
        let mix: PolicySpec = "pwr:200, expr-raw{if(idle_gpus > 0, 100, 0)}:800, fgd:1000"
            .parse()
            .unwrap();
        assert_eq!(mix.terms.len(), 3);
        assert_eq!(mix.terms[1].1, 800);
        assert!(matches!(&mix.terms[1].0, PolicyRef::Expr(e) if e.scale() == ExprScale::Raw));
        assert_eq!(
            mix.to_string(),
            "pwr:200,expr-raw{if(idle_gpus > 0, 100, 0)}:800,fgd:1000"
        );
        let tail: PolicySpec = "pwr:200,expr{min(idle_gpus, 2)}:1000".parse().unwrap();
        assert_eq!(tail.terms[1].1, SOLO_WEIGHT);
        assert!(tail.slug().starts_with("pwr200-expr-") && tail.slug().ends_with("w1000"));
        // Alone, a policy or an expression needs no weight.
        let weighted: PolicySpec = "expr{idle_gpus}".parse().unwrap();
        assert_eq!(weighted.terms[0].1, SOLO_WEIGHT);
        // Every spec reads back from its own text.
        for spec in [solo, mix, tail] {
            assert_eq!(spec.to_string().parse::<PolicySpec>().unwrap(), spec);
        }
    }

    /// Two expressions whose 32-bit FNV hashes collided (`expr-3bee0c10`) shared one cell
    /// folder, so one run silently overwrote the other's files.
    #[test]
    fn expressions_with_colliding_short_hashes_get_distinct_slugs() {
        let slug = |text: &str| text.parse::<PolicySpec>().unwrap().slug();
        let (a, b) = (
            slug("expr:35286 - idle_gpus"),
            slug("expr:idle_gpus + 8143"),
        );
        assert_ne!(a, b);
        for slug in [&a, &b] {
            let hex = slug.strip_prefix("expr-").unwrap();
            assert_eq!(hex.len(), 32, "128 bits of SHA-256: {slug}");
            assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()), "{slug}");
        }
        // The key never changes between builds: SHA-256 of `idle_gpus`, first 16 bytes.
        assert_eq!(
            slug("expr:idle_gpus"),
            "expr-c15ddf1243501c202dba94e9cc84c3ee"
        );
        assert!(slug("expr-raw:idle_gpus").starts_with("exprraw-c15ddf12"));
    }

    #[test]
    fn rejects_bad_specs_with_a_reason() {
        let error = |text: &str| text.parse::<PolicySpec>().unwrap_err().to_string();
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
        // Weights are whole and relative, and the error says how they scale.
        assert!(error("pwr:0.3,fgd:0.7").contains("pwr:300,fgd:700 = 0.3 × PWR + 0.7 × FGD"));
    }

    /// A term of a mix without a weight silently got 1000 (`pwr:200,expr:…` weighed the
    /// expression five times PWR).
    #[test]
    fn every_term_of_a_mix_needs_a_weight() {
        let error = |text: &str| text.parse::<PolicySpec>().unwrap_err().to_string();
        for (text, example) in [
            ("pwr:200,expr:idle_gpus", "`expr{…}:500`"),
            ("pwr:200,expr-raw{idle_gpus}", "`expr-raw{…}:500`"),
            ("pwr:200,fgd", "`fgd:500`"),
            ("bestfit,expr{idle_gpus}:3", "`bestfit:500`"),
        ] {
            let message = error(text);
            assert!(
                message.contains(&format!(
                    "every policy of a mix needs a weight, e.g. {example}"
                )),
                "{text}: {message}"
            );
            assert!(message.contains("relative"), "{message}");
        }
    }

    /// Errors echoed the whole expression (100 KB for a 100 KB expression): they show 80
    /// characters around the error.
    #[test]
    fn errors_show_only_the_text_around_the_fault() {
        let long = format!("expr:{})", "idle_gpus + ".repeat(100));
        let message = long.parse::<PolicySpec>().unwrap_err().to_string();
        assert!(message.len() < 400, "{} bytes", message.len());
        // The last 80 of 1,201 characters, where the fault is.
        let tail = format!(
            "…gpus + {}idle_gpus + )`: column 1201:",
            "idle_gpus + ".repeat(5)
        );
        assert!(
            message.starts_with(&format!("expression `{tail}")),
            "{message}"
        );
        let huge = format!("expr:{}", "-".repeat(100_000));
        assert!(huge.parse::<PolicySpec>().unwrap_err().to_string().len() < 400);
        let twice = format!("expr{{{0}0}}:1,expr{{{0}0}}:2", "idle_gpus + ".repeat(150));
        assert!(twice.parse::<PolicySpec>().unwrap_err().to_string().len() < 400);
        let name = "x".repeat(100_000);
        assert!(name.parse::<PolicySpec>().unwrap_err().to_string().len() < 600);
    }
}
