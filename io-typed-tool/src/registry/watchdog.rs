//! The ceilings of spawned attempts, watched by one thread instead of a Tokio timer each.
//!
//! On a multi-thread runtime a body runs as its own task under its caller's ceiling (see
//! `run_attempt`). A Tokio timer for that ceiling costs a system call a call: registering the
//! earliest timer wakes the runtime's driver (an `eventfd` write, then an `epoll_wait` to read
//! it). The MCP load bench counted it (`strace -c`: two `write`s a call against rmcp's one),
//! and at one client it was the largest part of the difference. A [`Deadline`] instead puts its
//! waker in a map this module's thread reads every [`TICK`]: registering takes a lock and a map
//! insert, no system call, while the thread is awake; it falls asleep after [`IDLE`] with
//! nothing to watch, and the first deadline after that wakes it (one system call then).
//!
//! A deadline fires at most one [`TICK`] late; the attempt's outcome is judged by its own
//! clock reading (`attempt_result`), so a late wake-up never turns a timeout into a success.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// How often the awake thread looks at the deadlines.
pub(crate) const TICK: Duration = Duration::from_millis(2);

/// How long the thread stays awake with nothing to watch.
pub(crate) const IDLE: Duration = Duration::from_secs(1);

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    /// (when, a registration number) -> the task to wake then.
    deadlines: BTreeMap<(Instant, u64), Waker>,
    next: u64,
    /// The thread waits for a notification (nothing to watch for [`IDLE`]).
    asleep: bool,
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    // A waker that panicked while the lock was held leaves the map whole.
    shared.state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The watchdog, started on first use.
fn shared() -> &'static Shared {
    static SHARED: OnceLock<&'static Shared> = OnceLock::new();
    SHARED.get_or_init(|| {
        let shared: &'static Shared = Box::leak(Box::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("agentio-ceilings".into())
            .spawn(move || watch(shared))
            .expect("the operating system starts the ceilings' thread");
        shared
    })
}

fn watch(shared: &'static Shared) {
    let mut idle_since: Option<Instant> = None;
    loop {
        let now = Instant::now();
        let mut state = lock(shared);
        let mut due = Vec::new();
        while let Some(entry) = state.deadlines.first_entry() {
            if entry.key().0 > now {
                break;
            }
            due.push(entry.remove());
        }
        if !due.is_empty() {
            drop(state);
            due.into_iter().for_each(Waker::wake);
            continue;
        }
        let wait = match state.deadlines.first_key_value() {
            Some(((at, _), _)) => {
                idle_since = None;
                at.saturating_duration_since(now).min(TICK)
            }
            None if now.duration_since(*idle_since.get_or_insert(now)) >= IDLE => {
                state.asleep = true;
                let state = shared
                    .wake
                    .wait_while(state, |state| state.asleep)
                    .unwrap_or_else(PoisonError::into_inner);
                drop(state);
                idle_since = None;
                continue;
            }
            None => TICK,
        };
        let _ = shared
            .wake
            .wait_timeout(state, wait)
            .unwrap_or_else(PoisonError::into_inner);
    }
}

/// A future that is ready at `at` (or at most a [`TICK`] later).
pub(crate) struct Deadline {
    /// `None`: never (a ceiling past what `Instant` holds).
    at: Option<Instant>,
    /// The registration, once polled.
    key: Option<u64>,
}

impl Deadline {
    /// Ready `after` from now.
    pub(crate) fn after(after: Duration) -> Deadline {
        Deadline {
            at: Instant::now().checked_add(after),
            key: None,
        }
    }

    fn unregister(&mut self) {
        if let (Some(at), Some(key)) = (self.at, self.key.take()) {
            lock(shared()).deadlines.remove(&(at, key));
        }
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
        let shared = shared();
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
        if state.asleep {
            state.asleep = false;
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
        block_on(Deadline::after(Duration::from_millis(30)));
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(30), "{waited:?}");
        assert!(waited < Duration::from_millis(500), "{waited:?}");
    }

    #[test]
    fn a_dropped_deadline_leaves_nothing_behind_and_one_past_instant_never_fires() {
        let mut deadline = Box::pin(Deadline::after(Duration::from_secs(60)));
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert!(deadline.as_mut().poll(&mut cx).is_pending());
        let key = deadline.key.expect("registered");
        let at = deadline.at.expect("a time");
        assert!(lock(shared()).deadlines.contains_key(&(at, key)));
        // Polled again: still the one registration.
        assert!(deadline.as_mut().poll(&mut cx).is_pending());
        assert_eq!(deadline.key, Some(key));
        drop(deadline);
        assert!(!lock(shared()).deadlines.contains_key(&(at, key)));

        let mut never = Box::pin(Deadline::after(Duration::MAX));
        assert!(never.at.is_none());
        assert!(never.as_mut().poll(&mut cx).is_pending());
        assert!(never.key.is_none(), "nothing to watch");
    }

    #[test]
    fn the_watchdog_wakes_from_its_sleep_for_a_new_deadline() {
        // Let it fall asleep with nothing to watch (other tests' deadlines are short).
        std::thread::sleep(IDLE + Duration::from_millis(300));
        let started = Instant::now();
        block_on(Deadline::after(Duration::from_millis(20)));
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(20), "{waited:?}");
        assert!(waited < Duration::from_millis(500), "{waited:?}");
    }
}
