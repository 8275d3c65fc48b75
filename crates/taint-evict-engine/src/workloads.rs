//! What a snapshot holds of its pods' controllers beyond their names: the labels each one's pods
//! share (what a label selector of its pods can name), and each one's own controller when the
//! input holds the controller's object (a ReplicaSet's Deployment, a Job's CronJob). `audit`'s fixes
//! read them to say which object to edit and which labels select its pods (docs/audit.md).

use std::collections::{BTreeMap, BTreeSet};
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

/// A label's key and value (shared between the label sets that hold the same text: see
/// [`Workloads`]).
pub type Label = (Arc<str>, Arc<str>);

/// What is known of one controller, in one namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Known {
    /// The labels every pod read of it carries, but those [`CONTROLLER_LABELS`] names, by key
    /// (one list shared by the owners whose pods carry the same); `None` when none of its pods was
    /// read with its labels.
    labels: Option<Arc<[Label]>>,
    /// Its object was read: its own controller (`None`: it has none). Boxed: most objects are not.
    controller: Option<Box<Option<Owner>>>,
}

/// The controllers of a snapshot's pods, as far as the input says (see the module docs); in order,
/// so that two readings of one input are equal and print alike.
///
/// A cluster can have an owner per pod, and its workloads' pods carry a handful of label sets: each
/// set is held once, shared by the owners whose pods carry it (`sets`, which two readings need not
/// hold alike: neither equality nor `Debug` reads it). Each owner's set is its own when one of
/// its labels names it (`app.kubernetes.io/instance`), but the sets' keys, and most of their values,
/// are the same text: a set made holds the text of the set made before it where they agree (`last`),
/// as owners are read by namespace and name, one after another.
#[derive(Clone, Default)]
pub struct Workloads {
    owners: BTreeMap<Arc<Owner>, Entries>,
    sets: BTreeSet<Arc<[Label]>>,
    last: Option<Arc<[Label]>>,
}

/// What is known of one controller, by namespace: nearly always one, held in place rather than in a
/// list of its own (a cluster can have an owner per pod).
#[derive(Clone, PartialEq, Eq)]
enum Entries {
    /// One namespace.
    One((Arc<str>, Known)),
    /// Several, in the order read.
    Many(Vec<(Arc<str>, Known)>),
}

impl Entries {
    /// The entry of `namespace`, made when there is none.
    fn of(&mut self, namespace: &Arc<str>) -> &mut Known {
        if let Self::One(one) = self
            && *one.0 != **namespace
        {
            *self = Self::Many(vec![one.clone()]);
        }
        let many = match self {
            Self::One((_, known)) => return known,
            Self::Many(many) => many,
        };
        let at = match many.iter().position(|(ns, _)| **ns == **namespace) {
            Some(at) => at,
            None => {
                many.push((Arc::clone(namespace), Known::default()));
                many.len() - 1
            }
        };
        &mut many[at].1
    }

    /// Every namespace's entry, in the order read.
    fn as_slice(&self) -> &[(Arc<str>, Known)] {
        match self {
            Self::One(one) => std::slice::from_ref(one),
            Self::Many(many) => many,
        }
    }
}

impl std::fmt::Debug for Entries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl PartialEq for Workloads {
    fn eq(&self, other: &Self) -> bool {
        self.owners == other.owners
    }
}

impl Eq for Workloads {}

impl std::fmt::Debug for Workloads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Workloads").field(&self.owners).finish()
    }
}

impl Workloads {
    /// The entry of `owner` in `namespace`.
    fn entry(&mut self, namespace: &Arc<str>, owner: &Arc<Owner>) -> &mut Known {
        entry(&mut self.owners, namespace, owner)
    }

    /// The entry of `owner` in `namespace`, when there is one.
    fn get(&self, namespace: &str, owner: &Owner) -> Option<&Known> {
        self.owners.get(owner)?.as_slice().iter().find(|(ns, _)| **ns == *namespace).map(|(_, known)| known)
    }

    /// The one shared copy of label set `labels`.
    fn share(&mut self, labels: Vec<Label>) -> Arc<[Label]> {
        match self.sets.get(labels.as_slice()) {
            Some(known) => Arc::clone(known),
            None => self.share_set(labels.into()),
        }
    }

    /// The one shared copy of label set `set`: `set` itself when none is held yet.
    fn share_set(&mut self, set: Arc<[Label]>) -> Arc<[Label]> {
        if let Some(known) = self.sets.get(&*set) {
            return Arc::clone(known);
        }
        self.sets.insert(Arc::clone(&set));
        self.last = Some(Arc::clone(&set));
        set
    }

    /// Label `key`=`value`, its text that of the set made last where that set holds the same.
    fn label(&self, key: &str, value: &str) -> Label {
        match self.last.as_deref().and_then(|last| last.iter().find(|(k, _)| **k == *key)) {
            Some((k, v)) if **v == *value => (Arc::clone(k), Arc::clone(v)),
            Some((k, _)) => (Arc::clone(k), value.into()),
            None => (key.into(), value.into()),
        }
    }

