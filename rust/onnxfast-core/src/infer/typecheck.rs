//! The generic check every operator gets from its schema (onnx's
//! `OpSchema::CheckInputOutputType`): each input and output type is one its
//! formal parameter allows, parameters sharing a type variable are bound to
//! one type, and an output no rule typed gets the type its parameter
//! implies (the only allowed type, or the bound variable's).

use crate::diag::codes;
use crate::ir::types::Type;
use crate::opset::{FormalParam, OpSchema};

use super::context::{defect, At, InferError};

/// Where a type variable was bound: by input or output `index`, to `ty`.
struct Binding<'s> {
    var: &'s str,
    output: bool,
    index: usize,
    ty: Type,
}

fn not_checkable(
    at: At,
    what: &str,
    shown: String,
    e: crate::ir::types::TypeStrError,
) -> InferError {
    defect(
        codes::TYPE_NOT_CHECKABLE,
        at,
        format!("{what} has the type {shown}, which cannot be checked against the schema: {e}"),
    )
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
    let mut bound: Vec<Binding<'_>> = Vec::new();
    let describe_binding = |b: &Binding<'_>| {
        format!(
            "{}[{}] {} binds to {}",
            if b.output { "output" } else { "input" },
            b.index,
            names(b.output, b.index),
            b.ty.type_str().unwrap_or_default()
        )
    };
    for (i, ty) in inputs.iter().enumerate() {
        let Some(param) = schema.input_param(i) else {
            break;
        };
        let Some(ty) = ty else {
            continue;
        };
        let allowed = param
            .allowed
            .contains(ty)
            .map_err(|e| not_checkable(At::Input(i), &format!("input {i}"), show(ty), e))?;
        if !allowed {
            return Err(defect(
                codes::INPUT_TYPE_NOT_ALLOWED,
                At::Input(i),
                not_allowed(param, ty, show),
            ));
        }
        if param.homogeneous {
            bind(&mut bound, param, false, i, ty, &describe_binding, show)?;
        }
    }
    for (i, slot) in outputs.iter_mut().enumerate() {
        let Some(param) = schema.output_param(i) else {
            break;
        };
        if slot.is_none() {
            if let Some(only) = param.allowed.single() {
                *slot = Some(only);
            } else if let Some(b) = bound.iter().find(|b| b.var == param.type_str) {
                *slot = Some(without_shapes(&b.ty));
            }
        }
        let Some(ty) = slot.as_ref() else {
            continue;
        };
        let allowed = param
            .allowed
            .contains(ty)
            .map_err(|e| not_checkable(At::Output(i), &format!("output {i}"), show(ty), e))?;
        if !allowed {
            return Err(defect(
                codes::OUTPUT_TYPE_NOT_ALLOWED,
                At::Output(i),
                not_allowed(param, ty, show),
            ));
        }
        if param.homogeneous {
            let ty = ty.clone();
            bind(&mut bound, param, true, i, &ty, &describe_binding, show)?;
        }
    }
    Ok(())
}

fn not_allowed(param: &FormalParam, ty: &Type, show: &dyn Fn(&Type) -> String) -> String {
    let what = ty.type_str().unwrap_or_else(|_| show(ty));
    if param.type_str.contains('(') {
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
    }
}

fn bind<'s>(
    bound: &mut Vec<Binding<'s>>,
    param: &'s FormalParam,
    output: bool,
    index: usize,
    ty: &Type,
    describe: &dyn Fn(&Binding<'_>) -> String,
    show: &dyn Fn(&Type) -> String,
) -> Result<(), InferError> {
    if let Some(b) = bound.iter().find(|b| b.var == param.type_str) {
        if !b.ty.same_kind(ty) {
            let what = ty.type_str().unwrap_or_else(|_| show(ty));
            return Err(defect(
                codes::TYPE_VARIABLE_CONFLICT,
                if output {
                    At::Output(index)
                } else {
                    At::Input(index)
                },
                format!(
                    "{what} is not allowed for {}, which {}",
                    param.type_str,
                    describe(b)
                ),
            ));
        }
        return Ok(());
    }
    bound.push(Binding {
        var: &param.type_str,
        output,
        index,
        ty: ty.clone(),
    });
    Ok(())
}

/// The type with its shapes removed (onnx rebuilds a bound type from its
/// type string, which has none).
fn without_shapes(t: &Type) -> Type {
    match t {
        Type::Tensor(x) => Type::tensor(x.elem, None),
        Type::SparseTensor(x) => {
            Type::SparseTensor(crate::ir::types::TensorType::new(x.elem, None))
        }
        Type::Sequence(e) => Type::Sequence(e.as_ref().map(|e| Box::new(without_shapes(e)))),
        Type::Optional(e) => Type::Optional(e.as_ref().map(|e| Box::new(without_shapes(e)))),
        Type::Map(k, v) => Type::Map(*k, v.as_ref().map(|v| Box::new(without_shapes(v)))),
        other => other.clone(),
    }
}
