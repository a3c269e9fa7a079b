//! `spmv`: benchmark, generate and inspect sparse matrices in every storage format.

mod explain;
mod launch;
mod pagerank;
mod report;
mod select;
mod solve;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use spmv::bench::report::{hanging, TableLayout, COMPACT_WIDTH};
use spmv::bench::{Product, Settings};
use spmv::choice::{Choice, CHOOSERS};
use spmv::error::{printable, printable_name};
use spmv::formats;
use spmv::io::inputs::{self, Input};
use spmv::operator::{Block, Layout};
use spmv::Backend;

#[derive(Parser)]
#[command(
    name = "spmv",
    version,
    about = "Sparse matrix-vector multiplication formats on NVIDIA GPUs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// `allow_negative_numbers`: `--max-iter -1` is a value (refused with its option's name), not
// an unknown argument. clap takes only plain decimals for numbers there, so the float options
// (`--tol -1e-3`) also allow hyphen values.
#[derive(Subcommand)]
enum Command {
    /// Benchmark formats on matrices against the oracle and the copy roofline.
    #[command(allow_negative_numbers = true)]
    Bench(BenchArgs),
    /// List the registered formats.
    Formats,
    /// Generate a matrix from a spec (see docs/generators.md) and write it.
    #[command(after_help = generator_families())]
    Gen {
        /// Generator spec, e.g. poisson3d:n=128 or kron:scale=20.
        spec: String,
        /// Output file, .mtx or .mtx.gz.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Print the shape and row-length statistics of matrices (files, folders or specs).
    Info {
        #[arg(required = true)]
        inputs: Vec<String>,
        /// Draw the matrix's sparsity pattern (shaded by entries per pixel when larger than
        /// the picture) and its row-length histogram as an SVG file (one matrix).
        #[arg(long)]
        spy: Option<PathBuf>,
    },
    /// The report page of bench runs (and solves) from their JSON: one self-contained HTML
    /// file with a roofline, a heat map against the per-matrix best, auto and tune against the
    /// best, scaling over GPUs and residual histories (docs/pictures.md).
    Report(report::ReportArgs),
    /// PageRank of graphs over any format, on the GPU or the CPU (see docs/pagerank.md).
    #[command(allow_negative_numbers = true)]
    Pagerank(pagerank::PagerankArgs),
    /// Why `auto` chooses its format for a matrix: features, ranked candidates, conversion cost.
    Explain(explain::ExplainArgs),
    /// Solve A·x = b by CG, MINRES, BiCGSTAB or GMRES over any format (docs/solve.md).
    #[command(allow_negative_numbers = true)]
    Solve(solve::SolveArgs),
    /// Start n processes of an spmv command on this machine with torchrun's variables (RANK,
    /// WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT): the shape of a run of one process per
    /// GPU; `spmv launch -n 4 -- world` checks that the ranks meet (docs/scale.md).
    Launch(launch::LaunchArgs),
    /// Where this process stands in a multi-process run (torchrun's, Open MPI's, MPICH's or
    /// Slurm's variables), and whether the ranks meet at the rendezvous.
    World,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Matrix files (.mtx, .mtx.gz), folders of them, or generator specs. None: the default set.
    inputs: Vec<String>,
    /// Comma-separated format specs, or "all" (see `spmv formats`): a name, or a name with
    /// parameters such as sell-c-sigma:c=32,sigma=1024.
    #[arg(long, default_value = "all")]
    formats: String,
    /// Comma-separated precisions: f64, f32, f16 (f16 values and x, f32 sums, f16 y; formats without f16 report unsupported).
    #[arg(long, default_value = "f64")]
    precision: String,
    /// Timed repetitions per matrix and format (the median is reported), 1 to 1000000
    /// [default: 100 on the GPU, 10 on the CPU].
    #[arg(long, value_parser = count(1, spmv::bench::MAX_REPS))]
    reps: Option<usize>,
    /// Untimed runs before timing, at most 1000000 [default: 10 on the GPU, 2 on the CPU; at
    /// most 3 run on the CPU, and the header and JSON say so].
    #[arg(long, value_parser = count(0, spmv::bench::MAX_WARMUP))]
    warmup: Option<usize>,
    /// Write the full results as JSON (schema: docs/bench.md).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the report page of the run: a self-contained HTML file with the roofline, the heat
    /// map against the best, auto and tune against the best, scaling (as `spmv report`).
    #[arg(long)]
    report: Option<PathBuf>,
    /// Print every column of the table, names whole (the default table fits 100 columns).
    #[arg(long)]
    wide: bool,
    #[command(flatten)]
    place: select::Placement,
    /// Keep only the formats whose GPU result is bitwise identical from run to run; naming
    /// one that is not with --formats is an error.
    #[arg(long)]
    deterministic: bool,
    /// Read values that are not finite (inf, nan, 1e400) instead of refusing the file; rows
    /// whose exact result is not finite are then checked for the same infinity or NaN.
    #[arg(long)]
    allow_non_finite: bool,
    /// Permute every (square) matrix symmetrically before building its formats: rcm (reverse
    /// Cuthill-McKee) or degree (hubs first); x and y stay in the original order, the
    /// permutation passes are timed with each product and its computation is in the JSON's
    /// reorder_ms. Formats are then labelled format+rcm.
    #[arg(long, default_value = "none", value_parser = select::parse_reordering)]
    reorder: spmv::reorder::Reordering,
    /// With --devices: every part's rows wait for the whole halo exchange, instead of its
    /// interior rows running meanwhile (to measure what the overlap gains).
    #[arg(long, requires = "devices")]
    no_overlap: bool,
    /// Measure Y = A·X for blocks of k vectors, one run per listed k (1: the single product
    /// y = A·x), e.g. 1,4,8,16,32; rows are labelled `format k=8`, GFLOP/s and bytes count
    /// every vector, and the bound is the byte bound (docs/bench.md).
    #[arg(long, value_delimiter = ',', value_parser = count(1, spmv::bench::MAX_RHS))]
    rhs: Vec<usize>,
    /// How X and Y of --rhs are stored: row (C order, NumPy's default) or col (Fortran order).
    #[arg(long, default_value = "row", value_parser = ["row", "col"], requires = "rhs")]
    layout: String,
    /// Also measure y = Aᵀ·x (rows labelled `format Aᵀ`): through each format's copy of Aᵀ
    /// (built on first use, in the format auto picks for Aᵀ), cuSPARSE's own transposed SpMV.
    #[arg(long)]
    transpose: bool,
}

/// A count argument from `min` to `max`: clap refuses anything else with the range, before any
/// work (a count sizes the times kept, the events, a CUDA graph).
pub(crate) fn count(min: usize, max: usize) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(min as u64..=max as u64)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(args) => bench(args),
        Command::Formats => {
            print!("{}", format_list());
            Ok(ExitCode::SUCCESS)
        }
        Command::Gen { spec, output } => generate(&spec, &output),
        Command::Info { inputs, spy } => info(&inputs, spy.as_deref()),
        Command::Report(args) => report::run(args),
        Command::Pagerank(args) => pagerank::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Solve(args) => solve::run(args),
        Command::Launch(args) => launch::launch(args),
        Command::World => launch::world(),
    };
    result.unwrap_or_else(|e| {
        eprintln!("error: {}", printable(&format!("{e:#}")));
        ExitCode::FAILURE
    })
}

