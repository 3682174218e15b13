//! The generic check every operator gets from its schema (onnx's
//! `OpSchema::CheckInputOutputType`): each input and output type is one its
//! formal parameter allows, parameters sharing a type variable are bound to
//! one type, and an output no rule typed gets the type its parameter
//! implies (the only allowed type, or the bound variable's).

use smallvec::SmallVec;

use crate::diag::codes;
use crate::ir::types::{TensorType, Type, TypeStrError};
use crate::opset::{FormalParam, OpSchema};

use super::context::{defect, At, InferError, Reach};

/// Where a type variable was bound: by input or output `index`, to `ty`.
#[derive(Clone, Copy)]
struct Binding<'t> {
    var: u16,
    output: bool,
    index: usize,
    ty: &'t Type,
}

type Bindings<'t> = SmallVec<[Binding<'t>; 4]>;

fn at(output: bool, index: usize) -> At {
    if output {
        At::Output(index)
    } else {
        At::Input(index)
    }
}

/// onnx fails to name the type (std::invalid_argument): that ends its
/// whole run.
fn not_checkable(output: bool, i: usize, shown: String, e: TypeStrError) -> InferError {
    defect(
        codes::TYPE_NOT_CHECKABLE,
        at(output, i),
        format!(
            "{} {i} has the type {shown}, which cannot be checked against the schema: {e}",
            if output { "output" } else { "input" }
        ),
    )
    .reaching(Reach::Run)
}

/// Checks `inputs` (the node's input types; `None` for absent or untyped)
/// and `outputs` (as inferred; `None` slots may be filled) against the
/// schema. Stops at the first violation, as onnx does for a node.
pub fn check(
    schema: &OpSchema,
    inputs: &[Option<&Type>],
    outputs: &mut [Option<Type>],
    show: &dyn Fn(&Type) -> String,
    names: &dyn Fn(bool, usize) -> String,
) -> Result<(), InferError> {
    // Inputs: allowed, and bound consistently.
    let mut bound: Bindings<'_> = SmallVec::new();
    for (i, ty) in inputs.iter().enumerate() {
        let Some(param) = schema.input_param(i) else {
            break;
        };
        let Some(ty) = ty else {
            continue;
        };
        allowed(param, false, i, ty, show)?;
        if param.homogeneous {
            bind(&mut bound, param, false, i, ty, show, names)?;
        }
    }
    // Outputs no rule typed: the only allowed type, or the bound variable's
    // (bound by an input, or by an earlier output).
    for i in 0..outputs.len() {
        let Some(param) = schema.output_param(i) else {
            break;
        };
        let (earlier, rest) = outputs.split_at_mut(i);
        let Some(slot) = rest.first_mut() else {
            break;
        };
        if slot.is_some() {
            continue;
        }
        if let Some(only) = param.allowed.single() {
            *slot = Some(only);
        } else if let Some(b) = bound.iter().find(|b| b.var == param.var) {
            *slot = Some(without_shapes(b.ty));
        } else if param.homogeneous {
            let same_var = earlier.iter().enumerate().find_map(|(j, t)| {
                let p = schema.output_param(j)?;
                (p.homogeneous && p.var == param.var).then_some(t.as_ref()?)
            });
            if let Some(t) = same_var {
                *slot = Some(without_shapes(t));
            }
        }
    }
    // Outputs: allowed, and bound consistently.
    for (i, slot) in outputs.iter().enumerate() {
        let Some(param) = schema.output_param(i) else {
            break;
        };
        let Some(ty) = slot else {
            continue;
        };
        allowed(param, true, i, ty, show)?;
        if param.homogeneous {
            bind(&mut bound, param, true, i, ty, show, names)?;
        }
    }
    Ok(())
}

fn allowed(
    param: &FormalParam,
    output: bool,
    i: usize,
    ty: &Type,
    show: &dyn Fn(&Type) -> String,
) -> Result<(), InferError> {
    // The common case: a tensor of an allowed element type.
    if let Type::Tensor(t) = ty {
        if param.allowed.has_tensor(t.elem) {
            return Ok(());
        }
    }
    let ok = param
        .allowed
        .contains(ty)
        .map_err(|e| not_checkable(output, i, show(ty), e))?;
    if ok {
        return Ok(());
    }
    let what = ty.type_str().unwrap_or_else(|_| show(ty));
    let message = if param.type_str.contains('(') {
        format!(
            "{what} is not allowed here: the operator takes {}",
            param.type_str
        )
    } else {
        format!(
            "{what} is not allowed for {} (allowed: {})",
            param.type_str,
            param.allowed.describe()
        )
    };
    let code = if output {
        codes::OUTPUT_TYPE_NOT_ALLOWED
    } else {
        codes::INPUT_TYPE_NOT_ALLOWED
    };
    Err(defect(code, at(output, i), message))
}

fn bind<'t>(
    bound: &mut Bindings<'t>,
    param: &FormalParam,
    output: bool,
    index: usize,
    ty: &'t Type,
    show: &dyn Fn(&Type) -> String,
    names: &dyn Fn(bool, usize) -> String,
) -> Result<(), InferError> {
    let Some(b) = bound.iter().find(|b| b.var == param.var) else {
        bound.push(Binding {
            var: param.var,
            output,
            index,
            ty,
        });
        return Ok(());
    };
    if b.ty.same_kind(ty) {
        return Ok(());
    }
    let what = ty.type_str().unwrap_or_else(|_| show(ty));
    Err(defect(
        codes::TYPE_VARIABLE_CONFLICT,
        at(output, index),
        format!(
            "{what} is not allowed for {}, which {}[{}] {} binds to {}",
            param.type_str,
            if b.output { "output" } else { "input" },
            b.index,
            names(b.output, b.index),
            b.ty.type_str().unwrap_or_else(|_| show(b.ty))
        ),
    ))
}

/// The type with its shapes removed (onnx rebuilds a bound type from its
/// type string, which has none).
fn without_shapes(t: &Type) -> Type {
    let strip = |e: &Option<Box<Type>>| e.as_ref().map(|e| Box::new(without_shapes(e)));
    match t {
        Type::Tensor(x) => Type::tensor(x.elem, None),
        Type::SparseTensor(x) => Type::SparseTensor(TensorType::new(x.elem, None)),
        Type::Sequence(e) => Type::Sequence(strip(e)),
        Type::Optional(e) => Type::Optional(strip(e)),
        Type::Map(k, v) => Type::Map(*k, strip(v)),
        other => other.clone(),
    }
}
