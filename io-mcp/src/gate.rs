//! The gate of [`McpServer::serve_http`](crate::McpServer::serve_http): on a saturated
//! server, calls start in the order they came.
//!
//! Tokio keeps each worker's tasks ready to run in a local queue of 256; past that, half of
//! the queue (the oldest) moves to the runtime's shared queue, and a worker with local work
//! takes one task from there only every few dozen polls. Each call on rmcp's service is two or
//! three tasks (the connection, and rmcp's service and handler tasks), so with more than about a
//! hundred clients waiting on one worker the local queue overflows over and over, and the calls
//! pushed out wait there while later ones pass: the load bench at 256 stateless clients had
//! about 230 tasks in the shared queue at all times (Tokio's `global_queue_depth`), and its
//! calls split into a fast half and a slow hundredth (median 5 ms, p99 58 ms; rmcp's own
//! server, the same: 9 ms and 53 ms). At 128 clients the shared queue stayed empty and the p99
//! was 1.2x the median.
//!
//! The gate lets a bounded number of calls run at once (32 per worker by default,
//! [`McpServer::with_calls_per_worker`](crate::McpServer::with_calls_per_worker)); the others
//! wait for a place in the order they came (Tokio's semaphore is fair), as a future that is not
//! ready to run, so the run queue stays short and the calls in it are the ones admitted. With
//! the same throughput (the server's time limits either way), each call waits about as long
//! as every other: at 256 stateless clients the p99 went from 58 ms to 12 to 15 ms, the median
//! from 5 ms to 11 ms (the mean, 256 calls over the calls a second, does not move).
//!
//! A call holds its place while it runs on this server's time, not while it waits on
//! something else (a tool waiting on the network or a timer, or a client slow to read): a
//! warden task looks every [`LOOK_EVERY`] while calls wait, and if a worker of the runtime has
//! parked since its last look (had nothing to run), the calls holding places were not what kept
//! it busy; they stop counting (they run on, without a place) and as many waiting calls start.
//! A saturated server never parks, so there the bound holds; a server whose calls wait on I/O
//! parks between events, so the gate holds no call back longer than about [`LOOK_EVERY`].
//!
//! A call alone finds a free place at once (an atomic operation), and a place given back with
//! no call waiting wakes nothing: the gate costs a call on an idle server two atomic updates
//! and a lock.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};

/// How often the warden looks whether the runtime has parked, while calls wait.
pub(crate) const LOOK_EVERY: Duration = Duration::from_millis(1);

/// The most places a gate has (the semaphore's bound).
const MOST_PLACES: usize = Semaphore::MAX_PERMITS;

/// See the module's documentation.
#[derive(Debug)]
pub(crate) struct Gate {
    /// The free places; a place taken is forgotten, and given back by [`Gate::leave`] or
    /// [`Gate::expire`].
    places: Semaphore,
    /// Which calls hold a place: those that entered in the current generation.
    held: Mutex<Held>,
    /// How many calls wait for a place.
    waiting: AtomicUsize,
    /// Told when a call starts waiting (for the warden).
    someone_waits: Notify,
}

/// The places held, counted per generation: [`Gate::expire`] starts a new generation, and the
/// calls of older ones no longer hold theirs.
#[derive(Debug, Default)]
struct Held {
    generation: u64,
    calls: usize,
}

/// A call's place in the gate, given back when dropped (once the call's answer is ready).
#[derive(Debug)]
pub(crate) struct Pass {
    gate: Arc<Gate>,
    generation: u64,
}

impl Drop for Pass {
    fn drop(&mut self) {
        self.gate.leave(self.generation);
    }
}

/// A call waiting for a place, counted in [`Gate::waiting`] until it has one or is dropped.
struct Waiting<'g>(&'g Gate);

