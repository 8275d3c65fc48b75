//! What a snapshot holds of its pods' controllers beyond their names: the labels each one's pods
//! share (what a label selector of its pods can name), and each one's own controller when the
//! input holds the controller's object (a ReplicaSet's Deployment, a Job's CronJob). `audit`'s fixes
//! read them to say which object to edit and which labels select its pods (docs/audit.md).

use std::collections::BTreeMap;
use std::sync::Arc;

/// A pod's controller, as its `ownerReferences` name it: a ReplicaSet, a StatefulSet, a DaemonSet,
/// a Job, or any other kind (in the pod's namespace).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Owner {
    /// `kind`: a handful of words, shared by the owners of a snapshot.
    pub kind: Arc<str>,
    /// `name`.
    pub name: Box<str>,
    /// `uid`: a workload deleted and made again under the same name is another owner.
    pub uid: Box<str>,
}

/// Labels a controller sets on each pod, or on each revision of its pods: not the pod template's
/// own, so a selector that names them misses the pods of another revision, or every pod but one.
/// A Job's selector labels are left out too: a CronJob's Jobs each get their own.
pub const CONTROLLER_LABELS: &[&str] = &[
    "pod-template-hash",
    "controller-revision-hash",
    "pod-template-generation",
    "statefulset.kubernetes.io/pod-name",
    "apps.kubernetes.io/pod-index",
    "batch.kubernetes.io/job-completion-index",
    "batch.kubernetes.io/controller-uid",
    "controller-uid",
    "batch.kubernetes.io/job-name",
    "job-name",
];

/// Whether label `key` is one a controller sets ([`CONTROLLER_LABELS`]).
#[must_use]
pub fn set_by_controller(key: &str) -> bool {
    CONTROLLER_LABELS.contains(&key)
}

/// A label's key and value.
pub type Label = (Box<str>, Box<str>);

/// What is known of one controller, in one namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Known {
    /// The labels every pod read of it carries, but those [`CONTROLLER_LABELS`] names, by key;
    /// `None` when none of its pods was read with its labels.
    labels: Option<Vec<Label>>,
    /// Its object was read: its own controller (`None`: it has none).
    controller: Option<Option<Owner>>,
}

/// The controllers of a snapshot's pods, as far as the input says (see the module docs); in order,
/// so that two readings of one input are equal and print alike.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Workloads(BTreeMap<Arc<Owner>, Vec<(Arc<str>, Known)>>);

impl Workloads {
    /// The entry of `owner` in `namespace`.
    fn entry(&mut self, namespace: &Arc<str>, owner: &Arc<Owner>) -> &mut Known {
        if !self.0.contains_key(&**owner) {
            self.0.insert(Arc::clone(owner), Vec::new());
        }
        let entries = self.0.get_mut(&**owner).expect("just inserted");
        let at = match entries.iter().position(|(ns, _)| **ns == **namespace) {
            Some(at) => at,
            None => {
                entries.push((Arc::clone(namespace), Known::default()));
                entries.len() - 1
            }
        };
        &mut entries[at].1
    }

    /// The entry of `owner` in `namespace`, when there is one.
    fn get(&self, namespace: &str, owner: &Owner) -> Option<&Known> {
        self.0.get(owner)?.iter().find(|(ns, _)| **ns == *namespace).map(|(_, known)| known)
    }

