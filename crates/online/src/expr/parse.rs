//! Score expressions: text → syntax tree, with errors that point at the column.
//!
//! ```text
//! expr    = or
//! or      = and ("or" and)*
//! and     = cmp ("and" cmp)*
//! cmp     = sum (("==" | "!=" | "<" | "<=" | ">" | ">=") sum)?
//! sum     = product (("+" | "-") product)*
//! product = unary (("*" | "/" | "%") unary)*
//! unary   = ("-" | "not") unary | power
//! power   = atom ("^" unary)?            (right-associative: 2^3^2 = 2^9; -x^2 = -(x^2))
//! atom    = number | feature | constant | function "(" expr ("," expr)* ")" | "(" expr ")"
//! ```
//! Everything is an f64; a comparison or `and`/`or`/`not` gives 1 or 0, and any non-zero
//! value is true.

use super::features::{constant, Feature, FEATURES};
use crate::error::OnlineError;

/// A binary operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl Bin {
    pub fn apply(self, a: f64, b: f64) -> f64 {
        let truth = |t: bool| if t { 1.0 } else { 0.0 };
        match self {
            Bin::Add => a + b,
            Bin::Sub => a - b,
            Bin::Mul => a * b,
            Bin::Div => a / b,
            Bin::Rem => a % b,
            Bin::Pow => a.powf(b),
            Bin::Min => a.min(b),
            Bin::Max => a.max(b),
            Bin::Eq => truth(a == b),
            Bin::Ne => truth(a != b),
            Bin::Lt => truth(a < b),
            Bin::Le => truth(a <= b),
            Bin::Gt => truth(a > b),
            Bin::Ge => truth(a >= b),
            Bin::And => truth(a != 0.0 && b != 0.0),
            Bin::Or => truth(a != 0.0 || b != 0.0),
        }
    }
}

/// A one-argument operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Un {
    Neg,
    Not,
    Abs,
    Floor,
    Ceil,
    Round,
    Trunc,
    Sqrt,
    Exp,
    Ln,
    Log2,
    Log10,
    Sigmoid,
}

impl Un {
    pub fn apply(self, a: f64) -> f64 {
        match self {
            Un::Neg => -a,
            Un::Not => {
                if a == 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            Un::Abs => a.abs(),
            Un::Floor => a.floor(),
            Un::Ceil => a.ceil(),
            Un::Round => a.round(),
            Un::Trunc => a.trunc(),
            Un::Sqrt => a.sqrt(),
            Un::Exp => a.exp(),
            Un::Ln => a.ln(),
            Un::Log2 => a.log2(),
            Un::Log10 => a.log10(),
            Un::Sigmoid => 1.0 / (1.0 + (-a).exp()),
        }
    }
}

/// The functions, with their arity (`None`: two or more).
pub const FUNCTIONS: &[(&str, Option<usize>, &str)] = &[
    ("min", None, "the least argument"),
    ("max", None, "the largest argument"),
    ("if", Some(3), "if(c, a, b): a when c ≠ 0, else b"),
    ("clamp", Some(3), "clamp(x, lo, hi) = min(max(x, lo), hi)"),
    ("pow", Some(2), "pow(a, b) = a ^ b"),
    ("abs", Some(1), ""),
    ("floor", Some(1), ""),
    ("ceil", Some(1), ""),
    ("round", Some(1), "half away from zero"),
    ("trunc", Some(1), "toward zero"),
    ("sqrt", Some(1), ""),
    ("exp", Some(1), ""),
    ("ln", Some(1), ""),
    ("log2", Some(1), ""),
    ("log10", Some(1), ""),
    ("sigmoid", Some(1), "1 / (1 + exp(−x))"),
];

/// A syntax tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Ast {
    Num(f64),
    Feature(Feature),
    Unary(Un, Box<Ast>),
    Binary(Bin, Box<Ast>, Box<Ast>),
    If(Box<Ast>, Box<Ast>, Box<Ast>),
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(f64),
    Ident(String),
    Sym(&'static str),
    End,
}

const SYMBOLS: [&str; 16] = [
    "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "^", "(", ")", ",", "=",
];

fn tokenize(text: &str) -> Result<Vec<(Token, usize)>, OnlineError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit() || chars[i] == '.' || chars[i] == '_')
            {
                i += 1;
            }
            if i < chars.len() && matches!(chars[i], 'e' | 'E') {
                let mut j = i + 1;
                if j < chars.len() && matches!(chars[j], '+' | '-') {
                    j += 1;
                }
                if j < chars.len() && chars[j].is_ascii_digit() {
                    i = j;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let literal: String = chars[start..i].iter().filter(|&&c| c != '_').collect();
            let value = literal.parse::<f64>().map_err(|_| OnlineError::Expr {
                column,
                message: format!("`{literal}` is not a number"),
            })?;
            if value.is_infinite() {
                return Err(OnlineError::Expr {
                    column,
                    message: format!("`{literal}` is too large for a number (at most ~1.8e308)"),
                });
            }
            tokens.push((Token::Num(value), column));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push((Token::Ident(chars[start..i].iter().collect()), column));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let Some(symbol) = SYMBOLS.iter().find(|s| rest.starts_with(**s)) else {
                return Err(OnlineError::Expr {
                    column,
                    message: format!("unexpected `{c}`"),
                });
            };
            if *symbol == "=" {
                return Err(OnlineError::Expr {
                    column,
                    message: "`=` is not an operator: compare with `==`".to_string(),
                });
            }
            i += symbol.len();
            tokens.push((Token::Sym(symbol), column));
        }
    }
    tokens.push((Token::End, chars.len() + 1));
    Ok(tokens)
}

