//! Frozen decisions (copied into the generated crates with the runtime).
//!
//! The plain copy of a program passes every decision of its piecewise
//! computation through [`decide`]: a comparison of reals, a cast to an
//! integer, `floor`, `ceil`, `round`, `trunc`, the quotient of a real `%`,
//! the sign `abs` takes and the argument `min`, `max` return (see
//! `runtime::pt`). Recorded at a point and replayed at points nearby, the
//! decisions make the plain copy the smooth piece of the function that
//! forward-mode AD differentiates at that point (the derivative of the
//! branch taken, `#[pointwise]`'s convention), so central differences of the
//! replayed copy can be compared with the tangent also where a kink or a
//! jump lies within the stencil — or thousands of them, as in `x % 1e-12`.
//!
//! Decisions are kept per point ([`point`]); integer values computed from
//! frozen decisions are frozen too, so replaying follows the recorded path.

use std::cell::RefCell;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Off,
    Record,
    Replay,
}

struct Tape {
    mode: Mode,
    /// The decisions of each point.
    points: Vec<Vec<u64>>,
    /// The point being evaluated and the next decision to replay.
    current: usize,
    next: usize,
    /// Points whose replay asked for other decisions than were recorded.
    diverged: Vec<usize>,
}

thread_local! {
    static TAPE: RefCell<Tape> = const {
        RefCell::new(Tape {
            mode: Mode::Off,
            points: Vec::new(),
            current: 0,
            next: 0,
            diverged: Vec::new(),
        })
    };
}

/// Starts recording (forgetting earlier decisions).
pub fn record() {
    TAPE.with(|t| {
        let mut t = t.borrow_mut();
        t.mode = Mode::Record;
        t.points.clear();
        t.diverged.clear();
    });
}

/// Replays the recorded decisions from now on.
pub fn replay() {
    TAPE.with(|t| {
        let mut t = t.borrow_mut();
        t.mode = Mode::Replay;
        t.diverged.clear();
    });
}

/// Stops recording or replaying; returns the points whose replay diverged.
pub fn stop() -> Vec<usize> {
    TAPE.with(|t| {
        let mut t = t.borrow_mut();
        t.mode = Mode::Off;
        std::mem::take(&mut t.diverged)
    })
}

/// Whether decisions are being replayed.
pub fn replaying() -> bool {
    TAPE.with(|t| t.borrow().mode == Mode::Replay)
}

/// The point being evaluated (see [`point`]).
pub fn current() -> usize {
    TAPE.with(|t| t.borrow().current)
}

/// The evaluation of point `p` begins.
pub fn point(p: usize) {
    TAPE.with(|t| {
        let mut t = t.borrow_mut();
        t.current = p;
        t.next = 0;
        if t.mode == Mode::Record {
            if t.points.len() <= p {
                t.points.resize(p + 1, Vec::new());
            }
            t.points[p].clear();
        }
    });
}

/// A decision `v`: returned (and recorded when recording), or the recorded
/// one in its place when replaying.
pub fn decide(v: u64) -> u64 {
    TAPE.with(|t| {
        let mut t = t.borrow_mut();
        let (p, k) = (t.current, t.next);
        match t.mode {
            Mode::Off => v,
            Mode::Record => {
                if let Some(d) = t.points.get_mut(p) {
                    d.push(v);
                }
                v
            }
            Mode::Replay => {
                t.next += 1;
                match t.points.get(p).and_then(|d| d.get(k)).copied() {
                    Some(r) => r,
                    None => {
                        if !t.diverged.contains(&p) {
                            t.diverged.push(p);
                        }
                        v
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_replayed_per_point() {
        record();
        point(0);
        assert_eq!(decide(3), 3);
        point(1);
        assert_eq!(decide(5), 5);
        assert_eq!(decide(6), 6);
        replay();
        point(1);
        assert_eq!((decide(50), decide(60)), (5, 6));
        point(0);
        assert_eq!(decide(30), 3);
        assert_eq!(decide(31), 31);
        assert_eq!(stop(), vec![0]);
        assert_eq!(decide(7), 7);
    }
}
