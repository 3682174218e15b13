//! Symbolic dims as expressions over the model's symbols (`seq + 1`,
//! `12*batch`, `floor((h - 3)/2) + 1`), for inference with
//! `InferOptions::symbolic`.
//!
//! An expression is a polynomial with integer coefficients over atoms; an
//! atom is a symbol of the model (or a fresh one), the floor division of
//! a polynomial by a positive constant or by a polynomial of sizes
//! (`floor((s*b)/a)`, a Reshape's `-1` over symbols that do not divide
//! out), or the smaller or larger of two
//! polynomials (`min(seq, 512)`, a slice's clamped end; `max(seq, 4)`). Polynomials are kept in one
//! canonical form (terms sorted, like terms combined, no zero
//! coefficients), and each expression is interned as a [`Sym`] of the run's
//! [`Symbols`], so two dims are equal exactly when their expressions are:
//! the engine's merge and broadcast rules compare them as they compare
//! symbols. Expressions are bounded ([`MAX_TERMS`] terms of degree at most
//! [`MAX_DEGREE`], coefficients without overflow); beyond that a rule
//! falls back to what it does without `symbolic`.

use std::fmt::Write as _;

use smallvec::SmallVec;

use super::types::{Dim, Sym, Symbols};

/// Most terms in one expression.
pub const MAX_TERMS: usize = 8;
/// Highest degree of a term (`a*b*c*d`).
pub const MAX_DEGREE: usize = 4;
/// Deepest nesting of floor divisions (`floor((floor(h/2) + 1)/2)` is 2).
pub const MAX_NESTING: usize = 16;

/// A product of atoms, sorted (empty: the constant term).
pub type Monomial = SmallVec<[Sym; 2]>;

/// A polynomial with integer coefficients over atoms, in canonical form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Poly {
    terms: Vec<(Monomial, i64)>,
}

/// What an expression symbol stands for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SymExpr {
    /// A polynomial that is not a single atom.
    Poly(Poly),
    /// `floor(p / d)`, `d > 1`, an atom of other polynomials.
    FloorDiv(Poly, i64),
    /// `floor(p / q)`, `p` and `q` of positive coefficients, `q` not a
    /// constant and not dividing `p` (see [`Symbols::dim_floor_div_by`]).
    FloorDivBy(Poly, Poly),
    /// `min(p, q)`, `p < q` in the polynomials' order, when neither is
    /// known to be the smaller (see [`Symbols::dim_min`]).
    Min(Poly, Poly),
    /// `max(p, q)`, as `Min` (see [`Symbols::dim_max`]).
    Max(Poly, Poly),
}

impl Poly {
    pub fn constant(c: i64) -> Poly {
        let mut p = Poly::default();
        if c != 0 {
            p.terms.push((Monomial::new(), c));
        }
        p
    }

    pub fn atom(s: Sym) -> Poly {
        Poly {
            terms: vec![(smallvec::smallvec![s], 1)],
        }
    }

    /// The atoms of the polynomial's terms.
    pub fn atoms(&self) -> impl Iterator<Item = Sym> + '_ {
        self.terms.iter().flat_map(|(m, _)| m.iter().copied())
    }

    /// The value of a constant polynomial.
    pub fn as_constant(&self) -> Option<i64> {
        match self.terms.as_slice() {
            [] => Some(0),
            [(m, c)] if m.is_empty() => Some(*c),
            _ => None,
        }
    }

    /// The constant term (0 when there is none).
    pub fn constant_term(&self) -> i64 {
        match self.terms.first() {
            Some((m, c)) if m.is_empty() => *c,
            _ => 0,
        }
    }

    /// The polynomial without its constant term.
    pub fn without_constant(&self) -> Poly {
        let terms = self
            .terms
            .iter()
            .filter(|(m, _)| !m.is_empty())
            .cloned()
            .collect();
        // A sub-list of a canonical list stays canonical.
        Poly { terms }
    }

    /// The atom a polynomial is (`1*s`).
    pub fn as_atom(&self) -> Option<Sym> {
        match self.terms.as_slice() {
            [(m, 1)] if m.len() == 1 => m.first().copied(),
            _ => None,
        }
    }

    /// Canonical form of a list of terms; `None` past the bounds.
    fn from_terms(mut terms: Vec<(Monomial, i64)>) -> Option<Poly> {
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Monomial, i64)> = Vec::with_capacity(terms.len());
        for (m, c) in terms {
            match out.last_mut() {
                Some(last) if last.0 == m => last.1 = last.1.checked_add(c)?,
                _ => out.push((m, c)),
            }
        }
        out.retain(|(_, c)| *c != 0);
        (out.len() <= MAX_TERMS).then_some(Poly { terms: out })
    }

    pub fn add(&self, other: &Poly) -> Option<Poly> {
        Poly::from_terms(self.terms.iter().chain(&other.terms).cloned().collect())
    }

    pub fn scale(&self, k: i64) -> Option<Poly> {
        let terms = self
            .terms
            .iter()
            .map(|(m, c)| Some((m.clone(), c.checked_mul(k)?)))
            .collect::<Option<Vec<_>>>()?;
        Poly::from_terms(terms)
    }

    pub fn sub(&self, other: &Poly) -> Option<Poly> {
        self.add(&other.scale(-1)?)
    }

    pub fn mul(&self, other: &Poly) -> Option<Poly> {
        let mut terms = Vec::with_capacity(self.terms.len() * other.terms.len());
        for (ma, ca) in &self.terms {
            for (mb, cb) in &other.terms {
                if ma.len() + mb.len() > MAX_DEGREE {
                    return None;
                }
                let mut m: Monomial = ma.iter().chain(mb.iter()).copied().collect();
                m.sort_unstable();
                terms.push((m, ca.checked_mul(*cb)?));
            }
        }
        Poly::from_terms(terms)
    }

    /// `self / d` when `d` is one term dividing every term of `self`
    /// (`768*B*S / 12*B = 64*S`).
    pub fn div_exact(&self, d: &Poly) -> Option<Poly> {
        let [(dm, dc)] = d.terms.as_slice() else {
            return None;
        };
        let mut terms = Vec::with_capacity(self.terms.len());
        for (m, c) in &self.terms {
            if c.checked_rem(*dc)? != 0 {
                return None;
            }
            let mut rest = m.clone();
            for a in dm {
                let at = rest.iter().position(|x| x == a)?;
                rest.remove(at);
            }
            terms.push((rest, c.checked_div(*dc)?));
        }
        Poly::from_terms(terms)
    }

    /// `(q, r)` with `self = d*q + r` and every coefficient of `r` in
    /// `[0, d)` (`d > 0`).
    fn div_rem(&self, d: i64) -> (Poly, Poly) {
        let (mut q, mut r) = (Vec::new(), Vec::new());
        for (m, c) in &self.terms {
            let (cq, cr) = (c.div_euclid(d), c.rem_euclid(d));
            if cq != 0 {
                q.push((m.clone(), cq));
            }
            if cr != 0 {
                r.push((m.clone(), cr));
            }
        }
        // Sub-lists of a canonical list stay canonical.
        (Poly { terms: q }, Poly { terms: r })
    }
}

