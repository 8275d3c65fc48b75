//! The DRA objects the device-taint controller reads, and its decision for one pod from them.

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::{Effect, Operator, PodKey, Taint, Toleration, Uid};
use crate::time::{NANOS_PER_SECOND, Timestamp};

/// The oldest minor version with the controller (alpha in 1.33).
pub const FIRST_MINOR: u32 = 33;

/// The newest minor version whose controller is modelled (1.37: device taints GA).
pub const NEWEST_MINOR: u32 = 37;

/// A device: its driver, its pool and its name, as an allocation result names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceId {
    /// `driver`.
    pub driver: Arc<str>,
    /// `pool`.
    pub pool: Arc<str>,
    /// `device`.
    pub device: Arc<str>,
}

impl std::fmt::Display for DeviceId {
    /// `driver/pool/device`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.driver, self.pool, self.device)
    }
}

/// A ResourceSlice, as far as the controller reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Slice {
    /// `metadata.name`.
    pub name: Arc<str>,
    /// `spec.driver`.
    pub driver: Arc<str>,
    /// `spec.pool.name`.
    pub pool: Arc<str>,
    /// `spec.pool.generation`.
    pub generation: i64,
    /// `spec.devices[]`, in order.
    pub devices: Vec<SliceDevice>,
}

/// A device a slice publishes, with its taints (`taints`, or `basic.taints` before v1beta2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SliceDevice {
    /// `name`.
    pub name: Arc<str>,
    /// Its taints, every effect.
    pub taints: Vec<Taint>,
}

/// A DeviceTaintRule (cluster-scoped): one taint on the devices its selector picks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// `metadata.name`.
    pub name: Arc<str>,
    /// `spec.deviceSelector`; `None` selects nothing.
    pub selector: Option<RuleSelector>,
    /// `spec.taint`.
    pub taint: Taint,
}

/// `spec.deviceSelector`: each field set must equal the device's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleSelector {
    /// `driver`.
    pub driver: Option<Arc<str>>,
    /// `pool`.
    pub pool: Option<Arc<str>>,
    /// `device`.
    pub device: Option<Arc<str>>,
    /// `deviceClassName` or CEL `selectors` are set (v1alpha3, 1.33–1.34): they need the device's
    /// attributes, which are not read; removed from the API in 1.35.
    pub unevaluated: bool,
}

impl RuleSelector {
    fn selects(&self, device: &DeviceId) -> bool {
        let equal = |field: &Option<Arc<str>>, value: &Arc<str>| field.as_ref().is_none_or(|f| f == value);
        equal(&self.driver, &device.driver) && equal(&self.pool, &device.pool) && equal(&self.device, &device.device)
    }
}

/// A ResourceClaim, as far as the controller reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Claim {
    /// `metadata.namespace`.
    pub namespace: Arc<str>,
    /// `metadata.name`.
    pub name: Arc<str>,
    /// The UID of its controller `ownerReference`.
    pub owner: Option<Uid>,
    /// `status.allocation.devices.results[]`; `None` when not allocated.
    pub allocation: Option<Vec<Allocated>>,
    /// `status.reservedFor[]`: who uses the claim.
    pub reserved_for: Vec<Consumer>,
    /// How many tolerations the claim's requests write (`spec.devices.requests[]`): the controller
    /// reads only the allocation result's copy.
    pub requested_tolerations: usize,
}

/// One entry of a claim's `status.reservedFor`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Consumer {
    /// `resource` (`pods` for a pod).
    pub resource: Arc<str>,
    /// `name`.
    pub name: Arc<str>,
    /// `uid`: what the controller compares.
    pub uid: Uid,
}

impl Consumer {
    /// The pod `name` with `uid`.
    #[must_use]
    pub fn pod(name: &str, uid: Uid) -> Self {
        Self { resource: "pods".into(), name: name.into(), uid }
    }
}

/// One allocated device of a claim (`status.allocation.devices.results[]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocated {
    /// `request`.
    pub request: Arc<str>,
    /// `driver`, `pool`, `device`.
    pub device: DeviceId,
    /// `tolerations`: the copy the scheduler made of the request's (1.35+; never before).
    pub tolerations: Vec<Toleration>,
}

/// How a pod names a claim (`spec.resourceClaims[]`, or the extended resources' claim).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// `resourceClaimName`: that claim, no owner check.
    Name,
    /// `resourceClaimTemplateName`: the claim `status.resourceClaimStatuses` names, owned by the pod.
    Template,
    /// `status.extendedResourceClaimStatus` (1.37+), owned by the pod.
    Extended,
}

