//! The engine's own compact model of nodes, pods, taints and tolerations.
//!
//! Adapters convert API objects into these types at the boundary (`decode`, `cluster`), so the
//! engine never sees JSON or k8s-openapi types. Identifiers are newtypes over `Arc<str>`: they are
//! cloned into every action and index, and a clone is a reference-count bump.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use super::time::Timestamp;

/// A node's name.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeName(Arc<str>);

impl NodeName {
    /// The name as written in `metadata.name`.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for NodeName {
    /// A set of names looked up by text: `Arc<str>` hashes and compares as its text.
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for NodeName {
    fn from(name: &str) -> Self {
        Self(name.into())
    }
}

impl From<String> for NodeName {
    fn from(name: String) -> Self {
        Self(name.into())
    }
}

impl fmt::Display for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.0)
    }
}

/// A pod's identity for the eviction queue: namespace and name, as upstream keys its work.
///
/// The UID is deliberately not part of the key (upstream `NamespacedName`); it travels beside it in
/// [`PodRef`] so a deletion can name it as a precondition.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PodKey {
    namespace: Arc<str>,
    name: Arc<str>,
}

impl PodKey {
    /// The key of pod `name` in `namespace`.
    #[must_use]
    pub fn new(namespace: impl Into<Arc<str>>, name: impl Into<Arc<str>>) -> Self {
        Self { namespace: namespace.into(), name: name.into() }
    }

    /// The pod's namespace.
    #[must_use]
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The pod's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The namespace and the name, as shared strings.
    pub(super) fn into_parts(self) -> (Arc<str>, Arc<str>) {
        (self.namespace, self.name)
    }

    /// The namespace, as the shared string it is.
    pub(crate) fn namespace_arc(&self) -> &Arc<str> {
        &self.namespace
    }

    /// Holds `namespace`, an equal copy of the key's namespace, instead of its own.
    pub(crate) fn share_namespace(&mut self, namespace: &Arc<str>) {
        debug_assert_eq!(*self.namespace, **namespace);
        self.namespace = Arc::clone(namespace);
    }
}

impl fmt::Display for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

impl fmt::Debug for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// A pod's `metadata.uid`.
///
/// The API server writes UIDs as UUIDs, 36 characters. A UID of up to 38 bytes is kept in the value
/// itself, which saves the engine a string allocation per pod; a longer one is shared.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Uid(UidRepr);

/// The longest UID kept inline: what fits beside the length byte in the space of the enum.
const INLINE_UID: usize = 38;

#[derive(Clone, PartialEq, Eq, Hash)]
enum UidRepr {
    /// The first `len` bytes of `bytes` (the rest are zero).
    Inline { len: u8, bytes: [u8; INLINE_UID] },
    /// A longer UID.
    Shared(Arc<str>),
}

impl Uid {
    /// The UID as written.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            UidRepr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).expect("the inline bytes are a whole &str")
            }
            UidRepr::Shared(text) => text,
        }
    }

    /// The UID `text`, inline when it fits.
    fn inline(text: &str) -> Option<Self> {
        let len = u8::try_from(text.len()).ok().filter(|&len| usize::from(len) <= INLINE_UID)?;
        let mut bytes = [0; INLINE_UID];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Some(Self(UidRepr::Inline { len, bytes }))
    }
}

impl Default for Uid {
    fn default() -> Self {
        Self(UidRepr::Inline { len: 0, bytes: [0; INLINE_UID] })
    }
}

impl From<&str> for Uid {
    fn from(uid: &str) -> Self {
        Self::inline(uid).unwrap_or_else(|| Self(UidRepr::Shared(uid.into())))
    }
}

impl From<String> for Uid {
    fn from(uid: String) -> Self {
        Self::inline(&uid).unwrap_or_else(|| Self(UidRepr::Shared(uid.into())))
    }
}

