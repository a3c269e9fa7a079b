//! A benchmark run: its report (the machine measured once, notes on how it ran) and each
//! matrix in every precision and format on the run's [`Target`], the results handed to the
//! caller as they come (the CLI prints rows, Python stays quiet).

use crate::bench::report::Report;
use crate::bench::{run_matrix, Measurement, Product, Settings};
use crate::choice::Choice;
use crate::error::Result;
use crate::matrix::{Csr, Precision, Scalar};

use super::Target;

/// A benchmark run: where, what, how, and the report the results go into.
pub struct Bench {
    /// Where the products run.
    pub target: Target,
    /// The formats (or choosers) measured.
    pub specs: Vec<Choice>,
    /// The precisions each matrix runs in.
    pub precisions: Vec<Precision>,
    /// Repetitions, reordering, exchange.
    pub settings: Settings,
    /// The products each format runs, in order (`settings.product` alone unless
    /// [`Bench::with_products`] says).
    pub products: Vec<Product>,
    /// The machine (measured once) and every result so far.
    pub report: Report,
}

impl Bench {
    /// A run on `target` (its machine measured now; a note says how matrices are split when
    /// they are).
    pub fn new(
        target: Target, specs: Vec<Choice>, precisions: Vec<Precision>, settings: Settings,
    ) -> Result<Self> {
        let mut report = Report::new(target.backend().machine(&settings)?, &settings);
        if let Target::Parts(p) = &target {
            report.add_note(format!(
                "every matrix in {} row parts on devices {:?}, halo by {}{}; %roof of the distinct devices' copy bandwidth",
                p.devices.len(),
                p.devices,
                settings.exchange,
                if settings.overlap { "" } else { ", no overlap" }
            ));
        }
        let products = vec![settings.product];
        Ok(Bench { target, specs, precisions, settings, products, report })
    }

    /// Each matrix measured for every product of `products` (`A·x`, `Aᵀ·x`, blocks of k).
    pub fn with_products(self, products: Vec<Product>) -> Self {
        Bench { products, ..self }
    }

    /// `a` (read in f64) in every precision and format, appended to the report; `done` sees
    /// each result as it is measured.
    pub fn matrix(&mut self, name: &str, a: &Csr<f64>, mut done: impl FnMut(&Measurement)) {
        for &precision in &self.precisions {
            let results = match precision {
                Precision::F64 => self.in_precision(name, a, &mut done),
                Precision::F32 => self.in_precision::<f32>(name, &a.cast(), &mut done),
                Precision::F16 => self.in_precision::<half::f16>(name, &a.cast(), &mut done),
            };
            self.report.results.extend(results);
        }
    }

    fn in_precision<T: Scalar>(
        &self, name: &str, a: &Csr<T>, done: &mut impl FnMut(&Measurement),
    ) -> Vec<Measurement> {
        let (specs, machine) = (&self.specs, &self.report.machine);
        let mut results = Vec::new();
        for &product in &self.products {
            let settings = Settings { product, ..self.settings.clone() };
            results.extend(run_matrix(
                &self.target,
                name,
                a,
                specs,
                &settings,
                machine,
                &mut *done,
            ));
        }
        results
    }
}
