//! The model as a graph: traversal of every tensor, lexical scopes, the
//! def-use index that the checker, the inference engine and the binding
//! share, and what reads it at given sizes (dims' values, memory plans).

pub mod defuse;
pub mod evaluate;
pub mod memory;
mod scope;
pub mod symbolic;
pub mod types;
pub mod view;
pub mod visit;

pub use defuse::{Declared, Def, DefUse, DefUseBuilder, Key};
pub(crate) use scope::Scope;
