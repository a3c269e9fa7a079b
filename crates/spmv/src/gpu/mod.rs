//! The CUDA runtime: device detection that never panics, the NVRTC kernel cache, device
//! buffers, event timing and the cuSPARSE handle.
//!
//! Everything goes through one [`Gpu`]: one context, one stream (so buffers need no
//! cross-stream event tracking, which cudarc would otherwise record around every launch).
//! A CUDA-graph capture ([`Gpu::capture`]) records on a second stream of its own, seen only
//! by the capturing thread, so that other threads' work on the shared stream stays out of
//! the graph; the graph then replays on the shared stream.

pub mod cusparse;
pub mod jit;

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{
    self, CudaContext, CudaFunction, CudaGraph, CudaModule, CudaSlice, CudaStream, DeviceRepr,
    LaunchArgs, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};

pub use jit::KernelModule;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::matrix::Scalar;

impl From<driver::DriverError> for Error {
    fn from(e: driver::DriverError) -> Self {
        Error::Cuda { code: Some(e.0), message: e.to_string() }
    }
}

thread_local! {
    /// The [`Gpu`] (by address) whose capture this thread is recording, or 0: while it is set,
    /// [`Gpu::stream`] gives that Gpu's capture stream to this thread.
    static CAPTURING: Cell<usize> = const { Cell::new(0) };
}

/// One CUDA device with its context, stream and compiled modules.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// Where [`Gpu::capture`] records (never runs work itself), one capture at a time.
    capture_stream: Arc<CudaStream>,
    capture_lock: Mutex<()>,
    name: String,
    arch: &'static str,
    multiprocessors: usize,
    l2_bytes: usize,
    total_memory: usize,
    modules: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
    /// Made on first use by [`Gpu::cusparse`].
    cusparse: Mutex<Option<Arc<cusparse::Handle>>>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Gpu({}, {})", self.name, self.arch)
    }
}

/// Whether the CUDA driver library can be loaded (cudarc panics on first use otherwise).
pub fn driver_available() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { driver::sys::is_culib_present() }
}

impl Gpu {
    /// How many CUDA devices this process sees; [`Error::NoGpu`] (never a panic) without a
    /// driver.
    pub fn count() -> Result<usize> {
        if !driver_available() {
            return Err(Error::NoGpu("the CUDA driver library (libcuda.so) was not found".into()));
        }
        let count =
            CudaContext::device_count().map_err(|e| Error::NoGpu(format!("CUDA driver: {e}")))?;
        Ok(count.max(0) as usize)
    }

    /// Opens device `ordinal`. Returns [`Error::NoGpu`] (never panics) when the driver or
    /// NVRTC library is missing, no device exists, or the driver fails to initialise.
    pub fn new(ordinal: usize) -> Result<Arc<Gpu>> {
        let count = Self::count()?;
        if !jit::nvrtc_available() {
            return Err(Error::NoGpu(
                "the NVRTC library (libnvrtc.so.13) was not found; put its folder on LD_LIBRARY_PATH".into(),
            ));
        }
        if ordinal >= count {
            return Err(Error::NoGpu(format!(
                "device {ordinal} requested, {count} CUDA device(s) present"
            )));
        }
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| Error::NoGpu(format!("cannot create a context: {e}")))?;
        // SAFETY: the library runs its work on a single stream (the capture stream only records;
        // the distributed exchange's second stream is ordered by explicit joins), so no
        // cross-stream tracking is needed.
        unsafe { ctx.disable_event_tracking() };
        let (major, minor) = ctx.compute_capability()?;
        use driver::sys::CUdevice_attribute as A;
        // A created stream, not the legacy default one: only a created stream can be
        // captured as a CUDA graph (the solvers replay their iterations so).
        let stream = ctx.new_stream()?;
        let gpu = Gpu {
            stream,
            capture_stream: ctx.new_stream()?,
            capture_lock: Mutex::new(()),
            name: ctx.name()?,
            arch: jit::arch_name(major, minor),
            multiprocessors: ctx.attribute(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as usize,
            l2_bytes: ctx.attribute(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize,
            total_memory: ctx.total_mem()?,
            modules: Mutex::new(HashMap::new()),
            cusparse: Mutex::new(None),
            ctx,
        };
        Ok(Arc::new(gpu))
    }

    /// The first device, or why there is none.
    pub fn detect() -> Result<Arc<Gpu>> {
        Self::new(0)
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.name
    }
    /// NVRTC architecture of this device, e.g. "sm_90".
    pub fn arch(&self) -> &'static str {
        self.arch
    }
    /// Number of streaming multiprocessors.
    pub fn multiprocessors(&self) -> usize {
        self.multiprocessors
    }
    /// L2 cache size in bytes.
    pub fn l2_bytes(&self) -> usize {
        self.l2_bytes
    }
    /// Device memory in bytes.
    pub fn total_memory(&self) -> usize {
        self.total_memory
    }
    /// The stream this thread's work goes to: the shared one, or the capture stream while
    /// this thread records a [`Gpu::capture`].
    pub fn stream(&self) -> &Arc<CudaStream> {
        if CAPTURING.with(Cell::get) == self as *const Gpu as usize {
            &self.capture_stream
        } else {
            &self.stream
        }
    }
    /// The device's primary context (shared with other libraries in the process).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// This device's cuSPARSE handle (created on first use, then shared by every matrix).
    pub fn cusparse(&self) -> Result<Arc<cusparse::Handle>> {
        let mut handle = self.cusparse.lock().unwrap_or_else(|p| p.into_inner());
        match &*handle {
            Some(h) => Ok(h.clone()),
            None => Ok(handle.insert(Arc::new(cusparse::Handle::new(&self.stream)?)).clone()),
        }
    }

