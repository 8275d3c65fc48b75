//! The command line: clap definitions (the single source of truth for help and completions), value
//! parsers, and dispatch to one file per command. This is the low level, as close to the flags as
//! can be; [`config`] turns it into the validated configs the commands take.
//!
//! Owns: the flags, their validation, and the glue of each command. Uses: every other module.

mod args;
mod audit;
pub mod complete;
pub mod config;
mod dispatch;
mod manifests;
pub mod plan;
pub mod prepare;
pub mod profile;
mod records;
mod review;

pub use args::*;
pub use complete::COMPLETE;
pub use dispatch::run;
