//! Python values of attributes, and short type descriptions for reprs.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use onnxfast_core::proto;
use onnxfast_core::proto::attribute_proto::AttributeType;
use onnxfast_core::proto::{tensor_shape_proto, type_proto};

use crate::lists::Wrap;
use crate::messages::{Graph, SparseTensor, Tensor, Type};
use crate::root::Ptr;

/// The attribute's type; for old models (IR < 2) that omit `type`, the kind
/// is inferred from the one value field that is set.
pub fn effective_type(a: &proto::AttributeProto) -> AttributeType {
    let declared = a.r#type();
    if declared != AttributeType::Undefined {
        return declared;
    }
    if a.f.is_some() {
        AttributeType::Float
    } else if a.i.is_some() {
        AttributeType::Int
    } else if a.s.is_some() {
        AttributeType::String
    } else if a.t().is_some() {
        AttributeType::Tensor
    } else if a.g().is_some() {
        AttributeType::Graph
    } else if a.sparse_tensor().is_some() {
        AttributeType::SparseTensor
    } else if a.tp().is_some() {
        AttributeType::TypeProto
    } else if !a.floats.is_empty() {
        AttributeType::Floats
    } else if !a.ints.is_empty() {
        AttributeType::Ints
    } else if !a.strings().is_empty() {
        AttributeType::Strings
    } else if !a.tensors().is_empty() {
        AttributeType::Tensors
    } else if !a.graphs().is_empty() {
        AttributeType::Graphs
    } else if !a.sparse_tensors().is_empty() {
        AttributeType::SparseTensors
    } else if !a.type_protos().is_empty() {
        AttributeType::TypeProtos
    } else {
        AttributeType::Undefined
    }
}

fn wrap_all<T: Wrap>(py: Python<'_>, ptr: &Ptr<Vec<T>>) -> PyResult<Py<PyAny>> {
    let items = (0..ptr.len())
        .map(|i| T::wrap(ptr.project(|v| &v[i]), py))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any().unbind())
}

/// The value of an attribute, as `onnx.helper.get_attribute_value` returns it.
pub fn attribute_value(py: Python<'_>, a: &Ptr<proto::AttributeProto>) -> PyResult<Py<PyAny>> {
    Ok(match effective_type(a) {
        AttributeType::Float => a.f().into_pyobject(py)?.into_any().unbind(),
        AttributeType::Int => a.i().into_pyobject(py)?.into_any().unbind(),
        AttributeType::String => PyBytes::new(py, a.s()).into_any().unbind(),
        AttributeType::Tensor => match a.try_project(|a| a.t()) {
            Some(t) => crate::untracked::new(py, Tensor(t.into()))?.into_any(),
            None => py.None(),
        },
        AttributeType::Graph => match a.try_project(|a| a.g()) {
            Some(g) => crate::untracked::new(py, Graph(g))?.into_any(),
            None => py.None(),
        },
        AttributeType::SparseTensor => match a.try_project(|a| a.sparse_tensor()) {
            Some(s) => crate::untracked::new(py, SparseTensor(s.into()))?.into_any(),
            None => py.None(),
        },
        AttributeType::TypeProto => match a.try_project(|a| a.tp()) {
            Some(t) => crate::untracked::new(py, Type(t))?.into_any(),
            None => py.None(),
        },
        AttributeType::Floats => PyList::new(py, &a.floats)?.into_any().unbind(),
        AttributeType::Ints => PyList::new(py, &a.ints)?.into_any().unbind(),
        AttributeType::Strings => {
            let items: Vec<_> = a.strings().iter().map(|s| PyBytes::new(py, s)).collect();
            PyList::new(py, items)?.into_any().unbind()
        }
        AttributeType::Tensors => wrap_all(py, &a.project(|a| a.tensors()))?,
        AttributeType::Graphs => wrap_all(py, &a.project(|a| a.graphs()))?,
        AttributeType::SparseTensors => wrap_all(py, &a.project(|a| a.sparse_tensors()))?,
        AttributeType::TypeProtos => wrap_all(py, &a.project(|a| a.type_protos()))?,
        AttributeType::Undefined => py.None(),
    })
}

/// `FLOAT`, `INT64`, ... or `<code>` for codes this version does not know.
pub fn data_type_name(code: i32) -> String {
    match proto::tensor_proto::DataType::try_from(code) {
        Ok(t) => t.as_str_name().to_string(),
        Err(_) => format!("<{code}>"),
    }
}

pub fn describe_dim(d: &tensor_shape_proto::Dimension) -> String {
    match &d.value {
        Some(tensor_shape_proto::dimension::Value::DimValue(v)) => v.to_string(),
        Some(tensor_shape_proto::dimension::Value::DimParam(p)) => crate::repr::quote(p),
        None => "?".to_string(),
    }
}

pub fn describe_shape(s: &proto::TensorShapeProto) -> String {
    let dims: Vec<String> = s.dim.iter().map(describe_dim).collect();
    format!("[{}]", dims.join(", "))
}

/// `FLOAT[1, 'N', ?]`, `seq(INT64[])`, `map(STRING, FLOAT[?])`, ...
pub fn describe_type(t: &proto::TypeProto) -> String {
    let mut out = String::new();
    let mut stack = vec![(t, 0usize)];
    // Iterative rendering (types can nest deeply in hostile files): each
    // entry is a type to render and the number of ')' to close after it.
    while let Some((t, closes)) = stack.pop() {
        match &t.value {
            Some(type_proto::Value::TensorType(x)) => {
                out.push_str(&data_type_name(x.elem_type()));
                out.push_str(&x.shape.as_ref().map_or("[?]".to_string(), describe_shape));
            }
            Some(type_proto::Value::SparseTensorType(x)) => {
                out.push_str("sparse ");
                out.push_str(&data_type_name(x.elem_type()));
                out.push_str(&x.shape.as_ref().map_or("[?]".to_string(), describe_shape));
            }
            Some(type_proto::Value::SequenceType(x)) => match &x.elem_type {
                Some(inner) => {
                    out.push_str("seq(");
                    stack.push((inner, closes + 1));
                    continue;
                }
                None => out.push_str("seq(?)"),
            },
            Some(type_proto::Value::OptionalType(x)) => match &x.elem_type {
                Some(inner) => {
                    out.push_str("optional(");
                    stack.push((inner, closes + 1));
                    continue;
                }
                None => out.push_str("optional(?)"),
            },
            Some(type_proto::Value::MapType(x)) => {
                out.push_str("map(");
                out.push_str(&data_type_name(x.key_type()));
                out.push_str(", ");
                match &x.value_type {
                    Some(inner) => {
                        stack.push((inner, closes + 1));
                        continue;
                    }
                    None => out.push('?'),
                }
                out.push(')');
            }
            Some(type_proto::Value::OpaqueType(x)) => {
                out.push_str("opaque(");
                out.push_str(x.domain());
                out.push_str(", ");
                out.push_str(x.name());
                out.push(')');
            }
            None => out.push('?'),
        }
        for _ in 0..closes {
            out.push(')');
        }
    }
    out
}