fn generate(spec: &str, output: &std::path::Path) -> Result<ExitCode> {
    select::check_writable(Some(output), "-o")?;
    let a = spmv::io::gen::generate(spec)?;
    spmv::io::write_matrix_market(output, &a).context("-o")?;
    eprintln!(
        "{}: {} x {}, {} entries -> {}",
        printable_name(spec),
        a.nrows(),
        a.ncols(),
        a.nnz(),
        printable_name(&output.display().to_string())
    );
    Ok(ExitCode::SUCCESS)
}

fn info(args: &[String], spy: Option<&std::path::Path>) -> Result<ExitCode> {
    report::check_svg(spy, "--spy")?;
    let inputs = inputs::resolve(args)?;
    if spy.is_some() && inputs.len() != 1 {
        bail!("--spy draws one matrix: {} given", inputs.len());
    }
    for input in inputs {
        let a = input.load().with_context(|| printable_name(&input.name()))?;
        if let Some(path) = spy {
            let svg = spmv::picture::spy_svg(&printable_name(&input.name()), &a)?;
            report::write(path, "--spy", &svg)?;
        }
        let empty = (0..a.nrows()).filter(|&r| a.row_len(r) == 0).count();
        println!(
            "{}: {} x {}, nnz {}, row length mean {:.2} max {}, empty rows {}",
            printable_name(&input.name()),
            a.nrows(),
            a.ncols(),
            a.nnz(),
            a.mean_row_len(),
            a.max_row_len(),
            empty
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `spmv formats`: every format, whether it is deterministic, and its parameters; then the
/// choosers, which take the place of a format anywhere.
/// `gen --help`'s list of the generator families, an example spec of each.
fn generator_families() -> String {
    let mut s = String::from("Families (every key and default: docs/generators.md):\n");
    for (family, example, what) in spmv::io::gen::EXAMPLES {
        s.push_str(&format!("  {family:<10} {what}, e.g. {example}\n"));
    }
    s
}

fn format_list() -> String {
    let mut s = String::new();
    let registry = formats::registry::<f64>();
    let all_params =
        registry.iter().flat_map(|f| f.params).chain(CHOOSERS.iter().flat_map(|c| c.params));
    let width = all_params.map(|p| p.key.len() + 1 + p.default.len()).max().unwrap_or(0);
    // Names in a column of 17, parameters indented under them, every line within 100
    // characters (longer text continues under its own column).
    let params = |s: &mut String, params: &[formats::Param]| {
        for p in params {
            let lead = format!("{:<17}  {:<width$}  ", "", format!("{}={}", p.key, p.default));
            s.push_str(&hanging(&lead, &" ".repeat(lead.chars().count()), p.doc, COMPACT_WIDTH));
        }
    };
    for f in &registry {
        let det = if f.deterministic { "" } else { " [not deterministic]" };
        let description = format!("{}{det}", f.description);
        s.push_str(&hanging(
            &format!("{:<17}", f.name),
            &" ".repeat(17),
            &description,
            COMPACT_WIDTH,
        ));
        params(&mut s, f.params);
    }
    s.push_str("\nChoosers (a format per matrix; given where a format is):\n");
    for c in CHOOSERS {
        s.push_str(&hanging(
            &format!("{:<17}", c.name),
            &" ".repeat(17),
            c.description,
            COMPACT_WIDTH,
        ));
        params(&mut s, c.params);
    }
    s.push_str(
        "\nSpecs take parameters as name:key=value,key=value (e.g. sell-c-sigma:c=32,sigma=1024).\n",
    );
    s
}

fn bench(args: BenchArgs) -> Result<ExitCode> {
    let read_options = spmv::io::ReadOptions { allow_non_finite: args.allow_non_finite };
    let precisions = select::precisions(&args.precision)?;
    // Fail on a bad format spec before loading anything.
    let specs = select::format_specs(&args.formats, args.deterministic)?;
    select::check_writable(args.json.as_deref(), "--json")?;
    select::check_writable(args.report.as_deref(), "--report")?;
    if args.json.is_some() && args.json == args.report {
        bail!("--json and --report name the same file: give each its own");
    }
    // One process per GPU (a launcher's ranks): every rank measures its part, rank 0 prints.
    let place = match select::multi_process(&args.place)? {
        Some(world) => Some(select::rank_place(world)?),
        None => None,
    };
    let lead = place.as_ref().is_none_or(|p| p.ranks.world().rank == 0);
    let target = match &place {
        Some(p) => spmv::app::Target::Ranks(p.clone()),
        None => args.place.target()?,
    };
    let on_cpu = matches!(target, spmv::app::Target::One(Backend::Cpu));
    // "all" on the CPU leaves out cuSPARSE's formats: the GPU's baseline, a plain CSR loop there.
    let specs = if on_cpu && select::names_all(&args.formats) {
        let library = |c: &Choice| formats::find::<f64>(c.name()).is_ok_and(|f| f.library_baseline);
        specs.into_iter().filter(|c| !library(c)).collect()
    } else {
        specs
    };
    let scaled_down = args.inputs.is_empty() && on_cpu;
    let inputs = if args.inputs.is_empty() {
        inputs::default_set(on_cpu)?
    } else if place.is_some() {
        inputs::resolve_for_rows(&args.inputs)?
    } else {
        inputs::resolve(&args.inputs)?
    };
    if inputs.is_empty() {
        bail!("no matrices to benchmark");
    }
    // The CPU runs each product 10-100x slower: fewer repetitions unless asked for.
    let (reps, warmup) = if on_cpu { (10, 2) } else { (100, 10) };
    let settings = Settings {
        warmup: args.warmup.unwrap_or(warmup),
        reps: args.reps.unwrap_or(reps),
        allow_non_finite: args.allow_non_finite,
        reorder: args.reorder,
        exchange: args.place.exchange,
        overlap: !args.no_overlap,
        product: Product::Forward,
    };
    if args.place.devices.is_some() && settings.reorder != spmv::reorder::Reordering::None {
        bail!("--devices is not combined with --reorder");
    }
    let products = products(&args);
    let mut run =
        spmv::app::bench::Bench::new(target, specs, precisions, settings)?.with_products(products);
    if scaled_down {
        run.report.add_note("default set on the CPU: its generated matrices at about 1/10 of their GPU size (name specs to run others)".into());
    }

    // Rows are printed as they are measured; the summary follows at the end.
    let names: Vec<String> = inputs.iter().map(Input::name).collect();
    // auto's and tune's rows name the chosen format too: leave room for the longest name.
    let longest = spmv::formats::registry::<f64>().iter().map(|f| f.name.len()).max().unwrap_or(0);
    let labels: Vec<String> = run
        .specs
        .iter()
        .map(|s| {
            let label = spmv::bench::label(s, run.settings.reorder);
            if !matches!(s, Choice::Spec(_)) {
                format!("{label}({})", "x".repeat(longest))
            } else {
                label
            }
        })
        .collect();
    let layout = TableLayout::new(
        args.wide,
        names.iter().map(String::as_str),
        labels.iter().map(String::as_str),
    );
    if lead {
        print!("{}", run.report.table_header(&layout));
    }
    let rows_per_matrix = run.precisions.len() * run.specs.len() * run.products.len();
    let progress = Progress::new((inputs.len() * rows_per_matrix) as u64, lead);
    let mut load_failures = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        progress.matrix(i, inputs.len(), &input.name());
        let loaded = match &place {
            Some(p) => select::own_rows(input, &read_options, p).map(|(_, own, _)| own),
            None => input.load_with(&read_options),
        };
        let a = match loaded {
            Ok(a) => a,
            Err(e) => {
                if lead {
                    progress.suspend(|| {
                        eprintln!(
                            "error: {}: {}",
                            printable_name(&input.name()),
                            printable(&e.to_string())
                        )
                    });
                }
                load_failures.push(input.name());
                progress.skip(rows_per_matrix as u64);
                continue;
            }
        };
        run.matrix(&input.name(), &a, |m| progress.measured(m, &layout.row(m)));
    }
    progress.finish();

    if lead {
        print!("{}", run.report.table_footer());
        let baseline = if on_cpu { "csr-scalar" } else { "cusparse-alg1" };
        // Reordered runs compare with the baseline on the reordered matrix.
        let baseline = spmv::bench::label(&Choice::parse(baseline)?, run.settings.reorder);
        print!("{}", run.report.summary_table(&baseline));
        run.report.command = Some(command_line());
        select::write_json(args.json.as_deref(), "--json", &run.report)?;
        if let Some(path) = &args.report {
            let json = serde_json::to_value(&run.report)?;
            let html = spmv::picture::report_html(&[("this run".to_string(), json)])?;
            report::write(path, "--report", &html)?;
        }
    }
    let failed = run.report.failures().count() + load_failures.len();
    Ok(select::exit_code(failed, "result(s) wrong or not run (see the table)"))
}

/// This process's command line, as a report names it (arguments with spaces quoted).
fn command_line() -> String {
    let quote = |a: String| if a.contains(' ') { format!("'{a}'") } else { a };
    let mut args = std::env::args().map(quote);
    let program = args.next().map(|p| {
        std::path::Path::new(&p).file_name().map_or(p.clone(), |f| f.to_string_lossy().into())
    });
    program.into_iter().chain(args).collect::<Vec<_>>().join(" ")
}

/// The products `bench` measures: A·x, or the blocks of --rhs (k = 1 being A·x), then Aᵀ·x
/// with --transpose.
fn products(args: &BenchArgs) -> Vec<Product> {
    let layout = if args.layout == "col" { Layout::ColMajor } else { Layout::RowMajor };
    let mut products: Vec<Product> = match args.rhs.as_slice() {
        [] => vec![Product::Forward],
        ks => ks
            .iter()
            .map(|&k| if k == 1 { Product::Forward } else { Product::Block(Block { k, layout }) })
            .collect(),
    };
    products.dedup();
    if args.transpose {
        products.push(Product::Transpose);
    }
    products
}

/// Progress of `bench` on stderr: a bar on a terminal, else one plain line per matrix (so
/// that a piped or logged run shows where it is); each finished row goes to stdout at once.
/// Silent when not `shown` (the ranks of a multi-process run but rank 0).
struct Progress {
    bar: ProgressBar,
    plain: bool,
    shown: bool,
    start: std::time::Instant,
}

impl Progress {
    fn new(total: u64, shown: bool) -> Self {
        let terminal = std::io::stderr().is_terminal() && shown;
        let bar = if terminal { ProgressBar::new(total) } else { ProgressBar::hidden() };
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("valid template"),
        );
        Progress { bar, plain: !terminal && shown, shown, start: std::time::Instant::now() }
    }

    fn matrix(&self, index: usize, count: usize, name: &str) {
        if self.plain {
            eprintln!(
                "[{:>4.0} s] matrix {}/{count}: {}",
                self.start.elapsed().as_secs_f64(),
                index + 1,
                printable_name(name)
            );
        }
        self.bar.set_message(format!("loading {}", printable_name(name)));
    }

    fn measured(&self, m: &spmv::bench::Measurement, row: &str) {
        if !self.shown {
            return;
        }
        self.bar.suspend(|| {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(row.as_bytes());
            let _ = out.flush();
        });
        self.bar.set_message(printable_name(&format!("{} {} {}", m.matrix, m.format, m.precision)));
        self.bar.inc(1);
    }

    fn skip(&self, n: u64) {
        self.bar.inc(n);
    }

    fn suspend(&self, f: impl FnOnce()) {
        self.bar.suspend(f);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
        if self.plain {
            eprintln!("[{:>4.0} s] done", self.start.elapsed().as_secs_f64());
        }
    }
}
