//! Syntax tree → a flat program for a one-register stack machine, built once per policy
//! spec and run once per (node, task) without allocation.
//!
//! Why not an expression crate: on BestFit's formula exmex 0.21 took ~26× and evalexpr 12
//! ~420× the native code (2M evaluations, 2-core VM), and the target is 3×. Here constant
//! sub-expressions are folded at compile time, a binary operation whose right operand is a
//! constant or a feature reads it from the instruction (no push), and the top of the stack
//! lives in a register. Folding never reorders floating-point operations, so an expression
//! evaluates bit for bit like the same formula written in Rust.

use super::features::{Feature, FEATURE_COUNT};
use super::parse::{Ast, Bin, ExprError, Un};

/// The deepest stack an expression may need (a bound on nesting, not on length).
pub const MAX_STACK: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    /// Push the register, load a constant.
    Const(f64),
    /// Push the register, load a feature.
    Load(u8),
    /// register = pop() op register.
    Bin(Bin),
    /// register = register op constant.
    BinConst(Bin, f64),
    /// register = constant op register.
    ConstBin(Bin, f64),
    /// register = register op feature.
    BinLoad(Bin, u8),
    /// register = op register.
    Unary(Un),
    /// Jump to the target when the register is 0 (each branch starts with a `Pop` that
    /// drops the condition).
    JumpIfZero(u16),
    Jump(u16),
    /// Pop into the register (drops the condition's result before a branch).
    Pop,
}

/// A compiled expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    ops: Vec<Op>,
    features: Vec<Feature>,
}