    /// Loads (compiling on first use) `module` and returns its kernel `name`.
    pub fn function(&self, module: &KernelModule, name: &str) -> Result<CudaFunction> {
        let loaded = {
            let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
            match modules.get(module.name) {
                Some(m) => m.clone(),
                None => {
                    let ptx = jit::compile(module, self.arch)?;
                    let m = self.ctx.load_module(ptx)?;
                    modules.insert(module.name, m.clone());
                    m
                }
            }
        };
        loaded.load_function(name).map_err(|e| Error::Cuda {
            code: Some(e.0),
            message: format!("kernel '{name}' in module '{}': {e}", module.name),
        })
    }

    /// A zeroed device buffer; an allocation failure says how much was asked.
    pub fn alloc<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.stream()
            .alloc_zeros(len)
            .map_err(|e| self.alloc_error(len * std::mem::size_of::<T>(), e))
    }

    /// Copies a host slice to a new device buffer.
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        self.stream().clone_htod(host).map_err(|e| self.alloc_error(std::mem::size_of_val(host), e))
    }

    /// Uploads `host` converted element by element by `convert`, a chunk at a time, so that a
    /// converted copy of a large array (64-bit offsets of billions of entries) never sits in
    /// host memory whole.
    pub fn upload_converted<S, D>(
        &self, host: &[S], convert: impl Fn(S) -> D + Sync,
    ) -> Result<CudaSlice<D>>
    where
        S: Copy + Sync,
        D: DeviceRepr + ValidAsZeroBits + Send,
    {
        const CHUNK: usize = 1 << 24;
        let mut dev = self.alloc::<D>(host.len().max(1))?;
        let mut buf: Vec<D> = Vec::with_capacity(CHUNK.min(host.len()));
        for (i, chunk) in host.chunks(CHUNK).enumerate() {
            chunk.par_iter().map(|&v| convert(v)).collect_into_vec(&mut buf);
            let mut view = dev.slice_mut(i * CHUNK..i * CHUNK + chunk.len());
            self.stream().memcpy_htod(&buf, &mut view)?;
            // The next chunk reuses `buf`: the copy from it must be over.
            self.stream().synchronize()?;
        }
        Ok(dev)
    }

    /// Uploads `host`, or allocates one zero element when it is empty, so that no format
    /// depends on how the driver treats zero-byte allocations (kernels never read it).
    pub fn upload_nonempty<T: DeviceRepr + ValidAsZeroBits>(
        &self, host: &[T],
    ) -> Result<CudaSlice<T>> {
        if host.is_empty() {
            self.alloc(1)
        } else {
            self.upload(host)
        }
    }

    /// Copies a device buffer back to the host (waits for the stream).
    pub fn download<T: DeviceRepr>(&self, dev: &CudaSlice<T>) -> Result<Vec<T>> {
        Ok(self.stream().clone_dtoh(dev)?)
    }

    /// Sets every element of `dst` to `value` (used to poison outputs with NaN).
    pub fn fill<T: Scalar>(&self, dst: &mut CudaSlice<T>, value: T) -> Result<()> {
        let n = dst.len() as u64;
        if n == 0 {
            return Ok(());
        }
        let kernel = Kernel::for_type::<T>(self, &jit::UTIL_MODULE, "fill", grid_stride(n))?;
        // SAFETY: fill_<T>(T*, T, u64) matches the arguments; the grid-stride loop stays below n.
        unsafe {
            kernel.launch(self, |a| {
                a.arg(dst).arg(&value).arg(&n);
            })
        }
    }

    /// Waits until the work queued on this thread's stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.stream().synchronize()?)
    }

    /// Runs `launch` `warmup` times untimed, then `reps` times each between two CUDA events;
    /// returns each repetition's time in milliseconds.
    pub fn time(
        &self, warmup: usize, reps: usize, mut launch: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        for _ in 0..warmup {
            launch()?;
        }
        let flags = Some(driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let events: Vec<_> =
            (0..2 * reps).map(|_| self.ctx.new_event(flags)).collect::<Result<_, _>>()?;
        for pair in events.chunks(2) {
            pair[0].record(self.stream())?;
            launch()?;
            pair[1].record(self.stream())?;
        }
        self.synchronize()?;
        events.chunks(2).map(|p| Ok(p[0].elapsed_ms(&p[1])? as f64)).collect()
    }

    /// Back-to-back timing: `rounds` times, `launches` launches queued one after another
    /// between one pair of CUDA events (what an iterative solver sees, and how other SpMV
    /// codes' drivers time); returns each round's mean time per launch in milliseconds.
    /// Call after [`Gpu::time`] or another warm-up.
    pub fn time_back_to_back(
        &self, rounds: usize, launches: usize, mut launch: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        let launches = launches.max(1);
        self.timed_rounds(rounds, launches, || (0..launches).try_for_each(|_| launch()))
    }

    /// `rounds` times `round()` between one pair of CUDA events; each round's time over
    /// `launches`, in milliseconds.
    fn timed_rounds(
        &self, rounds: usize, launches: usize, mut round: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        let flags = Some(driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let mut means = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let (start, end) = (self.ctx.new_event(flags)?, self.ctx.new_event(flags)?);
            start.record(self.stream())?;
            round()?;
            end.record(self.stream())?;
            end.synchronize()?;
            means.push(start.elapsed_ms(&end)? as f64 / launches as f64);
        }
        Ok(means)
    }

    /// Back-to-back timing without the host's cost of issuing launches: `launches` launches
    /// captured once as a CUDA graph, then `rounds` replays of it, each between one pair of
    /// CUDA events; returns each replay's mean time per launch in milliseconds, or `None` where
    /// the launches cannot be captured (see [`Gpu::capture`]). On products of a few
    /// microseconds the host-issued figure of [`Gpu::time_back_to_back`] is set by the host
    /// (a few microseconds a launch, and its jitter); this one by the GPU, as a solver that
    /// replays its iterations as a graph sees it. Call after a warm-up.
    pub fn time_graph(
        &self, rounds: usize, launches: usize, mut launch: impl FnMut() -> Result<()>,
    ) -> Result<Option<Vec<f64>>> {
        let launches = launches.max(1);
        let Some(graph) = self.capture(&mut || (0..launches).try_for_each(|_| launch())) else {
            return Ok(None);
        };
        graph.launch()?; // the first replay loads the graph's work onto the device
        Ok(Some(self.timed_rounds(rounds, launches, || graph.launch())?))
    }

    /// The launches `queue` makes on this GPU, captured (not run) as an instantiated CUDA
    /// graph that replays on the shared stream; `None` where they cannot be captured (a library
    /// call that synchronises or allocates, `queue` failing, or a capture already under way on
    /// this thread). While `queue` runs, this thread's [`Gpu::stream`] is a capture stream of
    /// its own, so other threads may go on using this `Gpu`: their work stays on the shared
    /// stream and out of the graph. One capture at a time per `Gpu` (others wait).
    pub fn capture(&self, queue: &mut dyn FnMut() -> Result<()>) -> Option<Graph> {
        if CAPTURING.with(Cell::get) != 0 {
            return None;
        }
        let _one_at_a_time = self.capture_lock.lock().unwrap_or_else(|p| p.into_inner());
        self.capture_stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .ok()?;
        /// Ends the redirection even if `queue` panics.
        struct Redirect;
        impl Drop for Redirect {
            fn drop(&mut self) {
                CAPTURING.with(|c| c.set(0));
            }
        }
        CAPTURING.with(|c| c.set(self as *const Gpu as usize));
        let redirect = Redirect;
        let queued = queue();
        drop(redirect);
        // Always end the capture, so that the stream is usable again whatever happened.
        let graph = self.capture_stream.end_capture(CUgraphInstantiate_flags(0));
        let graph = match (queued, graph) {
            (Ok(()), Ok(Some(graph))) => Graph { graph, stream: self.stream.clone() },
            _ => return None,
        };
        graph.upload().ok().map(|()| graph)
    }

    /// Lets this GPU's copies and kernels reach `peer`'s memory directly (NVLink or PCIe
    /// peer-to-peer) instead of through the host; `false` where the devices cannot (then peer
    /// copies are staged by the driver). Enabling twice is fine.
    ///
    /// Two settings: the context's peer access covers `cuMemAlloc`'s memory, and `peer`'s
    /// memory pool must also grant this device access to what the stream-ordered allocator
    /// (`cuMemAllocAsync`, cudarc's `alloc`) gave out — without that the driver silently
    /// stages a peer copy through the host (on 4 H200s the 15 MB halo exchange took 288 µs
    /// without the pool's grant, 88 µs with it).
    pub fn enable_peer_access(&self, peer: &Gpu) -> Result<bool> {
        use driver::sys::{self as cu, CUresult};
        if self.ctx.ordinal() == peer.ctx.ordinal() {
            return Ok(true);
        }
        let mut can = 0;
        // SAFETY: plain queries, a context flag and an access list of the peer's default
        // memory pool (one descriptor, on the stack); both contexts are alive (held by `self`
        // and `peer`) and this thread is bound to `self`'s.
        unsafe {
            cu::cuDeviceCanAccessPeer(&mut can, self.ctx.cu_device(), peer.ctx.cu_device())
                .result()?;
            if can == 0 {
                return Ok(false);
            }
            self.ctx.bind_to_thread()?;
            match cu::cuCtxEnablePeerAccess(peer.ctx.cu_ctx(), 0) {
                CUresult::CUDA_SUCCESS | CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
                other => return Err(driver::DriverError(other).into()),
            }
            if peer.ctx.has_async_alloc() {
                let mut pool = std::ptr::null_mut();
                cu::cuDeviceGetMemPool(&mut pool, peer.ctx.cu_device()).result()?;
                let access = cu::CUmemAccessDesc {
                    location: cu::CUmemLocation {
                        type_: cu::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                        id: self.ctx.cu_device(),
                    },
                    flags: cu::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                };
                cu::cuMemPoolSetAccess(pool, &access, 1).result()?;
            }
            Ok(true)
        }
    }

    /// Free device memory in bytes (the driver's figure).
    pub fn free_memory(&self) -> Result<usize> {
        Ok(self.ctx.mem_get_info()?.0)
    }

    fn alloc_error(&self, bytes: usize, e: driver::DriverError) -> Error {
        let free = self.ctx.mem_get_info().map(|(free, _)| free).unwrap_or(0);
        Error::Cuda {
            code: Some(e.0),
            message: format!(
                "allocating {:.1} MiB on {} failed ({e}); {:.1} MiB free",
                bytes as f64 / 1048576.0,
                self.name,
                free as f64 / 1048576.0
            ),
        }
    }
}