/// One claim a pod uses, as its spec and status name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimUse {
    /// `spec.resourceClaims[].name` (the extended resources' claim: `extended resources`).
    pub entry: Arc<str>,
    /// The claim's name; `None` when the template's claim is not (yet) named in the status.
    pub claim: Option<Arc<str>>,
    /// How it was named.
    pub via: Via,
}

/// The DRA objects read beside the nodes and pods.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Devices {
    /// Every ResourceSlice read.
    pub slices: Vec<Slice>,
    /// Every ResourceClaim read.
    pub claims: Vec<Claim>,
    /// Every DeviceTaintRule read.
    pub rules: Vec<Rule>,
    /// The claims each pod uses, for the pods that use any.
    pub uses: HashMap<PodKey, Vec<ClaimUse>>,
}

impl Devices {
    /// Adds `other`'s objects (another group of the same dump).
    pub fn merge(&mut self, other: Devices) {
        self.slices.extend(other.slices);
        self.claims.extend(other.claims);
        self.rules.extend(other.rules);
        self.uses.extend(other.uses);
    }
}

/// Where a device taint was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// The driver published it in the device's ResourceSlice.
    ResourceSlice,
    /// An admin's DeviceTaintRule selects the device.
    DeviceTaintRule,
}

impl SourceKind {
    /// The object's kind.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ResourceSlice => "ResourceSlice",
            Self::DeviceTaintRule => "DeviceTaintRule",
        }
    }
}

/// How a claim's tolerations meet one device taint (docs/device-taints.md, "The rules":
/// `no-execute-tolerations-only` to `smallest-seconds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceTolerance {
    /// No `NoExecute` toleration matches: deleted at `timeAdded`.
    Untolerated,
    /// The smallest matching `tolerationSeconds`, as written: deleted that long after `timeAdded`.
    For(i64),
    /// A matching toleration has no `tolerationSeconds`: the taint is ignored.
    Forever,
}

/// One `NoExecute` taint on a device a pod's claim holds, and what it means for the pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceEviction {
    /// The device.
    pub device: DeviceId,
    /// The claim that holds it (in the pod's namespace).
    pub claim: Arc<str>,
    /// The request it was allocated for.
    pub request: Arc<str>,
    /// The taint.
    pub taint: Taint,
    /// Where the taint was set.
    pub source: SourceKind,
    /// The slice or rule's name.
    pub source_name: Arc<str>,
    /// How the claim's tolerations meet it.
    pub tolerance: DeviceTolerance,
    /// When the pod is deleted for it: `timeAdded` plus the tolerated time; `None` when tolerated
    /// forever, or the taint has no `timeAdded` (`no-time-added`: upstream then ignores it, or fails).
    pub deadline: Option<Timestamp>,
    /// Tolerations with no effect would match the taint: the controller reads only `NoExecute` ones
    /// (`no-execute-tolerations-only`), so they did not count.
    pub effectless_ignored: bool,
    /// The claim's requests write tolerations the allocation result does not hold (the scheduler
    /// copied none before 1.35), and none matched: what the controller read decided.
    pub uncopied: bool,
}

/// Why a claim a pod names does not count for it (`claims-that-count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skipped {
    /// A template's claim not named in `status.resourceClaimStatuses`.
    Unnamed,
    /// No such claim in the pod's namespace.
    NotFound,
    /// The claim has no allocation.
    NotAllocated,
    /// The claim's controller owner is not the pod.
    NotOwned,
    /// `status.reservedFor` does not hold the pod's UID.
    NotReserved,
    /// The extended resources' claim, which the controller reads from 1.37 on.
    NotRead,
}

impl Skipped {
    /// Why, in words.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unnamed => "its claim is not named in status.resourceClaimStatuses",
            Self::NotFound => "no such ResourceClaim",
            Self::NotAllocated => "the claim is not allocated",
            Self::NotOwned => "the claim's controller owner is another object",
            Self::NotReserved => "the claim's status.reservedFor does not hold the pod",
            Self::NotRead => "the controller reads extended resources' claims from 1.37 on",
        }
    }
}

/// One claim a pod names, and whether it counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimSeen {
    /// How the pod names it.
    pub uses: ClaimUse,
    /// `None` when it counts.
    pub skipped: Option<Skipped>,
}

