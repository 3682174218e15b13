//! The value of a dim's text at given sizes: a symbol of the model
//! (`batch`) or an expression as `symbolic` inference writes them
//! (`floor((h + 1)/2)`, `min(seq, 512) - 2`, `12*batch*seq`), read from the
//! text itself, so the dims of a model saved with such expressions evaluate
//! as well as those of a fresh inference.
//!
//! The grammar is the one [`super::symbolic`] renders (Python-readable):
//! sums and differences of products of integers, names, parenthesised
//! expressions, `floor(e/d)` (`d` a positive integer), `min(a, b)` and
//! `max(a, b)`. A name is a run of characters other than spaces and
//! `+-*/(),`; a dim whose whole text is a given name is that size whatever
//! its characters. Arithmetic is checked (64-bit); nesting is bounded, so
//! hostile text costs time in proportion to its length and no more stack
//! than [`MAX_DEPTH`] levels.

/// Deepest nesting of parentheses and calls read.
pub const MAX_DEPTH: usize = 64;

/// Why a dim's text has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unevaluated {
    /// It names a symbol without a size (a fresh `unk__N`, or one the
    /// caller did not give).
    Unknown(String),
    /// It is not an expression of this grammar (a name with spaces or
    /// operators in it, inside an expression), or nests too deep.
    Syntax(String),
    /// A step overflows 64 bits.
    Overflow,
}

impl std::fmt::Display for Unevaluated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unevaluated::Unknown(name) => write!(f, "no size given for '{name}'"),
            Unevaluated::Syntax(why) => write!(f, "not an expression: {why}"),
            Unevaluated::Overflow => f.write_str("the value overflows 64 bits"),
        }
    }
}

/// The value of `text` with each name's size from `size`.
pub fn evaluate(text: &str, size: &dyn Fn(&str) -> Option<i64>) -> Result<i64, Unevaluated> {
    if let Some(v) = size(text) {
        return Ok(v);
    }
    let mut p = Parser {
        text,
        at: 0,
        depth: 0,
        size,
    };
    let v = p.sum()?;
    p.skip_spaces();
    match p.peek() {
        None => Ok(v),
        Some(c) => Err(p.syntax(&format!("'{c}' after the expression"))),
    }
}

struct Parser<'t, 's> {
    text: &'t str,
    at: usize,
    depth: usize,
    size: &'s dyn Fn(&str) -> Option<i64>,
}

/// Characters that end a name.
fn ends_name(c: char) -> bool {
    c.is_whitespace() || "+-*/(),".contains(c)
}

impl Parser<'_, '_> {
    fn rest(&self) -> &str {
        self.text.get(self.at..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn skip_spaces(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    fn syntax(&self, why: &str) -> Unevaluated {
        Unevaluated::Syntax(format!("{why} at character {}", self.at))
    }

    /// Consumes `c` (after spaces) or fails.
    fn expect(&mut self, c: char) -> Result<(), Unevaluated> {
        self.skip_spaces();
        if self.peek() == Some(c) {
            self.at += c.len_utf8();
            Ok(())
        } else {
            Err(self.syntax(&format!("'{c}' expected")))
        }
    }

    /// term (('+' | '-') term)*
    fn sum(&mut self) -> Result<i64, Unevaluated> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.syntax("nested too deep"));
        }
        let mut v = self.product()?;
        loop {
            self.skip_spaces();
            let sign = match self.peek() {
                Some('+') => 1,
                Some('-') => -1,
                _ => break,
            };
            self.at += 1;
            let t = self.product()?;
            v = match sign {
                1 => v.checked_add(t),
                _ => v.checked_sub(t),
            }
            .ok_or(Unevaluated::Overflow)?;
        }
        self.depth -= 1;
        Ok(v)
    }

    /// factor ('*' factor)*
    fn product(&mut self) -> Result<i64, Unevaluated> {
        let mut v = self.factor()?;
        loop {
            self.skip_spaces();
            if self.peek() != Some('*') {
                return Ok(v);
            }
            self.at += 1;
            let f = self.factor()?;
            v = v.checked_mul(f).ok_or(Unevaluated::Overflow)?;
        }
    }

