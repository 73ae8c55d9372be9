//! `taxi-fiscal lottery verify`: anyone recomputes an edital's draw (Lei 4.019/2004, art. 3,
//! III) from what the office published, without the server or its database.
//!
//! Flow: the published list is read byte for byte (bounded by [`MAX_LOTTERY_FILE_BYTES`]) and
//! its SHA-256 taken with the law kernel's `selection::sha256_hex`, the same function that
//! digested it when the list was published; its inscriptions are read with
//! `selection::lottery_inscriptions`, and the order is `selection::draw_order(digest, seed,
//! inscriptions)`, the very computation of the draw (`rules::selection::draw`). The seed is
//! normalised there (`normalise_seed`: spaces trimmed and collapsed), so a seed typed with extra
//! spaces gives the same order. The order is printed as JSON. With `--result`, the published
//! order (one inscription per line) is compared position by position: the command then fails
//! (exit 2) naming the first position that differs, or says the draw is reproduced.
//!
//! The method and a check with `sha256sum`, `printf` and `sort` alone are in docs/selection.md.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde::Serialize;
use sync_core::rules::selection::{self, MAX_CANDIDATES, MAX_NAME_CHARS, MAX_SEED_CHARS};

use super::print_json;

/// Bytes of a file `lottery verify` reads (the published list, the published result).
///
/// The largest list an edital publishes is its header line (an edital number of at most
/// `MAX_NAME_CHARS` characters) and one line per group III candidate, at most `MAX_CANDIDATES`
/// (2 000) lines of an inscription (`001`…`2000`), `;` and a name of at most `MAX_NAME_CHARS`
/// (200) characters of up to 4 bytes in UTF-8: under 1.7 MB (the assertion below keeps it so
/// if those limits change). 4 MiB holds that with room, and a wrong file (a photo, a database
/// dump) is refused before it is read whole into memory.
pub(crate) const MAX_LOTTERY_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The largest list the kernel can publish, over-counted: header, and per line an inscription of
/// up to 8 bytes, `;`, the name and `\n`.
const LARGEST_LIST_BYTES: usize =
    128 + 4 * MAX_NAME_CHARS + MAX_CANDIDATES * (8 + 1 + 4 * MAX_NAME_CHARS + 1);
const _: () = assert!(LARGEST_LIST_BYTES as u64 <= MAX_LOTTERY_FILE_BYTES);

#[derive(Debug, Args)]
pub(crate) struct LotteryArgs {
    #[command(subcommand)]
    command: LotteryCommand,
}

#[derive(Debug, Subcommand)]
enum LotteryCommand {
    /// Recompute an edital's draw from its published list and seed; with --result, compare it
    /// with the published order (exit 2 at the first position that differs).
    Verify {
        /// The lottery's list as the office published it (the text file, byte for byte).
        #[arg(long, value_name = "FILE")]
        list: PathBuf,
        /// The seed as published (spaces at the ends and repeated inside do not matter).
        #[arg(long)]
        seed: String,
        /// The published order of the draw: one inscription per line, first drawn first.
        #[arg(long, value_name = "FILE")]
        result: Option<PathBuf>,
    },
}

/// One inscription in the recomputed order.
#[derive(Debug, Serialize)]
struct Drawn {
    position: usize,
    inscription: String,
    name: String,
    /// SHA-256 of `digest \n seed \n inscription`, lower-case hex.
    key: String,
}

/// The first position where the published order and the recomputed one part.
#[derive(Debug, Serialize)]
struct Difference {
    position: usize,
    /// What the published result has there (`None`: it ends before).
    published: Option<String>,
    /// What the recomputed draw has there (`None`: it ends before).
    recomputed: Option<String>,
}

#[derive(Debug, Serialize)]
struct Comparison {
    file: String,
    reproduced: bool,
    first_difference: Option<Difference>,
}

#[derive(Debug, Serialize)]
struct VerifyOut {
    list: String,
    bytes: usize,
    /// The list's first line, naming the edital.
    header: String,
    /// SHA-256 of the list file, lower-case hex.
    digest: String,
    /// The seed as hashed (normalised).
    seed: String,
    inscriptions: usize,
    order: Vec<Drawn>,
    result: Option<Comparison>,
    message: String,
    warnings: Vec<String>,
}

pub(crate) fn run(a: LotteryArgs) -> anyhow::Result<()> {
    match a.command {
        LotteryCommand::Verify { list, seed, result } => verify(&list, &seed, result.as_deref()),
    }
}

