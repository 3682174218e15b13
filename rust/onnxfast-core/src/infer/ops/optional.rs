//! Rules of onnx's `optional` family: wrapping a value in an optional,
//! testing and unwrapping it.

use super::controlflow::elem_type_from_input;
use super::{onnx, Entry};
use crate::diag::codes;
use crate::infer::context::{defect, At, InferResult, NodeCtx};
use crate::infer::util::bad_attr;
use crate::ir::types::{Dims, Type};

/// Optional: the input's type, else the `type` attribute's, wrapped.
fn optional(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let elem = match (ctx.n_inputs(), ctx.attr("type")) {
        (0, Some(a)) => {
            let Some(tp) = a.tp() else {
                return Err(bad_attr("type", "the attribute 'type' holds no type"));
            };
            ctx.type_from_proto(tp)
        }
        // An empty input name counts as an input without a type.
        (1, _) => Some(ctx.need(0)?.clone()),
        _ => {
            return Err(defect(
                codes::MISSING_INPUT_TYPE,
                At::Node,
                "Optional needs an input or the attribute 'type' to know its element type",
            ))
        }
    };
    ctx.set(0, Type::Optional(elem.map(Box::new)));
    Ok(())
}

/// OptionalHasElement: a boolean scalar.
fn optional_has_element(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    ctx.set_tensor(0, 9, Some(Dims::new()));
    Ok(())
}

fn not_optional_elem(i: usize) -> crate::infer::context::InferError {
    defect(
        codes::MISSING_INPUT_TYPE,
        At::Input(i),
        format!("input {i} is an optional without element type"),
    )
}

/// OptionalGetElement-15: the element type of an optional input.
fn optional_get_element_15(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    match ctx.need(0)? {
        Type::Optional(Some(e)) => {
            let e = (**e).clone();
            ctx.set(0, e);
            Ok(())
        }
        Type::Optional(None) => Err(not_optional_elem(0)),
        other => Err(defect(
            codes::INPUT_KIND,
            At::Input(0),
            format!(
                "OptionalGetElement-15 takes an optional, input 0 is a {}",
                other.kind_name()
            ),
        )),
    }
}

/// OptionalGetElement-18 and later: an optional's element type, or the
/// input's own type for a tensor or sequence.
fn optional_get_element_18(ctx: &mut NodeCtx<'_, '_>) -> InferResult {
    let input = ctx.need(0)?;
    match input {
        Type::Optional(Some(e)) => {
            ctx.set(0, (**e).clone());
            return Ok(());
        }
        Type::Optional(None) => return Err(not_optional_elem(0)),
        _ => {}
    }
    // onnx's propagateShapeAndTypeFromFirstInput: the element type(s),
    // then the shape when there is one; the whole type in the end.
    if elem_type_from_input(ctx, 0)?.is_some() {
        ctx.set(0, input.clone());
    }
    Ok(())
}

pub const OPS: &[Entry] = &[
    onnx("Optional", 15, 28, optional),
    onnx("OptionalGetElement", 15, 15, optional_get_element_15),
    onnx("OptionalGetElement", 18, 28, optional_get_element_18),
    onnx("OptionalHasElement", 15, 28, optional_has_element),
];