    /// Counts one pod of `owner` in `namespace` with `labels`: the owner's labels become those its
    /// pods all carry (those a controller sets left out).
    pub fn add_pod<'l>(
        &mut self,
        namespace: &Arc<str>,
        owner: &Arc<Owner>,
        labels: impl IntoIterator<Item = (&'l str, &'l str)>,
    ) {
        let known = self.entry(namespace, owner);
        // A repeated key: the last wins, as the API server reads a map.
        let own: BTreeMap<&str, &str> = labels.into_iter().filter(|(key, _)| !set_by_controller(key)).collect();
        match &mut known.labels {
            None => known.labels = Some(own.into_iter().map(|(key, value)| (key.into(), value.into())).collect()),
            Some(shared) => shared.retain(|(key, value)| own.get(&**key) == Some(&&**value)),
        }
    }

    /// Records that `owner`'s object in `namespace` was read, with its own `controller`.
    pub fn add_object(&mut self, namespace: &Arc<str>, owner: Owner, controller: Option<Owner>) {
        self.entry(namespace, &Arc::new(owner)).controller = Some(controller);
    }

    /// The labels every pod read of `owner` in `namespace` carries, but those a controller sets,
    /// sorted by key; `None` when none of its pods was read with its labels.
    #[must_use]
    pub fn labels(&self, namespace: &str, owner: &Owner) -> Option<&[Label]> {
        self.get(namespace, owner)?.labels.as_deref()
    }

    /// `owner`'s own controller in `namespace`: `Some(None)` when its object was read and names
    /// none, `None` when it was not read (the input does not hold it, or holds another object of
    /// that name: a `uid` that differs).
    #[must_use]
    pub fn controller(&self, namespace: &str, owner: &Owner) -> Option<Option<&Owner>> {
        self.get(namespace, owner)?.controller.as_ref().map(Option::as_ref)
    }

    /// Adds `other`'s knowledge (another part of the same input): the labels of an owner read in
    /// both are those both say its pods share.
    pub fn merge(&mut self, other: Workloads) {
        for (owner, entries) in other.0 {
            for (namespace, known) in entries {
                let mine = self.entry(&namespace, &owner);
                mine.labels = match (mine.labels.take(), known.labels) {
                    (Some(mut a), Some(b)) => {
                        a.retain(|label| b.contains(label));
                        Some(a)
                    }
                    (a, b) => a.or(b),
                };
                if known.controller.is_some() {
                    mine.controller = known.controller;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(kind: &str, name: &str, uid: &str) -> Owner {
        Owner { kind: kind.into(), name: name.into(), uid: uid.into() }
    }

    #[test]
    fn an_owner_s_labels_are_those_its_pods_share_without_the_controller_s() {
        let mut workloads = Workloads::default();
        let (shop, web) = (Arc::from("shop"), Arc::new(owner("ReplicaSet", "web-5d8f7", "u1")));
        workloads.add_pod(&shop, &web, [("app", "web"), ("tier", "front"), ("pod-template-hash", "5d8f7")]);
        workloads.add_pod(
            &shop,
            &web,
            [("tier", "front"), ("app", "web"), ("canary", "yes"), ("pod-template-hash", "5d8f7")],
        );
        let labels = workloads.labels("shop", &web).expect("read");
        assert_eq!(labels, [("app".into(), "web".into()), ("tier".into(), "front".into())]);
        // A pod of another value of `tier`: only `app` is shared.
        workloads.add_pod(&shop, &web, [("app", "web"), ("tier", "back")]);
        assert_eq!(workloads.labels("shop", &web).expect("read"), [("app".into(), "web".into())]);
        assert_eq!(workloads.labels("other", &web), None);
        assert_eq!(workloads.controller("shop", &web), None);
    }

    #[test]
    fn an_object_read_says_its_controller_or_none_and_another_uid_is_not_it() {
        let mut workloads = Workloads::default();
        let shop = Arc::from("shop");
        let deployment = owner("Deployment", "web", "d1");
        workloads.add_object(&shop, owner("ReplicaSet", "web-5d8f7", "u1"), Some(deployment.clone()));
        workloads.add_object(&shop, owner("ReplicaSet", "cache-6c9d4", "u2"), None);
        assert_eq!(workloads.controller("shop", &owner("ReplicaSet", "web-5d8f7", "u1")), Some(Some(&deployment)));
        assert_eq!(workloads.controller("shop", &owner("ReplicaSet", "cache-6c9d4", "u2")), Some(None));
        assert_eq!(workloads.controller("shop", &owner("ReplicaSet", "cache-6c9d4", "u3")), None);
        assert_eq!(workloads.controller("ops", &owner("ReplicaSet", "cache-6c9d4", "u2")), None);
    }
}