/// Greatest common divisor of `a > 0` and `b` (at most `a`).
fn gcd(a: i64, b: i64) -> i64 {
    let g = super::evaluate::gcd_abs(a.unsigned_abs().into(), b.unsigned_abs().into());
    i64::try_from(g).unwrap_or(1)
}

impl Symbols {
    /// The polynomial of a dim (`None` for an unknown dim).
    pub fn poly(&self, d: Dim) -> Option<Poly> {
        match d {
            Dim::Value(v) => Some(Poly::constant(v)),
            Dim::Sym(s) => match self.expr(s) {
                Some(SymExpr::Poly(p)) => Some(p.clone()),
                _ => Some(Poly::atom(s)),
            },
            Dim::Unknown => None,
        }
    }

    /// The dim of a polynomial: a value, an atom, or an interned expression.
    pub fn dim_of(&mut self, p: Poly) -> Option<Dim> {
        if let Some(c) = p.as_constant() {
            return Some(Dim::Value(c));
        }
        if let Some(s) = p.as_atom() {
            return Some(Dim::Sym(s));
        }
        self.intern_expr(SymExpr::Poly(p)).map(Dim::Sym)
    }

    pub fn dim_add(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        let p = self.poly(a)?.add(&self.poly(b)?)?;
        self.dim_of(p)
    }

    pub fn dim_sub(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        let p = self.poly(a)?.sub(&self.poly(b)?)?;
        self.dim_of(p)
    }

    pub fn dim_mul(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        let p = self.poly(a)?.mul(&self.poly(b)?)?;
        self.dim_of(p)
    }

    /// `a / b` when `b` divides `a` exactly as polynomials.
    pub fn dim_div_exact(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        let p = self.poly(a)?.div_exact(&self.poly(b)?)?;
        self.dim_of(p)
    }

    /// Whether `d` is at least 0 (`Some(true)`) or below 0 (`Some(false)`)
    /// for sizes large enough: a value by its sign, an expression by the
    /// sign its terms other than the constant share (`seq - 1` at least 0,
    /// `1 - seq` below); `None` when they differ or `d` is unknown. Symbols
    /// and floor terms are sizes (a floor's polynomial has positive
    /// coefficients), at least 0.
    pub fn dim_sign(&self, d: Dim) -> Option<bool> {
        match d {
            Dim::Value(v) => Some(v >= 0),
            Dim::Unknown => None,
            Dim::Sym(s) => match self.expr(s) {
                Some(SymExpr::Poly(p)) => {
                    let mut signs = p
                        .terms
                        .iter()
                        .filter(|(m, _)| !m.is_empty())
                        .map(|(_, c)| *c > 0);
                    let first = signs.next()?;
                    signs.all(|x| x == first).then_some(first)
                }
                _ => Some(true),
            },
        }
    }

    /// `min(a, b)`: one of them where it is the smaller for every size (a
    /// constant difference; or one over the model's symbols alone, whose
    /// coefficients share a sign: sizes are at least 0), else the atom
    /// `min(a, b)` (`min(seq, 512)`).
    pub fn dim_min(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        self.dim_extreme(a, b, false)
    }

    /// `max(a, b)`, as [`Symbols::dim_min`] decides it (`max(seq, 4)`).
    pub fn dim_max(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        self.dim_extreme(a, b, true)
    }

