//! Syntax tree → closures, built once per policy spec and called once per (node, task)
//! without allocation.
//!
//! Why not an expression crate: on BestFit's formula exmex 0.21 took ~26× and evalexpr 12
//! ~420× the time of the native code (2M evaluations on the 2-core VM), and the target is
//! 3×. A bytecode loop of our own still took ~5× the native instructions (dispatch and
//! bounds checks on every instruction). Closures cost one call per tree node instead:
//! constant sub-trees are folded at compile time, an arithmetic node whose operand is a
//! constant gets a closure of its own, and a feature is read by a closure of its own (no
//! dispatch on its name). Folding never reorders floating-point operations, so an
//! expression evaluates bit for bit like the same formula written in Rust.

use super::features::{reader, Env, Feature, Needs};
use super::parse::{Ast, Bin, Un};
use crate::error::OnlineError;

/// The deepest syntax tree compiled (evaluation recurses once per level).
pub const MAX_DEPTH: usize = 256;

type Code = Box<dyn Fn(&Env<'_>) -> f64 + Send + Sync>;

/// A compiled expression.
pub struct Program {
    code: Code,
    features: Vec<Feature>,
    needs: Needs,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("features", &self.features)
            .finish_non_exhaustive()
    }
}

/// Evaluates constant sub-trees; keeps everything else in its order.
pub(crate) fn fold(ast: Ast) -> Ast {
    match ast {
        Ast::Unary(op, inner) => match fold(*inner) {
            Ast::Num(v) => Ast::Num(op.apply(v)),
            inner => Ast::Unary(op, Box::new(inner)),
        },
        Ast::Binary(op, left, right) => match (fold(*left), fold(*right)) {
            (Ast::Num(a), Ast::Num(b)) => Ast::Num(op.apply(a, b)),
            (left, right) => Ast::Binary(op, Box::new(left), Box::new(right)),
        },
        Ast::If(condition, then, otherwise) => match fold(*condition) {
            Ast::Num(c) if c != 0.0 => fold(*then),
            Ast::Num(_) => fold(*otherwise),
            condition => Ast::If(
                Box::new(condition),
                Box::new(fold(*then)),
                Box::new(fold(*otherwise)),
            ),
        },
        leaf => leaf,
    }
}

fn depth(ast: &Ast) -> usize {
    1 + match ast {
        Ast::Num(_) | Ast::Feature(_) => 0,
        Ast::Unary(_, a) => depth(a),
        Ast::Binary(_, a, b) => depth(a).max(depth(b)),
        Ast::If(c, a, b) => depth(c).max(depth(a)).max(depth(b)),
    }
}

/// Refuses what would make every score NaN or ±∞ whatever the node: a constant part that is
/// not a finite number (`ln(0)`, `0 / 0`, `10 ^ 400`) or a division by a constant zero.
/// Column 1: folding has merged the constant parts, so no one column is to blame.
fn check_finite(ast: &Ast) -> Result<(), OnlineError> {
    let refuse = |message: String| Err(OnlineError::Expr { column: 1, message });
    match ast {
        Ast::Num(v) if !v.is_finite() => refuse(format!(
            "a constant part of the expression is not a finite number ({v}), e.g. `ln(0)`, \
             `0 / 0`, `sqrt(-1)`"
        )),
        Ast::Num(_) | Ast::Feature(_) => Ok(()),
        Ast::Binary(Bin::Div | Bin::Rem, _, divisor) if **divisor == Ast::Num(0.0) => {
            refuse("division by zero: the divisor is a constant 0".to_string())
        }
        Ast::Unary(_, a) => check_finite(a),
        Ast::Binary(_, a, b) => check_finite(a).and(check_finite(b)),
        Ast::If(c, a, b) => check_finite(c).and(check_finite(a)).and(check_finite(b)),
    }
}

fn features_of(ast: &Ast, found: &mut Vec<Feature>) {
    match ast {
        Ast::Num(_) => {}
        Ast::Feature(f) => found.push(*f),
        Ast::Unary(_, a) => features_of(a, found),
        Ast::Binary(_, a, b) => {
            features_of(a, found);
            features_of(b, found);
        }
        Ast::If(c, a, b) => {
            features_of(c, found);
            features_of(a, found);
            features_of(b, found);
        }
    }
}

/// `left op c`, with the four arithmetic operations specialised.
fn with_constant_right(op: Bin, left: Code, c: f64) -> Code {
    match op {
        Bin::Add => Box::new(move |e| left(e) + c),
        Bin::Sub => Box::new(move |e| left(e) - c),
        Bin::Mul => Box::new(move |e| left(e) * c),
        Bin::Div => Box::new(move |e| left(e) / c),
        _ => Box::new(move |e| op.apply(left(e), c)),
    }
}

