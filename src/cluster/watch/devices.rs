//! Watches of the DRA objects the device-taint controller reads, for `run`: ResourceSlices,
//! ResourceClaims and DeviceTaintRules, each in the version the server serves it in, turned into the
//! device-taint controller's inputs. Only `run` with device taints starts them.

use futures::StreamExt;
use kube::api::{ApiResource, DynamicObject};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher;
use kube::{Api, Client};
use tokio::sync::mpsc;

use super::forward::{Adapter, View, forward};
use super::outage::{Health, backoff};
use crate::decode::devices::read_device_object;
use crate::engine::devices::{Claim, DeviceInput, Devices, Rule, Slice};

/// The version each DRA resource is served in (the discovery of `cluster::devices` says); `None`
/// for one the server does not serve.
#[derive(Clone, Debug, Default)]
pub struct Served {
    /// ResourceSlices'.
    pub slices: Option<String>,
    /// ResourceClaims'.
    pub claims: Option<String>,
    /// DeviceTaintRules'.
    pub rules: Option<String>,
}

/// The group's resources, by plural: their kind.
fn resource(version: &str, plural: &str, kind: &str) -> ApiResource {
    ApiResource {
        group: "resource.k8s.io".into(),
        version: version.into(),
        api_version: format!("resource.k8s.io/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// One object as the engine reads it (`None`: unreadable, skipped).
fn read(object: &DynamicObject, kind: &str) -> Option<Devices> {
    let bytes = serde_json::to_vec(object).ok()?;
    read_device_object(&bytes, kind).ok()
}

/// Starts a watch of each resource `served` names (the rules only when served); their changes
/// arrive on the returned channel. `health` makes one watch's [`Health`] for a resource's name.
pub(super) fn spawn(
    client: &Client,
    served: &Served,
    health: impl Fn(&'static str) -> Health,
) -> mpsc::Receiver<DeviceInput> {
    let (changes, received) = mpsc::channel(256);
    let watch = |version: &str, plural: &str, kind: &str| {
        let api = Api::<DynamicObject>::all_with(client.clone(), &resource(version, plural, kind));
        watcher::watcher(api, super::cache::from_watch_cache()).backoff(backoff()).boxed()
    };
    if let Some(version) = &served.slices {
        let adapter = Adapter {
            view: |object: DynamicObject| {
                read(&object, "ResourceSlice").and_then(|mut d| d.slices.pop()).map_or(View::Unseen(None), View::Seen)
            },
            deleted: |object: DynamicObject| Some(DeviceInput::SliceDeleted(name(&object).into())),
            listed: DeviceInput::SlicesListed as fn(Vec<Slice>) -> DeviceInput,
            applied: DeviceInput::SliceApplied as fn(Slice) -> DeviceInput,
            interrupted: None,
        };
        let events = watch(version, "resourceslices", "ResourceSlice");
        tokio::spawn(forward(events, adapter, health("resourceslices"), changes.clone(), |_| {}));
    }
    if let Some(version) = &served.claims {
        let adapter = Adapter {
            view: |object: DynamicObject| {
                read(&object, "ResourceClaim").and_then(|mut d| d.claims.pop()).map_or(View::Unseen(None), View::Seen)
            },
            deleted: |object: DynamicObject| {
                let namespace = object.metadata.namespace.clone().unwrap_or_default();
                Some(DeviceInput::ClaimDeleted(namespace.into(), name(&object).into()))
            },
            listed: DeviceInput::ClaimsListed as fn(Vec<Claim>) -> DeviceInput,
            applied: DeviceInput::ClaimApplied as fn(Claim) -> DeviceInput,
            interrupted: None,
        };
        let events = watch(version, "resourceclaims", "ResourceClaim");
        tokio::spawn(forward(events, adapter, health("resourceclaims"), changes.clone(), |_| {}));
    }
    if let Some(version) = &served.rules {
        let adapter = Adapter {
            view: |object: DynamicObject| {
                read(&object, "DeviceTaintRule").and_then(|mut d| d.rules.pop()).map_or(View::Unseen(None), View::Seen)
            },
            deleted: |object: DynamicObject| Some(DeviceInput::RuleDeleted(name(&object).into())),
            listed: DeviceInput::RulesListed as fn(Vec<Rule>) -> DeviceInput,
            applied: DeviceInput::RuleApplied as fn(Rule) -> DeviceInput,
            interrupted: None,
        };
        let events = watch(version, "devicetaintrules", "DeviceTaintRule");
        tokio::spawn(forward(events, adapter, health("devicetaintrules"), changes, |_| {}));
    }
    received
}

fn name(object: &DynamicObject) -> &str {
    object.metadata.name.as_deref().unwrap_or_default()
}
