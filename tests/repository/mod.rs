//! Checks of the repository itself: its layering, the krew manifest, the release script and the
//! workflows.

pub mod krew_manifest;
pub mod layering;
pub mod release;
pub mod workflows;