struct Parser {
    tokens: Vec<(Token, usize)>,
    at: usize,
    /// Nesting constructs open around the current token: parentheses, calls, unary
    /// operators and `^` exponents (parsing recurses on each).
    nesting: usize,
}

/// The most nesting constructs one inside another.
const MAX_NESTING: usize = 64;

/// The deepest syntax tree parsed. Folding, checking and dropping a tree recurse once per
/// level, so a deeper one (50,000 `+` terms) would overflow the stack; constant parts fold
/// away before compiling's tighter depth limit (`compile.rs`'s `MAX_DEPTH`) applies.
pub const MAX_TREE_DEPTH: usize = 1024;

/// A syntax tree and its depth, as the parser builds it.
struct Tree {
    ast: Ast,
    depth: usize,
}

impl Tree {
    fn leaf(ast: Ast) -> Tree {
        Tree { ast, depth: 1 }
    }
}

/// `text` cut to at most 80 characters around the 1-based `column`, with `…` where cut: an
/// error about a 100 KB expression shows where, not all of it.
pub fn excerpt(text: &str, column: usize) -> String {
    const WIDTH: usize = 80;
    let length = text.chars().count();
    if length <= WIDTH {
        return text.to_string();
    }
    let start = column.saturating_sub(1 + WIDTH / 2).min(length - WIDTH);
    let end = start + WIDTH;
    let mut cut: String = text.chars().skip(start).take(WIDTH).collect();
    if start > 0 {
        cut.insert(0, '…');
    }
    if end < length {
        cut.push('…');
    }
    cut
}