    /// '-' factor | integer | '(' sum ')' | floor(sum/integer) |
    /// min(sum, sum) | max(sum, sum) | name
    fn factor(&mut self) -> Result<i64, Unevaluated> {
        self.skip_spaces();
        let text = self.text;
        let rest = text.get(self.at..).unwrap_or("");
        let Some(c) = rest.chars().next() else {
            return Err(self.syntax("the expression ends early"));
        };
        if c == '-' {
            self.at += 1;
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(self.syntax("nested too deep"));
            }
            let v = self.factor()?;
            self.depth -= 1;
            return v.checked_neg().ok_or(Unevaluated::Overflow);
        }
        if c == '(' {
            self.at += 1;
            let v = self.sum()?;
            self.expect(')')?;
            return Ok(v);
        }
        let len = rest.find(ends_name).unwrap_or(rest.len());
        if len == 0 {
            return Err(self.syntax(&format!("'{c}' where a value was expected")));
        }
        let word = &rest[..len];
        self.at += len;
        if word.bytes().all(|b| b.is_ascii_digit()) {
            return word.parse::<i64>().map_err(|_| Unevaluated::Overflow);
        }
        self.skip_spaces();
        if self.peek() == Some('(') && matches!(word, "floor" | "min" | "max") {
            self.at += 1;
            let a = self.sum()?;
            let v = if word == "floor" {
                self.expect('/')?;
                let d = self.factor()?;
                if d <= 0 {
                    return Err(self.syntax(&format!("floor by {d}, not a positive divisor")));
                }
                a.div_euclid(d)
            } else {
                self.expect(',')?;
                let b = self.sum()?;
                if word == "min" {
                    a.min(b)
                } else {
                    a.max(b)
                }
            };
            self.expect(')')?;
            return Ok(v);
        }
        (self.size)(word).ok_or_else(|| Unevaluated::Unknown(word.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::types::{Dim, Symbols};

    fn sizes<'p>(pairs: &'p [(&'p str, i64)]) -> impl Fn(&str) -> Option<i64> + 'p {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    #[test]
    fn reads_what_symbolic_inference_writes() {
        let at = sizes(&[("h", 33), ("seq", 7), ("B", 2), ("past", 5)]);
        let cases = [
            ("floor((h + 1)/2)", 17),
            ("floor(h/2)", 16),
            ("12*B*seq", 168),
            ("-seq + 5", -2),
            ("h - floor((h + 2)/3)", 22),
            ("min(seq, 4) - 2", 2),
            ("min(seq - 1, 10) + 1", 7),
            ("max(seq, 8)", 8),
            ("min(max(seq, 2), 4)", 4),
            ("floor((min(seq, 5) + 1)/2)", 3),
            ("past + seq", 12),
            ("7*floor((h + 6)/7)", 35),
            ("2*(seq*B)", 28),
            ("42", 42),
        ];
        for (text, want) in cases {
            assert_eq!(evaluate(text, &at), Ok(want), "{text}");
        }
    }

    #[test]
    fn every_rendered_expression_evaluates_as_its_arithmetic() {
        // Expressions built by the symbolic algebra, rendered, then read
        // back at many sizes, against the same steps in plain arithmetic.
        let mut s = Symbols::default();
        let (h, w) = (s.intern("h"), s.intern("w"));
        type Steps = Box<dyn Fn(i64, i64) -> i64>;
        let mut exprs: Vec<(Dim, Steps)> = Vec::new();
        let conv = s
            .dim_add(h, Dim::Value(-1))
            .and_then(|x| s.dim_floor_div(x, 2));
        exprs.push((
            conv.unwrap_or(Dim::Unknown),
            Box::new(|h, _| (h - 1).div_euclid(2)),
        ));
        let cut = s.dim_min(w, Dim::Value(9));
        exprs.push((cut.unwrap_or(Dim::Unknown), Box::new(|_, w| w.min(9))));
        let area = s.dim_mul(h, w).and_then(|a| s.dim_add(a, Dim::Value(3)));
        exprs.push((area.unwrap_or(Dim::Unknown), Box::new(|h, w| h * w + 3)));
        let up = s
            .dim_ceil_div(h, 7)
            .and_then(|x| s.dim_mul(x, Dim::Value(7)));
        exprs.push((
            up.unwrap_or(Dim::Unknown),
            Box::new(|h, _| (h + 6).div_euclid(7) * 7),
        ));
        let both = s.dim_max(h, w).and_then(|m| s.dim_sub(m, Dim::Value(1)));
        exprs.push((both.unwrap_or(Dim::Unknown), Box::new(|h, w| h.max(w) - 1)));
        for (d, f) in &exprs {
            let Dim::Sym(x) = *d else {
                panic!("an expression")
            };
            let text = s.text(x, &mut |_| "?".into()).unwrap_or_default();
            for hv in 0..20 {
                for wv in [0, 1, 8, 9, 10, 31] {
                    let pairs = [("h", hv), ("w", wv)];
                    let at = sizes(&pairs);
                    assert_eq!(evaluate(&text, &at), Ok(f(hv, wv)), "{text} at {hv}, {wv}");
                }
            }
        }
    }

    #[test]
    fn names_and_defects() {
        let at = sizes(&[("batch size", 3), ("DynamicDimension.0", 4), ("n", 2)]);
        assert_eq!(evaluate("batch size", &at), Ok(3), "a whole text is a name");
        assert_eq!(evaluate("2*DynamicDimension.0", &at), Ok(8));
        assert_eq!(
            evaluate("unk__3 + 1", &at),
            Err(Unevaluated::Unknown("unk__3".into()))
        );
        assert!(matches!(evaluate("n +", &at), Err(Unevaluated::Syntax(_))));
        assert!(matches!(
            evaluate("floor(n/0)", &at),
            Err(Unevaluated::Syntax(_))
        ));
        assert!(matches!(
            evaluate("floor(n/-2)", &at),
            Err(Unevaluated::Syntax(_))
        ));
        assert!(matches!(
            evaluate("min(n)", &at),
            Err(Unevaluated::Syntax(_))
        ));
        assert!(matches!(evaluate("n n", &at), Err(Unevaluated::Syntax(_))));
        assert_eq!(
            evaluate("9223372036854775807*n", &at),
            Err(Unevaluated::Overflow)
        );
        assert_eq!(
            evaluate("99999999999999999999", &at),
            Err(Unevaluated::Overflow)
        );
        // Hostile nesting: refused, not a stack overflow.
        let deep = format!("{}n{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(matches!(evaluate(&deep, &at), Err(Unevaluated::Syntax(_))));
        let negs = format!("{}n", "-".repeat(100_000));
        assert!(matches!(evaluate(&negs, &at), Err(Unevaluated::Syntax(_))));
        assert!(matches!(evaluate("", &at), Err(Unevaluated::Syntax(_))));
        assert!(matches!(evaluate("ñ*2", &at), Err(Unevaluated::Unknown(_))));
    }
}
