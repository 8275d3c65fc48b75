//! Toleration matching and the toleration window, as upstream computes them.
//!
//! Three pure functions carry the semantics, each mirroring its upstream function (below):
//! [`tolerates`] (one toleration against one taint), [`used_tolerations`] (first match per taint) and
//! [`window`] (the smallest `tolerationSeconds` of the used tolerations). `Lt`/`Gt` match as with
//! kube-controller-manager's `TaintTolerationComparisonOperators` gate on; with it off, the input is
//! read through [`crate::model::gate_comparison_operators`] first.

use super::model::{Operator, Taint, Toleration};
use super::time::NANOS_PER_SECOND;

/// Why a toleration does not tolerate a taint: the first check that failed, in upstream's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// The toleration names another effect.
    Effect,
    /// The toleration names another key.
    Key,
    /// `Equal` (or empty) operator and the values differ.
    Value,
    /// `Lt`/`Gt`: a value is not a canonical decimal integer of 64 bits (`0100`, `+5`, `-0`, `5.0`,
    /// empty), so the two cannot be compared.
    NotAnInteger,
    /// `Lt`/`Gt`: both values are integers, and the comparison does not hold.
    Comparison,
    /// An operator matching nothing: a misspelling (`exists`), or `Lt`/`Gt` with the gate off.
    Operator,
}

/// Checks one toleration against one taint: `Ok(())` when it tolerates it.
///
/// Mirrors `Toleration.ToleratesTaint` (`staging/src/k8s.io/api/core/v1/toleration.go`): effect, then
/// key, then operator; exact, case-sensitive comparisons; no validation of the toleration.
#[inline]
pub fn check(toleration: &Toleration, taint: &Taint) -> Result<(), Mismatch> {
    if let Some(effect) = &toleration.effect
        && *effect != taint.effect
    {
        return Err(Mismatch::Effect);
    }
    if !toleration.key.is_empty() && toleration.key != taint.key {
        return Err(Mismatch::Key);
    }
    match toleration.operator {
        Operator::Exists => Ok(()),
        Operator::Equal if toleration.value == taint.value => Ok(()),
        Operator::Equal => Err(Mismatch::Value),
        Operator::Lt | Operator::Gt => compare(toleration, taint),
        Operator::Other(_) => Err(Mismatch::Operator),
    }
}

/// `Lt`/`Gt`: out of line, so that the check of the common operators stays small enough to inline into
/// the replay's loops (docs/benchmarks-history.md, "The crate split and `Lt`/`Gt`").
#[cold]
#[inline(never)]
fn compare(toleration: &Toleration, taint: &Taint) -> Result<(), Mismatch> {
    let (Some(taint_value), Some(toleration_value)) = (integer(&taint.value), integer(&toleration.value)) else {
        return Err(Mismatch::NotAnInteger);
    };
    let holds = match toleration.operator {
        Operator::Lt => taint_value < toleration_value,
        _ => taint_value > toleration_value,
    };
    if holds { Ok(()) } else { Err(Mismatch::Comparison) }
}

/// A value `Lt`/`Gt` can compare: a decimal integer of 64 bits written as the API server validates it
/// (upstream `compareNumericValues`): no sign but a leading `-`, no leading zero, no `-0`, no space.
#[must_use]
pub fn integer(value: &str) -> Option<i64> {
    let digits = value.strip_prefix('-').unwrap_or(value);
    let canonical = match digits.as_bytes() {
        [b'0'] => digits.len() == value.len(),
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if canonical { value.parse().ok() } else { None }
}

/// Whether `toleration` tolerates `taint`.
#[must_use]
#[inline]
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    check(toleration, taint).is_ok()
}

/// For each taint in node order, the index of the first toleration (in pod order) that tolerates it.
///
/// Mirrors `GetMatchingTolerations` (`pkg/apis/core/v1/helper/helpers.go`): `Err(i)` names the
/// first taint `i` that nothing tolerates, `Ok(used)` has one toleration index per taint.
pub fn used_tolerations(taints: &[Taint], tolerations: &[Toleration]) -> Result<Vec<usize>, usize> {
    taints.iter().enumerate().map(|(i, taint)| tolerations.iter().position(|t| tolerates(t, taint)).ok_or(i)).collect()
}

