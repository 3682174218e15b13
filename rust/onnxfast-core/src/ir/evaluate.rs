//! The value of a dim's text at given sizes: a symbol of the model
//! (`batch`) or an expression as `symbolic` inference writes them
//! (`floor((h + 1)/2)`, `min(seq, 512) - 2`, `12*batch*seq`), or as
//! SymPy prints them (onnxruntime's `symbolic_shape_infer.py` saves dims
//! such as `floor(height/2 - 1/2) + 1`, `ceiling(seq/4)`, `Max(a, b)`),
//! read from the text itself, so the dims of a model saved with such
//! expressions evaluate as well as those of a fresh inference.
//!
//! The grammar: sums and differences of products and quotients of
//! integers, names, parenthesised expressions and calls of `floor`,
//! `ceiling` (or `ceil`), `min`/`Min` and `max`/`Max` (two arguments or
//! more) and `Mod(a, b)`. Intermediate values are exact fractions (`h/2 -
//! 1/2` is `(h - 1)/2`); the dim's value must be a whole number. A name is
//! a run of characters other than spaces and `+-*/(),`; a dim whose whole
//! text is a given name is that size whatever its characters. Arithmetic
//! is checked (128-bit fractions, a 64-bit result); nesting is bounded, so
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
    /// operators in it, inside an expression), nests too deep, divides by
    /// zero or is not a whole number.
    Syntax(String),
    /// A step overflows (128-bit fractions, or a result past 64 bits).
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
    if let Some(c) = p.peek() {
        return Err(p.syntax(&format!("'{c}' after the expression")));
    }
    if v.den != 1 {
        return Err(Unevaluated::Syntax(format!(
            "the value {}/{} is not a whole number",
            v.num, v.den
        )));
    }
    i64::try_from(v.num).map_err(|_| Unevaluated::Overflow)
}

/// An exact fraction `num/den`, `den > 0`, in lowest terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Frac {
    num: i128,
    den: i128,
}

