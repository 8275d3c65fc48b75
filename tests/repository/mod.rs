//! Checks of the repository itself: its layering, the krew manifest, the release script, the
//! workflows and the words the docs define.

pub mod krew_manifest;
pub mod layering;
pub mod release;
pub mod words;
pub mod workflows;