/// The taints that no toleration tolerates, in node order.
pub fn untolerated<'a>(taints: &'a [Taint], tolerations: &'a [Toleration]) -> impl Iterator<Item = &'a Taint> + 'a {
    taints.iter().filter(|taint| !tolerations.iter().any(|t| tolerates(t, taint)))
}

/// How long a pod may stay on a node whose every NoExecute taint it tolerates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TolerationWindow {
    /// No used toleration sets `tolerationSeconds`, or the nanoseconds wrapped negative.
    Forever,
    /// Deleted `nanos` (never negative) after the clock starts.
    After {
        /// The deciding `tolerationSeconds`, as written (may be `<= 0`).
        seconds: i64,
        /// The window in nanoseconds, as upstream's wrapping `time.Duration` arithmetic gives it.
        nanos: i64,
    },
}

/// The window of the used tolerations.
///
/// Mirrors `getMinTolerationTime` (`pkg/controller/tainteviction/taint_eviction.go`): entries without
/// seconds mean forever and are skipped; the first entry with `seconds <= 0` makes the window zero;
/// otherwise the smallest positive value (compared as raw seconds) wins. Seconds become nanoseconds
/// with wrapping signed 64-bit multiplication, as Go's `time.Duration(s) * time.Second` does, and a
/// negative result means forever. An empty list gives a zero window, as upstream's function does; the
/// engine never asks (it never evaluates a pod against an untainted node).
#[must_use]
pub fn window<'a>(used: impl IntoIterator<Item = &'a Toleration>) -> TolerationWindow {
    let mut min: Option<i64> = None;
    let mut any = false;
    for toleration in used {
        any = true;
        let Some(seconds) = toleration.seconds else { continue };
        if seconds <= 0 {
            return TolerationWindow::After { seconds, nanos: 0 };
        }
        min = Some(min.map_or(seconds, |m| m.min(seconds)));
    }
    match min {
        Some(seconds) => match seconds.wrapping_mul(NANOS_PER_SECOND) {
            nanos if nanos < 0 => TolerationWindow::Forever,
            nanos => TolerationWindow::After { seconds, nanos },
        },
        None if any => TolerationWindow::Forever,
        None => TolerationWindow::After { seconds: 0, nanos: 0 },
    }
}

/// What the tolerations of a pod say about a node's NoExecute taints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tolerance {
    /// Some taint is tolerated by nothing: delete at once.
    Untolerated,
    /// Every taint is tolerated, for this long.
    Tolerated(TolerationWindow),
}

