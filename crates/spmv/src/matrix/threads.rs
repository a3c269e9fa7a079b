//! Whether a CPU product runs over rayon's threads or on the calling thread alone.
//!
//! Rayon's idle threads spin for a while, then sleep, and waking a sleeping one is slow on a
//! virtual machine: after a pause, csr-vector's threaded product took 60–180 µs longer than
//! back to back on the 2-core VM (after 1 ms of other work on the caller's thread, against
//! back to back: `pesa` 154 / 61 µs, `cti` 157 / 113, `t60k` 320 / 103, `wiki-Vote` 269 / 77;
//! on the calling thread alone 69, 94, 127, 99; the threads were still awake 200 µs after a
//! product and asleep from about 300 µs). A caller that does other work between products —
//! SciPy's solvers around `op.matvec`, a loop in Python — pays that on every product. So a
//! product runs on the calling thread below [`SERIAL_WORK`], and, when no CPU product ended
//! in the last [`COLD_GAP`], also where waking the threads costs more than they save
//! ([`threads_pay`], the wake-up measured once per process). Every caller gives the same
//! sums either way.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Work (entries plus rows) below which a CPU product runs on the calling thread: waking
/// rayon's threads costs more than such a product takes. Measured (2 cores, median µs of
/// csr-vector, parallel / one thread): `poisson2d:nx=40` (9.4k) 21 / 3.9, `Chem97ZtZ` (9.9k)
/// 21 / 3.6, `poisson2d:nx=80` (38k) 13–27 / 15, `ex10` (57k) 15 / 18, `crack` (71k) 21 / 26.
pub(crate) const SERIAL_WORK: usize = 1 << 15;

/// How long after the last CPU product rayon's threads are taken to be asleep (still awake
/// after 200 µs, asleep after 300 on the 2-core VM).
pub(crate) const COLD_GAP: Duration = Duration::from_micros(250);

/// Nanoseconds a serial CPU product takes per unit of work (entry or row), for weighing it
/// against the wake-up: 0.53–0.69 on the 2-core VM (csr-vector on `pesa`, `cti`, `t60k`,
/// `cvxbqp1`, one thread).
const SERIAL_NS_PER_WORK: f64 = 0.6;

/// Runs one CPU product of `work` (entries plus rows) into `y`: `serial` on the calling
/// thread or `parallel` over rayon's threads ([`threads_pay`]), and notes when it ended. The
/// two must give the same bits.
pub(crate) fn cpu_product<Y>(work: usize, y: Y, serial: impl FnOnce(Y), parallel: impl FnOnce(Y)) {
    let threads = rayon::current_num_threads();
    // On one of rayon's own threads (a product inside a parallel task) the pool is awake.
    let cold = work >= SERIAL_WORK && threads > 1 && rayon::current_thread_index().is_none() && {
        let last = LAST_END_NS.load(Ordering::Relaxed);
        last == 0 || now_ns().saturating_sub(last) >= COLD_GAP.as_nanos() as u64
    };
    let wake = if cold { Some(wake_cost()) } else { None };
    if threads_pay(work, wake, threads) {
        parallel(y)
    } else {
        serial(y)
    }
    LAST_END_NS.store(now_ns(), Ordering::Relaxed);
}

/// Whether a product of `work` is worth `threads` threads: never below [`SERIAL_WORK`];
/// with the threads asleep (`wake`: what waking them costs), only where the time they save,
/// (1 − 1/threads) of the serial product, exceeds the wake-up.
pub(crate) fn threads_pay(work: usize, wake: Option<Duration>, threads: usize) -> bool {
    if work < SERIAL_WORK || threads < 2 {
        return false;
    }
    let Some(wake) = wake else { return true };
    let saved_ns = work as f64 * SERIAL_NS_PER_WORK * (1.0 - 1.0 / threads as f64);
    saved_ns > wake.as_nanos() as f64
}

/// What waking rayon's sleeping threads for one product costs on this machine: the median of
/// three `rayon::join`s of empty closures from this thread, each after 1 ms asleep (so the
/// pool's threads are asleep too). Measured once per process, at the first product that
/// finds them cold (about 4 ms).
fn wake_cost() -> Duration {
    *WAKE.get_or_init(|| {
        let mut times: Vec<Duration> = (0..3)
            .map(|_| {
                std::thread::sleep(Duration::from_millis(1));
                let t = Instant::now();
                rayon::join(|| (), || ());
                t.elapsed()
            })
            .collect();
        times.sort();
        times[1]
    })
}

static WAKE: OnceLock<Duration> = OnceLock::new();
/// When the last CPU product ended, in ns since [`EPOCH`] plus one (0: none yet).
static LAST_END_NS: AtomicU64 = AtomicU64::new(0);
static EPOCH: OnceLock<Instant> = OnceLock::new();

fn now_ns() -> u64 {
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_run_products_whose_saving_beats_the_wake_up() {
        let slow = Some(Duration::from_micros(100)); // a VM
        let fast = Some(Duration::from_micros(5)); // bare metal
        assert!(!threads_pay(SERIAL_WORK - 1, None, 2), "small: always the calling thread");
        assert!(threads_pay(SERIAL_WORK, None, 2), "awake threads pay from SERIAL_WORK");
        assert!(!threads_pay(SERIAL_WORK, None, 1), "one thread is the calling thread's work");
        // 2 threads save half of 0.6 ns a unit: 100 µs pays from about 333k units of work.
        assert!(!threads_pay(300_000, slow, 2) && threads_pay(400_000, slow, 2));
        assert!(threads_pay(SERIAL_WORK, fast, 32), "a cheap wake-up: threads as when awake");
        assert!(wake_cost() > Duration::ZERO);
    }
}
