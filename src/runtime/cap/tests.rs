use super::*;

fn t(seconds: i64) -> Timestamp {
    Timestamp::from_unix_seconds(1_000 + seconds)
}

#[test]
fn a_slot_frees_as_its_deletion_leaves_the_window_and_a_refusal_gives_its_slot_back() {
    let mut cap = Cap::new(Some((2, Duration::from_secs(60))), Ledger::default(), false);
    assert_eq!(cap.next_slot(t(0)), Some(t(0)));
    assert!(cap.count(t(0)).is_none(), "without a Lease nothing waits");
    cap.count(t(10));
    assert_eq!(cap.next_slot(t(10)), Some(t(60)), "full until the first leaves");
    cap.give_back(t(10));
    assert_eq!(cap.next_slot(t(10)), Some(t(10)), "a refused eviction takes no slot");
    cap.prune(t(60));
    assert_eq!(cap.started, VecDeque::new());
}

#[test]
fn a_term_begins_with_what_the_ledger_counted_and_a_count_waits_for_its_lease() {
    let ledger = Ledger::default();
    ledger.adopt(vec![t(-70), t(-30)], Vec::new());
    let mut cap = Cap::new(Some((1, Duration::from_secs(60))), ledger.clone(), true);
    cap.begin(t(0));
    assert_eq!(cap.next_slot(t(0)), Some(t(30)), "the deletion at -30 holds the slot; -70 left the window");
    assert!(cap.count(t(30)).is_some(), "with a Lease, it waits for the write");
    assert_eq!(ledger.started(), [t(-30), t(30)]);
}

// The loop asking it, on tokio's paused clock: the tests measure its time directly.
#[allow(clippy::disallowed_methods)]
mod in_the_loop;