/// Evaluates a pod's tolerations against a node's NoExecute taints (first match per taint, then the
/// window of the used ones): the same result as [`used_tolerations`] followed by [`window`], in one
/// pass with no allocation, since it runs for every pod on every node pass.
#[must_use]
pub fn tolerance(taints: &[Taint], tolerations: &[Toleration]) -> Tolerance {
    // The first used toleration with seconds <= 0, and the smallest positive seconds, in used order.
    let mut zero: Option<i64> = None;
    let mut min: Option<i64> = None;
    for taint in taints {
        let Some(used) = tolerations.iter().find(|t| tolerates(t, taint)) else {
            return Tolerance::Untolerated;
        };
        match used.seconds {
            None => {}
            Some(seconds) if seconds <= 0 => {
                zero.get_or_insert(seconds);
            }
            Some(seconds) => min = Some(min.map_or(seconds, |m| m.min(seconds))),
        }
    }
    let window = match (zero, min) {
        (Some(seconds), _) => TolerationWindow::After { seconds, nanos: 0 },
        (None, Some(seconds)) => match seconds.wrapping_mul(NANOS_PER_SECOND) {
            nanos if nanos < 0 => TolerationWindow::Forever,
            nanos => TolerationWindow::After { seconds, nanos },
        },
        (None, None) if taints.is_empty() => TolerationWindow::After { seconds: 0, nanos: 0 },
        (None, None) => TolerationWindow::Forever,
    };
    Tolerance::Tolerated(window)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Effect::{NoExecute, NoSchedule};

    fn taint(key: &str, value: &str) -> Taint {
        Taint::new(key, value, NoExecute)
    }

    fn tol(key: &str, op: &str, value: &str, effect: &str, seconds: Option<i64>) -> Toleration {
        Toleration {
            key: key.into(),
            operator: op.into(),
            value: value.into(),
            effect: (!effect.is_empty()).then(|| effect.into()),
            seconds,
        }
    }

    struct MatchCase {
        name: &'static str,
        taint: Taint,
        toleration: Toleration,
        matches: bool,
    }

    /// Upstream's matching, case by case (`Lt`/`Gt` need the alpha gate, off by default: see
    /// `lt_and_gt_with_the_gate_on_and_off`).
    #[test]
    fn matcher_follows_upstream_on_keys_values_operators_and_effects() {
        let cases = [
            MatchCase {
                name: "Equal: the same key and value",
                taint: taint("k", "v"),
                toleration: tol("k", "Equal", "v", "NoExecute", None),
                matches: true,
            },
            MatchCase {
                name: "an empty operator is Equal",
                taint: taint("k", "v"),
                toleration: tol("k", "", "v", "NoExecute", None),
                matches: true,
            },
            MatchCase {
                name: "values compare case-sensitively",
                taint: taint("k", "v"),
                toleration: tol("k", "Equal", "V", "NoExecute", None),
                matches: false,
            },
            MatchCase {
                name: "keys compare case-sensitively",
                taint: taint("k", "v"),
                toleration: tol("K", "Exists", "", "NoExecute", None),
                matches: false,
            },
            MatchCase {
                name: "Exists: any value",
                taint: taint("k", "anything"),
                toleration: tol("k", "Exists", "", "NoExecute", None),
                matches: true,
            },
            MatchCase {
                name: "Equal: an empty value equals an empty value",
                taint: taint("k", ""),
                toleration: tol("k", "Equal", "", "NoExecute", None),
                matches: true,
            },
            MatchCase {
                name: "Equal: an empty value against a value",
                taint: taint("k", "v"),
                toleration: tol("k", "Equal", "", "NoExecute", None),
                matches: false,
            },
            MatchCase {
                name: "an empty key with Exists: any key",
                taint: taint("x", "y"),
                toleration: tol("", "Exists", "", "NoExecute", None),
                matches: true,
            },
            MatchCase {
                name: "an empty effect: every effect",
                taint: taint("x", "y"),
                toleration: tol("", "Exists", "", "", None),
                matches: true,
            },
            MatchCase {
                name: "another effect",
                taint: taint("k", "v"),
                toleration: tol("k", "Exists", "", "NoSchedule", None),
                matches: false,
            },
            MatchCase {
                name: "Exists ignores a value given",
                taint: taint("k", "v"),
                toleration: tol("k", "Exists", "zzz", "NoExecute", None),
                matches: true,
            },
            MatchCase {
                name: "an unknown operator matches nothing",
                taint: taint("k", "v"),
                toleration: tol("k", "exists", "", "NoExecute", None),
                matches: false,
            },
            MatchCase {
                name: "an empty key with Equal: the value compared",
                taint: taint("q", "v"),
                toleration: tol("", "Equal", "v", "", None),
                matches: true,
            },
        ];
        for case in cases {
            assert_eq!(tolerates(&case.toleration, &case.taint), case.matches, "case {}", case.name);
        }
    }

    #[test]
    fn lt_and_gt_with_the_gate_on_and_off() {
        let a14 = tol("k", "Gt", "3", "NoExecute", None);
        assert!(tolerates(&a14, &taint("k", "5")), "Gt: 5 > 3");
        assert!(!tolerates(&tol("k", "Lt", "10", "NoExecute", None), &taint("k", "abc")), "Lt: not an integer");
        // The gate off: Lt and Gt are operators kube-controller-manager does not know.
        let off = crate::model::gate_comparison_operators(std::slice::from_ref(&a14), false).expect("changed");
        assert_eq!(check(&off[0], &taint("k", "5")), Err(Mismatch::Operator));
        assert!(crate::model::gate_comparison_operators(std::slice::from_ref(&a14), true).is_none(), "on: as read");
        let plain = tol("k", "Exists", "", "NoExecute", None);
        assert!(crate::model::gate_comparison_operators(&[plain], false).is_none(), "nothing to change");
    }

    #[test]
    fn lt_gt_compare_as_upstream_compare_numeric_values() {
        // Upstream's TestCompareNumericValues (core/v1/toleration_test.go, 1.35): (toleration, taint,
        // operator, tolerated).
        let cases = [
            ("100", "200", "Gt", true),
            ("200", "100", "Gt", false),
            ("100", "100", "Gt", false),
            ("-100", "-50", "Gt", true),
            ("-50", "-100", "Gt", false),
            ("0", "1", "Gt", true),
            ("9223372036854775806", "9223372036854775807", "Gt", true),
            ("200", "100", "Lt", true),
            ("100", "200", "Lt", false),
            ("100", "100", "Lt", false),
            ("-50", "-100", "Lt", true),
            ("-100", "-50", "Lt", false),
            ("0", "-1", "Lt", true),
            ("abc", "100", "Gt", false),
            ("", "100", "Gt", false),
            ("0100", "200", "Gt", false),
            ("+100", "200", "Gt", false),
            ("100.5", "200", "Gt", false),
            ("-", "100", "Gt", false),
            ("100", "xyz", "Gt", false),
            ("100", "", "Gt", false),
            ("100", "0200", "Gt", false),
            ("100", "+200", "Lt", false),
            ("100", " 200 ", "Lt", false),
            ("0", "0", "Gt", false),
            ("0", "0", "Lt", false),
            ("0", "9223372036854775807", "Gt", true),
            ("0", "-9223372036854775808", "Lt", true),
        ];
        for (toleration, taint_value, op, tolerated) in cases {
            let t = tol("k", op, toleration, "NoExecute", None);
            assert_eq!(tolerates(&t, &taint("k", taint_value)), tolerated, "{toleration} {op} {taint_value}");
        }
    }

    #[test]
    fn integers_are_what_the_api_server_validates() {
        for (value, parsed) in [
            ("0", Some(0)),
            ("7", Some(7)),
            ("-7", Some(-7)),
            ("-9223372036854775808", Some(i64::MIN)),
            ("9223372036854775807", Some(i64::MAX)),
            ("9223372036854775808", None),
            ("-9223372036854775809", None),
            ("-0", None),
            ("00", None),
            ("07", None),
            ("+7", None),
            ("", None),
            ("-", None),
            ("1e3", None),
            ("١", None),
        ] {
            assert_eq!(integer(value), parsed, "{value:?}");
        }
    }

    #[test]
    fn seconds_play_no_part_in_matching() {
        assert!(tolerates(&tol("k", "Exists", "", "NoExecute", Some(-1)), &taint("k", "v")));
    }

    #[test]
    fn check_names_the_first_failed_rule() {
        let t = taint("k", "v");
        assert_eq!(check(&tol("k", "Equal", "v", "NoSchedule", None), &t), Err(Mismatch::Effect));
        assert_eq!(check(&tol("other", "Equal", "v", "NoSchedule", None), &t), Err(Mismatch::Effect));
        assert_eq!(check(&tol("other", "Equal", "v", "NoExecute", None), &t), Err(Mismatch::Key));
        assert_eq!(check(&tol("k", "Equal", "w", "", None), &t), Err(Mismatch::Value));
        assert_eq!(check(&tol("k", "Gt", "1", "", None), &t), Err(Mismatch::NotAnInteger));
        assert_eq!(check(&tol("k", "Gt", "1", "", None), &taint("k", "1")), Err(Mismatch::Comparison));
        assert_eq!(check(&tol("k", "gt", "1", "", None), &t), Err(Mismatch::Operator));
    }

    fn secs(values: &[Option<i64>]) -> Vec<Toleration> {
        values.iter().map(|&s| tol("", "Exists", "", "", s)).collect()
    }

    fn after(seconds: i64, nanos: i64) -> TolerationWindow {
        TolerationWindow::After { seconds, nanos }
    }

    /// The cases of upstream's `TestGetMinTolerationTime` (`getMinTolerationTime`), and its overflows.
    #[test]
    fn window_follows_upstream_get_min_toleration_time() {
        const S: i64 = NANOS_PER_SECOND;
        let cases: &[(&str, &[Option<i64>], TolerationWindow)] = &[
            ("nothing used: zero", &[], after(0, 0)),
            ("one forever: forever", &[None], TolerationWindow::Forever),
            ("finite, then forever: the finite", &[Some(60), None], after(60, 60 * S)),
            ("forever, then finite: the finite", &[None, Some(60)], after(60, 60 * S)),
            ("the smallest", &[Some(60), Some(30)], after(30, 30 * S)),
            ("zero is the smallest", &[Some(60), Some(0)], after(0, 0)),
            ("negative: no nanoseconds", &[Some(-5), Some(60)], after(-5, 0)),
            ("the most nanoseconds hold", &[Some(9_223_372_036)], after(9_223_372_036, 9_223_372_036 * S)),
            ("one second more: forever", &[Some(9_223_372_037)], TolerationWindow::Forever),
            ("2^64 s wraps as upstream's", &[Some(18_446_744_074)], after(18_446_744_074, 290_448_384)),
            ("wrapped beside a small one: the small one", &[Some(18_446_744_074), Some(100)], after(100, 100 * S)),
        ];
        for (name, used, expected) in cases {
            assert_eq!(window(&secs(used)), *expected, "case {name}");
        }
    }

    #[test]
    fn window_wraps_18446744073_seconds_to_forever() {
        // -709551616 ns after wrapping: upstream takes it as forever.
        assert_eq!(window(&secs(&[Some(18_446_744_073)])), TolerationWindow::Forever);
    }

    /// `GetMatchingTolerations`: the first match wins.
    #[test]
    fn first_match_follows_upstream_get_matching_tolerations() {
        let a = taint("a", "");
        let b = taint("b", "");
        let all = tol("", "Exists", "", "", None);
        let a_forever = tol("a", "Exists", "", "NoExecute", None);
        let a60 = tol("a", "Exists", "", "NoExecute", Some(60));

        // b is tolerated by nothing.
        assert_eq!(used_tolerations(&[a.clone(), b.clone()], std::slice::from_ref(&a_forever)), Err(1), "untolerated");
        assert_eq!(tolerance(&[a.clone(), b.clone()], &[a_forever]), Tolerance::Untolerated, "untolerated");
        // The broad forever toleration comes first and is used for both taints.
        let c2 = [all.clone(), a60.clone()];
        assert_eq!(used_tolerations(&[a.clone(), b.clone()], &c2), Ok(vec![0, 0]), "forever first");
        assert_eq!(
            tolerance(&[a.clone(), b.clone()], &c2),
            Tolerance::Tolerated(TolerationWindow::Forever),
            "forever first"
        );
        // The finite one comes first and decides.
        let c3 = [a60, all];
        assert_eq!(used_tolerations(&[a.clone(), b.clone()], &c3), Ok(vec![0, 1]), "finite first");
        assert_eq!(
            tolerance(&[a.clone(), b], &c3),
            Tolerance::Tolerated(after(60, 60 * NANOS_PER_SECOND)),
            "finite first"
        );
        // No tolerations at all.
        assert_eq!(tolerance(&[a], &[]), Tolerance::Untolerated, "no tolerations");
        // No taints: everything tolerated, nothing used.
        assert_eq!(used_tolerations(&[], &c3), Ok(vec![]), "no taints");
    }

    #[test]
    fn tolerance_agrees_with_used_tolerations_then_window() {
        let taints = [taint("a", ""), taint("b", ""), taint("c", "")];
        let pool: Vec<Toleration> =
            [None, Some(-3), Some(0), Some(7), Some(2), Some(18_446_744_074), Some(9_223_372_037)]
                .iter()
                .flat_map(|s| ["a", "b", "c", ""].map(|k| tol(k, "Exists", "", "NoExecute", *s)))
                .collect();
        // Every ordered choice of up to three tolerations from the pool, against 0..=3 taints.
        for i in 0..pool.len() {
            for j in 0..pool.len() {
                for k in 0..pool.len() {
                    let tolerations = [pool[i].clone(), pool[j].clone(), pool[k].clone()];
                    for n in 0..=taints.len() {
                        let expected = match used_tolerations(&taints[..n], &tolerations) {
                            Err(_) => Tolerance::Untolerated,
                            Ok(used) => Tolerance::Tolerated(window(used.iter().map(|&u| &tolerations[u]))),
                        };
                        assert_eq!(tolerance(&taints[..n], &tolerations), expected, "{tolerations:?} vs {n} taints");
                    }
                }
            }
        }
    }

    #[test]
    fn untolerated_lists_each_taint_nothing_tolerates() {
        let taints = [taint("a", ""), taint("b", "x"), Taint::new("c", "", NoSchedule)];
        let tolerations = [tol("a", "Exists", "", "NoExecute", None)];
        let names: Vec<_> = untolerated(&taints, &tolerations).map(|t| &*t.key).collect();
        assert_eq!(names, ["b", "c"]);
    }
}