/// `c op right`; `c + x` and `c · x` are exactly `x + c` and `x · c` in IEEE arithmetic.
fn with_constant_left(op: Bin, c: f64, right: Code) -> Code {
    match op {
        Bin::Add | Bin::Mul => with_constant_right(op, right, c),
        Bin::Sub => Box::new(move |e| c - right(e)),
        Bin::Div => Box::new(move |e| c / right(e)),
        _ => Box::new(move |e| op.apply(c, right(e))),
    }
}

fn binary(op: Bin, left: Code, right: Code) -> Code {
    match op {
        Bin::Add => Box::new(move |e| left(e) + right(e)),
        Bin::Sub => Box::new(move |e| left(e) - right(e)),
        Bin::Mul => Box::new(move |e| left(e) * right(e)),
        Bin::Div => Box::new(move |e| left(e) / right(e)),
        _ => Box::new(move |e| op.apply(left(e), right(e))),
    }
}

fn generate(ast: &Ast) -> Code {
    match ast {
        &Ast::Num(v) => Box::new(move |_| v),
        &Ast::Feature(f) => reader(f),
        Ast::Unary(op, inner) => {
            let (op, inner) = (*op, generate(inner));
            match op {
                Un::Neg => Box::new(move |e| -inner(e)),
                _ => Box::new(move |e| op.apply(inner(e))),
            }
        }
        Ast::Binary(op, left, right) => match (&**left, &**right) {
            (_, &Ast::Num(c)) => with_constant_right(*op, generate(left), c),
            (&Ast::Num(c), _) => with_constant_left(*op, c, generate(right)),
            _ => binary(*op, generate(left), generate(right)),
        },
        Ast::If(condition, then, otherwise) => {
            let (condition, then, otherwise) =
                (generate(condition), generate(then), generate(otherwise));
            Box::new(move |e| {
                if condition(e) != 0.0 {
                    then(e)
                } else {
                    otherwise(e)
                }
            })
        }
    }
}

impl Program {
    pub fn compile(ast: Ast) -> Result<Program, OnlineError> {
        let ast = fold(ast);
        let depth = depth(&ast);
        if depth > MAX_DEPTH {
            return Err(OnlineError::Expr {
                column: 1,
                message: format!(
                    "expression too long or too deeply nested ({depth} levels, at most {MAX_DEPTH})"
                ),
            });
        }
        check_finite(&ast)?;
        let mut features = Vec::new();
        features_of(&ast, &mut features);
        features.sort_unstable();
        features.dedup();
        Ok(Program {
            code: generate(&ast),
            needs: Needs::of(&features),
            features,
        })
    }

    /// The features the program reads, in documentation order.
    pub fn features(&self) -> &[Feature] {
        &self.features
    }

    pub(crate) fn needs(&self) -> Needs {
        self.needs
    }

    pub(crate) fn eval(&self, env: &Env<'_>) -> f64 {
        (self.code)(env)
    }
}

#[cfg(test)]
mod tests {
    use gapbench_model::{
        Cluster, ClusterState, CpuPowerProfile, GpuModel, NodeType, Task, TypicalPods,
    };

    use super::super::parse::{parse, FUNCTIONS};
    use super::*;
    use crate::policy::ScoreContext;

    /// Evaluates `text` on one G2 node with `cpu_left` free CPU and `free` milli on its
    /// first devices (the others idle), for a task of `task_cpu` milli and no GPU.
    fn eval_on(text: &str, cpu_left: u32, free: &[u16], task_cpu: u32) -> f64 {
        let node_type = NodeType {
            gpu_model: Some(GpuModel::G2),
            gpu_count: 8,
            cpu_milli: 96_000,
            memory_mib: 1 << 18,
        };
        let cluster =
            Cluster::new([("n".to_string(), node_type)], CpuPowerProfile::Reference).unwrap();
        let mut state = ClusterState::empty(&cluster);
        state.nodes[0].cpu_left_milli = cpu_left;
        state.nodes[0].free_gpu_milli_by_device[..free.len()].copy_from_slice(free);
        let typical = TypicalPods {
            pods: Vec::new(),
            distinct_shapes: 0,
            coverage_pct: 100.0,
        };
        let ctx = ScoreContext {
            cluster: &cluster,
            state: &state,
            typical: &typical,
        };
        let task = Task::new("t", task_cpu, 0, 0, 0);
        let program = Program::compile(parse(text).unwrap()).unwrap();
        program.eval(&Env::new(&ctx, 0, &task, program.needs()))
    }

    /// With `X` = cpu_free_milli = `x` and `Y` = `y` (the free milli of the first device).
    fn eval(text: &str, x: u32, y: u16) -> f64 {
        let text = text
            .replace('X', "cpu_free_milli")
            .replace('Y', "(gpu_free_milli - 7000)");
        eval_on(&text, x, &[y], 1)
    }