/// What the device-taint controller decides for one pod.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceReport {
    /// The claims the pod names, in order.
    pub claims: Vec<ClaimSeen>,
    /// Every `NoExecute` taint on a device of a counted claim (`earliest-per-claim`,
    /// `earliest-per-pod`: all of them, duplicates included), in claim, device and taint order.
    pub evictions: Vec<DeviceEviction>,
}

impl DeviceReport {
    /// The taint that sets the pod's deadline: the earliest (the first of equals); `None` when no
    /// taint deletes the pod.
    #[must_use]
    pub fn deciding(&self) -> Option<&DeviceEviction> {
        self.evictions.iter().filter(|e| e.deadline.is_some()).min_by_key(|e| e.deadline)
    }
}

/// The DRA objects, indexed for the controller's questions, at one minor version.
#[derive(Debug)]
pub struct DeviceTaints<'a> {
    devices: &'a Devices,
    minor: u32,
    claims: HashMap<(&'a str, &'a str), &'a Claim>,
    /// The taints of each published device of a pool's newest generation: the first device of
    /// that name in those slices (`slice-taints`).
    published: HashMap<(&'a str, &'a str, &'a str), (&'a Slice, &'a SliceDevice)>,
}

impl<'a> DeviceTaints<'a> {
    /// Indexes `devices` for a cluster at minor version `minor`.
    #[must_use]
    pub fn new(devices: &'a Devices, minor: u32) -> Self {
        let claims = devices.claims.iter().map(|c| ((&*c.namespace, &*c.name), c)).collect();
        let mut newest: HashMap<(&str, &str), i64> = HashMap::new();
        for slice in &devices.slices {
            let generation = newest.entry((&slice.driver, &slice.pool)).or_insert(slice.generation);
            *generation = (*generation).max(slice.generation);
        }
        let mut published = HashMap::new();
        for slice in &devices.slices {
            if newest.get(&(&*slice.driver, &*slice.pool)) != Some(&slice.generation) {
                continue;
            }
            for device in &slice.devices {
                published.entry((&*slice.driver, &*slice.pool, &*device.name)).or_insert((slice, device));
            }
        }
        Self { devices, minor, claims, published }
    }

    /// The minor version modelled.
    #[must_use]
    pub fn minor(&self) -> u32 {
        self.minor
    }

