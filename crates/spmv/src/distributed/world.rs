//! The processes of a multi-process run, one per GPU on one node or several: this process's
//! place in it ([`World`], from the variables its launcher sets) and a rendezvous through
//! which the ranks exchange small messages before they share anything else (NCCL's unique id,
//! the rows each holds). Rank 0 serves it over TCP on `MASTER_ADDR:MASTER_PORT`, as
//! torchrun's store does, so that no MPI library is needed; `spmv launch` starts the ranks on
//! one machine, and torchrun, `mpirun` or Slurm's `srun` across machines (docs/scale.md).

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// This process's place in a multi-process run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct World {
    /// 0-based rank among all the processes.
    pub rank: usize,
    /// Number of processes.
    pub size: usize,
    /// Rank among the processes of this machine: the GPU this process drives.
    pub local_rank: usize,
    /// Whose variables said so: one of [`LAUNCHERS`]' names.
    pub launcher: &'static str,
}

/// The launchers' variables, looked for in this order: (name, rank, size, local rank).
/// Slurm's are `srun`'s step variables, which a batch script itself does not have (its
/// `SLURM_NTASKS` counts the allocation's tasks, not processes started).
pub const LAUNCHERS: [(&str, &str, &str, &str); 4] = [
    ("torchrun / spmv launch", "RANK", "WORLD_SIZE", "LOCAL_RANK"),
    ("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
    ("MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
    ("Slurm srun", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID"),
];

/// How long ranks wait for each other at the rendezvous (rank 0 for the others to connect,
/// the others for rank 0 to listen).
pub const RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(300);

/// How long a collective step waits for the slowest rank (which may be reading its rows).
const STEP_TIMEOUT: Duration = Duration::from_secs(30 * 60);

impl World {
    /// The run this process belongs to, from its environment; `None` for a process started
    /// alone (no launcher's variables). A variable that is set but malformed, or a rank
    /// outside the size, is an error naming it.
    pub fn from_env() -> Result<Option<World>> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`World::from_env`] with the variables read by `var`.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Option<World>> {
        for (launcher, rank_var, size_var, local_var) in LAUNCHERS {
            let Some(rank) = var(rank_var) else { continue };
            let number = |name: &str, text: Option<String>| -> Result<usize> {
                let text = text.ok_or_else(|| {
                    Error::Launch(format!("{rank_var} is set ({launcher}) but {name} is not"))
                })?;
                text.trim().parse().map_err(|_| {
                    Error::Launch(format!("{name} must be a non-negative integer, not {text:?}"))
                })
            };
            let rank = number(rank_var, Some(rank))?;
            let size = number(size_var, var(size_var))?;
            // A launcher that does not say the local rank (one process per machine) gets 0.
            let local_rank = match var(local_var) {
                Some(text) => number(local_var, Some(text))?,
                None => 0,
            };
            if size == 0 || rank >= size || local_rank >= size {
                return Err(Error::Launch(format!(
                    "{rank_var}={rank}, {local_var}={local_rank} and {size_var}={size}: \
                     ranks are 0 to {size_var} − 1"
                )));
            }
            return Ok(Some(World { rank, size, local_rank, launcher }));
        }
        Ok(None)
    }

    /// Rank 0's rendezvous address: `SPMV_RENDEZVOUS` (`host:port`) if set, else
    /// `MASTER_ADDR` and `MASTER_PORT` (torchrun's variables; `spmv launch` sets them) — the
    /// port after `MASTER_PORT` under torchrun's agent store (`TORCHELASTIC_USE_AGENT_STORE`),
    /// whose own store listens on `MASTER_PORT` itself.
    pub fn rendezvous_address() -> Result<String> {
        Self::rendezvous_address_from(|name| std::env::var(name).ok())
    }

    /// [`World::rendezvous_address`] with the variables read by `var`.
    pub fn rendezvous_address_from(var: impl Fn(&str) -> Option<String>) -> Result<String> {
        let get = |name: &str| var(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        if let Some(address) = get("SPMV_RENDEZVOUS") {
            return Ok(address);
        }
        let (Some(host), Some(port)) = (get("MASTER_ADDR"), get("MASTER_PORT")) else {
            return Err(Error::Launch(
                "set MASTER_ADDR and MASTER_PORT to rank 0's host and a free port on it (torchrun \
                 and spmv launch set them), or SPMV_RENDEZVOUS to host:port"
                    .into(),
            ));
        };
        let port: u16 = port.parse().map_err(|_| {
            Error::Launch(format!("MASTER_PORT must be a port number, not {port:?}"))
        })?;
        let agent_store = get("TORCHELASTIC_USE_AGENT_STORE")
            .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
        let port = if agent_store {
            port.checked_add(1).ok_or_else(|| {
                Error::Launch(
                    "MASTER_PORT 65535 is torchrun's store's: set SPMV_RENDEZVOUS to host:port"
                        .into(),
                )
            })?
        } else {
            port
        };
        // An IPv6 address takes brackets before its port.
        if host.contains(':') && !host.starts_with('[') {
            Ok(format!("[{host}]:{port}"))
        } else {
            Ok(format!("{host}:{port}"))
        }
    }
}

/// Every message's first bytes: a rendezvous of this protocol, not a stray connection.
const MAGIC: [u8; 8] = *b"spmv-rv1";
/// The payload of one message at most, checked before it is read.
const MAX_MESSAGE: u64 = 1 << 30;

/// The ranks of a [`World`] connected through rank 0: collective steps on small messages.
/// Every rank must take the same steps in the same order (each step is numbered; ranks that
/// disagree get an error, not a hang).
pub struct Rendezvous {
    world: World,
    /// Rank 0: the other ranks' connections, in rank order; another rank: the one to rank 0.
    links: Vec<TcpStream>,
    step: u64,
}

impl Rendezvous {
    /// Meets the other ranks at `address` (rank 0's `host:port`): rank 0 listens there on
    /// every interface and waits for the others to connect; they retry until it listens.
    /// Either gives up after `timeout` with the ranks still missing.
    pub fn connect(world: World, address: &str, timeout: Duration) -> Result<Self> {
        let deadline = Instant::now() + timeout;
        let links = if world.rank == 0 {
            serve(world, address, deadline)?
        } else {
            vec![join(world, address, deadline)?]
        };
        Ok(Rendezvous { world, links, step: 0 })
    }

    /// This process's place.
    pub fn world(&self) -> World {
        self.world
    }

    /// Every rank's `mine`, in rank order, on every rank.
    pub fn all_gather(&mut self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.step += 1;
        let step = self.step;
        if self.world.rank != 0 {
            let link = &mut self.links[0];
            send(link, step, mine).map_err(|e| lost(0, e))?;
            let all = receive(link, step).map_err(|e| lost(0, e))?;
            return split(&all, self.world.size);
        }
        let mut all = vec![mine.to_vec()];
        for (i, link) in self.links.iter_mut().enumerate() {
            all.push(receive(link, step).map_err(|e| lost(i + 1, e))?);
        }
        let joined = join_messages(&all);
        for (i, link) in self.links.iter_mut().enumerate() {
            send(link, step, &joined).map_err(|e| lost(i + 1, e))?;
        }
        Ok(all)
    }

    /// Rank 0's `bytes` on every rank (the others' are ignored).
    pub fn broadcast(&mut self, bytes: &[u8]) -> Result<Vec<u8>> {
        let mine = if self.world.rank == 0 { bytes } else { &[] };
        Ok(self.all_gather(mine)?.swap_remove(0))
    }

    /// Returns once every rank has reached it.
    pub fn barrier(&mut self) -> Result<()> {
        self.all_gather(&[]).map(|_| ())
    }
}

/// A port for a rendezvous on this machine (`spmv launch`, the tests' ranks): free now on
/// every address, and below the kernel's range of ephemeral ports
/// (`/proc/sys/net/ipv4/ip_local_port_range`, 32768 on Linux by default). A port the system
/// handed out (bind to port 0) is free a moment, then may become the source port of any
/// outgoing connection (NCCL's bootstrap opens many) before rank 0 listens on it again.
pub fn free_port() -> Result<u16> {
    let (low, high) = (10_000u16, first_ephemeral_port().max(10_001));
    // A start that differs between concurrent launchers.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let span = u64::from(high - low);
    let start = (u64::from(std::process::id()).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ nanos) % span;
    (0..span)
        .map(|i| low + ((start + i) % span) as u16)
        .find(|&p| TcpListener::bind(("0.0.0.0", p)).is_ok())
        .ok_or_else(|| Error::Launch(format!("no free port in {low}..{high} for the rendezvous")))
}

/// The first port the kernel hands out to outgoing connections and `bind(0)` (32768, Linux's
/// default, where the range cannot be read).
fn first_ephemeral_port() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768)
}

/// Rank 0: listens on `address`'s port and takes one connection from each other rank.
fn serve(world: World, address: &str, deadline: Instant) -> Result<Vec<TcpStream>> {
    let port = address.rsplit_once(':').map(|(_, p)| p).unwrap_or(address);
    let listener = TcpListener::bind(format!("0.0.0.0:{port}"))
        .and_then(|l| l.set_nonblocking(true).map(|_| l))
        .map_err(|e| Error::Launch(format!("rank 0 cannot listen on port {port}: {e}")))?;
    let mut links: Vec<Option<TcpStream>> = (1..world.size).map(|_| None).collect();
    while links.iter().any(Option::is_none) {
        match listener.accept() {
            Ok((mut stream, _)) => {
                stream
                    .set_nonblocking(false)
                    .and_then(|_| stream.set_read_timeout(Some(Duration::from_secs(10))))
                    .map_err(|e| Error::Launch(format!("rendezvous: {e}")))?;
                // A connection that does not speak the protocol is not a rank: it is dropped.
                let Ok((rank, size)) = read_hello(&mut stream) else { continue };
                if size != world.size {
                    return Err(Error::Launch(format!(
                        "rank {rank} was started with {size} ranks, rank 0 with {}",
                        world.size
                    )));
                }
                match links.get_mut(rank.wrapping_sub(1)) {
                    Some(slot @ None) => {
                        stream
                            .set_nodelay(true)
                            .and_then(|_| stream.set_read_timeout(Some(STEP_TIMEOUT)))
                            .map_err(|e| Error::Launch(format!("rendezvous: {e}")))?;
                        *slot = Some(stream);
                    }
                    _ => {
                        return Err(Error::Launch(format!(
                            "two processes say they are rank {rank}"
                        )))
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    let missing: Vec<String> = (1..world.size)
                        .filter(|r| links[r - 1].is_none())
                        .map(|r| r.to_string())
                        .collect();
                    return Err(Error::Launch(format!(
                        "rank 0 waited at {address} for ranks {} (not connected)",
                        missing.join(", ")
                    )));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(Error::Launch(format!("rank 0 at {address}: {e}"))),
        }
    }
    Ok(links.into_iter().flatten().collect())
}

/// A rank other than 0: connects to rank 0 (retrying until it listens) and says who it is.
fn join(world: World, address: &str, deadline: Instant) -> Result<TcpStream> {
    let targets: Vec<_> = address
        .to_socket_addrs()
        .map_err(|e| Error::Launch(format!("rendezvous address {address}: {e}")))?
        .collect();
    loop {
        let connect = |t| TcpStream::connect_timeout(t, Duration::from_secs(1)).ok();
        if let Some(mut stream) = targets.iter().find_map(connect) {
            let hello = [
                MAGIC.as_slice(),
                &(world.rank as u64).to_le_bytes(),
                &(world.size as u64).to_le_bytes(),
            ]
            .concat();
            stream
                .set_nodelay(true)
                .and_then(|_| stream.write_all(&hello))
                .and_then(|_| stream.set_read_timeout(Some(STEP_TIMEOUT)))
                .map_err(|e| Error::Launch(format!("rank {} at {address}: {e}", world.rank)))?;
            return Ok(stream);
        }
        if Instant::now() >= deadline {
            return Err(Error::Launch(format!(
                "rank {} found no rank 0 listening at {address}",
                world.rank
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A joining rank's (rank, size), after the protocol's magic.
fn read_hello(stream: &mut TcpStream) -> std::io::Result<(usize, usize)> {
    let mut hello = [0u8; 24];
    stream.read_exact(&mut hello)?;
    if hello[..8] != MAGIC {
        return Err(ErrorKind::InvalidData.into());
    }
    let word = |i: usize| u64::from_le_bytes(hello[i..i + 8].try_into().expect("8 bytes")) as usize;
    Ok((word(8), word(16)))
}

/// Sends one message of step `step`: magic, step, length, payload.
fn send(link: &mut TcpStream, step: u64, payload: &[u8]) -> Result<(), String> {
    let head =
        [MAGIC.as_slice(), &step.to_le_bytes(), &(payload.len() as u64).to_le_bytes()].concat();
    link.write_all(&head).and_then(|_| link.write_all(payload)).map_err(|e| e.to_string())
}

/// Receives the message of step `step`; a message of another step, or longer than
/// MAX_MESSAGE, is an error (read no further).
fn receive(link: &mut TcpStream, step: u64) -> Result<Vec<u8>, String> {
    let mut head = [0u8; 24];
    link.read_exact(&mut head).map_err(|e| e.to_string())?;
    let word = |i: usize| u64::from_le_bytes(head[i..i + 8].try_into().expect("8 bytes"));
    if head[..8] != MAGIC {
        return Err("not a rendezvous message".into());
    }
    if word(8) != step {
        return Err(format!("it is at collective step {}, this rank at {step}", word(8)));
    }
    let len = word(16);
    if len > MAX_MESSAGE {
        return Err(format!("a message of {len} bytes (at most {MAX_MESSAGE})"));
    }
    // Read as it arrives: the length is not allocated up front.
    let mut payload = Vec::new();
    link.take(len).read_to_end(&mut payload).map_err(|e| e.to_string())?;
    if payload.len() as u64 != len {
        return Err(format!("the connection closed after {} of {len} bytes", payload.len()));
    }
    Ok(payload)
}

/// The error of a step that failed on the link to `rank`.
fn lost(rank: usize, reason: String) -> Error {
    Error::Launch(format!("rendezvous with rank {rank}: {reason}"))
}

/// The messages as one: each one's length, then its bytes.
fn join_messages(all: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(all.iter().map(|m| 8 + m.len()).sum());
    for m in all {
        out.extend_from_slice(&(m.len() as u64).to_le_bytes());
        out.extend_from_slice(m);
    }
    out
}

/// [`join_messages`] undone, checking that it holds `count` messages and nothing else.
fn split(mut joined: &[u8], count: usize) -> Result<Vec<Vec<u8>>> {
    let bad = || Error::Launch("rendezvous: rank 0 sent a malformed gather".into());
    let mut all = Vec::with_capacity(count);
    for _ in 0..count {
        let (len, rest) = joined.split_first_chunk::<8>().ok_or_else(bad)?;
        let len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| bad())?;
        if len > rest.len() {
            return Err(bad());
        }
        all.push(rest[..len].to_vec());
        joined = &rest[len..];
    }
    if joined.is_empty() {
        Ok(all)
    } else {
        Err(bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| map.get(name).cloned()
    }

    /// The rendezvous port is free on every address and below the ephemeral ports, so no
    /// outgoing connection takes it before rank 0 listens.
    #[test]
    fn free_ports_are_free_and_not_ephemeral() {
        let low = first_ephemeral_port();
        for _ in 0..3 {
            let port = free_port().unwrap();
            assert!((10_000..low.max(10_001)).contains(&port), "{port} (ephemeral from {low})");
            let held = TcpListener::bind(("0.0.0.0", port)).unwrap();
            drop(held);
        }
    }

    #[test]
    fn each_launcher_s_variables_give_the_place() {
        let torch = [("RANK", "2"), ("WORLD_SIZE", "4"), ("LOCAL_RANK", "0")];
        let w = World::from_vars(vars(&torch)).unwrap().unwrap();
        assert_eq!((w.rank, w.size, w.local_rank), (2, 4, 0));
        let ompi = [
            ("OMPI_COMM_WORLD_RANK", "5"),
            ("OMPI_COMM_WORLD_SIZE", "8"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
        ];
        let w = World::from_vars(vars(&ompi)).unwrap().unwrap();
        assert_eq!((w.rank, w.size, w.local_rank, w.launcher), (5, 8, 1, "Open MPI"));
        let slurm = [("SLURM_PROCID", "3"), ("SLURM_STEP_NUM_TASKS", "4"), ("SLURM_LOCALID", "3")];
        assert_eq!(World::from_vars(vars(&slurm)).unwrap().unwrap().launcher, "Slurm srun");
        // A batch script's allocation variables alone are not a run of several processes.
        let batch = [("SLURM_NTASKS", "4"), ("SLURM_JOB_ID", "17")];
        assert_eq!(World::from_vars(vars(&batch)).unwrap(), None);
        // No local rank (one process per machine): 0.
        let w = World::from_vars(vars(&[("PMI_RANK", "1"), ("PMI_SIZE", "2")])).unwrap().unwrap();
        assert_eq!((w.rank, w.local_rank), (1, 0));
        assert_eq!(World::from_vars(vars(&[])).unwrap(), None);
    }

    #[test]
    fn bad_variables_are_errors_naming_them() {
        for (pairs, expect) in [
            (&[("RANK", "1")][..], "WORLD_SIZE is not"),
            (&[("RANK", "x"), ("WORLD_SIZE", "2")][..], "RANK must be a non-negative integer"),
            (&[("RANK", "2"), ("WORLD_SIZE", "2")][..], "ranks are 0 to WORLD_SIZE"),
            (&[("RANK", "0"), ("WORLD_SIZE", "0")][..], "ranks are 0 to WORLD_SIZE"),
            (&[("RANK", "0"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "-1")][..], "LOCAL_RANK must be"),
        ] {
            let e = World::from_vars(vars(pairs)).unwrap_err().to_string();
            assert!(e.contains(expect), "{pairs:?}: {e}");
        }
    }

    #[test]
    fn the_rendezvous_address_avoids_torchrun_s_own_store() {
        let address = |pairs: &[(&str, &str)]| World::rendezvous_address_from(vars(pairs));
        let master = [("MASTER_ADDR", "node0"), ("MASTER_PORT", "29500")];
        assert_eq!(address(&master).unwrap(), "node0:29500");
        let agent = [master[0], master[1], ("TORCHELASTIC_USE_AGENT_STORE", "True")];
        assert_eq!(address(&agent).unwrap(), "node0:29501");
        let own = [master[0], master[1], ("SPMV_RENDEZVOUS", "node1:4000")];
        assert_eq!(address(&own).unwrap(), "node1:4000");
        assert_eq!(address(&[("MASTER_ADDR", "fe80::1"), master[1]]).unwrap(), "[fe80::1]:29500");
        assert!(address(&master[..1])
            .unwrap_err()
            .to_string()
            .contains("set MASTER_ADDR and MASTER_PORT"));
        let bad = [("MASTER_ADDR", "node0"), ("MASTER_PORT", "http")];
        assert!(address(&bad)
            .unwrap_err()
            .to_string()
            .contains("MASTER_PORT must be a port number"));
    }

    fn world(rank: usize, size: usize) -> World {
        World { rank, size, local_rank: rank, launcher: "test" }
    }

    #[test]
    fn ranks_gather_broadcast_and_meet_in_rank_order() {
        let size = 4;
        let address = format!("127.0.0.1:{}", free_port().unwrap());
        let ranks: Vec<_> = (0..size)
            .map(|rank| {
                let address = address.clone();
                std::thread::spawn(move || {
                    let mut rv =
                        Rendezvous::connect(world(rank, size), &address, Duration::from_secs(20))
                            .unwrap();
                    let mine = vec![rank as u8; rank * 1000];
                    let all = rv.all_gather(&mine).unwrap();
                    let id =
                        rv.broadcast(if rank == 0 { b"unique id" } else { b"ignored" }).unwrap();
                    rv.barrier().unwrap();
                    (all, id)
                })
            })
            .collect();
        for handle in ranks {
            let (all, id) = handle.join().unwrap();
            assert_eq!(all.len(), size);
            for (r, m) in all.iter().enumerate() {
                assert_eq!(m, &vec![r as u8; r * 1000]);
            }
            assert_eq!(id, b"unique id");
        }
    }

    #[test]
    fn a_missing_rank_or_a_size_that_disagrees_is_an_error_not_a_hang() {
        let address = format!("127.0.0.1:{}", free_port().unwrap());
        let e =
            Rendezvous::connect(world(0, 3), &address, Duration::from_millis(300)).err().unwrap();
        assert!(e.to_string().contains("for ranks 1, 2"), "{e}");
        let address = format!("127.0.0.1:{}", free_port().unwrap());
        let e =
            Rendezvous::connect(world(1, 2), &address, Duration::from_millis(300)).err().unwrap();
        assert!(e.to_string().contains("found no rank 0"), "{e}");
        let address = format!("127.0.0.1:{}", free_port().unwrap());
        let other = address.clone();
        let joiner = std::thread::spawn(move || {
            Rendezvous::connect(world(1, 3), &other, Duration::from_secs(5))
        });
        let e = Rendezvous::connect(world(0, 2), &address, Duration::from_secs(5)).err().unwrap();
        assert!(e.to_string().contains("started with 3 ranks, rank 0 with 2"), "{e}");
        drop(joiner.join());
    }

    #[test]
    fn gathers_that_do_not_parse_are_refused() {
        let joined = join_messages(&[vec![1, 2], vec![], vec![3]]);
        assert_eq!(split(&joined, 3).unwrap(), vec![vec![1, 2], vec![], vec![3]]);
        assert!(split(&joined, 2).is_err());
        assert!(split(&joined, 4).is_err());
        assert!(split(&joined[..joined.len() - 1], 3).is_err());
        assert!(split(&u64::MAX.to_le_bytes(), 1).is_err());
    }
}
