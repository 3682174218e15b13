//! The set of types a formal parameter allows (its type constraint).
//!
//! Tensors of one element type are by far the common case, so the set keeps
//! one bit per element type for tensors, sparse tensors, sequences of
//! tensors, optional tensors and optional sequences of tensors; the rare
//! rest (maps, sequences of maps) is a short list of types.

use crate::ir::types::{elem_name, parse_type_str, Type, TypeStrError};

/// Allowed types of one formal parameter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeSet {
    /// One bit per element type, for each [`Slot`].
    bits: [u32; 5],
    other: Vec<Type>,
    len: usize,
}

/// The kinds of types kept as bits, by element type.
#[derive(Clone, Copy)]
enum Slot {
    Tensor = 0,
    Sparse = 1,
    SeqTensor = 2,
    OptTensor = 3,
    OptSeqTensor = 4,
}

fn bit(elem: i32) -> Option<u32> {
    // Codes 1..=28: one bit each (bit 0 unused).
    (1..=31).contains(&elem).then(|| 1u32 << elem)
}

fn tensor_elem(t: &Type) -> Option<i32> {
    match t {
        Type::Tensor(x) => Some(x.elem),
        _ => None,
    }
}

/// Where a type's bit lives, if it is kept as a bit.
fn slot(t: &Type) -> Option<(Slot, u32)> {
    let (slot, elem) = match t {
        Type::Tensor(x) => (Slot::Tensor, x.elem),
        Type::SparseTensor(x) => (Slot::Sparse, x.elem),
        Type::Sequence(Some(e)) => (Slot::SeqTensor, tensor_elem(e)?),
        Type::Optional(Some(e)) => match &**e {
            Type::Tensor(x) => (Slot::OptTensor, x.elem),
            Type::Sequence(Some(s)) => (Slot::OptSeqTensor, tensor_elem(s)?),
            _ => return None,
        },
        _ => return None,
    };
    Some((slot, bit(elem)?))
}

impl TypeSet {
    /// Parses `;`-separated canonical type strings; `None` if one is not
    /// a type.
    pub fn parse(list: &str) -> Option<TypeSet> {
        let mut set = TypeSet::default();
        for s in list.split(';').filter(|s| !s.is_empty()) {
            set.insert(parse_type_str(s)?);
        }
        Some(set)
    }

    pub fn insert(&mut self, t: Type) {
        if self.contains(&t) == Ok(true) {
            return;
        }
        self.len += 1;
        match slot(&t) {
            Some((s, b)) => self.bits[s as usize] |= b,
            None => self.other.push(t),
        }
    }

    /// Number of types in the set.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Is `t` (its type string: shapes do not count) in the set? `Err` when
    /// `t` has no type string (onnx fails on such a type).
    pub fn contains(&self, t: &Type) -> Result<bool, TypeStrError> {
        t.type_str_check()?;
        Ok(match slot(t) {
            Some((s, b)) => self.bits[s as usize] & b != 0,
            None => self.other.iter().any(|o| o.same_kind(t)),
        })
    }

    /// Is a tensor of `elem` in the set?
    pub fn has_tensor(&self, elem: i32) -> bool {
        bit(elem).is_some_and(|b| self.bits[Slot::Tensor as usize] & b != 0)
    }

    /// The one type of a set of one.
    pub fn single(&self) -> Option<Type> {
        if self.len != 1 {
            return None;
        }
        self.iter().next()
    }

    /// Every type of the set (tensors first, by element code).
    pub fn iter(&self) -> impl Iterator<Item = Type> + '_ {
        let from_bits = |bits: u32, make: fn(i32) -> Type| {
            (1..=31).filter(move |&e| bits & (1u32 << e) != 0).map(make)
        };
        let [tensor, sparse, seq_tensor, opt_tensor, opt_seq_tensor] = self.bits;
        from_bits(tensor, |e| Type::tensor(e, None))
            .chain(from_bits(sparse, |e| {
                Type::SparseTensor(crate::ir::types::TensorType::new(e, None))
            }))
            .chain(from_bits(seq_tensor, |e| {
                Type::Sequence(Some(Box::new(Type::tensor(e, None))))
            }))
            .chain(from_bits(opt_tensor, |e| {
                Type::Optional(Some(Box::new(Type::tensor(e, None))))
            }))
            .chain(from_bits(opt_seq_tensor, |e| {
                Type::Optional(Some(Box::new(Type::Sequence(Some(Box::new(
                    Type::tensor(e, None),
                ))))))
            }))
            .chain(self.other.iter().cloned())
    }

    /// A short description for messages: `tensor(float16), tensor(float),
    /// tensor(double)`, or `tensor(T) for T in {…}` when long.
    pub fn describe(&self) -> String {
        let all: Vec<String> = self.iter().filter_map(|t| t.type_str().ok()).collect();
        if all.len() <= 6 {
            return all.join(", ");
        }
        let tensor = self.bits[Slot::Tensor as usize];
        if self.len == tensor.count_ones() as usize {
            let elems: Vec<&str> = (1..=31)
                .filter(|&e| tensor & (1u32 << e) != 0)
                .filter_map(elem_name)
                .collect();
            return format!("tensor of {}", elems.join("/"));
        }
        format!("{} (and {} more)", all[..6].join(", "), all.len() - 6)
    }
}

impl Type {
    /// `Ok` when the type has an onnx type string (see [`Type::type_str`]),
    /// without building it.
    pub fn type_str_check(&self) -> Result<(), TypeStrError> {
        fn inner(t: &Option<Box<Type>>) -> Result<(), TypeStrError> {
            match t {
                Some(t) => t.type_str_check(),
                None => Err(TypeStrError::NoElemType),
            }
        }
        let known = |e: i32| {
            if elem_name(e).is_some() {
                Ok(())
            } else {
                Err(TypeStrError::BadElem(e))
            }
        };
        match self {
            Type::Tensor(x) | Type::SparseTensor(x) => known(x.elem),
            Type::Sequence(e) | Type::Optional(e) => inner(e),
            Type::Map(k, v) => {
                known(*k)?;
                inner(v)
            }
            Type::Opaque { .. } => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership() {
        let set = TypeSet::parse(
            "tensor(float);tensor(int64);seq(tensor(uint8));optional(seq(tensor(bool)));map(int64,tensor(float))",
        )
        .expect("parses");
        assert_eq!(set.len(), 5);
        assert_eq!(set.contains(&Type::tensor(1, None)), Ok(true));
        assert_eq!(set.contains(&Type::tensor(6, None)), Ok(false));
        assert_eq!(
            set.contains(&parse_type_str("seq(tensor(uint8))").expect("t")),
            Ok(true)
        );
        assert_eq!(
            set.contains(&parse_type_str("optional(seq(tensor(bool)))").expect("t")),
            Ok(true)
        );
        assert_eq!(
            set.contains(&parse_type_str("map(int64,tensor(float))").expect("t")),
            Ok(true)
        );
        assert_eq!(
            set.contains(&parse_type_str("map(string,tensor(float))").expect("t")),
            Ok(false)
        );
        assert_eq!(
            set.contains(&Type::tensor(0, None)),
            Err(TypeStrError::BadElem(0))
        );
        let one = TypeSet::parse("tensor(int64)").expect("parses");
        assert_eq!(one.single(), Some(Type::tensor(7, None)));
        assert!(set.describe().contains("tensor(float)"));
    }
}
