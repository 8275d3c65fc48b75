//! The engine's own compact model of nodes, pods, taints and tolerations.
//!
//! Adapters convert API objects into these types at the boundary (`decode`, `cluster`), so the
//! engine never sees JSON or k8s-openapi types. Identifiers are newtypes over `Arc<str>`: they are
//! cloned into every action and index, and a clone is a reference-count bump.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use super::text::CompactStr;
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
    pub fn namespace_arc(&self) -> &Arc<str> {
        &self.namespace
    }

    /// Holds `namespace`, an equal copy of the key's namespace, instead of its own (a decoder reading
    /// many pods of one namespace keeps one copy of its name).
    pub fn share_namespace(&mut self, namespace: &Arc<str>) {
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
/// The API server writes UIDs as UUIDs: 36 characters of lowercase hex and dashes, kept as their 16
/// bytes. Any other UID of up to 22 bytes is kept in the value itself, a longer one is shared: a UID
/// takes 24 bytes in every pod, plan and decision, and no allocation when it is a UUID.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Uid(UidRepr);

/// The longest UID kept inline: what fits beside the length byte in the space of the enum.
const INLINE_UID: usize = 22;

/// The length of a UUID's text: `8-4-4-4-12` hex digits.
const UUID_TEXT: usize = 36;

/// Where a UUID's text has its dashes.
const UUID_DASHES: [usize; 4] = [8, 13, 18, 23];

/// Every UID has one representation (a lowercase UUID is always [`UidRepr::Uuid`]), so the derived
/// equality and hash are those of the texts.
#[derive(Clone, PartialEq, Eq, Hash)]
enum UidRepr {
    /// A UUID written in lowercase, as its 16 bytes.
    Uuid([u8; 16]),
    /// The first `len` bytes of `bytes` (the rest are zero).
    Inline { len: u8, bytes: [u8; INLINE_UID] },
    /// A longer UID.
    Shared(Arc<str>),
}

/// A [`Uid`]'s text, borrowed or written out from its bytes: [`UidText::as_str`] reads it.
pub struct UidText<'a>(UidTextRepr<'a>);

enum UidTextRepr<'a> {
    Borrowed(&'a str),
    Uuid([u8; UUID_TEXT]),
}

impl UidText<'_> {
    /// The text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            UidTextRepr::Borrowed(text) => text,
            // Hex digits and dashes: always ASCII, so the fallback is never taken.
            UidTextRepr::Uuid(text) => std::str::from_utf8(text).unwrap_or_default(),
        }
    }
}

impl Uid {
    /// The UID as written.
    #[must_use]
    pub fn text(&self) -> UidText<'_> {
        UidText(match &self.0 {
            UidRepr::Uuid(bytes) => UidTextRepr::Uuid(uuid_text(bytes)),
            // Whole `&str`s were copied in: the fallback is never taken.
            UidRepr::Inline { len, bytes } => {
                UidTextRepr::Borrowed(std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default())
            }
            UidRepr::Shared(text) => UidTextRepr::Borrowed(text),
        })
    }

    /// The UID `text`, in place when it is a lowercase UUID or fits.
    fn in_place(text: &str) -> Option<Self> {
        if let Some(bytes) = uuid_bytes(text) {
            return Some(Self(UidRepr::Uuid(bytes)));
        }
        let len = u8::try_from(text.len()).ok().filter(|&len| usize::from(len) <= INLINE_UID)?;
        let mut bytes = [0; INLINE_UID];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Some(Self(UidRepr::Inline { len, bytes }))
    }
}

/// The 16 bytes of `text` when it is a UUID in lowercase.
fn uuid_bytes(text: &str) -> Option<[u8; 16]> {
    let text = text.as_bytes();
    if text.len() != UUID_TEXT || UUID_DASHES.iter().any(|&at| text[at] != b'-') {
        return None;
    }
    let mut digits = text.iter().enumerate().filter(|(at, _)| !UUID_DASHES.contains(at)).map(|(_, &c)| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    });
    let mut bytes = [0; 16];
    for byte in &mut bytes {
        *byte = (digits.next()?? << 4) | digits.next()??;
    }
    Some(bytes)
}

