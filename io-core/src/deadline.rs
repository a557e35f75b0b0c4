//! Deadlines watched by one thread instead of a Tokio timer each: the registry's ceilings of
//! spawned attempts, and the MCP HTTP server's wait for a request's head and its event
//! streams' keep-alive.
//!
//! A Tokio timer costs a system call a registration when it is the earliest: registering it
//! wakes the runtime's driver (an `eventfd` write, then an `epoll_wait` to read it). The MCP
//! load bench counted it (`strace -c`: two `write`s a call against rmcp's one), and at one
//! client it was the largest part of the difference. A [`Deadline`] instead puts its waker in a
//! map this module's thread watches: registering takes a lock and a map insert.
//!
//! The thread sleeps until the earliest deadline in the map (with none, until one comes). A
//! registration wakes it (one system call) only when its deadline is earlier than the one the
//! thread sleeps until: calls under one contract have one ceiling, and requests on one server
//! one wait for their head, so each new deadline is later than those before it and wakes
//! nothing. A deadline whose call ended is taken out of the map, not out of the thread's
//! sleep: the thread wakes at that time, finds it gone and sleeps until the next. Under load
//! the thread wakes about once a ceiling, not once a call or on a tick (an earlier version
//! looked every 2 ms while anything was watched: 500 wake-ups a second on the server's core,
//! which the load bench counted as context switches).
//!
//! A deadline fires at its time (as late as the system's timer slack); a registry attempt's
//! outcome is judged by its own clock reading (`attempt_result`), so a late wake-up never
//! turns a timeout into a success.
//!
//! Not public API: the tool registry's and the MCP server's (`__Deadline`).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    /// (when, a registration number) -> the task to wake then.
    deadlines: BTreeMap<(Instant, u64), Waker>,
    next: u64,
    /// What the thread sleeps until; `Awake` while it runs (or has been told to look again).
    sleep: Sleep,
}

/// What the watchdog's thread is doing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Sleep {
    /// Running, or notified: it reads the map before it sleeps again.
    #[default]
    Awake,
    /// Asleep until this instant.
    Until(Instant),
    /// Asleep with nothing to watch, until a deadline comes.
    Forever,
}

impl Sleep {
    /// Whether a new deadline `at` must wake the thread: it would otherwise sleep past it.
    fn misses(self, at: Instant) -> bool {
        match self {
            Sleep::Awake => false,
            Sleep::Until(until) => at < until,
            Sleep::Forever => true,
        }
    }
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    // A waker that panicked while the lock was held leaves the map whole.
    shared.state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The watchdog, started on first use; `None` when the system would not start its thread.
fn shared() -> Option<&'static Shared> {
    static SHARED: OnceLock<Option<&'static Shared>> = OnceLock::new();
    *SHARED.get_or_init(start)
}

/// A watchdog of its own: its state and its thread (the process keeps both).
fn start() -> Option<&'static Shared> {
    let shared: &'static Shared = Box::leak(Box::new(Shared {
        state: Mutex::new(State::default()),
        wake: Condvar::new(),
    }));
    std::thread::Builder::new()
        .name("agentio-deadlines".into())
        .spawn(move || watch(shared))
        .ok()?;
    Some(shared)
}

fn watch(shared: &'static Shared) {
    loop {
        let now = Instant::now();
        let mut state = lock(shared);
        // Every deadline at or before `now` is due: the keys below `(now, u64::MAX)`.
        let later = state.deadlines.split_off(&(now, u64::MAX));
        let due = std::mem::replace(&mut state.deadlines, later);
        if !due.is_empty() {
            drop(state);
            due.into_values().for_each(Waker::wake);
            continue;
        }
        let until = state.deadlines.first_key_value().map(|((at, _), _)| *at);
        state.sleep = until.map_or(Sleep::Forever, Sleep::Until);
        // Until the time, or until a registration that would be missed sets `Awake`.
        let mut state = match until {
            Some(at) => {
                shared
                    .wake
                    .wait_timeout_while(state, at.saturating_duration_since(now), |state| {
                        state.sleep != Sleep::Awake
                    })
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => shared
                .wake
                .wait_while(state, |state| state.sleep != Sleep::Awake)
                .unwrap_or_else(PoisonError::into_inner),
        };
        state.sleep = Sleep::Awake;
    }
}

/// A future that is ready at its instant (as late as the system's timer slack).
#[doc(hidden)]
pub struct Deadline {
    watchdog: &'static Shared,
    /// `None`: never (a ceiling past what `Instant` holds).
    at: Option<Instant>,
    /// The registration, once polled.
    key: Option<u64>,
}

impl Deadline {
    /// Ready `after` from now; `None` when the watchdog's thread could not be started.
    pub fn after(after: Duration) -> Option<Deadline> {
        Deadline::at(Instant::now().checked_add(after))
    }

    /// Ready at `at` (`None`: never); `None` when the watchdog's thread could not be started.
    pub fn at(at: Option<Instant>) -> Option<Deadline> {
        Some(Deadline::on(shared()?, at))
    }

    fn on(watchdog: &'static Shared, at: Option<Instant>) -> Deadline {
        Deadline {
            watchdog,
            at,
            key: None,
        }
    }

    fn unregister(&mut self) {
        if let (Some(at), Some(key)) = (self.at, self.key.take()) {
            lock(self.watchdog).deadlines.remove(&(at, key));
        }
    }
}

impl std::fmt::Debug for Deadline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deadline")
            .field("at", &self.at)
            .field("registered", &self.key.is_some())
            .finish()
    }
}

