//! Where a distributed setup's time and host memory go, phase by phase (reading the rows,
//! the partition, the halo plan, the parts' local copies, conversions and uploads, NCCL):
//! what a user pays once per matrix, reported by `spmv solve` and `spmv bench` over
//! several GPUs so that a slow setup names its slow phase.

use std::time::Instant;

use serde::Serialize;

use super::Ranks;
use crate::error::Result;
use crate::measure::ms_since;

/// One phase of a setup.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Phase {
    /// What the phase does ("read stripe", "convert", "upload", …).
    pub name: String,
    /// Its wall time, ms. Phases that ran on several devices side by side (one thread per
    /// device) count the slowest device's; over processes, the slowest rank's.
    pub ms: f64,
    /// The process's resident host memory when the phase ended and its peak so far (Linux's
    /// VmRSS and VmHWM), bytes; over processes, the largest rank's. The peak is the process's
    /// since its start: the phase that raised it is the first whose peak shows the new value
    /// (resetting the peak per phase would also reset what `time` or a profiler reports for
    /// the whole process). `None` where /proc is not there.
    pub host_bytes: Option<u64>,
    /// The peak (VmHWM), as above.
    pub peak_host_bytes: Option<u64>,
}

/// A setup's phases in the order they ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Phases(Vec<Phase>);

impl Phases {
    /// Runs `f` as the phase `name`, recording its wall time and the host memory after it.
    pub fn time<R>(&mut self, name: &str, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let result = f();
        self.record(name, ms_since(start));
        result
    }

    /// A phase of `ms` that ended now.
    pub fn record(&mut self, name: &str, ms: f64) {
        let (host_bytes, peak_host_bytes) = host_memory();
        self.0.push(Phase { name: name.to_string(), ms, host_bytes, peak_host_bytes });
    }

    /// The phases of several devices that ran side by side, one `Phases` each with the same
    /// names in the same order (a device's parts one after another, already summed): each
    /// phase's slowest device, the memory as it is now (the threads have ended).
    pub fn side_by_side(devices: &[Phases]) -> Phases {
        let mut merged = Phases::default();
        let Some(first) = devices.first() else { return merged };
        for (i, phase) in first.0.iter().enumerate() {
            let ms = devices.iter().filter_map(|d| d.0.get(i)).map(|p| p.ms).fold(0.0, f64::max);
            merged.record(&phase.name, ms);
        }
        merged
    }

    /// This device's phases of `part`, their times added to those of its earlier parts (by
    /// position: every part takes the same phases; the memory is read again by
    /// [`Phases::side_by_side`]).
    pub fn add(&mut self, part: Phases) {
        if self.0.is_empty() {
            self.0 = part.0;
            return;
        }
        for (mine, other) in self.0.iter_mut().zip(part.0) {
            mine.ms += other.ms;
        }
    }

    /// These phases followed by `other`'s (e.g. reading the rows, then building the parts).
    pub fn then(mut self, other: Phases) -> Phases {
        self.0.extend(other.0);
        self
    }

    /// The phases, in order.
    pub fn phases(&self) -> &[Phase] {
        &self.0
    }

    /// These phases over every rank of a run of one process per GPU (every rank calls it
    /// together, after the same phases): each phase's slowest rank and largest memory.
    pub fn across(&self, ranks: &Ranks) -> Result<Phases> {
        Ok(self.over_ranks(&ranks.all_gather_f64(&self.as_numbers())?))
    }

    /// Every phase's figures as numbers (ms, host bytes, peak bytes; -1 for none), for a
    /// gather across processes.
    fn as_numbers(&self) -> Vec<f64> {
        let bytes = |b: Option<u64>| b.map_or(-1.0, |b| b as f64);
        self.0.iter().flat_map(|p| [p.ms, bytes(p.host_bytes), bytes(p.peak_host_bytes)]).collect()
    }

