//! `record`: what the taint-eviction decisions depend on, written as it changes into files of JSON
//! lines for `review` (docs/review.md, "The record"): the lines ([`lines`]), the files ([`files`]),
//! the loop that feeds them from the watches ([`command`]).

mod command;
pub mod files;
pub mod lines;

pub use command::record;
