//! What a snapshot holds of its pods' controllers beyond their names: the labels each one's pods
//! share (what a label selector of its pods can name), and each one's own controller when the
//! input holds the controller's object (a ReplicaSet's Deployment, a Job's CronJob). `audit`'s fixes
//! read them to say which object to edit and which labels select its pods (docs/audit.md).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A pod's controller, as its `ownerReferences` name it: a ReplicaSet, a StatefulSet, a DaemonSet,
/// a Job, or any other kind (in the pod's namespace): its `kind`, `name` and `uid` (a workload deleted
/// and made again under the same name is another owner).
///
/// A cluster can have an owner per pod: the three are one shared text, one allocation; clones share
/// it. Owners are ordered by kind, then name, then uid.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Owner {
    /// `kind`, `name` and `uid`, one after another.
    text: Arc<str>,
    /// Where `kind` ends in `text`.
    kind_end: u32,
    /// Where `name` ends.
    name_end: u32,
}

impl Owner {
    /// The owner of kind `kind`, named `name`, of uid `uid` (a kind or name past 4 GiB, which no API
    /// server stores, is cut there).
    #[must_use]
    pub fn new(kind: &str, name: &str, uid: &str) -> Self {
        /// `text`, cut to `most` bytes at most, and its length.
        fn cut(text: &str, most: u32) -> (&str, u32) {
            let most = usize::try_from(most).unwrap_or(usize::MAX).min(text.len());
            let end = (0..=most).rev().find(|&at| text.is_char_boundary(at)).unwrap_or_default();
            (&text[..end], u32::try_from(end).unwrap_or(u32::MAX))
        }
        let (kind, kind_end) = cut(kind, u32::MAX);
        let (name, name_length) = cut(name, u32::MAX - kind_end);
        let text: Arc<str> = [kind, name, uid].concat().into();
        Self { text, kind_end, name_end: kind_end + name_length }
    }

    /// Its kind, name and uid.
    fn parts(&self) -> (&str, &str, &str) {
        let (kind_end, name_end) = (self.kind_end as usize, self.name_end as usize);
        (&self.text[..kind_end], &self.text[kind_end..name_end], &self.text[name_end..])
    }

    /// `kind`.
    #[must_use]
    pub fn kind(&self) -> &str {
        &self.text[..self.kind_end as usize]
    }

    /// `name`.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.text[self.kind_end as usize..self.name_end as usize]
    }

    /// `uid`.
    #[must_use]
    pub fn uid(&self) -> &str {
        &self.text[self.name_end as usize..]
    }
}

impl Ord for Owner {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.text, &other.text) {
            return std::cmp::Ordering::Equal;
        }
        self.parts().cmp(&other.parts())
    }
}

impl PartialOrd for Owner {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Debug for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, name, uid) = self.parts();
        f.debug_struct("Owner").field("kind", &kind).field("name", &name).field("uid", &uid).finish()
    }
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

/// What is known of one controller in one namespace: an entry of [`Workloads`].
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    owner: Owner,
    namespace: Arc<str>,
    /// The labels every pod read of it carries, but those [`CONTROLLER_LABELS`] names, by key
    /// (one list shared by the owners whose pods carry the same); `None` when none of its pods was
    /// read with its labels.
    labels: Option<Arc<[Label]>>,
    /// Its object was read: its own controller (`None`: it has none). Boxed: most objects are not.
    controller: Option<Box<Option<Owner>>>,
}

impl Entry {
    /// Whether this is the entry of `owner` in `namespace`.
    fn is(&self, namespace: &str, owner: &Owner) -> bool {
        *self.namespace == *namespace && self.owner == *owner
    }

    /// The order of the entries once settled: by owner, then namespace.
    fn order(&self, other: &Self) -> std::cmp::Ordering {
        self.owner.cmp(&other.owner).then_with(|| self.namespace.cmp(&other.namespace))
    }

    /// Takes in `later`, an entry of the same owner and namespace read after this one: the labels
    /// both say its pods share (as `share` holds them), the controller `later` read, if it read one.
    fn absorb(&mut self, later: &mut Entry, share: impl FnOnce(Vec<Label>) -> Arc<[Label]>) {
        self.labels = match (self.labels.take(), later.labels.take()) {
            (Some(a), Some(b)) => Some(share(a.iter().filter(|label| b.contains(label)).cloned().collect())),
            (a, b) => a.or(b),
        };
        if later.controller.is_some() {
            self.controller = later.controller.take();
        }
    }
}