/// Runs `f` on `buf[range]` as a `CudaSlice` of its own, without a copy: for calls that take
/// whole buffers (a format's product into some rows of a longer `y`). The alias is never
/// freed (the memory stays `buf`'s).
pub fn with_sub_slice<T: DeviceRepr, R>(
    buf: &mut CudaSlice<T>, range: std::ops::Range<usize>, f: impl FnOnce(&mut CudaSlice<T>) -> R,
) -> R {
    if range == (0..buf.len()) {
        return f(buf);
    }
    // SAFETY: the `&mut` borrow keeps `buf` alive and out of other hands while `f` runs.
    let mut alias = unsafe { alias(buf, range) };
    f(&mut alias)
}

/// [`with_sub_slice`] for a buffer borrowed shared: `f` gets `buf[range]` as a `CudaSlice`
/// of its own, for calls that take whole buffers and only read them (a product's `x`).
pub fn with_sub_slice_ref<T: DeviceRepr, R>(
    buf: &CudaSlice<T>, range: std::ops::Range<usize>, f: impl FnOnce(&CudaSlice<T>) -> R,
) -> R {
    if range == (0..buf.len()) {
        return f(buf);
    }
    // SAFETY: the shared borrow keeps `buf` alive while `f` runs, and `f` gets the alias
    // shared, as it had `buf`.
    let alias = unsafe { alias(buf, range) };
    f(&alias)
}

