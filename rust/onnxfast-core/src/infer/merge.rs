//! Inferred types against declared ones (graph inputs and outputs,
//! `value_info`, initializers): the conflicts onnx's strict mode refuses,
//! and the merge that keeps the most precise of both.
//!
//! Rules (onnx 1.23's `checkShapesAndTypes` / `mergeShapesAndTypes`):
//! different kinds conflict; two known element types must be equal; two
//! known ranks must be equal; two static dims must be equal. Merging fills
//! what the declaration leaves open: an unknown element type, a missing
//! shape, a dim without value or symbol; a static inferred dim replaces a
//! symbolic declared one.

use crate::diag::codes::{self, Code};
use crate::ir::types::{Dim, Symbols, TensorType, Type, MAX_RANK};

/// A conflict between an inferred and a declared type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub code: Code,
    pub message: String,
}

fn conflict(code: Code, message: String) -> Conflict {
    Conflict { code, message }
}

fn check_tensor(
    inferred: &TensorType,
    existing: &TensorType,
    symbols: &Symbols,
) -> Result<(), Conflict> {
    if inferred.elem != 0 && existing.elem != 0 && inferred.elem != existing.elem {
        return Err(conflict(
            codes::DECLARED_ELEM_TYPE,
            format!(
                "the inferred element type {} differs from the declared {}",
                elem(inferred.elem),
                elem(existing.elem)
            ),
        ));
    }
    let (Some(a), Some(b)) = (&inferred.shape, &existing.shape) else {
        return Ok(());
    };
    if a.len() != b.len() {
        return Err(conflict(
            codes::DECLARED_RANK,
            format!(
                "the inferred rank {} {} differs from the declared rank {} {}",
                a.len(),
                symbols.show_dims(a),
                b.len(),
                symbols.show_dims(b)
            ),
        ));
    }
    for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
        if let (Dim::Value(x), Dim::Value(y)) = (x, y) {
            if x != y {
                return Err(conflict(
                    codes::DECLARED_DIM,
                    format!(
                        "dimension {i} is inferred as {x} but declared as {y} (inferred {}, declared {})",
                        symbols.show_dims(a),
                        symbols.show_dims(b)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn elem(code: i32) -> String {
    match crate::ir::types::elem_name(code) {
        Some(n) => n.to_string(),
        None => format!("<{code}>"),
    }
}

/// onnx's `checkShapesAndTypes(inferred, existing)`.
pub fn check(inferred: &Type, existing: &Type, symbols: &Symbols) -> Result<(), Conflict> {
    fn inner(
        a: &Option<Box<Type>>,
        b: &Option<Box<Type>>,
        symbols: &Symbols,
    ) -> Result<(), Conflict> {
        match (a, b) {
            (Some(a), Some(b)) => check(a, b, symbols),
            _ => Ok(()),
        }
    }
    match (inferred, existing) {
        (Type::Tensor(a), Type::Tensor(b)) | (Type::SparseTensor(a), Type::SparseTensor(b)) => {
            check_tensor(a, b, symbols)
        }
        (Type::Sequence(a), Type::Sequence(b)) | (Type::Optional(a), Type::Optional(b)) => {
            inner(a, b, symbols)
        }
        (Type::Map(ka, va), Type::Map(kb, vb)) => {
            if ka != kb {
                return Err(conflict(
                    codes::DECLARED_ELEM_TYPE,
                    format!(
                        "the inferred map key type {} differs from the declared {}",
                        elem(*ka),
                        elem(*kb)
                    ),
                ));
            }
            inner(va, vb, symbols)
        }
        (
            Type::Opaque {
                domain: da,
                name: na,
            },
            Type::Opaque {
                domain: db,
                name: nb,
            },
        ) => {
            let norm = |d: &str| if d == "ai.onnx" { "" } else { d }.to_string();
            if let (Some(x), Some(y)) = (da, db) {
                if norm(x) != norm(y) {
                    return Err(conflict(
                        codes::DECLARED_KIND,
                        format!("the inferred opaque domain '{x}' differs from the declared '{y}'"),
                    ));
                }
            }
            if let (Some(x), Some(y)) = (na, nb) {
                if x != y {
                    return Err(conflict(
                        codes::DECLARED_KIND,
                        format!("the inferred opaque name '{x}' differs from the declared '{y}'"),
                    ));
                }
            }
            Ok(())
        }
        _ => Err(conflict(
            codes::DECLARED_KIND,
            format!(
                "the inferred type is a {} ({}), the declared type a {} ({})",
                inferred.kind_name(),
                symbols.show(inferred),
                existing.kind_name(),
                symbols.show(existing)
            ),
        )),
    }
}

/// onnx's `mergeShapesAndTypes(inferred, existing)` (after [`check`]).
pub fn merge_into(inferred: &Type, existing: &mut Type) {
    fn inner(a: &Option<Box<Type>>, b: &mut Option<Box<Type>>) {
        if let Some(a) = a {
            match b {
                Some(b) => merge_into(a, b),
                None => *b = Some(a.clone()),
            }
        }
    }
    match (inferred, existing) {
        (Type::Tensor(a), Type::Tensor(b)) | (Type::SparseTensor(a), Type::SparseTensor(b)) => {
            if b.elem == 0 {
                b.elem = a.elem;
            }
            let Some(a) = &a.shape else {
                return;
            };
            match &mut b.shape {
                None => b.shape = Some(a.clone()),
                Some(b) => {
                    for (x, y) in a.iter().zip(b.iter_mut()) {
                        if *y == Dim::Unknown || matches!(x, Dim::Value(_)) {
                            *y = *x;
                        }
                    }
                }
            }
        }
        (Type::Sequence(a), Type::Sequence(b)) | (Type::Optional(a), Type::Optional(b)) => {
            inner(a, b)
        }
        (Type::Map(ka, va), Type::Map(kb, vb)) => {
            if *kb == 0 {
                *kb = *ka;
            }
            inner(va, vb);
        }
        (
            Type::Opaque {
                domain: da,
                name: na,
            },
            Type::Opaque {
                domain: db,
                name: nb,
            },
        ) => {
            if db.is_none() {
                db.clone_from(da);
            }
            if nb.is_none() {
                nb.clone_from(na);
            }
        }
        _ => {}
    }
}

/// Gives every unknown dim of an inferred type a fresh symbol (onnx's
/// `MaterializeSymbolicShape`), and forgets shapes above [`MAX_RANK`].
pub fn materialize(t: &mut Type, symbols: &mut Symbols) {
    match t {
        Type::Tensor(x) | Type::SparseTensor(x) => {
            if x.shape.as_ref().is_some_and(|s| s.len() > MAX_RANK) {
                x.shape = None;
            }
            if let Some(dims) = &mut x.shape {
                for d in dims.iter_mut() {
                    if *d == Dim::Unknown {
                        *d = symbols.fresh();
                    }
                }
            }
        }
        Type::Sequence(Some(e)) | Type::Optional(Some(e)) | Type::Map(_, Some(e)) => {
            materialize(e, symbols)
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(elem: i32, dims: &[Dim]) -> Type {
        Type::tensor(elem, Some(dims.iter().copied().collect()))
    }

    #[test]
    fn conflicts_and_merges_follow_onnx() {
        let mut s = Symbols::default();
        let n = s.intern("N");
        let f = s.fresh();
        let v = Dim::Value;
        // Element type, rank, static dims conflict; symbols do not.
        assert_eq!(
            check(&t(1, &[v(2)]), &t(7, &[v(2)]), &s).map_err(|c| c.code),
            Err(codes::DECLARED_ELEM_TYPE)
        );
        assert_eq!(
            check(&t(1, &[v(2)]), &t(1, &[v(2), v(3)]), &s).map_err(|c| c.code),
            Err(codes::DECLARED_RANK)
        );
        assert_eq!(
            check(&t(1, &[v(2)]), &t(1, &[v(3)]), &s).map_err(|c| c.code),
            Err(codes::DECLARED_DIM)
        );
        assert!(check(&t(1, &[v(2), f]), &t(0, &[n, n]), &s).is_ok());
        assert_eq!(
            check(&Type::Sequence(None), &t(1, &[]), &s).map_err(|c| c.code),
            Err(codes::DECLARED_KIND)
        );
        // A static inferred dim replaces a symbol; a fresh one does not.
        let mut declared = t(0, &[n, n, Dim::Unknown]);
        merge_into(&t(1, &[v(4), f, f]), &mut declared);
        assert_eq!(declared, t(1, &[v(4), n, f]));
        // A missing shape is filled.
        let mut declared = Type::tensor(1, None);
        merge_into(&t(1, &[v(1)]), &mut declared);
        assert_eq!(declared, t(1, &[v(1)]));
        // Unknown dims become fresh symbols.
        let mut inferred = t(1, &[Dim::Unknown, v(3)]);
        materialize(&mut inferred, &mut s);
        assert!(matches!(
            inferred
                .as_tensor()
                .and_then(|x| x.shape.as_ref())
                .map(|d| d[0]),
            Some(Dim::Sym(_))
        ));
    }
}