/// The text of a UUID's 16 bytes, in lowercase.
fn uuid_text(bytes: &[u8; 16]) -> [u8; UUID_TEXT] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = [b'-'; UUID_TEXT];
    let mut digits = bytes.iter().flat_map(|&byte| [HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 15)]]);
    for (at, c) in text.iter_mut().enumerate() {
        if !UUID_DASHES.contains(&at) {
            *c = digits.next().unwrap_or(b'0');
        }
    }
    text
}

impl Default for Uid {
    fn default() -> Self {
        Self(UidRepr::Inline { len: 0, bytes: [0; INLINE_UID] })
    }
}

impl From<&str> for Uid {
    fn from(uid: &str) -> Self {
        Self::in_place(uid).unwrap_or_else(|| Self(UidRepr::Shared(uid.into())))
    }
}

impl From<String> for Uid {
    fn from(uid: String) -> Self {
        Self::in_place(&uid).unwrap_or_else(|| Self(UidRepr::Shared(uid.into())))
    }
}

impl Ord for Uid {
    /// The order of the texts (which two UUIDs' bytes have: `0-9` sort before `a-f`).
    fn cmp(&self, other: &Self) -> Ordering {
        match (&self.0, &other.0) {
            (UidRepr::Uuid(a), UidRepr::Uuid(b)) => a.cmp(b),
            _ => self.text().as_str().cmp(other.text().as_str()),
        }
    }
}

impl PartialOrd for Uid {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text().as_str())
    }
}

impl fmt::Debug for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.text().as_str())
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
    /// `Lt` (1.35+, gate `TaintTolerationComparisonOperators`): the taint's value, as an integer, is
    /// less than the toleration's. With the gate off, read it as [`Operator::Other`]
    /// ([`gate_comparison_operators`]).
    Lt,
    /// `Gt` (1.35+, same gate): the taint's value, as an integer, is greater than the toleration's.
    Gt,
    /// Anything else, misspellings such as `exists` included: matches no taint (boxed as
    /// [`Effect::Other`] is).
    Other(Box<String>),
}

impl Operator {
    /// The operator as the API spells it (`Equal` for the empty default).
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Equal => "Equal",
            Self::Exists => "Exists",
            Self::Lt => "Lt",
            Self::Gt => "Gt",
            Self::Other(other) => other,
        }
    }

    /// Whether this is `Lt` or `Gt`, the comparison operators.
    #[must_use]
    pub fn compares(&self) -> bool {
        matches!(self, Self::Lt | Self::Gt)
    }
}

impl From<&str> for Operator {
    fn from(operator: &str) -> Self {
        match operator {
            "" | "Equal" => Self::Equal,
            "Exists" => Self::Exists,
            "Lt" => Self::Lt,
            "Gt" => Self::Gt,
            other => Self::Other(Box::new(other.to_owned())),
        }
    }
}