impl Future for Deadline {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(at) = self.at else {
            return Poll::Pending;
        };
        if Instant::now() >= at {
            self.unregister();
            return Poll::Ready(());
        }
        let shared = self.watchdog;
        let mut state = lock(shared);
        if let Some(key) = self.key
            && let Some(waker) = state.deadlines.get_mut(&(at, key))
        {
            if !waker.will_wake(cx.waker()) {
                waker.clone_from(cx.waker());
            }
            return Poll::Pending;
        }
        let key = state.next;
        state.next += 1;
        state.deadlines.insert((at, key), cx.waker().clone());
        if state.sleep.misses(at) {
            state.sleep = Sleep::Awake;
            shared.wake.notify_one();
        }
        drop(state);
        self.key = Some(key);
        Poll::Pending
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        self.unregister();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(future)
    }

    #[test]
    fn a_deadline_fires_at_its_time_and_not_before() {
        let started = Instant::now();
        block_on(Deadline::after(Duration::from_millis(30)).unwrap());
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(30), "{waited:?}");
        assert!(waited < Duration::from_millis(500), "{waited:?}");
    }

    /// A waker that counts its wakes.
    struct Counting(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for Counting {
        fn wake(self: std::sync::Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    fn counting() -> (std::sync::Arc<Counting>, Waker) {
        let count = std::sync::Arc::new(Counting(std::sync::atomic::AtomicUsize::new(0)));
        (count.clone(), Waker::from(count))
    }

    /// One poll of `deadline` by the task `waker` wakes.
    fn poll_with(deadline: &mut Pin<Box<Deadline>>, waker: &Waker) -> Poll<()> {
        deadline.as_mut().poll(&mut Context::from_waker(waker))
    }

    fn wakes(count: &Counting) -> usize {
        count.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    #[test]
    fn a_dropped_deadline_leaves_nothing_behind_and_one_past_instant_never_fires() {
        let watchdog = start().unwrap();
        let at = Instant::now() + Duration::from_secs(60);
        let mut deadline = Box::pin(Deadline::on(watchdog, Some(at)));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(deadline.as_mut().poll(&mut cx).is_pending());
        let key = deadline.key.expect("registered");
        assert!(lock(watchdog).deadlines.contains_key(&(at, key)));
        // What it is when debugged: its instant, and that it is in the watchdog's map.
        assert_eq!(
            format!("{:?}", *deadline),
            format!("Deadline {{ at: Some({at:?}), registered: true }}")
        );
        // Polled again: still the one registration.
        assert!(deadline.as_mut().poll(&mut cx).is_pending());
        assert_eq!(deadline.key, Some(key));
        assert_eq!(lock(watchdog).deadlines.len(), 1);
        drop(deadline);
        assert!(lock(watchdog).deadlines.is_empty());

        let mut never = Box::pin(Deadline::after(Duration::MAX).unwrap());
        assert!(never.at.is_none());
        assert_eq!(
            format!("{:?}", *never),
            "Deadline { at: None, registered: false }"
        );
        assert!(never.as_mut().poll(&mut cx).is_pending());
        assert!(never.key.is_none(), "nothing to watch");
    }

    #[test]
    fn deadlines_at_one_instant_are_each_kept_and_each_woken_once_at_their_time() {
        let watchdog = start().unwrap();
        let at = Instant::now() + Duration::from_millis(150);
        let (first, first_waker) = counting();
        let (second, second_waker) = counting();
        let mut a = Box::pin(Deadline::on(watchdog, Some(at)));
        let mut b = Box::pin(Deadline::on(watchdog, Some(at)));
        assert!(poll_with(&mut a, &first_waker).is_pending());
        assert!(poll_with(&mut b, &second_waker).is_pending());
        assert_ne!(a.key, b.key);
        assert_eq!(lock(watchdog).deadlines.len(), 2);
        // Not before their time.
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!((wakes(&first), wakes(&second)), (0, 0));
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!((wakes(&first), wakes(&second)), (1, 1));
        assert!(poll_with(&mut a, &first_waker).is_ready());
    }

    #[test]
    fn the_last_waker_a_deadline_was_polled_with_is_the_one_woken() {
        let watchdog = start().unwrap();
        let (old, old_waker) = counting();
        let (new, new_waker) = counting();
        let mut deadline = Box::pin(Deadline::on(
            watchdog,
            Some(Instant::now() + Duration::from_millis(40)),
        ));
        assert!(poll_with(&mut deadline, &old_waker).is_pending());
        assert!(poll_with(&mut deadline, &new_waker).is_pending());
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!((wakes(&old), wakes(&new)), (0, 1));
    }

    /// Waits (at most a second) until the watchdog's thread sleeps as `sleep` says.
    fn until_it_sleeps(watchdog: &Shared, sleep: Sleep) {
        let started = Instant::now();
        while lock(watchdog).sleep != sleep {
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "the watchdog sleeps as {:?}, not {sleep:?}",
                lock(watchdog).sleep
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn the_watchdog_sleeps_until_the_earliest_deadline_and_only_an_earlier_one_wakes_it() {
        let watchdog = start().unwrap();
        // Nothing to watch: asleep until a deadline comes.
        until_it_sleeps(watchdog, Sleep::Forever);
        let now = Instant::now();
        let (first_at, later_at, earlier_at) = (
            now + Duration::from_millis(400),
            now + Duration::from_millis(700),
            now + Duration::from_millis(200),
        );
        let (first, first_waker) = counting();
        let mut a = Box::pin(Deadline::on(watchdog, Some(first_at)));
        assert!(poll_with(&mut a, &first_waker).is_pending());
        // The first deadline woke it; it sleeps until that deadline.
        until_it_sleeps(watchdog, Sleep::Until(first_at));
        // A later one wakes nothing: the sleep is unchanged.
        let (later, later_waker) = counting();
        let mut b = Box::pin(Deadline::on(watchdog, Some(later_at)));
        assert!(poll_with(&mut b, &later_waker).is_pending());
        assert_eq!(lock(watchdog).sleep, Sleep::Until(first_at));
        // An earlier one wakes it, and it sleeps until that one instead.
        let (earlier, earlier_waker) = counting();
        let mut c = Box::pin(Deadline::on(watchdog, Some(earlier_at)));
        assert!(poll_with(&mut c, &earlier_waker).is_pending());
        until_it_sleeps(watchdog, Sleep::Until(earlier_at));
        // Each fires at its time, not before.
        std::thread::sleep(earlier_at.saturating_duration_since(Instant::now()));
        until_it_sleeps(watchdog, Sleep::Until(first_at));
        assert_eq!((wakes(&earlier), wakes(&first), wakes(&later)), (1, 0, 0));
        // A deadline taken out (its call ended) is still slept until, then passed over.
        drop(a);
        until_it_sleeps(watchdog, Sleep::Until(later_at));
        assert!(
            Instant::now() >= first_at,
            "woke before the time it slept until"
        );
        assert_eq!(wakes(&first), 0);
        until_it_sleeps(watchdog, Sleep::Forever);
        assert!(Instant::now() >= later_at);
        assert_eq!((wakes(&earlier), wakes(&later)), (1, 1));
        assert!(poll_with(&mut c, &earlier_waker).is_ready());
        assert!(poll_with(&mut b, &later_waker).is_ready());
    }

    #[test]
    fn only_a_deadline_the_sleep_would_miss_wakes_the_thread() {
        let at = Instant::now() + Duration::from_secs(10);
        assert!(!Sleep::Awake.misses(at));
        assert!(Sleep::Forever.misses(at));
        assert!(Sleep::Until(at + Duration::from_nanos(1)).misses(at));
        assert!(!Sleep::Until(at).misses(at));
        assert!(!Sleep::Until(at - Duration::from_nanos(1)).misses(at));
    }
}