/// `buf[range]` as a `CudaSlice` of its own that never frees the memory (it stays `buf`'s).
/// Panics when `range` is outside `buf`.
///
/// # Safety
/// The alias must not outlive `buf`, and writes through it must not race with other uses of
/// that memory.
pub(crate) unsafe fn alias<T: DeviceRepr>(
    buf: &CudaSlice<T>, range: std::ops::Range<usize>,
) -> std::mem::ManuallyDrop<CudaSlice<T>> {
    assert!(
        range.start <= range.end && range.end <= buf.len(),
        "{range:?} outside a buffer of {}",
        buf.len()
    );
    use driver::DevicePtr as _;
    let stream = buf.stream().clone();
    let (base, _) = buf.device_ptr(&stream);
    let at = base + (range.start * std::mem::size_of::<T>()) as u64;
    // ManuallyDrop keeps the alias from freeing memory it does not own (with event tracking
    // off, as every `Gpu` has it, it holds no events either).
    std::mem::ManuallyDrop::new(unsafe { stream.upgrade_device_ptr::<T>(at, range.len()) })
}

/// Launches captured by [`Gpu::capture`], replayed on their `Gpu`'s shared stream.
pub struct Graph {
    graph: CudaGraph,
    stream: Arc<CudaStream>,
}