/// The file at `path`, at most [`MAX_LOTTERY_FILE_BYTES`], as UTF-8 text; `what` names it in
/// the errors ("a lista", "o resultado").
fn read_text(path: &Path, what: &str) -> anyhow::Result<String> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("não foi possível abrir {what} {}", path.display()))?;
    let mut bytes = Vec::new();
    // One byte over the bound tells a file at the bound from a larger one.
    file.take(MAX_LOTTERY_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("não foi possível ler {what} {}", path.display()))?;
    if bytes.len() as u64 > MAX_LOTTERY_FILE_BYTES {
        bail!(
            "{what} {} tem mais de {MAX_LOTTERY_FILE_BYTES} bytes: não é um arquivo publicado \
             pelo sistema",
            path.display()
        );
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{what} {} não é texto UTF-8 (byte inválido na posição {}): não é o arquivo \
             publicado",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

fn verify(list_path: &Path, seed: &str, result_path: Option<&Path>) -> anyhow::Result<()> {
    let text = read_text(list_path, "a lista")?;
    let mut warnings = Vec::new();
    if text.starts_with('\u{feff}') {
        bail!(
            "a lista {} começa com uma marca BOM: foi salva por um editor, e não é mais a lista \
             publicada byte a byte",
            list_path.display()
        );
    }
    let inscriptions = selection::lottery_inscriptions(&text).map_err(|reason| {
        anyhow::anyhow!(
            "a lista {} não está no formato publicado: {reason}",
            list_path.display()
        )
    })?;
    if text.contains("\r\n") {
        warnings.push(
            "a lista tem quebras de linha CRLF (Windows); a lista publicada pelo sistema usa LF: \
             se o arquivo foi convertido, o resumo e a ordem não conferem com os publicados"
                .to_owned(),
        );
    }
    let seed = selection::normalise_seed(seed);
    if seed.is_empty() {
        bail!("informe a semente do sorteio (--seed)");
    }
    let seed_chars = seed.chars().count();
    if seed_chars > MAX_SEED_CHARS {
        bail!("a semente tem {seed_chars} caracteres; o sistema aceita no máximo {MAX_SEED_CHARS}");
    }

    let digest = selection::sha256_hex(&text);
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default().to_owned();
    // `lottery_inscriptions` accepted every line as `inscription;name`, in this order.
    let names: BTreeMap<&str, &str> = lines.filter_map(|l| l.split_once(';')).collect();
    let order: Vec<Drawn> = selection::draw_order(&digest, &seed, &inscriptions)
        .into_iter()
        .enumerate()
        .map(|(i, d)| {
            let name = names
                .get(d.inscription.as_str())
                .map_or_else(String::new, |n| (*n).to_owned());
            Drawn {
                position: i + 1,
                inscription: d.inscription,
                name,
                key: d.key,
            }
        })
        .collect();

    let comparison = match result_path {
        None => None,
        Some(p) => {
            let published = read_text(p, "o resultado")?;
            let published: Vec<&str> = published
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            let first_difference = (0..published.len().max(order.len())).find_map(|i| {
                let p = published.get(i).copied();
                let o = order.get(i).map(|d| d.inscription.as_str());
                (p != o).then(|| Difference {
                    position: i + 1,
                    published: p.map(str::to_owned),
                    recomputed: o.map(str::to_owned),
                })
            });
            Some(Comparison {
                file: p.display().to_string(),
                reproduced: first_difference.is_none(),
                first_difference,
            })
        }
    };

    let n = order.len();
    let message = match &comparison {
        None => format!(
            "Ordem do sorteio refeita a partir da lista ({n} inscrições, SHA-256 {digest}) e da \
             semente; compare-a com o resultado publicado ou use --result."
        ),
        Some(c) => match &c.first_difference {
            None => format!(
                "Sorteio reproduzido: as {n} posições do resultado {} conferem com a ordem \
                 refeita da lista (SHA-256 {digest}) e da semente.",
                c.file
            ),
            Some(d) => difference_message(d, n),
        },
    };
    let out = VerifyOut {
        list: list_path.display().to_string(),
        bytes: text.len(),
        header,
        digest,
        seed,
        inscriptions: n,
        order,
        result: comparison,
        message,
        warnings,
    };
    print_json(&out)?;
    if let Some(Comparison {
        first_difference: Some(_),
        ..
    }) = &out.result
    {
        bail!("{}", out.message);
    }
    Ok(())
}

/// The first difference in words, for the error line.
fn difference_message(d: &Difference, recomputed_len: usize) -> String {
    let pos = d.position;
    let head = "o sorteio NÃO confere com o resultado publicado:";
    match (&d.published, &d.recomputed) {
        (Some(p), Some(o)) => format!(
            "{head} na posição {pos} o resultado traz a inscrição {p}, e o sorteio refeito dá a \
             inscrição {o}"
        ),
        (Some(p), None) => format!(
            "{head} o resultado traz na posição {pos} a inscrição {p}, mas o sorteio refeito tem \
             só {recomputed_len} inscrições"
        ),
        (None, Some(o)) => format!(
            "{head} o resultado termina antes da posição {pos}, que no sorteio refeito é a \
             inscrição {o}"
        ),
        // Unreachable: a difference has at least one side.
        (None, None) => format!("{head} posição {pos}"),
    }
}