    /// `min(a, b)`, or `max(a, b)` when `larger`.
    fn dim_extreme(&mut self, a: Dim, b: Dim, larger: bool) -> Option<Dim> {
        let (pa, pb) = (self.poly(a)?, self.poly(b)?);
        let diff = pa.sub(&pb)?;
        // Whether a >= b for every size, if that is decided.
        let a_larger = if let Some(c) = diff.as_constant() {
            Some(c >= 0)
        } else if diff.atoms().all(|x| self.expr(x).is_none()) {
            let signs = |ok: fn(i64) -> bool| diff.terms.iter().all(|(_, c)| ok(*c));
            if signs(|c| c >= 0) {
                Some(true)
            } else if signs(|c| c <= 0) {
                Some(false)
            } else {
                None
            }
        } else {
            None
        };
        if let Some(a_larger) = a_larger {
            return Some(if a_larger == larger { a } else { b });
        }
        // One form for every shift of both sides: `min(p + k, q + k)` is
        // `min(p, q) + k`, and the atom is written with no constant on the
        // side whose other terms come last in the polynomials' order (a
        // side with more than a constant, when one is a constant):
        // `min(seq - 1, 10) + 1` is `min(seq, 11)`, `min(seq, 512)` stays.
        // (The sides' other terms differ: else the difference is constant.)
        let anchor = if pa.without_constant() > pb.without_constant() {
            &pa
        } else {
            &pb
        };
        let k = anchor.constant_term();
        let shift = Poly::constant(k);
        let (pa, pb, k) = match (pa.sub(&shift), pb.sub(&shift)) {
            (Some(sa), Some(sb)) => (sa, sb, k),
            // (Past the bounds: the sides as they are.)
            _ => (pa, pb, 0),
        };
        let (p, q) = if pa < pb { (pa, pb) } else { (pb, pa) };
        let e = if larger {
            SymExpr::Max(p, q)
        } else {
            SymExpr::Min(p, q)
        };
        let atom = self.intern_expr(e)?;
        self.dim_of(Poly::atom(atom).add(&Poly::constant(k))?)
    }

    /// `floor(a / d)` for a constant `d > 0`: the parts of `a` that `d`
    /// divides come out (`floor((2*h + 3)/2) = h + 1`).
    pub fn dim_floor_div(&mut self, a: Dim, d: i64) -> Option<Dim> {
        if d <= 0 {
            return None;
        }
        let p = self.poly(a)?;
        let total = self.floor_poly(p, d)?;
        self.dim_of(total)
    }

    /// The polynomial of `floor(p / d)`, `d > 0`: `q + floor(r/d)` with
    /// `p = d*q + r` ([`Poly::div_rem`]), `floor(r/d)` an atom unless `r`
    /// is a constant (then 0). A remainder `floor(x/a) + s` (the inner
    /// floor once, `s` without it) is flattened first, as
    /// `floor((x + a*s)/(a*d))`: for integers, `floor(x/a) + s =
    /// floor((x + a*s)/a)` and `floor(floor(y/a)/d) = floor(y/(a*d))`, so
    /// pooling after a strided Conv is `floor((h + 3)/4)`, not a floor of a
    /// floor. Kept as it is where a rewritten form is past the bounds.
    fn floor_poly(&mut self, p: Poly, d: i64) -> Option<Poly> {
        if d == 1 {
            return Some(p);
        }
        let (q, r) = p.div_rem(d);
        if r.as_constant().is_some() {
            // 0 <= r < d: floor(r/d) = 0.
            return Some(q);
        }
        // floor(g*x/(g*e)) = floor(x/e): a factor of every coefficient and
        // of `d` comes out.
        let g = r.terms.iter().fold(d, |g, (_, c)| gcd(g, *c));
        let (r, d) = if g > 1 {
            let terms = r.terms.iter().map(|(m, c)| (m.clone(), c / g)).collect();
            // Dividing every coefficient keeps the order and no zero.
            (Poly { terms }, d / g)
        } else {
            (r, d)
        };
        // A floor of coefficients all `d - 1` (`d > 2`) is a ceiling:
        // `floor(r/d) = M - floor((d*M - r + d - 1)/d)`, `M` the sum of
        // r's monomials: `floor((6*h)/7)` is `h - floor((h + 6)/7)`, so
        // rounding up to a multiple by a remainder (`h + (7 - h % 7) % 7`)
        // and by a ceiling (`7*ceil(h/7)`) meet at `7*floor((h + 6)/7)`.
        let high = d > 2
            && r.terms
                .iter()
                .filter(|(m, _)| !m.is_empty())
                .all(|(_, c)| *c == d - 1);
        if high {
            let monomials: Vec<(Monomial, i64)> = r
                .terms
                .iter()
                .filter(|(m, _)| !m.is_empty())
                .map(|(m, _)| (m.clone(), 1))
                .collect();
            let sum = Poly { terms: monomials };
            let flipped = sum
                .scale(d)
                .and_then(|dm| dm.sub(&r))
                .and_then(|x| x.add(&Poly::constant(d - 1)));
            let low = flipped.and_then(|x| self.floor_poly(x, d));
            if let Some(total) = low.and_then(|low| q.add(&sum)?.sub(&low)) {
                return Some(total);
            }
        }
        if let Some((x, a, s)) = self.inner_floor(&r) {
            let flat = a
                .checked_mul(d)
                .and_then(|ad| Some((x.add(&s.scale(a)?)?, ad)));
            let f = flat.and_then(|(y, ad)| self.floor_poly(y, ad));
            if let Some(total) = f.and_then(|f| q.add(&f)) {
                return Some(total);
            }
        }
        let atom = self.intern_expr(SymExpr::FloorDiv(r, d))?;
        q.add(&Poly::atom(atom))
    }