/// The controllers of a snapshot's pods, as far as the input says (see the module docs); in order,
/// so that two readings of one input are equal and print alike.
///
/// A cluster can have an owner per pod: the entries are one list, an owner and namespace's found by
/// halving once the list is settled ([`Workloads::settle`]: sorted, each owner and namespace once);
/// until then what was added since follows in the order read, and a question about it reads it all.
/// Its workloads' pods carry a handful of label sets: each set is held once, shared by the owners
/// whose pods carry it (`sets`, which two readings need not hold alike: neither equality nor `Debug`
/// reads it). Each owner's set is its own when one of its labels names it
/// (`app.kubernetes.io/instance`), but the sets' keys, and most of their values, are the same text: a
/// set made holds the text of the set made before it where they agree (`last`), as owners are read by
/// namespace and name, one after another.
#[derive(Clone, Default)]
pub struct Workloads {
    entries: Vec<Entry>,
    /// How many entries, from the first, are settled.
    settled: usize,
    sets: BTreeSet<Arc<[Label]>>,
    last: Option<Arc<[Label]>>,
}

impl PartialEq for Workloads {
    fn eq(&self, other: &Self) -> bool {
        self.settled_entries() == other.settled_entries()
    }
}

impl Eq for Workloads {}

impl std::fmt::Debug for Workloads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Workloads").field(&self.settled_entries()).finish()
    }
}