impl Graph {
    /// Queues one replay (asynchronous, ordered after the shared stream's earlier work).
    pub fn launch(&self) -> Result<()> {
        self.stream.context().bind_to_thread()?;
        // SAFETY: the executable graph is alive (owned by `self.graph`) and belongs to this
        // stream's context.
        unsafe {
            driver::result::graph::launch(self.graph.cu_graph_exec(), self.stream.cu_stream())
        }?;
        Ok(())
    }
    /// Loads the graph's work onto the device ahead of the first replay.
    fn upload(&self) -> Result<()> {
        self.stream.context().bind_to_thread()?;
        // SAFETY: as in `launch`.
        unsafe {
            driver::result::graph::upload(self.graph.cu_graph_exec(), self.stream.cu_stream())
        }?;
        Ok(())
    }
}

/// A compiled kernel and the grid it is launched with: what a format keeps per kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    function: CudaFunction,
    config: LaunchConfig,
}

impl Kernel {
    /// Loads kernel `name` of `module` (compiling the module on first use).
    pub fn new(gpu: &Gpu, module: &KernelModule, name: &str, config: LaunchConfig) -> Result<Self> {
        Ok(Kernel { function: gpu.function(module, name)?, config })
    }

    /// Loads kernel `{name}_{T::SUFFIX}` of `module`: the instance of `name` for the scalar
    /// `T` (every templated kernel is compiled once per precision under that suffix).
    pub fn for_type<T: Scalar>(
        gpu: &Gpu, module: &KernelModule, name: &str, config: LaunchConfig,
    ) -> Result<Self> {
        Kernel::new(gpu, module, &format!("{name}_{}", T::SUFFIX), config)
    }

    /// The grid and block the kernel is launched with.
    pub fn config(&self) -> LaunchConfig {
        self.config
    }

    /// Launches the kernel on the GPU's stream (asynchronous) with the arguments `args` pushes.
    ///
    /// # Safety
    /// The arguments must match the kernel's parameter list in number, order and type, and
    /// every memory access the kernel makes with them must stay inside the buffers passed:
    /// each call site says why in a SAFETY comment.
    pub unsafe fn launch<'a>(
        &'a self, gpu: &'a Gpu, args: impl FnOnce(&mut LaunchArgs<'a>),
    ) -> Result<()> {
        self.launch_with(gpu, self.config, args)
    }

    /// [`Kernel::launch`] with another grid than the one stored.
    ///
    /// # Safety
    /// As for [`Kernel::launch`], for the grid given.
    pub unsafe fn launch_with<'a>(
        &'a self, gpu: &'a Gpu, config: LaunchConfig, args: impl FnOnce(&mut LaunchArgs<'a>),
    ) -> Result<()> {
        let mut launch = gpu.stream().launch_builder(&self.function);
        args(&mut launch);
        launch.launch(config)?;
        Ok(())
    }
}

/// A grid-stride launch over `n` items: blocks of 256 threads, at most 65,536 blocks.
pub fn grid_stride(n: u64) -> LaunchConfig {
    let blocks = n.div_ceil(256).clamp(1, 65_536) as u32;
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
}

/// A launch configuration of `threads` threads in blocks of `block` threads, one dimension.
pub fn grid_for(threads: u64, block: u32) -> Result<LaunchConfig> {
    let blocks = threads.div_ceil(block as u64).max(1);
    if blocks > i32::MAX as u64 {
        return Err(Error::cuda(format!("{threads} threads exceed the grid limit")));
    }
    Ok(LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    })
}