impl Ord for Uid {
    /// The order of the texts.
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for Uid {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// A pod as a decision needs it, plus the UID its deletion is conditioned on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PodRef {
    /// Namespace and name: the queue key.
    pub key: PodKey,
    /// The UID of the pod the decision was made for.
    pub uid: Uid,
    /// The node the pod is bound to.
    pub node: NodeName,
}

/// A taint or toleration effect.
///
/// Effects compare exactly as written: an invalid spelling such as `noexecute` is kept in
/// [`Effect::Other`] and matches nothing but itself, as upstream's string comparison does.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Effect {
    /// `NoSchedule`.
    NoSchedule,
    /// `PreferNoSchedule`.
    PreferNoSchedule,
    /// `NoExecute`: the only effect the eviction engine acts on.
    NoExecute,
    /// Any other (invalid) spelling, kept verbatim (boxed: a thin pointer keeps the effect at 16
    /// bytes, in every taint and toleration).
    Other(Box<String>),
}

impl Effect {
    /// The effect as the API spells it.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::NoSchedule => "NoSchedule",
            Self::PreferNoSchedule => "PreferNoSchedule",
            Self::NoExecute => "NoExecute",
            Self::Other(other) => other,
        }
    }
}

impl From<&str> for Effect {
    fn from(effect: &str) -> Self {
        match effect {
            "NoSchedule" => Self::NoSchedule,
            "PreferNoSchedule" => Self::PreferNoSchedule,
            "NoExecute" => Self::NoExecute,
            other => Self::Other(Box::new(other.to_owned())),
        }
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A toleration operator.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Operator {
    /// `Equal`, or the empty string (its default): the values must be equal.
    Equal,
    /// `Exists`: any value matches, the toleration's own value is ignored.
    Exists,
    /// Anything else, including `Lt`/`Gt` (alpha in 1.35, off by default) and misspellings such as
    /// `exists`: matches no taint (boxed as [`Effect::Other`] is).
    Other(Box<String>),
}

impl Operator {
    /// The operator as the API spells it (`Equal` for the empty default).
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Equal => "Equal",
            Self::Exists => "Exists",
            Self::Other(other) => other,
        }
    }
}

impl From<&str> for Operator {
    fn from(operator: &str) -> Self {
        match operator {
            "" | "Equal" => Self::Equal,
            "Exists" => Self::Exists,
            other => Self::Other(Box::new(other.to_owned())),
        }
    }
}

/// A node taint (`spec.taints[]`).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Taint {
    /// `key`.
    pub key: Box<str>,
    /// `value` (empty when absent).
    pub value: Box<str>,
    /// `effect`.
    pub effect: Effect,
    /// `timeAdded`, when the writer set it.
    pub time_added: Option<Timestamp>,
}

impl Taint {
    /// A taint without `timeAdded`.
    #[must_use]
    pub fn new(key: impl Into<Box<str>>, value: impl Into<Box<str>>, effect: Effect) -> Self {
        Self { key: key.into(), value: value.into(), effect, time_added: None }
    }

    /// The same taint with `timeAdded` set.
    #[must_use]
    pub fn with_time_added(mut self, at: Timestamp) -> Self {
        self.time_added = Some(at);
        self
    }

    /// Whether this is a `NoExecute` taint, the only kind the engine acts on.
    #[must_use]
    pub fn is_no_execute(&self) -> bool {
        self.effect == Effect::NoExecute
    }
}

impl fmt::Display for Taint {
    /// kubectl's notation: `key=value:Effect`, or `key:Effect` for an empty value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}:{}", self.key, self.effect)
        } else {
            write!(f, "{}={}:{}", self.key, self.value, self.effect)
        }
    }
}

/// A pod toleration (`spec.tolerations[]`), kept exactly as written: the matcher does not validate.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Toleration {
    /// `key`; empty matches every key.
    pub key: Box<str>,
    /// `operator`.
    pub operator: Operator,
    /// `value`.
    pub value: Box<str>,
    /// `effect`; `None` (empty) matches every effect.
    pub effect: Option<Effect>,
    /// `tolerationSeconds`: `None` means forever, `<= 0` means at once.
    pub seconds: Option<i64>,
}

impl fmt::Display for Toleration {
    /// A compact, kubectl-like notation: `key=value:Effect for 300s`, `key:Effect (Exists)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = if self.key.is_empty() { "*" } else { &self.key };
        match &self.operator {
            Operator::Exists => write!(f, "{key}")?,
            Operator::Equal => write!(f, "{key}={}", self.value)?,
            Operator::Other(op) => write!(f, "{key} {op} {}", self.value)?,
        }
        match &self.effect {
            Some(effect) => write!(f, ":{effect}")?,
            None => f.write_str(":*")?,
        }
        match self.seconds {
            Some(seconds) => write!(f, " for {seconds}s"),
            None => Ok(()),
        }
    }
}

