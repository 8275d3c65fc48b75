//! The JSON the decoder reads, as borrowed raw types: each field's JSON name is declared once, here,
//! and becomes both the exact reader's serde name and the byte string the streaming reader compares
//! keys with.
//!
//! Owns: the raw types of lists, items, metadata, specs, statuses, taints, tolerations and conditions,
//! and the [`raw!`] declaration that keeps their names in one place. Uses: `seeds` (the streaming
//! reader's serde blocks) only; nothing here applies a rule, which is `build`'s work.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;

/// Declares a raw type: `field: Type = "jsonName"` gives the struct field (with `#[serde(rename)]`),
/// and a constant of the same name in module `$names` holding the JSON name as bytes, for readers
/// that compare keys without building the struct. `fast` also gives the type a [`Fast`] reader. Type
/// parameters (each with its default) let a reader choose how a part is read (see [`RawMeta`]);
/// `and struct` declares, with the same fields, a wider type that reads more of the object (see
/// [`RawNodeCondition`]).
///
/// [`Fast`]: super::seeds::Fast
macro_rules! raw {
    (@names $name:ident $names:ident { $($field:ident = $json:tt),* }) => {
        #[doc = concat!("The JSON names of [`", stringify!($name), "`]'s fields.")]
        #[allow(non_upper_case_globals, dead_code)]
        pub(in crate::decode) mod $names {
            $(
                #[doc = concat!("`", $json, "`")]
                pub(in crate::decode) const $field: &[u8] = $json.as_bytes();
            )*
        }
    };
    ($(#[$attr:meta])* fast struct $name:ident<'a> in $names:ident {
        $($(#[$field_attr:meta])* $field:ident: $type:ty = $json:tt,)*
    }) => {
        raw!($(#[$attr])* struct $name<'a> in $names { $($(#[$field_attr])* $field: $type = $json,)* });
        raw!(@fast $name $names { $($field),* });
    };
    ($(#[$attr:meta])* struct $name:ident<'a> in $names:ident {
        $($(#[$field_attr:meta])* $field:ident: $type:ty = $json:tt,)*
    } $(#[$wider_attr:meta])* and struct $wider:ident<'a> {
        $($(#[$more_attr:meta])* $more:ident: $more_type:ty = $more_json:tt,)*
    }) => {
        raw!($(#[$attr])* struct $name<'a> in $names { $($(#[$field_attr])* $field: $type = $json,)* });
        $(#[$wider_attr])*
        pub(in crate::decode) struct $wider<'a> {
            $($(#[$field_attr])* #[serde(rename = $json)] pub(in crate::decode) $field: $type,)*
            $($(#[$more_attr])* #[serde(rename = $more_json)] pub(in crate::decode) $more: $more_type,)*
        }
    };
    ($(#[$attr:meta])* struct $name:ident<'a $(, $param:ident = $default:ty)*> in $names:ident {
        $($(#[$field_attr:meta])* $field:ident: $type:ty = $json:tt,)*
    }) => {
        $(#[$attr])*
        pub(in crate::decode) struct $name<'a $(, $param = $default)*> {
            $($(#[$field_attr])* #[serde(rename = $json)] pub(in crate::decode) $field: $type,)*
        }
        raw!(@names $name $names { $($field = $json),* });
    };
    (@fast $name:ident $names:ident { $($field:ident),* }) => {
        impl<'de> super::seeds::Fast<'de> for $name<'de> {
            fn read<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct FieldsVisitor<'de>(std::marker::PhantomData<&'de ()>);
                impl<'de> serde::de::Visitor<'de> for FieldsVisitor<'de> {
                    type Value = $name<'de>;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("an object")
                    }
                    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                        #[derive(Default)]
                        struct Seen {
                            $($field: bool,)*
                        }
                        let mut seen = Seen::default();
                        let mut value = $name::default();
                        while let Some(key) = map.next_key::<super::seeds::Key<'de>>()? {
                            match &*key.0 {
                                $($names::$field => {
                                    super::seeds::once(&mut seen.$field)?;
                                    value.$field = super::seeds::FastField::read(&mut map)?;
                                })*
                                _ => {
                                    key.check()?;
                                    map.next_value::<serde::de::IgnoredAny>()?;
                                }
                            }
                        }
                        Ok(value)
                    }
                }
                deserializer.deserialize_map(FieldsVisitor(std::marker::PhantomData))
            }
        }
    };
}
pub(super) use raw;

raw! {
    /// A list: a dump (`kind: List`) or a page of a typed list (`PodList`).
    #[derive(Deserialize)]
    #[serde(expecting = "an object")]
    struct RawList<'a> in list {
        #[serde(borrow, default)]
        kind: Option<Cow<'a, str>> = "kind",
        #[serde(borrow, default)]
        metadata: Option<RawListMeta<'a>> = "metadata",
        #[serde(borrow, default)]
        items: Option<Vec<RawItem<'a>>> = "items",
    }
}

raw! {
    /// A list's `metadata`: the token of the next page.
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    struct RawListMeta<'a> in list_meta {
        #[serde(borrow)]
        continue_: Option<Cow<'a, str>> = "continue",
    }
}

raw! {
    /// One object: a Node, a Pod, a Lease, or an item of another kind.
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    struct RawItem<'a> in item {
        #[serde(borrow)]
        kind: Option<Cow<'a, str>> = "kind",
        #[serde(borrow)]
        metadata: Option<RawMeta<'a>> = "metadata",
        #[serde(borrow)]
        spec: Option<RawSpec<'a>> = "spec",
        #[serde(borrow)]
        status: Option<RawStatus<'a>> = "status",
    }
}

raw! {
    /// An object's `metadata`: the one model every reader of a Node's, a Pod's or a Lease's metadata
    /// reads. Its parameters are the parts a reader chooses: the labels (`L`: every one, by default;
    /// the node health reader keeps those the node lifecycle controller reads) and the pod's history
    /// (`O`, `ownerReferences`, and `M`, `managedFields`: read by default; [`Unread`] skips them, as
    /// the node health reader does for the many pods of a dump).
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    struct RawMeta<'a, L = RawLabels<'a>, O = Vec<RawOwnerRef<'a>>, M = Vec<RawManagedField<'a>>> in meta {
        #[serde(borrow)]
        name: Option<Cow<'a, str>> = "name",
        #[serde(borrow)]
        namespace: Option<Cow<'a, str>> = "namespace",
        #[serde(borrow)]
        uid: Option<Cow<'a, str>> = "uid",
        #[serde(borrow)]
        creation_timestamp: Option<Cow<'a, str>> = "creationTimestamp",
        #[serde(borrow)]
        deletion_timestamp: Option<Cow<'a, str>> = "deletionTimestamp",
        labels: Option<L> = "labels",
        owner_references: Option<O> = "ownerReferences",
        managed_fields: Option<M> = "managedFields",
    }
}

/// An object's every label, borrowed from the input where it can be (a repeated key: the last wins).
#[derive(Deserialize, Default)]
#[serde(transparent)]
pub(super) struct RawLabels<'a>(#[serde(borrow)] pub(super) BTreeMap<Cow<'a, str>, Cow<'a, str>>);

/// A part of [`RawMeta`] a reader skips: checked to be JSON, never built.
pub(super) type Unread = serde::de::IgnoredAny;

raw! {
    /// An entry of `metadata.managedFields`: a manager, when it last wrote, and the fields it owns.
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    fast struct RawManagedField<'a> in managed_field {
        #[serde(borrow)]
        manager: Option<Cow<'a, str>> = "manager",
        #[serde(borrow)]
        time: Option<Cow<'a, str>> = "time",
        fields_v1: Option<RawOwned> = "fieldsV1",
    }
}

/// An entry's `fieldsV1`, as far as `f:spec` → `f:taints` or `f:tolerations`: whether it owns a
/// node's taints, or a pod's tolerations.
#[derive(Deserialize, Default)]
#[serde(expecting = "an object", default)]
pub(super) struct RawOwned {
    #[serde(rename = "f:spec")]
    pub(super) spec: Option<RawOwnedSpec>,
}

impl<'de> super::seeds::FastField<'de> for Option<RawOwned> {
    fn read<M: serde::de::MapAccess<'de>>(map: &mut M) -> Result<Self, M::Error> {
        map.next_value()
    }
}

/// `f:spec` of an entry's `fieldsV1`.
#[derive(Deserialize, Default)]
#[serde(expecting = "an object", default)]
pub(super) struct RawOwnedSpec {
    #[serde(rename = "f:taints")]
    pub(super) taints: Option<serde::de::IgnoredAny>,
    #[serde(rename = "f:tolerations")]
    pub(super) tolerations: Option<serde::de::IgnoredAny>,
}

raw! {
    /// An entry of `metadata.ownerReferences`.
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    fast struct RawOwnerRef<'a> in owner_ref {
        #[serde(borrow)]
        api_version: Option<Cow<'a, str>> = "apiVersion",
        #[serde(borrow)]
        kind: Option<Cow<'a, str>> = "kind",
        #[serde(borrow)]
        name: Option<Cow<'a, str>> = "name",
        #[serde(borrow)]
        uid: Option<Cow<'a, str>> = "uid",
        controller: Option<bool> = "controller",
    }
}

/// `metadata.resourceVersion`: read only for a watch, which resumes from it (apart from [`RawMeta`], so
/// that reading a dump or a page stays what it is).
pub(super) const RESOURCE_VERSION: &[u8] = b"resourceVersion";

raw! {
    /// The union of the Node, Pod and Lease spec fields the snapshot reads.
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    struct RawSpec<'a> in spec {
        #[serde(borrow)]
        taints: Option<Vec<RawTaint<'a>>> = "taints",
        #[serde(borrow)]
        node_name: Option<Cow<'a, str>> = "nodeName",
        #[serde(borrow)]
        tolerations: Option<Vec<RawToleration<'a>>> = "tolerations",
        #[serde(borrow)]
        acquire_time: Option<Cow<'a, str>> = "acquireTime",
        #[serde(borrow)]
        resource_claims: Option<Vec<RawPodClaim<'a>>> = "resourceClaims",
    }
}

raw! {
    /// A Pod's `spec.resourceClaims[]` entry.
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    struct RawPodClaim<'a> in pod_claim {
        #[serde(borrow)]
        name: Option<Cow<'a, str>> = "name",
        #[serde(borrow)]
        resource_claim_name: Option<Cow<'a, str>> = "resourceClaimName",
        #[serde(borrow)]
        resource_claim_template_name: Option<Cow<'a, str>> = "resourceClaimTemplateName",
    }
}

raw! {
    /// A Pod's `status.resourceClaimStatuses[]` entry, or its `status.extendedResourceClaimStatus`
    /// (which has no `name`).
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    struct RawClaimStatus<'a> in claim_status {
        #[serde(borrow)]
        name: Option<Cow<'a, str>> = "name",
        #[serde(borrow)]
        resource_claim_name: Option<Cow<'a, str>> = "resourceClaimName",
    }
}

raw! {
    /// A Node's taint.
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    fast struct RawTaint<'a> in taint {
        #[serde(borrow)]
        key: Option<Cow<'a, str>> = "key",
        #[serde(borrow)]
        value: Option<Cow<'a, str>> = "value",
        #[serde(borrow)]
        effect: Option<Cow<'a, str>> = "effect",
        #[serde(borrow)]
        time_added: Option<Cow<'a, str>> = "timeAdded",
    }
}

raw! {
    /// A Pod's toleration.
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    fast struct RawToleration<'a> in toleration {
        #[serde(borrow)]
        key: Option<Cow<'a, str>> = "key",
        #[serde(borrow)]
        operator: Option<Cow<'a, str>> = "operator",
        #[serde(borrow)]
        value: Option<Cow<'a, str>> = "value",
        #[serde(borrow)]
        effect: Option<Cow<'a, str>> = "effect",
        toleration_seconds: Option<i64> = "tolerationSeconds",
    }
}

