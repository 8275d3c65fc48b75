//! What the DRA device-taint controller reads from a dump: ResourceSlices, ResourceClaims and
//! DeviceTaintRules in each API version's shape (v1alpha3 and v1beta1 keep a device's taints under
//! `basic`, a request's tolerations in the request; v1beta2 and v1 on the device, and under
//! `exactly`). The claims each pod names are the pod's own (read with it).
//!
//! Read beside the snapshot, from the same bytes, and only when the node health reading beside it
//! counted one of those kinds: a dump of a cluster without DRA costs nothing more. The objects are
//! few (a claim per GPU pod, a slice per node and driver), so they are read with serde, apart from
//! the streaming reader.
//!
//! Owns: the DRA objects' JSON. Uses: the engine's model ([`crate::engine::devices`]).

use std::sync::Arc;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::lifecycle::{Health, HealthBeside, HealthPart};
use super::{DumpError, parse_time};
use crate::engine::devices::{Allocated, Claim, Consumer, DeviceId, Devices, Rule, RuleSelector, Slice, SliceDevice};
use crate::engine::model::{Effect, Operator, Taint, Toleration, Uid};

/// The kinds that hold what the device-taint controller reads.
const KINDS: [&[u8]; 3] = [b"ResourceSlice\"", b"ResourceClaim\"", b"DeviceTaintRule\""];

/// Whether `bytes` may hold a DRA object (a byte search; a false positive only costs a read).
#[must_use]
pub fn may_hold_devices(bytes: &[u8]) -> bool {
    KINDS.iter().any(|kind| memchr::memmem::find(bytes, kind).is_some())
}

/// Reads the DRA objects of a dump, or of a list page (`kind`: its items' kind, for a typed list
/// whose items do not name it).
///
/// # Errors
/// The bytes are not JSON, or a DRA object's field has the wrong type.
pub fn read_devices(bytes: &[u8], kind: Option<&str>) -> Result<Devices, DumpError> {
    let mut devices = Devices::default();
    if kind.is_none() && !may_hold_devices(bytes) {
        return Ok(devices);
    }
    let list: List = serde_json::from_slice(bytes).map_err(|e| DumpError::Json(e.to_string()))?;
    for item in list.items {
        let kind = item.kind.as_deref().or(kind).unwrap_or_default();
        item.add_to(&mut devices, kind)?;
    }
    Ok(devices)
}

/// One DRA object of `kind` (a watch's), as [`Devices`] holding it alone (nothing for another kind).
///
/// # Errors
/// The bytes are not JSON, or a field has the wrong type.
pub fn read_device_object(bytes: &[u8], kind: &str) -> Result<Devices, DumpError> {
    let item: Item = serde_json::from_slice(bytes).map_err(|e| DumpError::Json(e.to_string()))?;
    let mut devices = Devices::default();
    item.add_to(&mut devices, kind)?;
    Ok(devices)
}

/// Node health ([`HealthBeside`]) and, when the dump holds DRA objects (health's reading counts
/// them), those objects: a dump without them is read once beside the snapshot, as before.
pub struct HealthAndDevices;

impl super::bounded::Beside for HealthAndDevices {
    type Out = (Result<Health, DumpError>, Result<Devices, DumpError>);
    type Part = (HealthPart, Option<Result<Devices, DumpError>>);
    fn whole(&self, bytes: &[u8]) -> Self::Out {
        let health = HealthBeside.whole(bytes);
        let devices = match &health {
            Ok(health) if health.dra_objects == 0 => Ok(Devices::default()),
            _ => read_devices(bytes, None),
        };
        (health, devices)
    }
    fn part(&self, bytes: &[u8]) -> Option<Self::Part> {
        let health = HealthBeside.part(bytes)?;
        let devices = (health.dra_objects() > 0).then(|| read_devices(bytes, None));
        Some((health, devices))
    }
    fn add(&self, before: &mut Self::Part, later: Self::Part) {
        HealthBeside.add(&mut before.0, later.0);
        match (&mut before.1, later.1) {
            (Some(Ok(all)), Some(Ok(more))) => all.merge(more),
            (None, later) => before.1 = later,
            (Some(Err(_)), _) | (_, None) => {}
            (Some(Ok(_)), Some(Err(error))) => before.1 = Some(Err(error)),
        }
    }
    fn join(&self, (health, devices): Self::Part) -> Self::Out {
        (HealthBeside.join(health), devices.unwrap_or_else(|| Ok(Devices::default())))
    }
}