/// The greatest common divisor of two magnitudes (Euclid's), shared with
/// [`super::symbolic`].
pub(super) fn gcd_abs(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The greatest common divisor of `|a|` and `|b|` (neither is `i128::MIN`:
/// [`Frac::new`] refuses it, so the result fits).
fn gcd(a: i128, b: i128) -> i128 {
    i128::try_from(gcd_abs(a.unsigned_abs(), b.unsigned_abs())).unwrap_or(1)
}

impl Frac {
    fn int(v: i128) -> Self {
        Frac { num: v, den: 1 }
    }

    /// `num/den` in lowest terms (`den != 0`); `i128::MIN`, whose negation
    /// overflows, is refused as an overflow.
    fn new(num: i128, den: i128) -> Result<Self, Unevaluated> {
        if num == i128::MIN || den == i128::MIN {
            return Err(Unevaluated::Overflow);
        }
        let g = gcd(num, den).max(1);
        let (mut num, mut den) = (num / g, den / g);
        if den < 0 {
            num = num.checked_neg().ok_or(Unevaluated::Overflow)?;
            den = den.checked_neg().ok_or(Unevaluated::Overflow)?;
        }
        Ok(Frac { num, den })
    }

    fn add(self, o: Frac) -> Result<Self, Unevaluated> {
        let g = gcd(self.den, o.den).max(1);
        let (a, b) = (self.den / g, o.den / g);
        let num = self
            .num
            .checked_mul(b)
            .and_then(|x| o.num.checked_mul(a).and_then(|y| x.checked_add(y)));
        let den = self.den.checked_mul(b);
        match (num, den) {
            (Some(n), Some(d)) => Frac::new(n, d),
            _ => Err(Unevaluated::Overflow),
        }
    }

    fn neg(self) -> Result<Self, Unevaluated> {
        Ok(Frac {
            num: self.num.checked_neg().ok_or(Unevaluated::Overflow)?,
            den: self.den,
        })
    }

    fn mul(self, o: Frac) -> Result<Self, Unevaluated> {
        // Cross-reduced first, so products of fractions in lowest terms
        // overflow only when the result does.
        let g1 = gcd(self.num, o.den).max(1);
        let g2 = gcd(o.num, self.den).max(1);
        let num = (self.num / g1).checked_mul(o.num / g2);
        let den = (self.den / g2).checked_mul(o.den / g1);
        match (num, den) {
            (Some(n), Some(d)) => Frac::new(n, d),
            _ => Err(Unevaluated::Overflow),
        }
    }

    /// `None` for a division by zero.
    fn div(self, o: Frac) -> Option<Result<Self, Unevaluated>> {
        (o.num != 0).then(|| {
            self.mul(Frac {
                num: o.den,
                den: o.num,
            })
        })
    }

    fn floor(self) -> Self {
        Frac::int(self.num.div_euclid(self.den))
    }

    fn ceil(self) -> Result<Self, Unevaluated> {
        Ok(Frac::int(
            self.neg()?
                .floor()
                .num
                .checked_neg()
                .ok_or(Unevaluated::Overflow)?,
        ))
    }

    fn less(self, o: Frac) -> Result<bool, Unevaluated> {
        Ok(self.add(o.neg()?)?.num < 0)
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
    fn sum(&mut self) -> Result<Frac, Unevaluated> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.syntax("nested too deep"));
        }
        let mut v = self.product()?;
        loop {
            self.skip_spaces();
            let minus = match self.peek() {
                Some('+') => false,
                Some('-') => true,
                _ => break,
            };
            self.at += 1;
            let t = self.product()?;
            v = v.add(if minus { t.neg()? } else { t })?;
        }
        self.depth -= 1;
        Ok(v)
    }

    /// factor (('*' | '/') factor)*
    fn product(&mut self) -> Result<Frac, Unevaluated> {
        let mut v = self.factor()?;
        loop {
            self.skip_spaces();
            let divide = match self.peek() {
                Some('*') => false,
                Some('/') => true,
                _ => return Ok(v),
            };
            self.at += 1;
            let f = self.factor()?;
            v = match divide {
                false => v.mul(f)?,
                true => match v.div(f) {
                    Some(q) => q?,
                    None => return Err(self.syntax("a division by zero")),
                },
            };
        }
    }

    /// The arguments of a call, after its '(' : sums separated by commas,
    /// then ')'.
    fn arguments(&mut self) -> Result<Vec<Frac>, Unevaluated> {
        let mut args = vec![self.sum()?];
        loop {
            self.skip_spaces();
            match self.peek() {
                Some(',') => {
                    self.at += 1;
                    args.push(self.sum()?);
                }
                _ => {
                    self.expect(')')?;
                    return Ok(args);
                }
            }
        }
    }

    /// '-' factor | integer | '(' sum ')' | call | name
    fn factor(&mut self) -> Result<Frac, Unevaluated> {
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
            return v.neg();
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
            return match word.parse::<i64>() {
                Ok(v) => Ok(Frac::int(i128::from(v))),
                Err(_) => Err(Unevaluated::Overflow),
            };
        }
        self.skip_spaces();
        let call = matches!(
            word,
            "floor" | "ceiling" | "ceil" | "min" | "Min" | "max" | "Max" | "Mod"
        );
        if call && self.peek() == Some('(') {
            self.at += 1;
            let at = self.at;
            let args = self.arguments()?;
            let wrong =
                |n: &str| Unevaluated::Syntax(format!("{word} takes {n} at character {at}"));
            return match (word, args.as_slice()) {
                ("floor", [x]) => Ok(x.floor()),
                ("ceiling" | "ceil", [x]) => x.ceil(),
                ("floor" | "ceiling" | "ceil", _) => Err(wrong("one argument")),
                ("min" | "Min" | "max" | "Max", [first, more @ ..]) if !more.is_empty() => {
                    let smallest = matches!(word, "min" | "Min");
                    more.iter().try_fold(*first, |best, &x| {
                        Ok(if x.less(best)? == smallest { x } else { best })
                    })
                }
                ("min" | "Min" | "max" | "Max", _) => Err(wrong("two arguments or more")),
                // SymPy's Mod: a - b*floor(a/b), the divisor's sign.
                ("Mod", [a, b]) => match a.div(*b) {
                    Some(q) => a.add(b.mul(q?.floor())?.neg()?),
                    None => Err(self.syntax("Mod by zero")),
                },
                _ => Err(wrong("two arguments")),
            };
        }
        match (self.size)(word) {
            Some(v) => Ok(Frac::int(i128::from(v))),
            None => Err(Unevaluated::Unknown(word.to_string())),
        }
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
    fn reads_what_sympy_prints() {
        // As onnxruntime's symbolic_shape_infer.py saves them (SymPy's
        // str), against the same arithmetic on integers.
        for h in 0..70i64 {
            let pairs = [("height", h), ("DynamicDimension.1", h), ("w", 7)];
            let at = sizes(&pairs);
            let conv = (h - 1).div_euclid(2) + 1;
            let cases = [
                ("floor(height/2 - 1/2) + 1", conv),
                ("floor(DynamicDimension.1/2 - 1/2) + 1", conv),
                (
                    "floor(floor(height/2 - 1/2)/2) + 1",
                    (conv - 1).div_euclid(2) + 1,
                ),
                ("ceiling(height/4)", (h + 3).div_euclid(4)),
                ("ceil(height/4)", (h + 3).div_euclid(4)),
                ("Max(1, height - 3, w)", 1.max(h - 3).max(7)),
                ("Min(height, 16)", h.min(16)),
                ("Mod(height, 3)", h.rem_euclid(3)),
                ("3*height/2 - height/2", h),
                ("height*(height + 1)/2", h * (h + 1) / 2),
                ("-(height/2 - 1/2)*2", 1 - h),
            ];
            for (text, want) in cases {
                assert_eq!(evaluate(text, &at), Ok(want), "{text} at {h}");
            }
        }
        let at = sizes(&[("n", 2)]);
        assert_eq!(evaluate("Mod(-7, 3)", &at), Ok(2), "the divisor's sign");
        assert_eq!(evaluate("Mod(7, -3)", &at), Ok(-2));
        // 2^62*2^62 is past 64 bits, but divided back it is not.
        assert_eq!(
            evaluate(
                "4611686018427387904*4611686018427387904/4611686018427387904",
                &at
            ),
            Ok(4611686018427387904)
        );
        assert_eq!(
            evaluate("4611686018427387904*4611686018427387904", &at),
            Err(Unevaluated::Overflow)
        );
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
        assert_eq!(evaluate("floor(n/-3)", &at), Ok(-1));
        assert!(matches!(evaluate("n/4", &at), Err(Unevaluated::Syntax(_))));
        assert!(matches!(
            evaluate("Mod(n, 0)", &at),
            Err(Unevaluated::Syntax(_))
        ));
        assert!(matches!(
            evaluate("floor(n, 2)", &at),
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
        // i128::MIN (-2^127) reached exactly, then divided by -1: an
        // overflow, not a panic.
        let min = "(-4611686018427387904*4611686018427387904*8)";
        assert_eq!(
            evaluate(&format!("{min}/(-1)"), &at),
            Err(Unevaluated::Overflow)
        );
        assert_eq!(
            evaluate(&format!("Mod({min}, -1)"), &at),
            Err(Unevaluated::Overflow)
        );
        // Any text of these pieces: a value or an error, never a panic.
        let pieces = [
            "n",
            "-",
            "+",
            "*",
            "/",
            "(",
            ")",
            ",",
            "0",
            "1",
            "-1",
            "2",
            "9223372036854775807",
            "4611686018427387904",
            "floor(",
            "ceiling(",
            "Max(",
            "Min(",
            "Mod(",
            " ",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200_000 {
            let mut text = String::new();
            for _ in 0..(state % 12) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(pieces[(state % pieces.len() as u64) as usize]);
            }
            let _ = evaluate(&text, &at);
        }
        // Hostile nesting: refused, not a stack overflow.
        let deep = format!("{}n{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(matches!(evaluate(&deep, &at), Err(Unevaluated::Syntax(_))));
        let negs = format!("{}n", "-".repeat(100_000));
        assert!(matches!(evaluate(&negs, &at), Err(Unevaluated::Syntax(_))));
        assert!(matches!(evaluate("", &at), Err(Unevaluated::Syntax(_))));
        assert!(matches!(evaluate("ñ*2", &at), Err(Unevaluated::Unknown(_))));
    }
}