    /// `(x, a, s)` when `r` is `floor(x/a) + s`: a floor atom with
    /// coefficient 1 in a term of its own, found in no other term of `r`.
    fn inner_floor(&self, r: &Poly) -> Option<(Poly, i64, Poly)> {
        r.terms.iter().enumerate().find_map(|(i, (m, c))| {
            let [f] = m.as_slice() else {
                return None;
            };
            let Some(SymExpr::FloorDiv(x, a)) = self.expr(*f) else {
                return None;
            };
            let alone = r
                .terms
                .iter()
                .enumerate()
                .all(|(j, (other, _))| j == i || !other.contains(f));
            (*c == 1 && alone).then(|| {
                let mut rest = r.terms.clone();
                rest.remove(i);
                // A sub-list of a canonical list stays canonical.
                (x.clone(), *a, Poly { terms: rest })
            })
        })
    }

    /// `floor(a / b)` for dims that are sizes: `b`'s constant division
    /// ([`Symbols::dim_floor_div`]), `a / b` where `b` divides `a` exactly,
    /// else, when both have positive coefficients only (sums of products of
    /// sizes, at least 0), the atom `floor(a/b)`: the `-1` of a Reshape of
    /// `[b1, s]` to `[b2, -1]` is `floor((s*b1)/b2)`, the element count
    /// over the other dims whatever the batches are (equal in a run, where
    /// it is `s`).
    pub fn dim_floor_div_by(&mut self, a: Dim, b: Dim) -> Option<Dim> {
        let (pa, pb) = (self.poly(a)?, self.poly(b)?);
        if let Some(d) = pb.as_constant() {
            return self.dim_floor_div(a, d);
        }
        if let Some(q) = pa.div_exact(&pb) {
            return self.dim_of(q);
        }
        let sizes = |p: &Poly| !p.terms.is_empty() && p.terms.iter().all(|(_, c)| *c > 0);
        if !sizes(&pa) || !sizes(&pb) {
            return None;
        }
        let atom = self.intern_expr(SymExpr::FloorDivBy(pa, pb))?;
        Some(Dim::Sym(atom))
    }

    /// `ceil(a / d)` for a constant `d > 0`: `floor((a + d - 1) / d)`.
    pub fn dim_ceil_div(&mut self, a: Dim, d: i64) -> Option<Dim> {
        let shifted = self.dim_add(a, Dim::Value(d.checked_sub(1)?))?;
        self.dim_floor_div(shifted, d)
    }

    /// Renders the expression of `s`, naming the other symbols with `name`
    /// (the model's symbols by their names, fresh ones as the caller
    /// chooses). Python-readable, with `floor`: `floor((h - 3)/2) + 1`.
    pub fn render_expr(&self, s: Sym, name: &mut dyn FnMut(Sym) -> String) -> Option<String> {
        let mut out = String::new();
        match self.expr(s)? {
            SymExpr::Poly(p) => self.render_poly(p, name, &mut out),
            SymExpr::FloorDiv(p, d) => self.render_floor(p, *d, name, &mut out),
            SymExpr::FloorDivBy(p, q) => self.render_floor_by(p, q, name, &mut out),
            SymExpr::Min(p, q) => self.render_pair("min", p, q, name, &mut out),
            SymExpr::Max(p, q) => self.render_pair("max", p, q, name, &mut out),
        }
        Some(out)
    }

    fn render_atom(&self, s: Sym, name: &mut dyn FnMut(Sym) -> String, out: &mut String) {
        match self.expr(s) {
            Some(SymExpr::FloorDiv(p, d)) => self.render_floor(p, *d, name, out),
            Some(SymExpr::FloorDivBy(p, q)) => self.render_floor_by(p, q, name, out),
            Some(SymExpr::Min(p, q)) => self.render_pair("min", p, q, name, out),
            Some(SymExpr::Max(p, q)) => self.render_pair("max", p, q, name, out),
            Some(SymExpr::Poly(p)) => {
                out.push('(');
                self.render_poly(p, name, out);
                out.push(')');
            }
            None => {
                // A model's dim text can itself be an expression
                // (`floor(h/2 - 1/2) + 1`, as SymPy writes them): inside
                // another expression it is one operand.
                let text = name(s);
                if is_operand(&text) {
                    out.push_str(&text);
                } else {
                    out.push('(');
                    out.push_str(&text);
                    out.push(')');
                }
            }
        }
    }

    fn render_floor(
        &self,
        p: &Poly,
        d: i64,
        name: &mut dyn FnMut(Sym) -> String,
        out: &mut String,
    ) {
        out.push_str("floor(");
        let simple = p.as_atom().is_some();
        if !simple {
            out.push('(');
        }
        self.render_poly(p, name, out);
        if !simple {
            out.push(')');
        }
        let _ = write!(out, "/{d})");
    }

    /// `floor((s*b1)/b2)`: each side in parentheses unless one atom.
    fn render_floor_by(
        &self,
        p: &Poly,
        q: &Poly,
        name: &mut dyn FnMut(Sym) -> String,
        out: &mut String,
    ) {
        out.push_str("floor(");
        for (k, side) in [p, q].into_iter().enumerate() {
            if k == 1 {
                out.push('/');
            }
            let simple = side.as_atom().is_some();
            if !simple {
                out.push('(');
            }
            self.render_poly(side, name, out);
            if !simple {
                out.push(')');
            }
        }
        out.push(')');
    }

