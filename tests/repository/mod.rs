//! Checks of the repository itself: its layering, what its comments and docs cite, the krew manifest,
//! the release script, the workflows and the words the docs define.

pub mod citations;
pub mod krew_manifest;
pub mod layering;
pub mod release;
pub mod words;
pub mod workflows;