/// A node taint (`spec.taints[]`).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Taint {
    /// `key`.
    pub key: CompactStr,
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
    pub fn new(key: impl Into<CompactStr>, value: impl Into<Box<str>>, effect: Effect) -> Self {
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
    pub key: CompactStr,
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
            operator => write!(f, "{key} {} {}", operator.as_str(), self.value)?,
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

/// `tolerations` as kube-controller-manager reads them with its `TaintTolerationComparisonOperators`
/// gate `enabled`: on, as they are; off, `Lt` and `Gt` are operators it does not know, which match
/// nothing (upstream's `ToleratesTaint` takes the gate as an argument; here it is applied to the
/// input, so that the engine has one matcher). `None` when nothing changes.
#[must_use]
pub fn gate_comparison_operators(tolerations: &[Toleration], enabled: bool) -> Option<Arc<[Toleration]>> {
    if enabled || !tolerations.iter().any(|t| t.operator.compares()) {
        return None;
    }
    let gated = tolerations.iter().map(|t| {
        let mut t = t.clone();
        if t.operator.compares() {
            t.operator = Operator::Other(Box::new(t.operator.as_str().to_owned()));
        }
        t
    });
    Some(gated.collect())
}

/// The `NoExecute` taints of `taints`, in order: the list itself when every taint is one.
#[must_use]
pub fn no_execute(taints: Arc<[Taint]>) -> Arc<[Taint]> {
    if taints.iter().all(Taint::is_no_execute) {
        taints
    } else {
        shared_list(taints.iter().filter(|taint| taint.is_no_execute()).cloned().collect())
    }
}

/// `list` as a shared list; an empty one allocates nothing (an empty list collected into an `Arc`
/// allocates its header: most nodes have no taints).
#[must_use]
pub fn shared_list<T>(list: Vec<T>) -> Arc<[T]> {
    if list.is_empty() { Arc::default() } else { list.into() }
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
    use std::hash::BuildHasher;

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
            assert_eq!(uid.text().as_str(), text);
            assert_eq!(uid.to_string(), text);
            assert_eq!(format!("{uid:?}"), format!("{text:?}"));
            assert_eq!(Uid::from(text.to_owned()), uid);
        }
        assert!(matches!(Uid::from("6f1c2a4e-0b7d-4c1e-9f3a-5d8e7b6a4c21").0, UidRepr::Uuid(_)));
        assert!(matches!(Uid::from("6F1C2A4E-0B7D-4C1E-9F3A-5D8E7B6A4C21").0, UidRepr::Shared(_)));
        assert!(matches!(Uid::from("6f1c2a4e-0b7d-4c1e-9f3a-5d8e7b6a4c2g").0, UidRepr::Shared(_)));
        assert!(matches!(Uid::from("6f1c2a4e-0b7d-4c1e-9f3a+5d8e7b6a4c21").0, UidRepr::Shared(_)));
        assert!(matches!(Uid::from(&*"y".repeat(INLINE_UID)).0, UidRepr::Inline { .. }));
        assert!(matches!(Uid::from(long.as_str()).0, UidRepr::Shared(_)));
        assert_eq!(size_of::<Uid>(), 24);
        assert_eq!(Uid::default(), Uid::from(""));
    }

    proptest::proptest! {
        /// UUIDs in either case, near-UUIDs and short and long texts: every UID reads back as written,
        /// and compares and hashes as its text.
        #[test]
        fn uids_behave_as_their_texts(
            a in "[0-9a-fA-F]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f-]{35,37}|.{0,40}",
            b in "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-z]{0,24}",
            key in proptest::prelude::any::<[u64; 2]>(),
        ) {
            let (x, y) = (Uid::from(a.as_str()), Uid::from(b.as_str()));
            let text = x.text();
            proptest::prop_assert_eq!(text.as_str(), a.as_str());
            proptest::prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            proptest::prop_assert_eq!(x == y, a == b);
            proptest::prop_assert_eq!(x.clone(), Uid::from(a.clone()));
            let state = crate::hash::Keyed::new(crate::hash::HashKey(key));
            if a == b {
                proptest::prop_assert_eq!(state.hash_one(&x), state.hash_one(&y));
            }
        }
    }

    #[test]
    fn taints_and_tolerations_hold_no_more_than_their_fields() {
        // A dump can hold hundreds of thousands of each: 88 and 112 bytes before their keys were
        // boxed strings and their effects and operators thin; 64 and 80 while their keys were
        // boxed (each with a block of 32 bytes or more of its own) before they were kept in place.
        assert_eq!(size_of::<Effect>(), 16);
        assert_eq!(size_of::<Operator>(), 16);
        assert_eq!(size_of::<Option<Effect>>(), 16);
        assert_eq!(size_of::<Taint>(), 72);
        assert_eq!(size_of::<Toleration>(), 88);
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