/// Parses `text` into a syntax tree; names are resolved to features and constants here.
pub fn parse(text: &str) -> Result<Ast, OnlineError> {
    let mut parser = Parser {
        tokens: tokenize(text)?,
        at: 0,
        nesting: 0,
    };
    if parser.peek() == &Token::End {
        return Err(parser.error("empty expression"));
    }
    let tree = parser.or()?;
    if parser.peek() != &Token::End {
        let found = parser.describe();
        return Err(parser.error(&format!("unexpected {found} after a complete expression")));
    }
    Ok(tree.ast)
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.at].0
    }

    fn column(&self) -> usize {
        self.tokens[self.at].1
    }

    fn error(&self, message: &str) -> OnlineError {
        OnlineError::Expr {
            column: self.column(),
            message: message.to_string(),
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            Token::Num(v) => format!("number {v}"),
            Token::Ident(name) => format!("`{name}`"),
            Token::Sym(s) => format!("`{s}`"),
            Token::End => "end".to_string(),
        }
    }

    fn eat_sym(&mut self, symbol: &str) -> bool {
        if matches!(self.peek(), Token::Sym(s) if *s == symbol) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Token::Ident(name) if name == word) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect_sym(&mut self, symbol: &str) -> Result<(), OnlineError> {
        if self.eat_sym(symbol) {
            Ok(())
        } else {
            let found = self.describe();
            Err(self.error(&format!("expected `{symbol}`, found {found}")))
        }
    }

    fn enter(&mut self) -> Result<(), OnlineError> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(self.error(&format!(
                "expression too long or too deeply nested: more than {MAX_NESTING} \
                 parentheses, calls, unary operators or exponents one inside another"
            )));
        }
        Ok(())
    }

    /// `tree`, unless it is deeper than [`MAX_TREE_DEPTH`].
    fn bounded(&self, tree: Tree) -> Result<Tree, OnlineError> {
        if tree.depth > MAX_TREE_DEPTH {
            return Err(self.error(&format!(
                "expression too long or too deeply nested: more than {MAX_TREE_DEPTH} \
                 operations one inside another"
            )));
        }
        Ok(tree)
    }

    fn unary_node(&self, op: Un, inner: Tree) -> Result<Tree, OnlineError> {
        self.bounded(Tree {
            depth: inner.depth + 1,
            ast: Ast::Unary(op, Box::new(inner.ast)),
        })
    }

    fn binary_node(&self, op: Bin, left: Tree, right: Tree) -> Result<Tree, OnlineError> {
        self.bounded(Tree {
            depth: left.depth.max(right.depth) + 1,
            ast: Ast::Binary(op, Box::new(left.ast), Box::new(right.ast)),
        })
    }

    fn or(&mut self) -> Result<Tree, OnlineError> {
        let mut left = self.and()?;
        while self.eat_word("or") {
            let right = self.and()?;
            left = self.binary_node(Bin::Or, left, right)?;
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Tree, OnlineError> {
        let mut left = self.comparison()?;
        while self.eat_word("and") {
            let right = self.comparison()?;
            left = self.binary_node(Bin::And, left, right)?;
        }
        Ok(left)
    }

    fn comparison(&mut self) -> Result<Tree, OnlineError> {
        let left = self.sum()?;
        let op = match self.peek() {
            Token::Sym("==") => Bin::Eq,
            Token::Sym("!=") => Bin::Ne,
            Token::Sym("<") => Bin::Lt,
            Token::Sym("<=") => Bin::Le,
            Token::Sym(">") => Bin::Gt,
            Token::Sym(">=") => Bin::Ge,
            _ => return Ok(left),
        };
        self.at += 1;
        let right = self.sum()?;
        if matches!(
            self.peek(),
            Token::Sym("==" | "!=" | "<" | "<=" | ">" | ">=")
        ) {
            return Err(self.error("comparisons do not chain: write `a < b and b < c`"));
        }
        self.binary_node(op, left, right)
    }

    fn sum(&mut self) -> Result<Tree, OnlineError> {
        let mut left = self.product()?;
        loop {
            let op = if self.eat_sym("+") {
                Bin::Add
            } else if self.eat_sym("-") {
                Bin::Sub
            } else {
                return Ok(left);
            };
            let right = self.product()?;
            left = self.binary_node(op, left, right)?;
        }
    }

    fn product(&mut self) -> Result<Tree, OnlineError> {
        let mut left = self.unary()?;
        loop {
            let op = if self.eat_sym("*") {
                Bin::Mul
            } else if self.eat_sym("/") {
                Bin::Div
            } else if self.eat_sym("%") {
                Bin::Rem
            } else {
                return Ok(left);
            };
            let right = self.unary()?;
            left = self.binary_node(op, left, right)?;
        }
    }

    /// A unary operator or a `^` exponent recurses: each counts as nesting.
    fn nested_unary(&mut self) -> Result<Tree, OnlineError> {
        self.enter()?;
        let inner = self.unary();
        self.nesting -= 1;
        inner
    }

    fn unary(&mut self) -> Result<Tree, OnlineError> {
        for (word, op) in [("-", Un::Neg), ("not", Un::Not)] {
            if self.eat_sym(word) || self.eat_word(word) {
                let inner = self.nested_unary()?;
                return self.unary_node(op, inner);
            }
        }
        let base = self.atom()?;
        if self.eat_sym("^") {
            let exponent = self.nested_unary()?;
            return self.binary_node(Bin::Pow, base, exponent);
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Tree, OnlineError> {
        let column = self.column();
        match self.peek().clone() {
            Token::Num(value) => {
                self.at += 1;
                Ok(Tree::leaf(Ast::Num(value)))
            }
            Token::Sym("(") => {
                self.at += 1;
                self.enter()?;
                let inner = self.or()?;
                self.expect_sym(")")?;
                self.nesting -= 1;
                Ok(inner)
            }
            Token::Ident(name) => {
                self.at += 1;
                if self.eat_sym("(") {
                    self.enter()?;
                    let call = self.call(&name, column);
                    self.nesting -= 1;
                    return call;
                }
                if let Some(feature) = Feature::by_name(&name) {
                    return Ok(Tree::leaf(Ast::Feature(feature)));
                }
                if let Some(value) = constant(&name) {
                    return Ok(Tree::leaf(Ast::Num(value)));
                }
                let known: Vec<&str> = FEATURES.iter().map(|f| f.name).collect();
                Err(OnlineError::Expr {
                    column,
                    message: format!("unknown name `{name}` (features: {})", known.join(", ")),
                })
            }
            _ => {
                let found = self.describe();
                Err(self.error(&format!("expected a number, a name or `(`, found {found}")))
            }
        }
    }

    fn call(&mut self, name: &str, column: usize) -> Result<Tree, OnlineError> {
        let Some(&(_, arity, _)) = FUNCTIONS.iter().find(|(f, _, _)| *f == name) else {
            let known: Vec<&str> = FUNCTIONS.iter().map(|(f, _, _)| *f).collect();
            return Err(OnlineError::Expr {
                column,
                message: format!(
                    "unknown function `{name}` (functions: {})",
                    known.join(", ")
                ),
            });
        };
        let mut args = vec![self.or()?];
        while self.eat_sym(",") {
            args.push(self.or()?);
        }
        self.expect_sym(")")?;
        let count_ok = match arity {
            Some(n) => args.len() == n,
            None => args.len() >= 2,
        };
        if !count_ok {
            let wanted = arity.map_or("at least 2".to_string(), |n| n.to_string());
            return Err(OnlineError::Expr {
                column,
                message: format!("`{name}` takes {wanted} argument(s), got {}", args.len()),
            });
        }
        let mut args = args.into_iter();
        let mut next = || args.next().expect("arity checked");
        match name {
            "min" | "max" => {
                let op = if name == "min" { Bin::Min } else { Bin::Max };
                let mut acc = next();
                for arg in args.by_ref() {
                    acc = self.binary_node(op, acc, arg)?;
                }
                Ok(acc)
            }
            "if" => {
                let (condition, then, otherwise) = (next(), next(), next());
                self.bounded(Tree {
                    depth: 1 + condition.depth.max(then.depth).max(otherwise.depth),
                    ast: Ast::If(
                        Box::new(condition.ast),
                        Box::new(then.ast),
                        Box::new(otherwise.ast),
                    ),
                })
            }
            "clamp" => {
                let (x, lo, hi) = (next(), next(), next());
                let lower = self.binary_node(Bin::Max, x, lo)?;
                self.binary_node(Bin::Min, lower, hi)
            }
            "pow" => {
                let (base, exponent) = (next(), next());
                self.binary_node(Bin::Pow, base, exponent)
            }
            _ => {
                let op = match name {
                    "abs" => Un::Abs,
                    "floor" => Un::Floor,
                    "ceil" => Un::Ceil,
                    "round" => Un::Round,
                    "trunc" => Un::Trunc,
                    "sqrt" => Un::Sqrt,
                    "exp" => Un::Exp,
                    "ln" => Un::Ln,
                    "log2" => Un::Log2,
                    "log10" => Un::Log10,
                    "sigmoid" => Un::Sigmoid,
                    _ => unreachable!("every name of FUNCTIONS is handled"),
                };
                let inner = next();
                self.unary_node(op, inner)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(v: f64) -> Box<Ast> {
        Box::new(Ast::Num(v))
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(
            parse("1 + 2 * 3").unwrap(),
            Ast::Binary(
                Bin::Add,
                num(1.0),
                Box::new(Ast::Binary(Bin::Mul, num(2.0), num(3.0)))
            )
        );
        assert_eq!(
            parse("8 - 2 - 1").unwrap(),
            Ast::Binary(
                Bin::Sub,
                Box::new(Ast::Binary(Bin::Sub, num(8.0), num(2.0))),
                num(1.0)
            )
        );
        assert_eq!(
            parse("-2 ^ 2").unwrap(),
            Ast::Unary(Un::Neg, Box::new(Ast::Binary(Bin::Pow, num(2.0), num(2.0))))
        );
        assert_eq!(
            parse("2 ^ 3 ^ 2").unwrap(),
            Ast::Binary(
                Bin::Pow,
                num(2.0),
                Box::new(Ast::Binary(Bin::Pow, num(3.0), num(2.0)))
            )
        );
    }

    #[test]
    fn names_resolve_to_features_and_constants() {
        assert_eq!(
            parse("gpu_model == V100M32").unwrap(),
            Ast::Binary(
                Bin::Eq,
                Box::new(Ast::Feature(Feature::GpuModelCode)),
                num(5.0)
            )
        );
        assert_eq!(parse("1_000").unwrap(), Ast::Num(1000.0));
        assert_eq!(parse("1.5e3").unwrap(), Ast::Num(1500.0));
    }

    #[test]
    fn errors_name_the_column_and_the_choices() {
        let error = parse("cpu_free_milli + gpu_fre").unwrap_err();
        assert_eq!(error.column(), Some(18));
        assert!(
            error.message().contains("unknown name `gpu_fre`"),
            "{error}"
        );
        assert!(error.message().contains("gpu_free_milli"), "{error}");
        assert_eq!(parse("").unwrap_err().message(), "empty expression");
        assert!(parse("max(1)")
            .unwrap_err()
            .message()
            .contains("at least 2"));
        assert!(parse("if(1, 2)").unwrap_err().message().contains("takes 3"));
        assert!(parse("tan(1)")
            .unwrap_err()
            .message()
            .contains("unknown function"));
        assert!(parse("(1 + 2")
            .unwrap_err()
            .message()
            .contains("expected `)`"));
        assert!(parse("1 2")
            .unwrap_err()
            .message()
            .contains("after a complete"));
        assert!(parse("a = 1").is_err());
        assert!(parse("1 < 2 < 3").unwrap_err().message().contains("chain"));
        assert_eq!(parse("1 $ 2").unwrap_err().column(), Some(3));
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert!(parse(&deep)
            .unwrap_err()
            .message()
            .contains("one inside another"));
        let nested_calls = format!("{}1{}", "abs(".repeat(60), ")".repeat(60));
        assert!(parse(&nested_calls).is_ok());
    }

    /// 100,000 unary minus signs, 50,000 `+` terms and a 60,000-deep `^` chain overflowed
    /// the stack (the process aborted): every nesting construct is bounded while parsing.
    #[test]
    fn huge_expressions_are_refused_without_overflowing_the_stack() {
        let minus = format!("{}1", "-".repeat(100_000));
        let terms = vec!["idle_gpus"; 50_000].join(" + ");
        let power = format!("{}2", "2 ^ ".repeat(60_000));
        let negated = format!("{}1", "not ".repeat(100_000));
        for text in [&minus, &terms, &power, &negated] {
            let error = parse(text).unwrap_err();
            assert!(
                error.message().contains("too long or too deeply nested"),
                "{error}"
            );
            let column = error.column().unwrap();
            assert!(column > 1 && column < text.len(), "{error}");
        }
        // Long but shallow enough: a sum of 300 constants still parses (it folds to one).
        assert!(parse(&vec!["1"; 300].join(" + ")).is_ok());
        assert!(parse(&format!("{}1", "-".repeat(60))).is_ok());
    }

    /// A literal beyond f64 became infinity and ran silently.
    #[test]
    fn a_number_beyond_f64_is_refused() {
        let error = parse("idle_gpus + 1e400").unwrap_err();
        assert_eq!(error.column(), Some(13));
        assert!(error.message().contains("too large"), "{error}");
    }
}