    #[test]
    fn arithmetic_comparisons_and_branches() {
        assert_eq!(eval("1 + 2 * 3 - 4 / 2", 0, 0), 5.0);
        assert_eq!(eval("X - Y", 10, 4), 6.0);
        assert_eq!(eval("100 - X", 10, 0), 90.0);
        assert_eq!(eval("100 / X", 4, 0), 25.0);
        assert_eq!(eval("1 / (X * 2) / Y", 1, 4), 0.125);
        assert_eq!(eval("2 ^ X - 1 % Y", 3, 4), 7.0);
        assert_eq!(eval("(X + 1) * (Y + 2)", 1, 2), 8.0);
        assert_eq!(eval("if(X > 5, 1, 2)", 6, 0), 1.0);
        assert_eq!(eval("if(X > 5, 1, 2)", 5, 0), 2.0);
        assert_eq!(eval("3 + if(X, Y * 2, if(Y, 7, 9))", 0, 0), 12.0);
        assert_eq!(eval("max(1, X, 3)", 2, 0), 3.0);
        assert_eq!(eval("clamp(X, 0, 100)", 250, 0), 100.0);
        assert_eq!(eval("not X or 0 and 1", 0, 0), 1.0);
        assert_eq!(eval("-X + 7 % 4 + 2 ^ 3", 1, 0), 10.0);
        assert_eq!(eval("sigmoid(0) * 100", 0, 0), 50.0);
    }

    #[test]
    fn evaluates_like_the_same_formula_in_rust() {
        // BestFit's formula (reference-semantics §5.6), bit for bit.
        for (cpu_left, free, task_cpu) in [
            (1234, 777, 1000),
            (96_000, 1000, 3150),
            (0, 0, 100),
            (3, 1, 2),
        ] {
            let (cpu, gpu) = (
                f64::from(cpu_left) - f64::from(task_cpu),
                f64::from(free) + 7000.0,
            );
            let mut left = 0.0;
            left += cpu / 128_000.0 * 0.5;
            left += gpu / 8_000.0 * 0.5;
            let native = (1.0 - left) * 100.0;
            let value = eval_on(super::super::BEST_FIT_EXPR, cpu_left, &[free], task_cpu);
            assert_eq!(value.to_bits(), native.to_bits());
        }
    }

    #[test]
    fn folds_constants_and_reports_what_it_reads() {
        let folded = fold(parse("2 * 3 + idle_gpus * (1 + 1)").unwrap());
        assert_eq!(folded, fold(parse("6 + idle_gpus * 2").unwrap()));
        let program = Program::compile(parse("2 * 3 + idle_gpus * (1 + 1)").unwrap()).unwrap();
        assert_eq!(program.features(), &[Feature::IdleGpus]);
        let constant = Program::compile(parse("if(1 > 2, idle_gpus, 4)").unwrap()).unwrap();
        assert!(constant.features().is_empty());
        assert_eq!(
            fold(parse("if(1 > 2, idle_gpus, 4)").unwrap()),
            Ast::Num(4.0)
        );
    }

    /// `ln(0)`, `1 / 0` and the like ran silently with NaN or ±∞ scores.
    #[test]
    fn non_finite_constants_and_division_by_zero_are_refused() {
        let error = |text: &str| {
            Program::compile(parse(text).unwrap())
                .unwrap_err()
                .message()
                .to_string()
        };
        for text in [
            "ln(0)",
            "idle_gpus + ln(0)",
            "0 / 0",
            "sqrt(-1) * idle_gpus",
            "10 ^ 400",
        ] {
            assert!(
                error(text).contains("not a finite number"),
                "{text}: {}",
                error(text)
            );
        }
        for text in ["idle_gpus / 0", "idle_gpus % (1 - 1)"] {
            let message = error(text);
            assert!(message.contains("division by zero"), "{text}: {message}");
        }
        assert!(Program::compile(parse("idle_gpus / 2 + ln(1)").unwrap()).is_ok());
    }

    #[test]
    fn every_function_compiles_and_depth_is_bounded() {
        for (name, arity, _) in FUNCTIONS {
            let args = vec!["idle_gpus"; arity.unwrap_or(3)].join(", ");
            let text = format!("{name}({args})");
            assert!(Program::compile(parse(&text).unwrap()).is_ok(), "{text}");
        }
        let long = vec!["idle_gpus"; 300].join(" + ");
        let error = Program::compile(parse(&long).unwrap()).unwrap_err();
        assert!(error.message().contains("too long"), "{error}");
        let constants = vec!["1"; 300].join(" + ");
        assert!(
            Program::compile(parse(&constants).unwrap()).is_ok(),
            "constants fold away"
        );
    }
}