    /// Counts one pod of `owner` in `namespace` with `labels`: the owner's labels become those its
    /// pods all carry (those a controller sets left out).
    pub fn add_pod<'l>(
        &mut self,
        namespace: &Arc<str>,
        owner: &Arc<Owner>,
        labels: impl IntoIterator<Item = (&'l str, &'l str)>,
    ) {
        // A repeated key: the last wins, as the API server reads a map.
        let own: BTreeMap<&str, &str> = labels.into_iter().filter(|(key, _)| !set_by_controller(key)).collect();
        let known = entry(&mut self.owners, namespace, owner);
        let labels = match &known.labels {
            None => None,
            // The same labels again, as nearly always: nothing changes.
            Some(shared) if shared.iter().all(|(key, value)| own.get(&**key) == Some(&&**value)) => return,
            Some(shared) => {
                Some(shared.iter().filter(|(key, value)| own.get(&**key) == Some(&&**value)).cloned().collect())
            }
        };
        let labels = labels.unwrap_or_else(|| own.into_iter().map(|(key, value)| self.label(key, value)).collect());
        let shared = self.share(labels);
        entry(&mut self.owners, namespace, owner).labels = Some(shared);
    }

    /// Records that `owner`'s object in `namespace` was read, with its own `controller`.
    pub fn add_object(&mut self, namespace: &Arc<str>, owner: Owner, controller: Option<Owner>) {
        self.entry(namespace, &Arc::new(owner)).controller = Some(Box::new(controller));
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
        self.get(namespace, owner)?.controller.as_deref().map(Option::as_ref)
    }

    /// Adds `other`'s knowledge (another part of the same input): the labels of an owner read in
    /// both are those both say its pods share.
    pub fn merge(&mut self, other: Workloads) {
        for (owner, entries) in other.owners {
            let entries = match entries {
                Entries::One(one) => vec![one],
                Entries::Many(many) => many,
            };
            for (namespace, known) in entries {
                let mine = entry(&mut self.owners, &namespace, &owner).labels.take();
                let labels = match (mine, known.labels) {
                    (Some(a), Some(b)) => {
                        Some(self.share(a.iter().filter(|label| b.contains(label)).cloned().collect()))
                    }
                    (a, b) => a.or(b).map(|set| self.share_set(set)),
                };
                let mine = entry(&mut self.owners, &namespace, &owner);
                mine.labels = labels;
                if known.controller.is_some() {
                    mine.controller = known.controller;
                }
            }
        }
    }

    /// The same, its table rebuilt from its entries in order: a table filled one entry at a time
    /// leaves about half of each node free, one built from its entries sorted fills them.
    pub fn shrink_to_fit(&mut self) {
        self.owners = std::mem::take(&mut self.owners).into_iter().collect();
    }
}

/// The entry of `owner` in `namespace` in `owners`, made when there is none.
fn entry<'w>(owners: &'w mut BTreeMap<Arc<Owner>, Entries>, namespace: &Arc<str>, owner: &Arc<Owner>) -> &'w mut Known {
    if !owners.contains_key(&**owner) {
        owners.insert(Arc::clone(owner), Entries::One((Arc::clone(namespace), Known::default())));
    }
    owners.get_mut(&**owner).expect("just inserted").of(namespace)
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
    fn owners_whose_pods_carry_the_same_labels_share_one_list_as_read_and_as_merged() {
        let shop = Arc::from("shop");
        let (a, b, c) = (
            Arc::new(owner("Job", "report-1", "j1")),
            Arc::new(owner("Job", "report-2", "j2")),
            Arc::new(owner("Job", "report-3", "j3")),
        );
        let mut first = Workloads::default();
        first.add_pod(&shop, &a, [("app", "report"), ("job-name", "report-1")]);
        first.add_pod(&shop, &b, [("job-name", "report-2"), ("app", "report")]);
        let mut second = Workloads::default();
        second.add_pod(&shop, &c, [("app", "report"), ("job-name", "report-3")]);
        first.merge(second);
        let lists: Vec<&[Label]> = [&a, &b, &c].iter().map(|o| first.labels("shop", o).expect("read")).collect();
        assert_eq!(lists[0], [("app".into(), "report".into())]);
        assert!(lists.iter().all(|list| std::ptr::eq(list.as_ptr(), lists[0].as_ptr())), "one list, shared");
        // An owner whose pods part from the others' labels gets a list of its own.
        first.add_pod(&shop, &b, [("app", "other")]);
        assert_eq!(first.labels("shop", &b).expect("read"), []);
        assert_eq!(first.labels("shop", &a).expect("read"), [("app".into(), "report".into())]);
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

    #[test]
    fn one_owner_named_in_two_namespaces_keeps_each_one_s_labels_as_read_as_merged_and_rebuilt() {
        let (shop, ops) = (Arc::from("shop"), Arc::from("ops"));
        let web = Arc::new(owner("ReplicaSet", "web-5d8f7", "u1"));
        let mut first = Workloads::default();
        first.add_pod(&shop, &web, [("app", "web")]);
        first.add_pod(&ops, &web, [("app", "probe")]);
        first.add_pod(&shop, &web, [("app", "web"), ("tier", "front")]);
        let mut second = Workloads::default();
        second.add_pod(&ops, &web, [("app", "probe"), ("tier", "back")]);
        second.add_object(&shop, owner("ReplicaSet", "web-5d8f7", "u1"), None);
        first.merge(second);
        first.shrink_to_fit();
        assert_eq!(first.labels("shop", &web).expect("read"), [("app".into(), "web".into())]);
        assert_eq!(first.labels("ops", &web).expect("read"), [("app".into(), "probe".into())]);
        assert_eq!((first.controller("shop", &web), first.controller("ops", &web)), (Some(None), None));
        // In the order read, as a list of each namespace's entry.
        let shown = format!("{first:?}");
        let at = shown.find("\"shop\"").zip(shown.find("\"ops\""));
        assert!(at.is_some_and(|(shop, ops)| shop < ops), "{shown}");
    }
}
