//! What `plan`, `explain` and `audit` share before each answers: the input read (`input`), the
//! evaluation instant (`instant`), the node lifecycle controller's settings (`settings`) and its
//! prediction (`foresee`), the DRA objects (`devices`), in the order `prepared` takes them.

mod devices;
mod foresee;
pub mod input;
mod instant;
pub mod prepared;
mod settings;