raw! {
    /// An object's `status`, as far as the snapshot reads it; its conditions (`C`) as a reader
    /// chooses: [`RawCondition`] by default, [`RawNodeCondition`] for the node health reader.
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    struct RawStatus<'a, C = RawCondition<'a>> in status {
        #[serde(borrow)]
        phase: Option<Cow<'a, str>> = "phase",
        conditions: Option<Vec<C>> = "conditions",
        #[serde(borrow)]
        resource_claim_statuses: Option<Vec<RawClaimStatus<'a>>> = "resourceClaimStatuses",
        #[serde(borrow)]
        extended_resource_claim_status: Option<RawClaimStatus<'a>> = "extendedResourceClaimStatus",
    }
}

raw! {
    /// A condition, a Pod's or a Node's, as far as the snapshot reads it.
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    struct RawCondition<'a> in condition {
        #[serde(borrow)]
        type_: Option<Cow<'a, str>> = "type",
        #[serde(borrow)]
        status: Option<Cow<'a, str>> = "status",
        #[serde(borrow)]
        last_transition_time: Option<Cow<'a, str>> = "lastTransitionTime",
    }
    /// A Node's condition as the node lifecycle controller reads it: [`RawCondition`]'s fields, its
    /// reason and its last heartbeat (which the snapshot's readers skip unread, so that they accept
    /// what they accepted).
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    and struct RawNodeCondition<'a> {
        #[serde(borrow)]
        reason: Option<Cow<'a, str>> = "reason",
        #[serde(borrow)]
        last_heartbeat_time: Option<Cow<'a, str>> = "lastHeartbeatTime",
    }
}