    /// These phases with every rank's figures (`as_numbers` of each, in rank order): the
    /// slowest rank's time and the largest rank's memory. A rank whose phases differ (none
    /// should: every rank takes the same steps) leaves these as they are.
    fn over_ranks(&self, all: &[Vec<f64>]) -> Phases {
        let width = 3 * self.0.len();
        if all.iter().any(|r| r.len() != width) {
            return self.clone();
        }
        let largest = |k: usize| all.iter().map(|r| r[k]).fold(f64::NEG_INFINITY, f64::max);
        let bytes = |v: f64| (v >= 0.0).then_some(v as u64);
        let phases = (self.0.iter().enumerate()).map(|(i, p)| Phase {
            name: p.name.clone(),
            ms: largest(3 * i),
            host_bytes: bytes(largest(3 * i + 1)),
            peak_host_bytes: bytes(largest(3 * i + 2)),
        });
        Phases(phases.collect())
    }

    /// One line a person reads: `read 1.20 s (peak 3.4 GB) · partition 0.01 s · …`.
    pub fn summary(&self) -> String {
        let phase = |p: &Phase| match p.peak_host_bytes {
            Some(peak) => {
                format!("{} {:.2} s (peak {:.1} GB)", p.name, p.ms / 1e3, peak as f64 / 1e9)
            }
            None => format!("{} {:.2} s", p.name, p.ms / 1e3),
        };
        self.0.iter().map(phase).collect::<Vec<_>>().join(" · ")
    }
}

/// This process's resident host memory and its peak so far, bytes (Linux), else `None`s.
fn host_memory() -> (Option<u64>, Option<u64>) {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return (None, None) };
    let kib = |key: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
    };
    (kib("VmRSS:"), kib("VmHWM:"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phases(figures: &[(&str, f64)]) -> Phases {
        let mut p = Phases::default();
        for &(name, ms) in figures {
            p.record(name, ms);
        }
        p
    }

    #[test]
    fn phases_record_time_and_the_host_memory_after_them() {
        let mut p = Phases::default();
        let v = p.time("fill", || vec![1u8; 1 << 20]);
        assert_eq!(v.len(), 1 << 20);
        let fill = &p.phases()[0];
        assert_eq!(fill.name, "fill");
        assert!(fill.ms >= 0.0);
        if cfg!(target_os = "linux") {
            let (rss, peak) = (fill.host_bytes.unwrap(), fill.peak_host_bytes.unwrap());
            assert!(rss > 0 && peak >= rss, "rss {rss}, peak {peak}");
        }
        assert!(p.summary().starts_with("fill 0.00 s"), "{}", p.summary());
    }

    #[test]
    fn devices_side_by_side_count_the_slowest_and_parts_of_a_device_add_up() {
        let mut device0 = phases(&[("convert", 2.0), ("upload", 1.0)]);
        device0.add(phases(&[("convert", 3.0), ("upload", 1.5)]));
        let device1 = phases(&[("convert", 4.0), ("upload", 3.0)]);
        let merged = Phases::side_by_side(&[device0, device1]);
        let ms: Vec<(&str, f64)> =
            merged.phases().iter().map(|p| (p.name.as_str(), p.ms)).collect();
        assert_eq!(ms, [("convert", 5.0), ("upload", 3.0)]);
        assert_eq!(Phases::side_by_side(&[]), Phases::default());
    }

    #[test]
    fn over_ranks_the_slowest_rank_and_the_largest_memory_count() {
        let mine = phases(&[("read", 1.0), ("convert", 2.0)]);
        let other = vec![5.0, 10.0, 30.0, 1.0, -1.0, -1.0];
        let all = vec![mine.as_numbers(), other];
        let merged = mine.over_ranks(&all);
        assert_eq!(merged.phases()[0].ms, 5.0);
        assert_eq!(merged.phases()[1].ms, 2.0);
        if cfg!(target_os = "linux") {
            assert!(merged.phases()[0].peak_host_bytes.unwrap() >= 30);
        }
        // A rank with other phases: this rank's own figures.
        assert_eq!(mine.over_ranks(&[mine.as_numbers(), vec![1.0]]), mine);
        assert_eq!(phases(&[("a", 1.0)]).then(phases(&[("b", 2.0)])).phases().len(), 2);
    }
}