impl<'g> Waiting<'g> {
    fn new(gate: &'g Gate) -> Self {
        if gate.waiting.fetch_add(1, Ordering::AcqRel) == 0 {
            gate.someone_waits.notify_one();
        }
        Waiting(gate)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Gate {
    /// A gate with `places` places (at least one).
    pub(crate) fn new(places: usize) -> Arc<Self> {
        Arc::new(Gate {
            places: Semaphore::new(places.clamp(1, MOST_PLACES)),
            held: Mutex::new(Held::default()),
            waiting: AtomicUsize::new(0),
            someone_waits: Notify::new(),
        })
    }

    /// A place, at once when one is free, or after the calls that came before this one.
    pub(crate) async fn enter(self: &Arc<Self>) -> Pass {
        let permit = match self.places.try_acquire() {
            Ok(permit) => permit,
            Err(_) => {
                let _waiting = Waiting::new(self);
                // Never closed: `acquire` fails only on a closed semaphore.
                let Ok(permit) = self.places.acquire().await else {
                    unreachable!("the gate's semaphore is never closed")
                };
                permit
            }
        };
        permit.forget();
        let mut held = self.held();
        held.calls += 1;
        Pass {
            gate: Arc::clone(self),
            generation: held.generation,
        }
    }

    /// A place given back, if the call's generation still holds it.
    fn leave(&self, generation: u64) {
        {
            let mut held = self.held();
            if held.generation != generation {
                return;
            }
            held.calls -= 1;
        }
        self.places.add_permits(1);
    }

    /// Every place held is given back: their calls run on without one.
    fn expire(&self) {
        let calls = {
            let mut held = self.held();
            held.generation += 1;
            std::mem::take(&mut held.calls)
        };
        self.places.add_permits(calls);
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        // The counts are updated whole under the lock; a panic cannot leave them half done.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many calls wait for a place.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// The warden of the module's documentation, for the runtime `runtime`: runs until dropped.
    pub(crate) async fn warden(self: Arc<Self>, runtime: tokio::runtime::RuntimeMetrics) {
        // Tokio's timer, on the worker that runs this, where the runtime has one (it panics
        // when made on a runtime without): the watchdog's thread would take the core from the
        // worker twice a look (at 256 clients on one worker, 0.90x of the calls a second
        // without the gate, against 0.96x to 1.01x with Tokio's).
        let tokio_time =
            std::panic::catch_unwind(|| drop(tokio::time::sleep(Duration::ZERO))).is_ok();
        loop {
            // Nothing to do while no call waits. A call that starts waiting before this waits
            // on the `Notify` leaves its permit there (`notify_one`), so none is missed.
            while self.waiting.load(Ordering::Acquire) == 0 {
                self.someone_waits.notified().await;
            }
            let parks = parks(&runtime);
            if tokio_time {
                tokio::time::sleep(LOOK_EVERY).await;
            } else if let Some(deadline) = agentio_core::__Deadline::after(LOOK_EVERY) {
                deadline.await;
            } else {
                // No timer at all (no Tokio time, and the watchdog's thread would not start):
                // no call is held back; the waiting ones start now.
                self.expire();
                tokio::task::yield_now().await;
                continue;
            }
            if parks != self::parks(&runtime) {
                self.expire();
            }
        }
    }
}

/// How many times the runtime's workers have parked so far.
fn parks(runtime: &tokio::runtime::RuntimeMetrics) -> u64 {
    #[cfg(target_has_atomic = "64")]
    let parks = (0..runtime.num_workers())
        .map(|worker| runtime.worker_park_count(worker))
        .fold(0, u64::wrapping_add);
    // Without 64-bit atomics Tokio does not count parks: every look counts as one, and a call
    // holds its place for [`LOOK_EVERY`] at most.
    #[cfg(not(target_has_atomic = "64"))]
    let parks = {
        let _ = runtime;
        static LOOKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        LOOKS.fetch_add(1, Ordering::Relaxed) as u64
    };
    parks
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    fn now<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
        future.poll(&mut Context::from_waker(Waker::noop()))
    }

    /// A place `gate` has free, taken at once.
    fn free_place(gate: &Arc<Gate>) -> Pass {
        let enter = std::pin::pin!(gate.enter());
        let Poll::Ready(pass) = now(enter) else {
            panic!("a free place is taken at once")
        };
        pass
    }

    /// A gate of `N` places, all taken.
    fn full<const N: usize>() -> (Arc<Gate>, [Pass; N]) {
        let gate = Gate::new(N);
        let passes = std::array::from_fn(|_| free_place(&gate));
        (gate, passes)
    }

    /// A call that finds no place free: it waits (polled once).
    fn waiting_for(gate: &Arc<Gate>) -> std::pin::Pin<Box<impl Future<Output = Pass>>> {
        let gate = Arc::clone(gate);
        let mut waiting = Box::pin(async move { gate.enter().await });
        assert!(now(waiting.as_mut()).is_pending(), "no place is free");
        waiting
    }

    #[test]
    fn calls_past_the_bound_wait_and_start_in_the_order_they_came() {
        let (gate, [first, second]) = full();
        let mut third = waiting_for(&gate);
        let mut fourth = waiting_for(&gate);
        assert_eq!(gate.waiting(), 2);
        // A place given back goes to the call that came first, not the one polled first.
        drop(second);
        assert!(now(fourth.as_mut()).is_pending());
        let Poll::Ready(third) = now(third.as_mut()) else {
            panic!("the first to wait takes the first place given back")
        };
        assert_eq!(gate.waiting(), 1);
        drop(first);
        assert!(now(fourth.as_mut()).is_ready());
        assert_eq!(gate.waiting(), 0);
        drop(third);
    }

    #[test]
    fn a_call_that_stops_waiting_gives_up_its_turn() {
        let (gate, [held]) = full();
        let mut gone = Box::pin(gate.enter());
        let mut next = std::pin::pin!(gate.enter());
        assert!(now(gone.as_mut()).is_pending());
        assert!(now(next.as_mut()).is_pending());
        assert_eq!(gate.waiting(), 2);
        drop(gone);
        assert_eq!(gate.waiting(), 1);
        drop(held);
        assert!(now(next.as_mut()).is_ready());
        assert_eq!(gate.waiting(), 0);
    }

    #[test]
    fn expired_places_go_to_waiting_calls_and_are_not_given_back_twice() {
        let (gate, [a, b]) = full();
        let mut c = waiting_for(&gate);
        gate.expire();
        let Poll::Ready(c) = now(c.as_mut()) else {
            panic!("an expired place goes to the waiting call")
        };
        assert_eq!(gate.places.available_permits(), 1);
        // The calls that held the expired places end: their places were already given back.
        drop(a);
        drop(b);
        assert_eq!(gate.places.available_permits(), 1);
        // The call admitted after the expiry holds its place, and gives it back.
        drop(c);
        assert_eq!(gate.places.available_permits(), 2);
        // An expiry with no place held gives back nothing.
        gate.expire();
        assert_eq!(gate.places.available_permits(), 2);
    }

    #[test]
    fn a_gate_has_one_place_at_least() {
        let gate = Gate::new(0);
        assert_eq!(gate.places.available_permits(), 1);
        assert_eq!(
            Gate::new(usize::MAX).places.available_permits(),
            MOST_PLACES
        );
    }

    /// A current-thread runtime, with Tokio's timer or without.
    fn runtime(time: bool) -> tokio::runtime::Runtime {
        let mut runtime = tokio::runtime::Builder::new_current_thread();
        if time {
            runtime.enable_time();
        }
        runtime.build().unwrap()
    }

    /// `check` run on `runtime` with a gate of one place and its warden.
    fn with_warden<F: Future<Output = ()>>(
        runtime: tokio::runtime::Runtime,
        check: impl FnOnce(Arc<Gate>, tokio::runtime::RuntimeMetrics) -> F,
    ) {
        runtime.block_on(async {
            let gate = Gate::new(1);
            let metrics = tokio::runtime::Handle::current().metrics();
            let warden = tokio::spawn(gate.clone().warden(metrics.clone()));
            check(gate, metrics).await;
            warden.abort();
        });
    }

    /// The runtime parks while the only call holding a place waits on something else: the
    /// warden gives its place to the waiting call, which does not wait for the first to end;
    /// on a runtime with Tokio's timer and on one without.
    #[test]
    fn a_call_waiting_on_something_else_does_not_hold_others_back() {
        for time in [true, false] {
            with_warden(runtime(time), |gate, _| async move {
                let (ended, end) = tokio::sync::oneshot::channel::<()>();
                let slow = tokio::spawn({
                    let gate = gate.clone();
                    async move {
                        let _pass = gate.enter().await;
                        // Waits on something other than this runtime's time until told.
                        let _ = end.await;
                    }
                });
                tokio::task::yield_now().await;
                let mut enter = std::pin::pin!(gate.enter());
                // The watchdog's deadline: this runtime may have no Tokio timer.
                let mut stop = std::pin::pin!(
                    agentio_core::__Deadline::after(Duration::from_secs(10)).expect("a watchdog")
                );
                let admitted = std::future::poll_fn(|cx| {
                    if let Poll::Ready(pass) = enter.as_mut().poll(cx) {
                        return Poll::Ready(Some(pass));
                    }
                    stop.as_mut().poll(cx).map(|()| None)
                })
                .await;
                assert!(
                    admitted.is_some(),
                    "the waiting call was held back by one waiting on I/O"
                );
                drop(ended);
                slow.await.unwrap();
            });
        }
    }

    /// With no call waiting, the warden waits too: it does not look every millisecond on an
    /// idle server (each look would wake the runtime).
    #[test]
    fn with_no_call_waiting_the_warden_sleeps() {
        with_warden(runtime(true), |gate, metrics| async move {
            let _pass = gate.enter().await;
            tokio::task::yield_now().await;
            let before = parks(&metrics);
            tokio::time::sleep(40 * LOOK_EVERY).await;
            let woken = parks(&metrics) - before;
            assert!(
                woken < 10,
                "the runtime woke {woken} times in 40 looks' time"
            );
        });
    }

    /// While the runtime never parks (a task always ready to run), a place is held until its
    /// call gives it back.
    #[test]
    fn on_a_busy_runtime_a_place_is_held_until_given_back() {
        with_warden(runtime(true), |gate, _| async move {
            let pass = gate.enter().await;
            let waiter = tokio::spawn({
                let gate = gate.clone();
                async move { gate.enter().await }
            });
            // Busy for many looks of the warden: the runtime always has this task to run.
            let busy_until = std::time::Instant::now() + 20 * LOOK_EVERY;
            while std::time::Instant::now() < busy_until {
                tokio::task::yield_now().await;
                assert!(!waiter.is_finished(), "a busy runtime's place was expired");
            }
            drop(pass);
            let _second = waiter.await.unwrap();
        });
    }
}