    fn render_pair(
        &self,
        f: &str,
        p: &Poly,
        q: &Poly,
        name: &mut dyn FnMut(Sym) -> String,
        out: &mut String,
    ) {
        // A constant last: `min(seq, 512)`.
        let (p, q) = match p.as_constant() {
            Some(_) => (q, p),
            None => (p, q),
        };
        out.push_str(f);
        out.push('(');
        self.render_poly(p, name, out);
        out.push_str(", ");
        self.render_poly(q, name, out);
        out.push(')');
    }

    fn render_poly(&self, p: &Poly, name: &mut dyn FnMut(Sym) -> String, out: &mut String) {
        if p.terms.is_empty() {
            out.push('0');
            return;
        }
        // Terms of higher degree first, the constant last.
        let mut order: Vec<&(Monomial, i64)> = p.terms.iter().collect();
        order.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        for (i, (m, c)) in order.into_iter().enumerate() {
            let (sign, magnitude) = if *c < 0 {
                ("-", c.unsigned_abs())
            } else {
                ("+", c.unsigned_abs())
            };
            match (i, sign) {
                (0, "-") => out.push('-'),
                (0, _) => {}
                _ => {
                    let _ = write!(out, " {sign} ");
                }
            }
            if m.is_empty() {
                let _ = write!(out, "{magnitude}");
                continue;
            }
            if magnitude != 1 {
                let _ = write!(out, "{magnitude}*");
            }
            for (k, s) in m.iter().enumerate() {
                if k > 0 {
                    out.push('*');
                }
                self.render_atom(*s, name, out);
            }
        }
    }
}

