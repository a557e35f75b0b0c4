//! When an attempt started, read from the clock its wall-clock ceiling is judged by.
//!
//! A body that finishes on its first poll (most do) still has its time checked against the
//! ceiling: a body that blocked its thread past it is answered `timeout`, never a success. That
//! takes two clock reads per call. The precise monotonic clock costs about 17 ns a read here
//! (a TSC read through the vDSO); the kernel's coarse monotonic clock (`CLOCK_MONOTONIC_COARSE`,
//! read through the `coarsetime` crate), a value the kernel updates every tick, costs about
//! 4 ns and is exact to one tick (4 ms at `HZ=250`; `clock_getres` says). For a ceiling long
//! enough that a tick is a small part of it (at least [`COARSE_TICKS`] ticks: about 1 s at
//! 4 ms), the coarse clock is read; a shorter ceiling, or a system other than Linux, reads
//! Tokio's clock, as the timer does (paused in tests).
//!
//! (The coarse clock is read through the C library, not `rustix`, whose own vDSO reader
//! crashes programs run under valgrind: rustix issue 1559. Its tick is asked by system call.)
//!
//! The coarse reading is judged **fail-closed**: an attempt whose time *may* have passed the
//! ceiling (its coarse elapsed time plus one tick over the ceiling) is a timeout. So a result
//! that came after the ceiling is never a success, and one that came within two ticks of it
//! (under 1% of such a ceiling) may be answered `timeout`.

use std::sync::OnceLock;
use std::time::Duration;

/// A ceiling at least this many ticks of the coarse clock long is judged by that clock.
pub(crate) const COARSE_TICKS: u32 = 256;

/// When an attempt started (see the module documentation). Not public API: the tool
/// registry's.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Started(Reading);

#[derive(Clone, Copy, Debug)]
enum Reading {
    /// Tokio's clock (the one its timer reads), for a short ceiling.
    Precise(tokio::time::Instant),
    /// The coarse monotonic clock, and its tick.
    Coarse { at: Coarse, tick: Duration },
}

impl Started {
    /// Now, on the clock a ceiling of `timeout` is judged by.
    #[inline]
    pub fn now(timeout: Duration) -> Started {
        match coarse_clock() {
            Some(clock) if judged_coarsely(timeout, clock) => Started(Reading::Coarse {
                at: Coarse::now(),
                tick: clock.tick,
            }),
            _ => Started(Reading::Precise(tokio::time::Instant::now())),
        }
    }

    /// Whether the attempt may have run past `timeout` (fail-closed on the coarse clock).
    #[inline]
    pub fn passed(self, timeout: Duration) -> bool {
        match self.0 {
            Reading::Precise(started) => started.elapsed() > timeout,
            Reading::Coarse { at, tick } => may_have_passed(at.elapsed(), tick, timeout),
        }
    }

    /// What is left of `timeout` (for the timer a waiting body is given).
    pub fn remaining(self, timeout: Duration) -> Duration {
        let elapsed = match self.0 {
            Reading::Precise(started) => started.elapsed(),
            Reading::Coarse { at, .. } => at.elapsed(),
        };
        timeout.saturating_sub(elapsed)
    }
}

/// The coarse clock, where it is worth reading: its tick, and the shortest ceiling it judges
/// (worked out once, not per call).
#[derive(Clone, Copy, Debug, PartialEq)]
struct CoarseClock {
    tick: Duration,
    shortest: Duration,
}

/// Whether a ceiling of `timeout` is judged by `clock`.
fn judged_coarsely(timeout: Duration, clock: CoarseClock) -> bool {
    timeout >= clock.shortest
}

/// Whether an attempt whose coarse elapsed time is `elapsed` may have run past `timeout`: its
/// true time is under `elapsed + tick` (each reading is at most one tick behind).
fn may_have_passed(elapsed: Duration, tick: Duration, timeout: Duration) -> bool {
    elapsed.saturating_add(tick) > timeout
}

/// The coarse clock, when the system has one worth reading (a tick of at most 10 ms).
fn coarse_clock() -> Option<CoarseClock> {
    static CLOCK: OnceLock<Option<CoarseClock>> = OnceLock::new();
    *CLOCK.get_or_init(|| {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            let res = rustix::time::clock_getres(rustix::time::ClockId::MonotonicCoarse);
            let tick = Duration::new(
                u64::try_from(res.tv_sec).ok()?,
                u32::try_from(res.tv_nsec).ok()?,
            );
            usable(tick)
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            None
        }
    })
}

/// The clock a tick makes, when the tick is worth judging by: not zero (no coarse clock), and
/// at most 10 ms (`HZ=100`).
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
fn usable(tick: Duration) -> Option<CoarseClock> {
    if tick.is_zero() || tick > Duration::from_millis(10) {
        return None;
    }
    Some(CoarseClock {
        tick,
        shortest: tick.checked_mul(COARSE_TICKS)?,
    })
}

