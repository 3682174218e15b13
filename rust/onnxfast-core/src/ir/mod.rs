//! The model as a graph: traversal of every tensor, lexical scopes and the
//! def-use index that the checker, the inference engine and the binding
//! share.

pub mod defuse;
pub mod evaluate;
mod scope;
pub mod symbolic;
pub mod types;
pub mod view;
pub mod visit;

pub use defuse::{Declared, Def, DefUse, DefUseBuilder, Key};
pub(crate) use scope::Scope;