/// The `NoExecute` taints of `taints`, in order: the list itself when every taint is one.
#[must_use]
pub fn no_execute(taints: Arc<[Taint]>) -> Arc<[Taint]> {
    if taints.iter().all(Taint::is_no_execute) {
        taints
    } else {
        taints.iter().filter(|taint| taint.is_no_execute()).cloned().collect()
    }
}

/// A node as the engine sees it: its name and taints (in the node's order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// `metadata.name`.
    pub name: NodeName,
    /// `spec.taints`, every effect, in order; the engine keeps only the `NoExecute` ones (the list
    /// itself when they are all `NoExecute`: a list is shared, never copied, by whoever holds it).
    pub taints: Arc<[Taint]>,
}

/// A pod as the engine sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pod {
    /// Namespace and name.
    pub key: PodKey,
    /// `metadata.uid`.
    pub uid: Uid,
    /// `spec.nodeName`; `None` while unscheduled.
    pub node: Option<NodeName>,
    /// `spec.tolerations`, in order. Shared: many pods carry the same list.
    pub tolerations: Arc<[Toleration]>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_reads_back_as_written_inline_or_shared() {
        let long = "x".repeat(INLINE_UID + 1);
        for text in [
            "6f1c2a4e-0b7d-4c1e-9f3a-5d8e7b6a4c21",
            "6F1C2A4E-0B7D-4C1E-9F3A-5D8E7B6A4C21",
            "u1",
            "",
            "zoné-\u{202e}",
            &"y".repeat(INLINE_UID),
            &long,
        ] {
            let uid = Uid::from(text);
            assert_eq!(uid.as_str(), text);
            assert_eq!(uid.to_string(), text);
            assert_eq!(format!("{uid:?}"), format!("{text:?}"));
            assert_eq!(Uid::from(text.to_owned()), uid);
        }
        assert!(matches!(Uid::from("6f1c2a4e-0b7d-4c1e-9f3a-5d8e7b6a4c21").0, UidRepr::Inline { .. }));
        assert!(matches!(Uid::from(long.as_str()).0, UidRepr::Shared(_)));
        assert_eq!(Uid::default(), Uid::from(""));
    }

    #[test]
    fn taints_and_tolerations_hold_no_more_than_their_fields() {
        // A dump can hold hundreds of thousands of each: 88 and 112 bytes before their keys were
        // boxed strings and their effects and operators thin.
        assert_eq!(size_of::<Effect>(), 16);
        assert_eq!(size_of::<Operator>(), 16);
        assert_eq!(size_of::<Option<Effect>>(), 16);
        assert_eq!(size_of::<Taint>(), 64);
        assert_eq!(size_of::<Toleration>(), 80);
        assert_eq!(Effect::from("noexecute"), Effect::Other(Box::new("noexecute".to_owned())));
        assert_eq!(Effect::from("noexecute").as_str(), "noexecute");
        assert_eq!(Operator::from("exists").as_str(), "exists");
    }

    #[test]
    fn uids_order_as_their_texts() {
        let texts = [
            "",
            "0",
            "00000000-0000-0000-0000-000000000000",
            "00000000-0000-0000-0000-000000000001",
            "0000000a-0000-0000-0000-000000000000",
            "6f1c2a4e-0b7d-4c1e-9f3a-5d8e7b6a4c21",
            "6f1c2a4e-0b7d-4c1e-9f3a-5d8e7b6a4c21x",
            "6f1c2a4e-0b7d-4c1e-9f3a-5d8e7b6a4c21-and-more-than-fits",
            "6f1c2a4f-0000-0000-0000-000000000000",
            "A",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
            "u1",
        ];
        for a in texts {
            for b in texts {
                assert_eq!(Uid::from(a).cmp(&Uid::from(b)), a.cmp(b), "{a:?} vs {b:?}");
                assert_eq!(Uid::from(a) == Uid::from(b), a == b, "{a:?} vs {b:?}");
            }
        }
    }
}