/// Evaluates constant sub-trees; keeps everything else in its order.
fn fold(ast: Ast) -> Ast {
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

struct Emitter {
    ops: Vec<Op>,
    features: Vec<Feature>,
    /// Values on the stack below the register, now and at most.
    depth: usize,
    max_depth: usize,
}

impl Emitter {
    fn push_value(&mut self) {
        self.depth += 1;
        self.max_depth = self.max_depth.max(self.depth);
    }

    fn slot(&mut self, feature: Feature) -> u8 {
        if !self.features.contains(&feature) {
            self.features.push(feature);
        }
        feature as u8
    }

    /// Emits code that leaves the value of `ast` in the register, the previous register
    /// pushed below it: every expression adds one value to the machine's stack.
    fn emit(&mut self, ast: &Ast) {
        match ast {
            Ast::Num(v) => {
                self.ops.push(Op::Const(*v));
                self.push_value();
            }
            Ast::Feature(f) => {
                let slot = self.slot(*f);
                self.ops.push(Op::Load(slot));
                self.push_value();
            }
            Ast::Unary(op, inner) => {
                self.emit(inner);
                self.ops.push(Op::Unary(*op));
            }
            Ast::Binary(op, left, right) => match (&**left, &**right) {
                (_, Ast::Num(c)) => {
                    self.emit(left);
                    self.ops.push(Op::BinConst(*op, *c));
                }
                (_, Ast::Feature(f)) => {
                    self.emit(left);
                    let slot = self.slot(*f);
                    self.ops.push(Op::BinLoad(*op, slot));
                }
                (Ast::Num(c), _) => {
                    self.emit(right);
                    self.ops.push(Op::ConstBin(*op, *c));
                }
                _ => {
                    self.emit(left);
                    self.emit(right);
                    self.ops.push(Op::Bin(*op));
                    self.depth -= 1;
                }
            },
            Ast::If(condition, then, otherwise) => {
                self.emit(condition);
                let branch = self.ops.len();
                self.ops.push(Op::JumpIfZero(0));
                self.ops.push(Op::Pop);
                self.depth -= 1;
                self.emit(then);
                let skip = self.ops.len();
                self.ops.push(Op::Jump(0));
                let otherwise_at = self.ops.len();
                self.ops.push(Op::Pop);
                self.depth -= 1;
                self.emit(otherwise);
                let end = self.ops.len();
                self.ops[branch] = Op::JumpIfZero(otherwise_at as u16);
                self.ops[skip] = Op::Jump(end as u16);
            }
        }
    }
}

impl Program {
    pub fn compile(ast: Ast) -> Result<Program, ExprError> {
        let ast = fold(ast);
        let mut emitter = Emitter {
            ops: Vec::new(),
            features: Vec::new(),
            depth: 0,
            max_depth: 0,
        };
        emitter.emit(&ast);
        if emitter.max_depth > MAX_STACK || emitter.ops.len() > usize::from(u16::MAX) {
            return Err(ExprError {
                column: 1,
                message: format!(
                    "expression too deeply nested (it needs a stack of {}, at most {MAX_STACK})",
                    emitter.max_depth
                ),
            });
        }
        Ok(Program {
            ops: emitter.ops,
            features: emitter.features,
        })
    }

    /// The features the program reads.
    pub fn features(&self) -> &[Feature] {
        &self.features
    }

    /// Runs the program on the feature values (indexed by [`Feature`]).
    pub fn eval(&self, values: &[f64; FEATURE_COUNT]) -> f64 {
        // The stack holds the values below the register; the first push stores the
        // undefined initial register into stack[0], which nothing reads.
        let mut stack = [0.0f64; MAX_STACK + 1];
        let mut sp = 0usize;
        let mut register = 0.0f64;
        let mut pc = 0usize;
        while let Some(&op) = self.ops.get(pc) {
            pc += 1;
            match op {
                Op::Const(v) => {
                    stack[sp] = register;
                    sp += 1;
                    register = v;
                }
                Op::Load(slot) => {
                    stack[sp] = register;
                    sp += 1;
                    register = values[usize::from(slot)];
                }
                Op::Bin(op) => {
                    sp -= 1;
                    register = op.apply(stack[sp], register);
                }
                Op::BinConst(op, c) => register = op.apply(register, c),
                Op::ConstBin(op, c) => register = op.apply(c, register),
                Op::BinLoad(op, slot) => register = op.apply(register, values[usize::from(slot)]),
                Op::Unary(op) => register = op.apply(register),
                Op::JumpIfZero(target) => {
                    if register == 0.0 {
                        pc = usize::from(target);
                    }
                }
                Op::Jump(target) => pc = usize::from(target),
                Op::Pop => {
                    sp -= 1;
                    register = stack[sp];
                }
            }
        }
        register
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::{parse, FUNCTIONS};
    use super::*;

    fn eval(text: &str, values: &[(Feature, f64)]) -> f64 {
        let program = Program::compile(parse(text).unwrap()).unwrap();
        let mut all = [0.0; FEATURE_COUNT];
        for &(f, v) in values {
            all[f as usize] = v;
        }
        program.eval(&all)
    }

    #[test]
    fn arithmetic_comparisons_and_branches() {
        let x = Feature::CpuFreeMilli;
        let y = Feature::GpuFreeMilli;
        assert_eq!(eval("1 + 2 * 3 - 4 / 2", &[]), 5.0);
        assert_eq!(
            eval("cpu_free_milli - gpu_free_milli", &[(x, 10.0), (y, 4.0)]),
            6.0
        );
        assert_eq!(eval("100 - cpu_free_milli", &[(x, 10.0)]), 90.0);
        assert_eq!(
            eval(
                "(cpu_free_milli + 1) * (gpu_free_milli + 2)",
                &[(x, 1.0), (y, 2.0)]
            ),
            8.0
        );
        assert_eq!(eval("if(cpu_free_milli > 5, 1, 2)", &[(x, 6.0)]), 1.0);
        assert_eq!(eval("if(cpu_free_milli > 5, 1, 2)", &[(x, 5.0)]), 2.0);
        assert_eq!(
            eval(
                "3 + if(cpu_free_milli, gpu_free_milli * 2, if(gpu_free_milli, 7, 9))",
                &[(x, 0.0), (y, 0.0)]
            ),
            12.0
        );
        assert_eq!(eval("max(1, cpu_free_milli, 3)", &[(x, 2.0)]), 3.0);
        assert_eq!(eval("clamp(cpu_free_milli, 0, 100)", &[(x, 250.0)]), 100.0);
        assert_eq!(eval("not cpu_free_milli or 0 and 1", &[(x, 0.0)]), 1.0);
        assert_eq!(eval("7 % 4 + 2 ^ 3", &[]), 11.0);
        assert_eq!(eval("sigmoid(0) * 100", &[]), 50.0);
    }

    #[test]
    fn evaluates_like_the_same_formula_in_rust() {
        // BestFit's formula (reference-semantics §5.6), bit for bit.
        for (cpu, gpu) in [
            (1234.0, 777.0),
            (96000.0, 8000.0),
            (-100.0, 0.0),
            (3.0, 1.0),
        ] {
            let mut left = 0.0;
            left += cpu / 128_000.0 * 0.5;
            left += gpu / 8_000.0 * 0.5;
            let native = (1.0 - left) * 100.0;
            let value = eval(
                "(1 - (cpu_free_after_milli / 128000 * 0.5 + gpu_free_after_milli / 8000 * 0.5)) * 100",
                &[(Feature::CpuFreeAfterMilli, cpu), (Feature::GpuFreeAfterMilli, gpu)],
            );
            assert_eq!(value.to_bits(), native.to_bits());
        }
    }

    #[test]
    fn folds_constants_and_reports_what_it_reads() {
        let program = Program::compile(parse("2 * 3 + idle_gpus * (1 + 1)").unwrap()).unwrap();
        assert_eq!(program.features(), &[Feature::IdleGpus]);
        assert_eq!(
            program.ops,
            vec![
                Op::Load(Feature::IdleGpus as u8),
                Op::BinConst(Bin::Mul, 2.0),
                Op::ConstBin(Bin::Add, 6.0)
            ]
        );
        let constant = Program::compile(parse("if(1 > 2, idle_gpus, 4)").unwrap()).unwrap();
        assert_eq!(constant.ops, vec![Op::Const(4.0)]);
        assert!(constant.features().is_empty());
    }

    #[test]
    fn every_function_compiles_and_nesting_is_bounded() {
        for (name, arity, _) in FUNCTIONS {
            let args = vec!["idle_gpus"; arity.unwrap_or(3)].join(", ");
            let text = format!("{name}({args})");
            assert!(Program::compile(parse(&text).unwrap()).is_ok(), "{text}");
        }
        let deep = format!("{}1{}", "(1 + ".repeat(40), ")".repeat(40));
        assert!(
            Program::compile(parse(&deep).unwrap()).is_ok(),
            "constants fold away"
        );
        let deep = format!("{}idle_gpus{}", "(idle_gpus + ".repeat(40), ")".repeat(40));
        let error = Program::compile(parse(&deep).unwrap()).unwrap_err();
        assert!(error.message.contains("too deeply nested"), "{error}");
    }
}
