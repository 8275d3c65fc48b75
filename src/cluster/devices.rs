//! Reading what the DRA device-taint controller reads, from a live cluster, only when a pod read
//! names a claim: which versions of `resource.k8s.io` the server serves (its discovery), then
//! ResourceSlices, the pods' ResourceClaims and DeviceTaintRules, each in the most preferred version
//! the server serves it in (v1, v1beta2, v1beta1, v1alpha3). A cluster without DRA pays nothing; a
//! server that does not serve a resource, or RBAC that denies it, leaves the device taints out, said
//! once.

use std::collections::BTreeSet;

use futures::{StreamExt, TryStreamExt, stream};
use kube::api::ListParams;
use kube::core::Request;
use serde::Deserialize;

use super::client::Connection;
use super::client::{CONCURRENCY, PAGE_SIZE};
use super::error::ClusterError;
pub use super::watch::Served;
use crate::decode::devices::read_devices;
use crate::engine::devices::Devices;

/// The group the device-taint controller reads.
const GROUP: &str = "resource.k8s.io";

/// Its versions, most preferred first.
const PREFERENCE: [&str; 4] = ["v1", "v1beta2", "v1beta1", "v1alpha3"];

/// The resources read, with the kind of their items.
const SLICES: (&str, &str) = ("resourceslices", "ResourceSlice");
const CLAIMS: (&str, &str) = ("resourceclaims", "ResourceClaim");
const RULES: (&str, &str) = ("devicetaintrules", "DeviceTaintRule");