    /// Whether no pod uses a claim: nothing to decide.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.devices.uses.is_empty()
    }

    /// The DeviceTaintRules whose selector this version cannot evaluate (class or CEL selectors,
    /// before 1.35): they are left out.
    pub fn unevaluated_rules(&self) -> impl Iterator<Item = &'a Rule> + '_ {
        let before_35 = self.minor < 35;
        let rules = self.devices.rules.iter();
        rules.filter(move |r| before_35 && r.selector.as_ref().is_some_and(|s| s.unevaluated))
    }

    /// What the controller decides for the pod `key` with `uid`, bound to a node.
    #[must_use]
    pub fn pod(&self, key: &PodKey, uid: &Uid) -> DeviceReport {
        let Some(uses) = self.devices.uses.get(key) else { return DeviceReport::default() };
        let mut report = DeviceReport::default();
        for using in uses {
            let skipped = self.counted(key, uid, using);
            let counted = using.claim.as_ref().filter(|_| skipped.is_none());
            if let Some(claim) = counted.and_then(|name| self.claims.get(&(key.namespace(), &**name))) {
                for allocated in claim.allocation.iter().flatten() {
                    self.device_taints(claim, allocated, &mut report.evictions);
                }
            }
            report.claims.push(ClaimSeen { uses: using.clone(), skipped });
        }
        report
    }

    /// The pods the claims are reserved for (namespace and name), when a device of the claim carries
    /// a NoExecute taint, tolerated or not: where a plan of every affected node looks, before it has
    /// read the pods.
    #[must_use]
    pub fn reserved_pods_on_tainted_devices(&self) -> Vec<PodKey> {
        let mut pods = Vec::new();
        for claim in &self.devices.claims {
            let mut evictions = Vec::new();
            for allocated in claim.allocation.iter().flatten() {
                self.device_taints(claim, allocated, &mut evictions);
            }
            if !evictions.is_empty() {
                let consumers = claim.reserved_for.iter().filter(|c| &*c.resource == "pods");
                pods.extend(consumers.map(|c| PodKey::new(claim.namespace.clone(), c.name.clone())));
            }
        }
        pods
    }

    /// Whether the claim counts for the pod (`claims-that-count`), or why not.
    fn counted(&self, key: &PodKey, uid: &Uid, using: &ClaimUse) -> Option<Skipped> {
        if using.via == Via::Extended && self.minor < 37 {
            return Some(Skipped::NotRead);
        }
        let Some(name) = &using.claim else { return Some(Skipped::Unnamed) };
        let Some(claim) = self.claims.get(&(key.namespace(), &**name)) else { return Some(Skipped::NotFound) };
        if claim.allocation.is_none() {
            return Some(Skipped::NotAllocated);
        }
        if using.via != Via::Name && claim.owner.as_ref() != Some(uid) {
            return Some(Skipped::NotOwned);
        }
        if !claim.reserved_for.iter().any(|consumer| consumer.uid == *uid) {
            return Some(Skipped::NotReserved);
        }
        None
    }

    /// The `NoExecute` taints of one allocated device (`slice-taints`, `rule-taints`,
    /// `taints-add-up`), each with its deadline.
    fn device_taints(&self, claim: &Claim, allocated: &Allocated, out: &mut Vec<DeviceEviction>) {
        let id = &allocated.device;
        let published = self.published.get(&(&*id.driver, &*id.pool, &*id.device));
        let from_slice = published.into_iter().flat_map(|(slice, device)| {
            device.taints.iter().map(move |taint| (taint, SourceKind::ResourceSlice, &slice.name))
        });
        // 1.33–1.34: rules reached the controller merged into published devices only.
        let rules_apply = self.minor >= 35 || published.is_some();
        let from_rules = self.devices.rules.iter().filter(move |rule| {
            rules_apply && rule.selector.as_ref().is_some_and(|s| s.selects(id) && !(s.unevaluated && self.minor < 35))
        });
        let from_rules = from_rules.map(|rule| (&rule.taint, SourceKind::DeviceTaintRule, &rule.name));
        for (taint, source, source_name) in from_slice.chain(from_rules) {
            if taint.effect != Effect::NoExecute {
                continue;
            }
            let tolerance = tolerance(taint, &allocated.tolerations);
            let deadline = match tolerance {
                DeviceTolerance::Forever => None,
                DeviceTolerance::Untolerated => taint.time_added,
                DeviceTolerance::For(seconds) => taint.time_added.map(|at| after(at, seconds)),
            };
            let effectless_ignored = tolerance != DeviceTolerance::Forever
                && allocated.tolerations.iter().any(|t| t.effect.is_none() && matches_ignoring_effect(t, taint));
            let uncopied = tolerance == DeviceTolerance::Untolerated
                && allocated.tolerations.is_empty()
                && claim.requested_tolerations > 0;
            out.push(DeviceEviction {
                device: id.clone(),
                claim: claim.name.clone(),
                request: allocated.request.clone(),
                taint: taint.clone(),
                source,
                source_name: source_name.clone(),
                tolerance,
                deadline,
                effectless_ignored,
                uncopied,
            });
        }
    }
}

/// `at` plus `seconds` (negative: none), saturating.
fn after(at: Timestamp, seconds: i64) -> Timestamp {
    let nanos = i128::from(seconds.max(0)) * i128::from(NANOS_PER_SECOND);
    Timestamp::from_nanos(at.as_nanos().saturating_add(nanos))
}

/// `toleration-match`: key, operator and value as the core matcher compares them (`resourceclaim.ToleratesTaint`);
/// only `Exists` and `Equal` are device operators, anything else matches nothing.
fn matches_ignoring_effect(toleration: &Toleration, taint: &Taint) -> bool {
    (toleration.key.is_empty() || toleration.key == taint.key)
        && match toleration.operator {
            Operator::Exists => true,
            Operator::Equal => toleration.value == taint.value,
            Operator::Lt | Operator::Gt | Operator::Other(_) => false,
        }
}

/// `no-execute-tolerations-only` to `smallest-seconds`: only tolerations of exactly `NoExecute`
/// count; one without seconds tolerates forever; otherwise the smallest seconds.
fn tolerance(taint: &Taint, tolerations: &[Toleration]) -> DeviceTolerance {
    let mut smallest: Option<i64> = None;
    for toleration in tolerations {
        if toleration.effect.as_ref() != Some(&Effect::NoExecute) || !matches_ignoring_effect(toleration, taint) {
            continue;
        }
        match toleration.seconds {
            None => return DeviceTolerance::Forever,
            Some(seconds) => smallest = Some(smallest.map_or(seconds, |s| s.min(seconds))),
        }
    }
    smallest.map_or(DeviceTolerance::Untolerated, DeviceTolerance::For)
}
