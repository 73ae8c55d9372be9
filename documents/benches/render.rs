//! How long printing takes: each document of the renderer tests' samples rendered in every
//! format, as the phone (the auto) and the server (notification, case file) do it.
//!
//! `cargo bench -p documents --bench render` prints, per document and format, the median time
//! of one render in each of `ROUNDS` rounds of `PER_ROUND` renders, as "median (range over
//! rounds)", and the output size. Figures, not assertions: a timed test would fail on a busy
//! machine and pass on a quiet one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // a bench binary

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use documents::{Format, render_auto, render_case_file, render_notification};

const ROUNDS: usize = 7;
const PER_ROUND: usize = 20;

fn measure(name: &str, mut render: impl FnMut() -> Vec<u8>) {
    let bytes = render().len();
    let mut medians: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let mut times: Vec<Duration> = (0..PER_ROUND)
                .map(|_| {
                    let t = Instant::now();
                    std::hint::black_box(render());
                    t.elapsed()
                })
                .collect();
            times.sort();
            times[PER_ROUND / 2]
        })
        .collect();
    medians.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name:<28} {:>8.2} ms  ({:.2}–{:.2} ms over {ROUNDS} rounds)  {:>7} bytes",
        ms(medians[ROUNDS / 2]),
        ms(medians[0]),
        ms(medians[ROUNDS - 1]),
        bytes
    );
}

fn main() {
    let auto = common::sample_auto();
    for format in Format::ALL {
        measure(&format!("auto {}", format.as_str()), || {
            render_auto(&auto, format).unwrap()
        });
    }
    let report = common::sample_transgression();
    measure("transgression report pdf", || {
        render_auto(&report, Format::PdfA4).unwrap()
    });
    let notification = common::sample_notification();
    measure("notification pdf", || {
        render_notification(&notification).unwrap()
    });
    let case = common::sample_case_file();
    measure("case file pdf (1 photo)", || {
        render_case_file(&case).unwrap()
    });
}