impl Workloads {
    /// The entries, settled (a copy, when they are not).
    fn settled_entries(&self) -> std::borrow::Cow<'_, [Entry]> {
        if self.settled == self.entries.len() {
            return std::borrow::Cow::Borrowed(&self.entries);
        }
        let mut copy = self.clone();
        copy.settle();
        std::borrow::Cow::Owned(copy.entries)
    }

    /// What is known of `owner` in `namespace`, when anything is: its entries taken together.
    fn known(&self, namespace: &str, owner: &Owner) -> Option<Entry> {
        let (settled, added) = self.entries.split_at(self.settled);
        let found = settled
            .binary_search_by(|entry| (&entry.owner, &*entry.namespace).cmp(&(owner, namespace)))
            .ok()
            .map(|at| &settled[at]);
        let mut entries = found.into_iter().chain(added.iter().filter(|entry| entry.is(namespace, owner))).cloned();
        let mut known = entries.next()?;
        for mut later in entries {
            known.absorb(&mut later, Arc::from);
        }
        Some(known)
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

    /// The entry of `owner` in `namespace` added last, when it is the last entry (a workload's pods
    /// are read one after another); else a new one.
    fn last_entry(&mut self, namespace: &Arc<str>, owner: &Owner) -> &mut Entry {
        let added = self.entries.len() > self.settled;
        if !(added && self.entries.last().is_some_and(|last| last.is(namespace, owner))) {
            self.entries.push(Entry {
                owner: owner.clone(),
                namespace: Arc::clone(namespace),
                labels: None,
                controller: None,
            });
        }
        self.entries.last_mut().expect("just pushed")
    }

    /// Counts one pod of `owner` in `namespace` with `labels`: the owner's labels become those its
    /// pods all carry (those a controller sets left out).
    pub fn add_pod<'l>(
        &mut self,
        namespace: &Arc<str>,
        owner: &Owner,
        labels: impl IntoIterator<Item = (&'l str, &'l str)>,
    ) {
        // A repeated key: the last wins, as the API server reads a map.
        let own: BTreeMap<&str, &str> = labels.into_iter().filter(|(key, _)| !set_by_controller(key)).collect();
        let entry = self.last_entry(namespace, owner);
        let labels = match &entry.labels {
            None => None,
            // The same labels again, as nearly always: nothing changes.
            Some(shared) if shared.iter().all(|(key, value)| own.get(&**key) == Some(&&**value)) => return,
            Some(shared) => {
                Some(shared.iter().filter(|(key, value)| own.get(&**key) == Some(&&**value)).cloned().collect())
            }
        };
        let labels = labels.unwrap_or_else(|| own.into_iter().map(|(key, value)| self.label(key, value)).collect());
        let shared = self.share(labels);
        self.entries.last_mut().expect("the entry of this pod").labels = Some(shared);
    }

    /// Records that `owner`'s object in `namespace` was read, with its own `controller`.
    pub fn add_object(&mut self, namespace: &Arc<str>, owner: Owner, controller: Option<Owner>) {
        self.last_entry(namespace, &owner).controller = Some(Box::new(controller));
    }

    /// The labels every pod read of `owner` in `namespace` carries, but those a controller sets,
    /// sorted by key; `None` when none of its pods was read with its labels.
    #[must_use]
    pub fn labels(&self, namespace: &str, owner: &Owner) -> Option<Arc<[Label]>> {
        self.known(namespace, owner)?.labels
    }

    /// `owner`'s own controller in `namespace`: `Some(None)` when its object was read and names
    /// none, `None` when it was not read (the input does not hold it, or holds another object of
    /// that name: a `uid` that differs).
    #[must_use]
    pub fn controller(&self, namespace: &str, owner: &Owner) -> Option<Option<Owner>> {
        self.known(namespace, owner)?.controller.map(|controller| *controller)
    }

    /// Adds `other`'s knowledge (another part of the same input), after what was added before: the
    /// labels of an owner read in both are those both say its pods share ([`Workloads::settle`]).
    pub fn merge(&mut self, other: Workloads) {
        self.entries.reserve(other.entries.len());
        for mut entry in other.entries {
            entry.labels = entry.labels.map(|set| self.share_set(set));
            self.entries.push(entry);
        }
    }

    /// Sorts the entries and makes each owner and namespace's one (what its entries say together:
    /// the labels all say, the controller read last), so that questions find them by halving; gives
    /// back the room the list did not fill.
    pub fn settle(&mut self) {
        if self.settled < self.entries.len() {
            let mut entries = std::mem::take(&mut self.entries);
            // Stable: an owner and namespace's entries stay in the order read.
            entries.sort_by(Entry::order);
            entries.dedup_by(|later, first| {
                let same = later.order(first).is_eq();
                if same {
                    first.absorb(later, |set| self.share(set));
                }
                same
            });
            self.entries = entries;
        }
        self.entries.shrink_to_fit();
        self.settled = self.entries.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(kind: &str, name: &str, uid: &str) -> Owner {
        Owner::new(kind, name, uid)
    }

    #[test]
    fn an_owner_is_its_kind_name_and_uid_in_that_order_however_their_texts_join() {
        let web = owner("ReplicaSet", "web", "u1");
        assert_eq!((web.kind(), web.name(), web.uid()), ("ReplicaSet", "web", "u1"));
        // One text, "ReplicaSetweb": joined alike, not the same owner.
        assert_ne!(owner("ReplicaSet", "web", "u1"), owner("ReplicaSetw", "eb", "u1"));
        let mut owners = [owner("ReplicaSet", "web", "u2"), owner("Job", "z", "u"), owner("ReplicaSet", "we", "u3")];
        owners.sort();
        let names: Vec<&str> = owners.iter().map(Owner::name).collect();
        assert_eq!(names, ["z", "we", "web"], "by kind, then name, then uid");
        assert_eq!(owner("ReplicaSet", "web", "u1").cmp(&web), std::cmp::Ordering::Equal);
    }

    #[test]
    fn an_owner_s_labels_are_those_its_pods_share_without_the_controller_s() {
        let mut workloads = Workloads::default();
        let (shop, web) = (Arc::from("shop"), (owner("ReplicaSet", "web-5d8f7", "u1")));
        workloads.add_pod(&shop, &web, [("app", "web"), ("tier", "front"), ("pod-template-hash", "5d8f7")]);
        workloads.add_pod(
            &shop,
            &web,
            [("tier", "front"), ("app", "web"), ("canary", "yes"), ("pod-template-hash", "5d8f7")],
        );
        let labels = workloads.labels("shop", &web).expect("read");
        assert_eq!(*labels, [("app".into(), "web".into()), ("tier".into(), "front".into())]);
        // A pod of another value of `tier`: only `app` is shared.
        workloads.add_pod(&shop, &web, [("app", "web"), ("tier", "back")]);
        assert_eq!(workloads.labels("shop", &web).as_deref().expect("read"), [("app".into(), "web".into())]);
        assert_eq!(workloads.labels("other", &web), None);
        assert_eq!(workloads.controller("shop", &web), None);
    }

    #[test]
    fn owners_whose_pods_carry_the_same_labels_share_one_list_as_read_and_as_merged() {
        let shop = Arc::from("shop");
        let (a, b, c) =
            ((owner("Job", "report-1", "j1")), (owner("Job", "report-2", "j2")), (owner("Job", "report-3", "j3")));
        let mut first = Workloads::default();
        first.add_pod(&shop, &a, [("app", "report"), ("job-name", "report-1")]);
        first.add_pod(&shop, &b, [("job-name", "report-2"), ("app", "report")]);
        let mut second = Workloads::default();
        second.add_pod(&shop, &c, [("app", "report"), ("job-name", "report-3")]);
        first.merge(second);
        let lists: Vec<Arc<[Label]>> = [&a, &b, &c].iter().map(|o| first.labels("shop", o).expect("read")).collect();
        assert_eq!(*lists[0], [("app".into(), "report".into())]);
        assert!(lists.iter().all(|list| Arc::ptr_eq(list, &lists[0])), "one list, shared");
        first.settle();
        let settled = first.labels("shop", &c).expect("read");
        assert!(Arc::ptr_eq(&settled, &lists[0]), "and settled");
        // An owner whose pods part from the others' labels gets a list of its own.
        first.add_pod(&shop, &b, [("app", "other")]);
        assert_eq!(first.labels("shop", &b).as_deref().expect("read"), []);
        assert_eq!(first.labels("shop", &a).as_deref().expect("read"), [("app".into(), "report".into())]);
    }

    #[test]
    fn an_object_read_says_its_controller_or_none_and_another_uid_is_not_it() {
        let mut workloads = Workloads::default();
        let shop = Arc::from("shop");
        let deployment = owner("Deployment", "web", "d1");
        workloads.add_object(&shop, owner("ReplicaSet", "web-5d8f7", "u1"), Some(deployment.clone()));
        workloads.add_object(&shop, owner("ReplicaSet", "cache-6c9d4", "u2"), None);
        assert_eq!(
            workloads.controller("shop", &owner("ReplicaSet", "web-5d8f7", "u1")),
            Some(Some(deployment.clone()))
        );
        assert_eq!(workloads.controller("shop", &owner("ReplicaSet", "cache-6c9d4", "u2")), Some(None));
        assert_eq!(workloads.controller("shop", &owner("ReplicaSet", "cache-6c9d4", "u3")), None);
        assert_eq!(workloads.controller("ops", &owner("ReplicaSet", "cache-6c9d4", "u2")), None);
    }

    #[test]
    fn one_owner_named_in_two_namespaces_keeps_each_one_s_labels_as_read_as_merged_and_rebuilt() {
        let (shop, ops) = (Arc::from("shop"), Arc::from("ops"));
        let web = owner("ReplicaSet", "web-5d8f7", "u1");
        let mut first = Workloads::default();
        first.add_pod(&shop, &web, [("app", "web")]);
        first.add_pod(&ops, &web, [("app", "probe")]);
        first.add_pod(&shop, &web, [("app", "web"), ("tier", "front")]);
        let mut second = Workloads::default();
        second.add_pod(&ops, &web, [("app", "probe"), ("tier", "back")]);
        second.add_object(&shop, owner("ReplicaSet", "web-5d8f7", "u1"), None);
        first.merge(second);
        let unsettled = first.clone();
        first.settle();
        assert_eq!(unsettled, first, "a question about what was added reads it all");
        assert_eq!(unsettled.labels("ops", &web), first.labels("ops", &web));
        assert_eq!(unsettled.labels("shop", &web), first.labels("shop", &web));
        assert_eq!(unsettled.controller("shop", &web), Some(None), "the object read last, not yet settled");
        assert_eq!(first.labels("shop", &web).as_deref().expect("read"), [("app".into(), "web".into())]);
        assert_eq!(first.labels("ops", &web).as_deref().expect("read"), [("app".into(), "probe".into())]);
        assert_eq!((first.controller("shop", &web), first.controller("ops", &web)), (Some(None), None));
        // Settled, an entry per namespace, by name; the same settled or not.
        let shown = format!("{first:?}");
        let at = shown.find("\"shop\"").zip(shown.find("\"ops\""));
        assert!(at.is_some_and(|(shop, ops)| ops < shop), "{shown}");
        assert_eq!(shown.matches("\"shop\"").count(), 1, "{shown}");
    }
}