#[derive(Deserialize)]
struct List {
    #[serde(default)]
    items: Vec<Item>,
}

/// One item: the union of the fields read of the DRA kinds; other fields are skipped.
/// Each field is read [`Lenient`]ly: an object of another kind may use the same name for something
/// else, and only the kinds that own a field fail on it.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Item {
    kind: Option<String>,
    metadata: Metadata,
    spec: Spec,
    status: Status,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Metadata {
    name: String,
    namespace: String,
    uid: String,
    owner_references: Vec<OwnerReference>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct OwnerReference {
    uid: String,
    controller: bool,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Spec {
    // ResourceSlice.
    driver: Lenient<String>,
    pool: Lenient<Pool>,
    /// A slice's `devices[]`, or a claim's `devices` (`requests[]`): told apart by kind.
    devices: Option<serde_json::Value>,
    // DeviceTaintRule.
    device_selector: Lenient<Option<Selector>>,
    taint: Lenient<Option<RawTaint>>,
}

/// A field read as any JSON first, then as `T`: `Err` (what was wrong) when it is not a `T`.
struct Lenient<T>(Result<T, String>);

impl<T: Default> Default for Lenient<T> {
    fn default() -> Self {
        Self(Ok(T::default()))
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(Self(T::deserialize(value).map_err(|e| e.to_string())))
    }
}

impl<T> Lenient<T> {
    /// The value, or what was wrong with `field` of `object`.
    fn get(&self, object: &str, field: &str) -> Result<&T, DumpError> {
        self.0.as_ref().map_err(|e| DumpError::Json(format!("{object}: {field}: {e}")))
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Pool {
    name: String,
    generation: i64,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Selector {
    driver: Option<String>,
    pool: Option<String>,
    device: Option<String>,
    device_class_name: Option<String>,
    selectors: Option<Vec<IgnoredAny>>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "camelCase")]
struct RawTaint {
    key: String,
    value: String,
    effect: String,
    time_added: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Status {
    // ResourceClaim.
    allocation: Lenient<Option<Allocation>>,
    reserved_for: Lenient<Vec<RawConsumer>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Allocation {
    devices: AllocatedDevices,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AllocatedDevices {
    results: Vec<Result_>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Result_ {
    request: String,
    driver: String,
    pool: String,
    device: String,
    tolerations: Vec<RawToleration>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RawToleration {
    key: String,
    operator: String,
    value: String,
    effect: String,
    toleration_seconds: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawConsumer {
    resource: String,
    name: String,
    uid: String,
}

/// A slice's device, in any version's shape.
#[derive(Deserialize, Default)]
#[serde(default)]
struct RawDevice {
    name: String,
    /// v1beta2, v1.
    taints: Vec<RawTaint>,
    /// v1alpha3, v1beta1.
    basic: Option<BasicDevice>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct BasicDevice {
    taints: Vec<RawTaint>,
}

/// A claim's `spec.devices`, in any version's shape.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ClaimDevices {
    requests: Vec<Request>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Request {
    /// v1alpha3, v1beta1.
    tolerations: Vec<IgnoredAny>,
    /// v1beta2, v1.
    exactly: Option<Exactly>,
    first_available: Vec<Exactly>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Exactly {
    tolerations: Vec<IgnoredAny>,
}

fn taint(raw: &RawTaint, object: &str) -> Result<Taint, DumpError> {
    let effect = Effect::from(raw.effect.as_str());
    let taint = Taint::new(raw.key.as_str(), raw.value.as_str(), effect);
    match raw.time_added.as_deref() {
        None => Ok(taint),
        Some(text) => match parse_time(text) {
            Some(at) => Ok(taint.with_time_added(at)),
            None => Err(DumpError::Json(format!("{object}: taint {:?}: timeAdded {text:?} is not RFC 3339", raw.key))),
        },
    }
}

fn toleration(raw: &RawToleration) -> Toleration {
    // `Lt`/`Gt` are node-toleration operators: on a device they match nothing, as any other.
    let operator = match raw.operator.as_str() {
        "Lt" | "Gt" => Operator::Other(Box::new(raw.operator.clone())),
        other => Operator::from(other),
    };
    Toleration {
        key: raw.key.as_str().into(),
        operator,
        value: raw.value.as_str().into(),
        effect: (!raw.effect.is_empty()).then(|| Effect::from(raw.effect.as_str())),
        seconds: raw.toleration_seconds,
    }
}

impl Item {
    /// Adds the item, an object of `kind`, to `devices` (nothing for another kind).
    fn add_to(&self, devices: &mut Devices, kind: &str) -> Result<(), DumpError> {
        match kind {
            "ResourceSlice" => devices.slices.push(self.slice()?),
            "ResourceClaim" => devices.claims.push(self.claim()?),
            "DeviceTaintRule" => devices.rules.extend(self.rule()?),
            _ => {}
        }
        Ok(())
    }

    fn name(&self) -> Arc<str> {
        self.metadata.name.as_str().into()
    }

    fn slice(&self) -> Result<Slice, DumpError> {
        let object = format!("ResourceSlice \"{}\"", self.metadata.name);
        let devices: Vec<RawDevice> = match &self.spec.devices {
            Some(value) => Vec::<RawDevice>::deserialize(value)
                .map_err(|e| DumpError::Json(format!("{object}: spec.devices: {e}")))?,
            None => Vec::new(),
        };
        let devices = devices
            .iter()
            .map(|device| {
                let raw = device.basic.as_ref().map_or(&device.taints, |basic| &basic.taints);
                let taints = raw.iter().map(|t| taint(t, &object)).collect::<Result<_, _>>()?;
                Ok(SliceDevice { name: device.name.as_str().into(), taints })
            })
            .collect::<Result<_, DumpError>>()?;
        let pool = self.spec.pool.get(&object, "spec.pool")?;
        Ok(Slice {
            name: self.name(),
            driver: self.spec.driver.get(&object, "spec.driver")?.as_str().into(),
            pool: pool.name.as_str().into(),
            generation: pool.generation,
            devices,
        })
    }

    fn claim(&self) -> Result<Claim, DumpError> {
        let object = format!("ResourceClaim \"{}/{}\"", self.metadata.namespace, self.metadata.name);
        let requests =
            self.spec.devices.as_ref().and_then(|value| ClaimDevices::deserialize(value).ok()).map_or(0, |devices| {
                let each = |r: &Request| {
                    r.tolerations.len()
                        + r.exactly.as_ref().map_or(0, |e| e.tolerations.len())
                        + r.first_available.iter().map(|e| e.tolerations.len()).sum::<usize>()
                };
                devices.requests.iter().map(each).sum()
            });
        let allocation = self.status.allocation.get(&object, "status.allocation")?.as_ref().map(|allocation| {
            let results = allocation.devices.results.iter();
            results
                .map(|r| Allocated {
                    request: r.request.as_str().into(),
                    device: DeviceId {
                        driver: r.driver.as_str().into(),
                        pool: r.pool.as_str().into(),
                        device: r.device.as_str().into(),
                    },
                    tolerations: r.tolerations.iter().map(toleration).collect(),
                })
                .collect()
        });
        let owner = self.metadata.owner_references.iter().find(|o| o.controller);
        let reserved_for = self.status.reserved_for.get(&object, "status.reservedFor")?;
        Ok(Claim {
            namespace: self.metadata.namespace.as_str().into(),
            name: self.name(),
            owner: owner.map(|o| Uid::from(o.uid.as_str())),
            allocation,
            reserved_for: reserved_for
                .iter()
                .map(|c| Consumer {
                    resource: c.resource.as_str().into(),
                    name: c.name.as_str().into(),
                    uid: Uid::from(c.uid.as_str()),
                })
                .collect(),
            requested_tolerations: requests,
        })
    }

    /// A rule's taint; `None` for a rule without one (invalid: nothing to apply).
    fn rule(&self) -> Result<Option<Rule>, DumpError> {
        let object = format!("DeviceTaintRule \"{}\"", self.metadata.name);
        let Some(raw) = self.spec.taint.get(&object, "spec.taint")? else { return Ok(None) };
        let selector = self.spec.device_selector.get(&object, "spec.deviceSelector")?.as_ref().map(|s| RuleSelector {
            driver: s.driver.as_deref().filter(|d| !d.is_empty()).map(Into::into),
            pool: s.pool.as_deref().filter(|p| !p.is_empty()).map(Into::into),
            device: s.device.as_deref().filter(|d| !d.is_empty()).map(Into::into),
            unevaluated: s.device_class_name.as_deref().is_some_and(|c| !c.is_empty())
                || s.selectors.as_ref().is_some_and(|s| !s.is_empty()),
        });
        Ok(Some(Rule { name: self.name(), selector, taint: taint(raw, &object)? }))
    }
}