#[derive(Deserialize, Default)]
#[serde(default)]
struct Group {
    versions: Vec<GroupVersion>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct GroupVersion {
    version: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ResourceList {
    resources: Vec<ApiResource>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ApiResource {
    name: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ListMeta {
    metadata: Continue,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Continue {
    #[serde(rename = "continue")]
    token: Option<String>,
}

impl Connection {
    /// A GET of a discovery document; `Ok(None)` on 404 (not served).
    async fn discover<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<Option<T>, ClusterError> {
        let request =
            http::Request::get(path).body(Vec::new()).map_err(|e| ClusterError::unsendable("get", path, &e))?;
        match self.send(request, "get", path).await {
            Ok(body) => serde_json::from_str(&body).map(Some).map_err(|e| ClusterError::Decode {
                server: self.server.clone(),
                resource: path.to_owned(),
                reason: e.to_string(),
            }),
            Err(ClusterError::ApiFailed { code: 404, .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Which version serves each resource read.
    pub async fn served(&self) -> Result<Served, ClusterError> {
        let Some(group) = self.discover::<Group>(&format!("/apis/{GROUP}")).await? else {
            return Ok(Served::default());
        };
        let offered: BTreeSet<&str> = group.versions.iter().map(|v| v.version.as_str()).collect();
        let versions: Vec<&str> = PREFERENCE.iter().copied().filter(|v| offered.contains(v)).collect();
        let lists: Vec<Option<ResourceList>> = stream::iter(&versions)
            .map(|version| async move { self.discover::<ResourceList>(&format!("/apis/{GROUP}/{version}")).await })
            .buffered(CONCURRENCY)
            .try_collect()
            .await?;
        let first = |resource: &str| {
            versions.iter().zip(&lists).find_map(|(version, list)| {
                list.as_ref()?.resources.iter().any(|r| r.name == resource).then(|| (*version).to_owned())
            })
        };
        Ok(Served { slices: first(SLICES.0), claims: first(CLAIMS.0), rules: first(RULES.0) })
    }

    /// Every page of a LIST of `path`, read as DRA objects of `kind`.
    async fn list_devices(&self, path: &str, kind: &str, resource: &str) -> Result<Devices, ClusterError> {
        let mut devices = Devices::default();
        let mut params = match self.read {
            super::client::ReadFrom::Cache => ListParams::default().match_any(),
            super::client::ReadFrom::Quorum => ListParams::default().limit(PAGE_SIZE),
        };
        loop {
            let request =
                Request::new(path).list(&params).map_err(|e| ClusterError::unsendable("list", resource, &e))?;
            let body = self.send(request, "list", resource).await?;
            let decode = |reason: String| ClusterError::Decode {
                server: self.server.clone(),
                resource: resource.to_owned(),
                reason,
            };
            devices.merge(read_devices(body.as_bytes(), Some(kind)).map_err(|e| decode(e.to_string()))?);
            let meta: ListMeta = serde_json::from_str(&body).map_err(|e| decode(e.to_string()))?;
            match meta.metadata.token.filter(|t| !t.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => return Ok(devices),
            }
        }
    }
}

/// Whose ResourceClaims to read.
pub enum ClaimScope<'a> {
    /// Those of these namespaces (the pods read are there).
    Namespaces(&'a BTreeSet<String>),
    /// Every namespace's (before the pods are read: which pods hold tainted devices).
    All,
}

/// The DRA objects the device-taint controller reads for the claims of `scope`, and what the answer
/// lacks (a resource not served, or denied), as a warning.
///
/// # Errors
/// A failure other than a resource not served or denied.
pub async fn read_devices_for(
    connection: &Connection,
    scope: ClaimScope<'_>,
) -> Result<(Devices, Option<String>), ClusterError> {
    let served = connection.served().await?;
    let (Some(slices), Some(claims)) = (&served.slices, &served.claims) else {
        return Ok((
            Devices::default(),
            Some(format!(
                "pods use DRA claims, but the server serves no {GROUP} ResourceSlices and ResourceClaims: device \
                 taints are not shown"
            )),
        ));
    };
    let slices_path = format!("/apis/{GROUP}/{slices}/{}", SLICES.0);
    let rules_path = served.rules.as_ref().map(|rules| format!("/apis/{GROUP}/{rules}/{}", RULES.0));
    let slices_read = connection.list_devices(&slices_path, SLICES.1, "resourceslices.resource.k8s.io");
    let rules_read = async {
        match &rules_path {
            Some(path) => connection.list_devices(path, RULES.1, "devicetaintrules.resource.k8s.io").await,
            None => Ok(Devices::default()),
        }
    };
    let paths: Vec<(String, String)> = match scope {
        ClaimScope::Namespaces(namespaces) => namespaces
            .iter()
            .map(|namespace| {
                let path = format!("/apis/{GROUP}/{claims}/namespaces/{namespace}/{}", CLAIMS.0);
                (path, format!("resourceclaims.resource.k8s.io in namespace \"{namespace}\""))
            })
            .collect(),
        ClaimScope::All => vec![(
            format!("/apis/{GROUP}/{claims}/{}", CLAIMS.0),
            "resourceclaims.resource.k8s.io at the cluster scope".to_owned(),
        )],
    };
    let claims_read = stream::iter(&paths)
        .map(|(path, resource)| connection.list_devices(path, CLAIMS.1, resource))
        .buffered(CONCURRENCY)
        .try_collect::<Vec<Devices>>();
    let (slices, rules, claims) = tokio::join!(slices_read, rules_read, claims_read);
    let mut devices = Devices::default();
    for read in [slices, rules, claims.map(|all| all.into_iter().fold(Devices::default(), merged))] {
        match read {
            Ok(part) => devices.merge(part),
            Err(ClusterError::Forbidden { verb, resource, .. }) => {
                return Ok((
                    Devices::default(),
                    Some(format!(
                        "cannot {verb} {resource} (forbidden): device taints are not shown (grant list on \
                         resourceslices, resourceclaims and devicetaintrules of {GROUP}: deploy/rbac-plan.yaml)"
                    )),
                ));
            }
            Err(error) => return Err(error),
        }
    }
    Ok((devices, None))
}

/// For `run`: which versions serve the DRA objects, when the server serves ResourceSlices and
/// ResourceClaims and RBAC lets them be listed (one LIST of one item each); `Ok(None)` when the
/// server serves none (nothing to enforce); `Err` says, as a warning, what RBAC denies.
///
/// # Errors
/// In words, the LIST denied.
pub async fn watchable(connection: &Connection) -> Result<Option<Served>, String> {
    let served = connection.served().await.map_err(|e| format!("device taints are not enforced: {e}"))?;
    if served.slices.is_none() || served.claims.is_none() {
        return Ok(None);
    }
    let wanted = [(&served.slices, SLICES.0), (&served.claims, CLAIMS.0), (&served.rules, RULES.0)];
    for (version, plural) in wanted {
        let Some(version) = version else { continue };
        let path = format!("/apis/{GROUP}/{version}/{plural}");
        let resource = format!("{plural}.{GROUP}");
        let request = Request::new(&path).list(&ListParams::default().limit(1)).map_err(|e| e.to_string())?;
        match connection.send(request, "list", &resource).await {
            Ok(_) => {}
            Err(ClusterError::Forbidden { verb, resource, .. }) => {
                return Err(format!(
                    "device taints are not enforced: cannot {verb} {resource} (forbidden) (grant list and watch on \
                     resourceslices, resourceclaims and devicetaintrules of {GROUP}: deploy/rbac-run.yaml), or \
                     leave them to the cluster with --device-taints=false"
                ));
            }
            Err(error) => return Err(format!("device taints are not enforced: {error}")),
        }
    }
    Ok(Some(served))
}

fn merged(mut all: Devices, more: Devices) -> Devices {
    all.merge(more);
    all
}
