//! The facade: a dump, a list page, one object, one watched object, each read through the streaming
//! reader first and the exact one when it gives up.

use std::borrow::Cow;

use super::build::{Keep, Page};
use super::error::DumpError;
use super::exact::{self, read_exactly, read_page_exactly};
use super::stream;
use crate::engine::snapshot::Snapshot;

/// Reads a dump. See the module docs.
pub fn read(bytes: &[u8]) -> Result<Snapshot, DumpError> {
    read_keeping(bytes, &Keep::default())
}

/// [`read`], keeping only the node labels `keep` keeps.
pub fn read_keeping(bytes: &[u8], keep: &Keep) -> Result<Snapshot, DumpError> {
    if let Some(list) = stream::read_list(bytes, None, true, keep)
        && matches!(list.kind.as_deref(), Some("List") | None)
        && list.has_items
    {
        return Ok(list.snapshot);
    }
    read_exactly(bytes, keep)
}

/// Reads one page of a typed list the API server returned (`kind` names its items: `Pod`, `Node`).
pub fn read_page(bytes: &[u8], kind: &str) -> Result<Page, DumpError> {
    if let Some(list) = stream::read_list(bytes, Some(kind), false, &Keep::default()) {
        let continue_token = list.metadata.and_then(|m| m.continue_).filter(|c| !c.is_empty()).map(Cow::into_owned);
        return Ok(Page { snapshot: list.snapshot, continue_token });
    }
    read_page_exactly(bytes, kind)
}

/// One object a watch decoded: the engine's view of it, and where the watch resumes.
#[derive(Debug, Default)]
pub struct Watched {
    /// The object (one Node or one Pod), built as the readers build a list's items.
    pub snapshot: Snapshot,
    /// `metadata.resourceVersion`.
    pub resource_version: Option<String>,
}

/// Decodes one object of a watch (or of an answer to a request) from `deserializer`, as an item of
/// kind `kind` unless it says otherwise: through the streaming reader and the builder, so a watched
/// object becomes exactly what the same object in a dump or a list page becomes.
///
/// With `owners`, a pod's controller is read too (`metadata.ownerReferences`); without, it is
/// skipped unread.
///
/// # Errors
/// A value of the wrong shape, or a field the builder refuses (a missing name, a time that is not
/// RFC 3339), in the deserializer's error.
pub fn read_watched<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
    kind: &str,
    owners: bool,
) -> Result<Watched, D::Error> {
    let (snapshot, version) = stream::read_item(deserializer, kind, owners)?;
    Ok(Watched { snapshot, resource_version: version.map(Cow::into_owned) })
}

/// Reads one object the API server returned (a Node, a Pod or a Lease).
pub fn read_object(bytes: &[u8], kind: &str) -> Result<Snapshot, DumpError> {
    exact::read_object(bytes, kind)
}