/// A reading of the coarse monotonic clock (none off Linux, where no tick is known).
#[derive(Clone, Copy, Debug)]
struct Coarse(#[cfg(any(target_os = "linux", target_os = "android"))] coarsetime::Instant);

impl Coarse {
    #[inline]
    fn now() -> Coarse {
        // Without the crate's shared cache of the last reading: a store to one cache line
        // from every thread.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            Coarse(coarsetime::Instant::now_without_cache_update())
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            Coarse()
        }
    }

    /// The time since this reading (none off Linux, where it is never read).
    #[inline]
    fn elapsed(self) -> Duration {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            Duration::from(Coarse::now().0.duration_since(self.0))
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            Duration::ZERO
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_millis(4);

    #[test]
    fn only_a_ceiling_of_many_ticks_is_judged_coarsely() {
        let long = TICK * COARSE_TICKS;
        let clock = usable(TICK).expect("a 4 ms tick is used");
        assert!(judged_coarsely(long, clock));
        assert!(judged_coarsely(Duration::from_secs(30), clock));
        assert!(!judged_coarsely(long - Duration::from_nanos(1), clock));
        assert!(!judged_coarsely(Duration::from_millis(50), clock));
        // No tick, or one too long to multiply, never: no clock to judge by.
        assert_eq!(usable(Duration::ZERO), None);
        assert_eq!(usable(Duration::MAX), None);
    }

    #[test]
    fn only_a_tick_of_at_most_ten_milliseconds_is_used() {
        let tick = |tick| usable(tick).map(|clock| clock.tick);
        assert_eq!(tick(Duration::ZERO), None);
        assert_eq!(tick(TICK), Some(TICK));
        let ten = Duration::from_millis(10);
        assert_eq!(tick(ten), Some(ten));
        assert_eq!(tick(ten + Duration::from_nanos(1)), None);
        assert_eq!(tick(Duration::from_secs(1)), None);
    }

    #[test]
    fn the_coarse_judgement_fails_closed() {
        let timeout = Duration::from_secs(2);
        // Its true time is under `elapsed + tick`: within the ceiling only when that is.
        assert!(!may_have_passed(Duration::ZERO, TICK, timeout));
        assert!(!may_have_passed(timeout - TICK, TICK, timeout));
        assert!(may_have_passed(
            timeout - TICK + Duration::from_nanos(1),
            TICK,
            timeout
        ));
        assert!(may_have_passed(timeout, TICK, timeout));
        assert!(may_have_passed(Duration::MAX, TICK, timeout));
    }

    #[test]
    fn a_fresh_start_has_not_passed_its_ceiling() {
        for timeout in [Duration::from_millis(50), Duration::from_secs(30)] {
            let started = Started::now(timeout);
            assert!(!started.passed(timeout));
            let left = started.remaining(timeout);
            assert!(
                left <= timeout && left > timeout / 2,
                "{left:?} of {timeout:?}"
            );
        }
        // A zero ceiling has nothing left.
        assert_eq!(
            Started::now(Duration::ZERO).remaining(Duration::ZERO),
            Duration::ZERO
        );
    }

    /// Both readings count the time since them, and judge it against a ceiling.
    #[test]
    fn a_reading_counts_the_time_since_it() {
        let ago = Duration::from_millis(300);
        let mut readings = vec![Started(Reading::Precise(tokio::time::Instant::now() - ago))];
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            let tick = coarse_clock().expect("Linux has a coarse clock").tick;
            let at = coarsetime::Instant::now_without_cache_update()
                .checked_sub(coarsetime::Duration::from(ago))
                .expect("the clock is past 300 ms");
            readings.push(Started(Reading::Coarse {
                at: Coarse(at),
                tick,
            }));
        }
        for started in readings {
            // 300 ms ago (and a tick, for the coarse clock), give or take the test's own time.
            let left = started.remaining(Duration::from_millis(1100));
            assert!(
                left > Duration::from_millis(700) && left <= Duration::from_millis(810),
                "{left:?} left of 1100 ms, {started:?}"
            );
            assert!(started.passed(Duration::from_millis(300)), "{started:?}");
            assert!(started.passed(Duration::from_millis(250)), "{started:?}");
            assert!(!started.passed(Duration::from_millis(1100)), "{started:?}");
            assert_eq!(started.remaining(ago / 2), Duration::ZERO);
        }
    }

    #[test]
    fn a_long_ceiling_reads_the_coarse_clock_where_there_is_one() {
        let started = Started::now(Duration::from_secs(30));
        #[cfg(any(target_os = "linux", target_os = "android"))]
        assert!(
            matches!(started.0, Reading::Coarse { .. }) && coarse_clock().is_some(),
            "{started:?}"
        );
        // A short one never does.
        let started = Started::now(Duration::from_millis(50));
        assert!(matches!(started.0, Reading::Precise(_)), "{started:?}");
    }
}