/// Whether a symbol's text reads as one operand inside an expression: a
/// name (no space or `+-*/(),`, as [`super::evaluate`] reads names) or one
/// call, `f(...)`, whose parentheses enclose the rest.
fn is_operand(text: &str) -> bool {
    const SEPARATORS: &[char] = &[' ', '+', '-', '*', '/', '(', ')', ','];
    let Some(open) = text.find('(') else {
        return !text.is_empty() && !text.contains(SEPARATORS);
    };
    let (head, call) = text.split_at(open);
    if head.is_empty() || head.contains(SEPARATORS) {
        return false;
    }
    // The call's parenthesis closes at the text's end and nowhere before.
    let mut depth = 0usize;
    for (i, c) in call.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1 == call.len();
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(s: &Symbols, d: Dim) -> String {
        match d {
            Dim::Value(v) => v.to_string(),
            Dim::Sym(x) => s
                .render_expr(x, &mut |a| s.name(a).unwrap_or("?").to_string())
                .unwrap_or_else(|| s.name(x).unwrap_or("?").to_string()),
            Dim::Unknown => "?".into(),
        }
    }

    #[test]
    fn arithmetic_is_canonical_and_interned() {
        let mut s = Symbols::default();
        let (seq, batch, h) = (s.intern("seq"), s.intern("batch"), s.intern("h"));
        let one = Dim::Value(1);
        let a = s.dim_add(seq, one).unwrap_or(Dim::Unknown);
        let b = s.dim_add(one, seq).unwrap_or(Dim::Unknown);
        assert_eq!(a, b, "the same expression is the same symbol");
        assert_eq!(show(&s, a), "seq + 1");
        let back = s.dim_sub(a, one).unwrap_or(Dim::Unknown);
        assert_eq!(back, seq, "seq + 1 - 1 is seq");
        let bh = s.dim_mul(batch, Dim::Value(12)).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, bh), "12*batch");
        let prod = s.dim_mul(batch, seq).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, prod), "seq*batch");
        // Conv: floor((h + 2 - 3)/2) + 1.
        let x = s.dim_add(h, Dim::Value(-1)).unwrap_or(Dim::Unknown);
        let f = s.dim_floor_div(x, 2).unwrap_or(Dim::Unknown);
        let out = s.dim_add(f, one).unwrap_or(Dim::Unknown);
        assert_eq!(
            show(&s, out),
            "floor((h + 1)/2)",
            "-1 = 2*(-1) + 1 comes out"
        );
        let even = s.dim_mul(h, Dim::Value(2)).unwrap_or(Dim::Unknown);
        let even = s.dim_add(even, Dim::Value(3)).unwrap_or(Dim::Unknown);
        let half = s.dim_floor_div(even, 2).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, half), "h + 1");
        assert_eq!(s.dim_floor_div(Dim::Value(-7), 2), Some(Dim::Value(-4)));
        let up = s.dim_ceil_div(seq, 4).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, up), "floor((seq + 3)/4)");
        let total = s.dim_mul(prod, Dim::Value(768)).unwrap_or(Dim::Unknown);
        let known = s.dim_mul(batch, Dim::Value(12)).unwrap_or(Dim::Unknown);
        let q = s.dim_div_exact(total, known).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, q), "64*seq");
        assert_eq!(s.dim_div_exact(total, h), None, "h does not divide");
        assert_eq!(
            s.dim_div_exact(a, Dim::Value(2)),
            None,
            "seq + 1 is not even"
        );
        let minus = s.dim_sub(Dim::Value(5), seq).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, minus), "-seq + 5");
    }

    #[test]
    fn floors_over_sizes() {
        let mut s = Symbols::default();
        let (seq, b1, b2) = (s.intern("s"), s.intern("b1"), s.intern("b2"));
        let total = s.dim_mul(seq, b1).unwrap_or(Dim::Unknown);
        // A constant divisor is the constant floor; an exact one divides.
        let half = s
            .dim_floor_div_by(total, Dim::Value(2))
            .unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, half), "floor((s*b1)/2)");
        assert_eq!(s.dim_floor_div_by(total, b1), Some(seq));
        let q = s.dim_floor_div_by(total, b2).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, q), "floor((s*b1)/b2)");
        assert_eq!(s.dim_floor_div_by(total, b2), Some(q), "interned");
        let two_b2 = s.dim_mul(b2, Dim::Value(2)).unwrap_or(Dim::Unknown);
        let q2 = s.dim_floor_div_by(total, two_b2).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, q2), "floor((s*b1)/(2*b2))");
        // Inside another expression it is one operand.
        let more = s.dim_add(q, Dim::Value(1)).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, more), "floor((s*b1)/b2) + 1");
        assert_eq!(s.dim_sign(q), Some(true));
        // Not sizes (a negative coefficient), or a zero divisor: no floor.
        let diff = s.dim_sub(seq, b1).unwrap_or(Dim::Unknown);
        assert_eq!(s.dim_floor_div_by(diff, b2), None);
        assert_eq!(s.dim_floor_div_by(total, Dim::Value(0)), None);
        assert_eq!(s.dim_floor_div_by(total, Dim::Unknown), None);
        let Dim::Sym(hs) = b2 else { panic!("a symbol") };
        // floor(21/b2) at b2 = 2: 10.
        let fixed = s
            .dim_floor_div_by(Dim::Value(21), b2)
            .unwrap_or(Dim::Unknown);
        assert_eq!(eval(&s, fixed, hs, 2), 10);
    }

    /// The value of `d` with `h` at `v` (plain integer arithmetic).
    fn eval(s: &Symbols, d: Dim, h: Sym, v: i64) -> i64 {
        match d {
            Dim::Value(c) => c,
            Dim::Sym(x) if x == h => v,
            Dim::Sym(x) => match s.expr(x) {
                Some(SymExpr::Poly(p)) => eval_poly(s, p, h, v),
                Some(SymExpr::FloorDiv(p, k)) => eval_poly(s, p, h, v).div_euclid(*k),
                Some(SymExpr::FloorDivBy(p, q)) => {
                    eval_poly(s, p, h, v).div_euclid(eval_poly(s, q, h, v))
                }
                Some(SymExpr::Min(p, q)) => eval_poly(s, p, h, v).min(eval_poly(s, q, h, v)),
                Some(SymExpr::Max(p, q)) => eval_poly(s, p, h, v).max(eval_poly(s, q, h, v)),
                None => panic!("a symbol other than h"),
            },
            Dim::Unknown => panic!("unknown dim"),
        }
    }

    fn eval_poly(s: &Symbols, p: &Poly, h: Sym, v: i64) -> i64 {
        p.terms
            .iter()
            .map(|(m, c)| {
                c * m
                    .iter()
                    .map(|a| eval(s, Dim::Sym(*a), h, v))
                    .product::<i64>()
            })
            .sum()
    }

    #[test]
    fn nested_floors_flatten() {
        let mut s = Symbols::default();
        let h = s.intern("h");
        let Dim::Sym(hs) = h else { panic!("a symbol") };
        // Conv 3x3, stride 2, pad 1, then MaxPool 3x3, stride 2, pad 1.
        let conv = s.dim_add(h, Dim::Value(-1)).unwrap_or(Dim::Unknown);
        let conv = s.dim_floor_div(conv, 2).unwrap_or(Dim::Unknown);
        let conv = s.dim_add(conv, Dim::Value(1)).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, conv), "floor((h + 1)/2)");
        let pool = s.dim_add(conv, Dim::Value(-1)).unwrap_or(Dim::Unknown);
        let pool = s.dim_floor_div(pool, 2).unwrap_or(Dim::Unknown);
        let pool = s.dim_add(pool, Dim::Value(1)).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, pool), "floor((h + 3)/4)");
        // Five such halvings (a ResNet's stem and stages) stay one floor.
        let mut x = h;
        for _ in 0..5 {
            let y = s.dim_add(x, Dim::Value(-1)).unwrap_or(Dim::Unknown);
            let y = s.dim_floor_div(y, 2).unwrap_or(Dim::Unknown);
            x = s.dim_add(y, Dim::Value(1)).unwrap_or(Dim::Unknown);
        }
        assert_eq!(show(&s, x), "floor((h + 31)/32)");
        // floor((floor(h/3) + h)/2): the inner floor's term is alone, `s`
        // holds h: floor((h + 3*h)/6), their common factor 2 out.
        let third = s.dim_floor_div(h, 3).unwrap_or(Dim::Unknown);
        let sum = s.dim_add(third, h).unwrap_or(Dim::Unknown);
        let half = s.dim_floor_div(sum, 2).unwrap_or(Dim::Unknown);
        // floor((2*h)/3), a ceiling: h - ceil(h/3).
        assert_eq!(show(&s, half), "h - floor((h + 2)/3)");
        // A coefficient of 2 over 5 keeps it nested.
        let two = s.dim_mul(third, Dim::Value(2)).unwrap_or(Dim::Unknown);
        let two = s.dim_add(two, Dim::Value(1)).unwrap_or(Dim::Unknown);
        let nested = s.dim_floor_div(two, 5).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, nested), "floor((2*floor(h/3) + 1)/5)");
        // Rounding up to a multiple of 7 by remainders, h + (7 - h % 7) % 7
        // (h % 7 = h - 7*floor(h/7)), is 7*ceil(h/7).
        let modulo = |s: &mut Symbols, x: Dim| {
            let q = s.dim_floor_div(x, 7).unwrap_or(Dim::Unknown);
            let q7 = s.dim_mul(q, Dim::Value(7)).unwrap_or(Dim::Unknown);
            s.dim_sub(x, q7).unwrap_or(Dim::Unknown)
        };
        let rest = modulo(&mut s, h);
        let rest = s.dim_sub(Dim::Value(7), rest).unwrap_or(Dim::Unknown);
        let rest = modulo(&mut s, rest);
        let padded = s.dim_add(h, rest).unwrap_or(Dim::Unknown);
        let up = s.dim_ceil_div(h, 7).unwrap_or(Dim::Unknown);
        let up = s.dim_mul(up, Dim::Value(7)).unwrap_or(Dim::Unknown);
        assert_eq!(padded, up, "{} against {}", show(&s, padded), show(&s, up));
        assert_eq!(show(&s, up), "7*floor((h + 6)/7)");
        // Every chain of steps evaluates as integer arithmetic does.
        let steps: [(i64, i64, i64); 8] = [
            (1, -1, 2),
            (1, 0, 3),
            (2, 1, 3),
            (1, 5, 4),
            (3, 2, 2),
            (1, -7, 5),
            (6, 0, 7),
            (-1, 9, 4),
        ];
        for start in 0..steps.len() {
            let (mut d, mut chain) = (h, Vec::new());
            for &(k, c, q) in steps.iter().cycle().skip(start).take(5) {
                let y = s.dim_mul(d, Dim::Value(k)).unwrap_or(Dim::Unknown);
                let y = s.dim_add(y, Dim::Value(c)).unwrap_or(Dim::Unknown);
                d = s.dim_floor_div(y, q).unwrap_or(Dim::Unknown);
                chain.push((k, c, q));
                for v in 0..300 {
                    let want = chain
                        .iter()
                        .fold(v, |x, &(k, c, q)| (k * x + c).div_euclid(q));
                    assert_eq!(eval(&s, d, hs, v), want, "{} at h = {v}", show(&s, d));
                }
            }
        }
    }

    /// Symbols with `seq` and `past`, and `seq`'s symbol (for [`eval`]).
    fn seq_and_past() -> (Symbols, Dim, Dim, Sym) {
        let mut s = Symbols::default();
        let (seq, past) = (s.intern("seq"), s.intern("past"));
        let Dim::Sym(hs) = seq else {
            panic!("a symbol")
        };
        (s, seq, past, hs)
    }

    #[test]
    fn mins_and_maxes_decide_what_holds_for_every_size() {
        let (mut s, seq, past, hs) = seq_and_past();
        let cut = s.dim_min(seq, Dim::Value(512)).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, cut), "min(seq, 512)");
        let other = s.dim_min(Dim::Value(512), seq).unwrap_or(Dim::Unknown);
        assert_eq!(cut, other, "one symbol either way round");
        assert_eq!(
            s.dim_min(Dim::Value(3), Dim::Value(-2)),
            Some(Dim::Value(-2))
        );
        // seq - (seq + 1) is a constant; seq + past - seq has one sign over
        // sizes; seq - 0 too (seq is a size: at least 0).
        let up = s.dim_add(seq, Dim::Value(1)).unwrap_or(Dim::Unknown);
        assert_eq!(s.dim_min(up, seq), Some(seq));
        let total = s.dim_add(seq, past).unwrap_or(Dim::Unknown);
        assert_eq!(s.dim_min(total, seq), Some(seq));
        assert_eq!(s.dim_min(seq, Dim::Value(0)), Some(Dim::Value(0)));
        // seq - past has both signs: kept.
        let both = s.dim_min(seq, past).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, both), "min(seq, past)");
        // A floor can be below 0 (floor((seq - 3)/2) at seq = 0): kept.
        let low = s.dim_add(seq, Dim::Value(-3)).unwrap_or(Dim::Unknown);
        let half = s.dim_floor_div(low, 2).unwrap_or(Dim::Unknown);
        let kept = s.dim_min(half, Dim::Value(0)).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, kept), "min(floor((seq + 1)/2), 2) - 2");
        // A slice [1:5] of seq: min(seq, 5) - 1, then by 2.
        let span = s.dim_sub(cut, Dim::Value(1)).unwrap_or(Dim::Unknown);
        let end = s.dim_min(seq, Dim::Value(5)).unwrap_or(Dim::Unknown);
        let span5 = s.dim_sub(end, Dim::Value(1)).unwrap_or(Dim::Unknown);
        let by2 = s.dim_ceil_div(span5, 2).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, by2), "floor(min(seq, 5)/2)");
        let at_least = s.dim_max(seq, Dim::Value(4)).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, at_least), "max(seq, 4)");
        assert_eq!(s.dim_max(total, seq), Some(total));
        assert_eq!(s.dim_max(up, seq), Some(up));
        let clip = s.dim_min(at_least, Dim::Value(16)).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, clip), "min(max(seq, 4), 16)");
        for v in 1..40 {
            assert_eq!(eval(&s, at_least, hs, v), v.max(4));
            assert_eq!(eval(&s, clip, hs, v), v.clamp(4, 16));
            assert_eq!(eval(&s, cut, hs, v), v.min(512));
            assert_eq!(eval(&s, span, hs, v), v.min(512) - 1);
            assert_eq!(eval(&s, by2, hs, v), (v.min(5) - 1 + 1).div_euclid(2));
        }
    }

    /// A shift of both sides comes out of the atom, so each min or max has
    /// one form: `min(seq - 1, 10) + 1` is `min(seq, 11)`.
    #[test]
    fn shifted_mins_and_maxes_meet() {
        let (mut s, seq, past, hs) = seq_and_past();
        let add =
            |s: &mut Symbols, d: Dim, k: i64| s.dim_add(d, Dim::Value(k)).unwrap_or(Dim::Unknown);
        let low = add(&mut s, seq, -1);
        let cut = s.dim_min(low, Dim::Value(10)).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, cut), "min(seq, 11) - 1");
        let back = add(&mut s, cut, 1);
        assert_eq!(Some(back), s.dim_min(seq, Dim::Value(11)));
        assert_eq!(show(&s, back), "min(seq, 11)");
        let floor = s.dim_max(low, Dim::Value(4)).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, floor), "max(seq, 5) - 1");
        let up = add(&mut s, seq, 3);
        let wide = s.dim_max(up, Dim::Value(-7)).unwrap_or(Dim::Unknown);
        assert_eq!(wide, up, "seq + 3 >= -7 for every size");
        // Two symbols: the side whose other terms come last keeps no constant.
        let (a, b) = (add(&mut s, seq, 1), add(&mut s, past, 3));
        let m1 = s.dim_min(a, b).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, m1), "min(seq - 2, past) + 3");
        let b2 = add(&mut s, past, 2);
        let m2 = s.dim_min(seq, b2).unwrap_or(Dim::Unknown);
        let m2 = add(&mut s, m2, 1);
        assert_eq!(m1, m2);
        for v in 0..30 {
            assert_eq!(eval(&s, cut, hs, v), (v - 1).min(10));
            assert_eq!(eval(&s, back, hs, v), v.min(11));
            assert_eq!(eval(&s, floor, hs, v), (v - 1).max(4));
        }
    }

    #[test]
    fn bounds_are_kept() {
        let mut s = Symbols::default();
        let x = s.intern("x");
        let mut d = x;
        for _ in 0..MAX_DEGREE - 1 {
            d = s.dim_mul(d, x).unwrap_or(Dim::Unknown);
        }
        assert!(d.is_known());
        assert_eq!(s.dim_mul(d, x), None, "degree bound");
        let big = Dim::Value(i64::MAX);
        let xm = s.dim_mul(x, big).unwrap_or(Dim::Unknown);
        assert_eq!(s.dim_add(xm, xm), None, "coefficient overflow");
        // floor((2*h + 1)/5): the inner floor's coefficient is 2, so each
        // step nests (a coefficient of 1, or of 4 = 5 - 1, would not).
        let mut h = s.intern("h");
        for _ in 0..MAX_NESTING {
            let up = s.dim_mul(h, Dim::Value(2)).unwrap_or(Dim::Unknown);
            let up = s.dim_add(up, Dim::Value(1)).unwrap_or(Dim::Unknown);
            h = s.dim_floor_div(up, 5).unwrap_or(Dim::Unknown);
            assert!(h.is_known());
        }
        let up = s.dim_mul(h, Dim::Value(2)).unwrap_or(Dim::Unknown);
        let up = s.dim_add(up, Dim::Value(1)).unwrap_or(Dim::Unknown);
        assert_eq!(s.dim_floor_div(up, 5), None, "nesting bound");
        assert_eq!(s.dim_add(x, Dim::Unknown), None);
        assert_eq!(s.dim_floor_div(x, 0), None);
    }

    #[test]
    fn a_model_dim_that_is_an_expression_is_one_operand() {
        for (text, operand) in [
            ("batch", true),
            ("DynamicDimension.1", true),
            ("floor(h/2)", true),
            ("Max(a, b)", true),
            ("floor(h/2) + 1", false),
            ("E + 1", false),
            ("a-b", false),
            ("f(a)(b)", false),
            ("(a)", false),
            ("f(a", false),
            ("", false),
        ] {
            assert_eq!(is_operand(text), operand, "{text:?}");
        }
        // A pooling of a dim onnxruntime's symbolic inference saved:
        // floor((E - 2)/2) + 1 with E = `floor(h/2 - 1/2) + 1`.
        let mut s = Symbols::default();
        let e = s.intern("floor(h/2 - 1/2) + 1");
        let x = s.dim_add(e, Dim::Value(-2)).unwrap_or(Dim::Unknown);
        let f = s.dim_floor_div(x, 2).unwrap_or(Dim::Unknown);
        let out = s.dim_add(f, Dim::Value(1)).unwrap_or(Dim::Unknown);
        let text = show(&s, out);
        assert_eq!(text, "floor((floor(h/2 - 1/2) + 1)/2)");
        for h in [63, 64, 65, 96] {
            let e = (h - 1) / 2 + 1;
            let size = |name: &str| (name == "h").then_some(h);
            let value = super::super::evaluate::evaluate(&text, &size);
            assert_eq!(value, Ok((e - 2) / 2 + 1), "h = {h}");
        }
        let twice = s.dim_mul(e, Dim::Value(2)).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, twice), "2*(floor(h/2 - 1/2) + 1)");
        let call = s.intern("floor(h/2)");
        let sum = s.dim_add(call, Dim::Value(3)).unwrap_or(Dim::Unknown);
        assert_eq!(show(&s, sum), "floor(h/2) + 3");
    }
}
