//! vdbench parameter files as iorig plans.
//!
//! General parameters, storage (`sd`), workload (`wd`) and run (`rd`)
//! definitions for raw I/O, and file-system definitions (`fsd`, `fwd`)
//! with their run definitions; `default` entries, `sd=sd*` wildcards and
//! lists, `$variable`s from `--set NAME=VALUE`, `hd=` hosts. Each `rd`
//! becomes a plan step (its `for*` loops and a list of rates sweep it,
//! `iorate=curve` makes a curve step with vdbench's default points); the
//! workloads of one `rd` run at once as the step's jobs, sharing its rate
//! by `skew`. `docs/vdbench.md` lists every parameter.

use crate::ImportError;
use iorig_spec::{key, AccessDist, EngineKind, OneOrMany, StrOrNum, WorkloadFile};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// How to translate.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--set NAME=VALUE`: the values of `$NAME`.
    pub vars: BTreeMap<String, String>,
    /// Parameters iorig does not support are listed and left out instead
    /// of refused.
    pub ignore_unsupported: bool,
    /// `--verify` (vdbench's `-v`): data validation on every step.
    pub verify: bool,
    /// `--journal FILE` (vdbench's `-j`): validation with a journal.
    pub journal: bool,
}

/// A parameter file as an iorig plan.
#[derive(Debug, Clone)]
pub struct Translation {
    pub plan_toml: String,
    /// What was accepted without effect, one line each.
    pub notices: Vec<String>,
    /// What `--ignore-unsupported` left out (`file:line parameter`).
    pub ignored: Vec<String>,
    /// The run definitions, in order, with the number of plan steps each
    /// became (for the flatfile's run names).
    pub runs: Vec<(String, usize)>,
    /// The file asks for a journal (`journal=yes`) or `--journal` did:
    /// validation journaled across the run's steps.
    pub journal: bool,
    /// Where the file's sds (or fsds) keep their journal (`journal=DIR`
    /// on an sd or fsd): the directory the run's one journal goes in.
    pub journal_dir: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
struct Loc {
    file: String,
    line: usize,
    /// The line is in a file pulled in by `include=`, not in the file
    /// given: its text is never shown in a message.
    included: bool,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A refusal at `loc`. `why` may quote the file's text, so for a line of
/// an included file (which may be any file) only the file and line are
/// said, as for a fio job file's `include`.
fn usage(loc: &Loc, why: impl std::fmt::Display) -> ImportError {
    if loc.included {
        return ImportError::Usage(format!(
            "{loc}: this line is not taken (the text of an included file is not shown in messages; check that line, or paste it into the parameter file to see why)"
        ));
    }
    ImportError::Usage(format!("{loc}: {why}"))
}

/// Most nested `include=` files (a loop is caught before this).
const MAX_INCLUDE_DEPTH: usize = 16;

/// The logical lines of `text` (read from `path`), with the files its
/// `include=` lines name read in their place: vdbench inserts an
/// included file in line, anywhere, and looks for a bare file name in the
/// directory of the file that includes it.
#[allow(clippy::too_many_arguments)]
fn logical_lines(
    path: &Path,
    shown: &str,
    text: &str,
    vars: &BTreeMap<String, String>,
    stack: &mut Vec<std::path::PathBuf>,
    included: bool,
    read_bytes: &mut usize,
    logical: &mut Vec<(String, Loc)>,
) -> Result<(), ImportError> {
    let file = shown.to_string();
    for (i, raw) in text.lines().enumerate() {
        let loc = Loc {
            file: file.clone(),
            line: i + 1,
            included,
        };
        if raw.len() > crate::MAX_LINE_BYTES {
            // Text not read by read_text (the caller's): named by its
            // number, never shown.
            return Err(ImportError::Usage(format!(
                "{loc}: the line is longer than {} KiB, the most iorig reads of one line of a parameter file",
                crate::MAX_LINE_BYTES >> 10
            )));
        }
        let line = raw.trim();
        if line.is_empty()
            || line.starts_with('*')
            || line.starts_with('#')
            || line.starts_with("//")
        {
            continue;
        }
        let line = substitute(line, vars, &loc)?;
        let lower = line.to_ascii_lowercase();
        if let Some(name) = lower
            .strip_prefix("include=")
            .map(|_| line["include=".len()..].trim())
        {
            let target = crate::beside(path, name);
            // A path from an included file's text is not shown.
            let say = |why: String| {
                ImportError::Usage(if included {
                    format!("{loc}: the file this line includes cannot be read, or includes too deep or in a loop")
                } else {
                    format!("{loc}: include={}: {why}", target.display())
                })
            };
            if stack.len() >= MAX_INCLUDE_DEPTH {
                return Err(say(format!("more than {MAX_INCLUDE_DEPTH} files deep")));
            }
            let canonical = std::fs::canonicalize(&target).map_err(|e| say(e.to_string()))?;
            if stack.contains(&canonical) {
                return Err(say("the file includes itself (a loop)".into()));
            }
            let text = crate::read_text(&target).map_err(|e| say(e.to_string()))?;
            // Every file read counts against one file's cap, so a file
            // included many times over cannot make the work grow without
            // bound.
            *read_bytes += text.len();
            if *read_bytes > crate::MAX_FILE_BYTES {
                return Err(say(format!(
                    "the included files come to more than {} MiB, the most iorig reads of one parameter file",
                    crate::MAX_FILE_BYTES >> 20
                )));
            }
            // An included file's include is named by the line that pulls it
            // in, never by a path from its text.
            let shown = if included {
                format!("{loc} (its include)")
            } else {
                target.display().to_string()
            };
            stack.push(canonical);
            logical_lines(
                &target, &shown, &text, vars, stack, true, read_bytes, logical,
            )?;
            stack.pop();
            continue;
        }
        // A line ending in a comma continues on the next; so does one
        // that starts with a comma.
        match logical.last_mut() {
            Some((prev, _)) if prev.ends_with(',') || line.starts_with(',') => {
                prev.push_str(&line);
            }
            _ => logical.push((line, loc)),
        }
    }
    Ok(())
}

/// A parameter's value: one item or a parenthesised list.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    One(String),
    List(Vec<String>),
}

impl Val {
    /// The value with its letters in lower case.
    fn lowercase(self) -> Val {
        match self {
            Val::One(v) => Val::One(v.to_ascii_lowercase()),
            Val::List(items) => {
                Val::List(items.into_iter().map(|i| i.to_ascii_lowercase()).collect())
            }
        }
    }

    fn items(&self) -> Vec<String> {
        match self {
            Val::One(s) => vec![s.clone()],
            Val::List(v) => v.clone(),
        }
    }
}

/// One definition line (`sd=...`, `wd=...`), or the general parameters.
#[derive(Debug, Clone)]
struct Def {
    /// sd, wd, rd, hd, fsd, fwd; "" for a general parameter.
    kind: String,
    name: String,
    params: Vec<(String, Val)>,
    loc: Loc,
}

impl Def {
    fn get(&self, key: &str) -> Option<&Val> {
        self.params
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
    fn one(&self, key: &str) -> Option<String> {
        self.get(key).map(|v| v.items().join(","))
    }
}

const KINDS: &[&str] = &["sd", "wd", "rd", "hd", "fsd", "fwd"];

/// Parameters whose values keep their case: names (of definitions and the
/// ones that refer to them), paths and host addresses (`journal` is a path
/// on an sd or fsd; its general words are read in any case where they are
/// read). Every other value is a keyword or a number, which vdbench reads
/// in any case.
const CASED: &[&str] = &[
    "sd", "wd", "rd", "hd", "fsd", "fwd", "lun", "anchor", "system", "host", "include", "journal",
];

/// Splits `a=1,b=(2,3),c="x,y"` at the commas outside parentheses and
/// quotes.
fn split_params(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            '(' if !quoted => {
                depth += 1;
                cur.push(c);
            }
            ')' if !quoted => {
                depth -= 1;
                cur.push(c);
            }
            ',' if !quoted && depth == 0 => {
                out.push(std::mem::take(&mut cur));
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn parse_val(v: &str) -> Val {
    let v = v.trim();
    if let Some(inner) = v.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
        Val::List(
            split_params(inner)
                .into_iter()
                .map(|s| s.trim_matches('"').to_string())
                .collect(),
        )
    } else {
        Val::One(v.trim_matches('"').to_string())
    }
}

/// A percentage with at most four decimals, without trailing zeros.
fn trim_pct(p: f64) -> String {
    let t = format!("{p:.4}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `$name` replaced from `vars`.
fn substitute(
    line: &str,
    vars: &BTreeMap<String, String>,
    loc: &Loc,
) -> Result<String, ImportError> {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let braced = chars.peek().is_some_and(|(_, c)| *c == '{');
        if braced {
            chars.next();
        }
        let mut name = String::new();
        while let Some((_, c)) = chars.peek() {
            if c.is_ascii_alphanumeric() || *c == '_' {
                name.push(*c);
                chars.next();
            } else {
                break;
            }
        }
        if braced {
            chars.next();
        }
        if name.is_empty() {
            out.push('$');
            continue;
        }
        match vars.get(&name) {
            Some(v) => out.push_str(v),
            None => {
                return Err(usage(
                    loc,
                    format!("${name} is not defined; give it with --set {name}=VALUE"),
                ))
            }
        }
    }
    Ok(out)
}

/// Every definition of the file, in order (continuation lines joined).
fn definitions(
    path: &Path,
    text: &str,
    vars: &BTreeMap<String, String>,
) -> Result<Vec<Def>, ImportError> {
    let mut logical: Vec<(String, Loc)> = Vec::new();
    let mut stack = vec![std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())];
    let shown = path.display().to_string();
    let mut read_bytes = text.len();
    logical_lines(
        path,
        &shown,
        text,
        vars,
        &mut stack,
        false,
        &mut read_bytes,
        &mut logical,
    )?;
    let mut defs = Vec::new();
    for (line, loc) in logical {
        let parts = split_params(&line);
        // The definition's kind (sd, wd, ...), "" for general parameters.
        let kind_key = parts
            .first()
            .and_then(|f| f.split_once('='))
            .map(|(k, _)| k.trim().to_ascii_lowercase())
            .filter(|k| KINDS.contains(&k.as_str()));
        let kind = kind_key.as_deref().unwrap_or("");
        let mut params = Vec::new();
        for p in &parts {
            let Some((k, v)) = p.split_once('=') else {
                return Err(usage(
                    &loc,
                    format!("'{p}' is not a parameter; write name=value (e.g. xfersize=4k)"),
                ));
            };
            let key = k.trim().to_ascii_lowercase();
            let mut val = parse_val(v);
            // vdbench takes any beginning of a keyword (xf= for xfersize=),
            // as the definition's kind reads it (the first key is the kind).
            let kind = if params.is_empty() { "" } else { kind };
            let (key, flip) = keyword(kind, &key).map_err(|why| usage(&loc, why))?;
            if flip {
                // writepct=W is rdpct=100-W.
                let w: f64 = match &val {
                    Val::One(x) => x
                        .trim()
                        .parse()
                        .map_err(|_| usage(&loc, format!("{k}: '{x}' is not a percentage")))?,
                    Val::List(_) => return Err(usage(&loc, format!("{k}: give one percentage"))),
                };
                val = Val::One(trim_pct(100.0 - w));
            }
            // vdbench reads its keywords in any case (SD=, iorate=MAX,
            // openflags=O_DIRECT); names, paths and addresses keep theirs.
            if !CASED.contains(&key.as_str()) {
                val = val.lowercase();
            }
            params.push((key, val));
        }
        let Some((first_key, first_val)) = params.first().cloned() else {
            continue;
        };
        if KINDS.contains(&first_key.as_str()) {
            // The name is shown by run, runs show and the store (steps and
            // jobs are named after rd= and wd=): its control characters
            // (an escape sequence) are dropped, here and where it is named
            // ([`select`]).
            let name = match &first_val {
                Val::One(n) => iorig_spec::printable(n),
                Val::List(_) => String::new(),
            };
            if name.trim().is_empty() {
                return Err(usage(
                    &loc,
                    format!(
                        "{first_key}= needs a name of printable characters, e.g. {first_key}={first_key}1"
                    ),
                ));
            }
            defs.push(Def {
                kind: first_key,
                name,
                params: params[1..].to_vec(),
                loc,
            });
        } else {
            defs.push(Def {
                kind: String::new(),
                name: String::new(),
                params,
                loc,
            });
        }
    }
    Ok(defs)
}

/// A size as vdbench writes it (binary suffixes k, m, g, t).
fn size(v: &str) -> Result<u64, String> {
    crate::fio::units::size(v, 1024)
        .map_err(|_| format!("'{v}' is not a size; write e.g. 4k, 1m, 10g"))
}

/// vdbench's maxdata as iorig's io_size: bytes (`999t`), or below 100 a
/// multiple of the storage's size (`2`: two passes, iorig's `200%`).
fn maxdata(v: &str) -> Result<String, String> {
    match number(v) {
        Ok(n) if n > 0.0 && n < 100.0 => Ok(format!("{}%", n * 100.0)),
        _ => size(v).map(iorig_spec::format_size),
    }
}

fn number(v: &str) -> Result<f64, String> {
    // Rust reads "inf" and "NaN" as numbers; vdbench does not.
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("'{v}' is not a number"))
}

/// Seconds, or with an s/m/h suffix.
fn seconds(v: &str) -> Result<String, String> {
    let t = v.trim();
    let (n, unit) = match t.chars().last() {
        Some('s') => (&t[..t.len() - 1], "s"),
        Some('m') => (&t[..t.len() - 1], "m"),
        Some('h') => (&t[..t.len() - 1], "h"),
        _ => (t, "s"),
    };
    let x = number(n)?;
    if x < 0.0 {
        return Err(format!("'{v}' is negative"));
    }
    let secs = match unit {
        "m" => x * 60.0,
        "h" => x * 3600.0,
        _ => x,
    };
    // The bound `iorig run` puts on a time: a longer one is refused here
    // with its line, not turned into u64::MAX seconds by the conversion.
    iorig_spec::parse_duration(&format!("{secs}s")).map_err(|e| match e {
        iorig_spec::SpecError::BadDuration { why, .. } => format!("'{v}': {why}"),
        other => other.to_string(),
    })?;
    Ok(if secs.fract() == 0.0 {
        format!("{}s", secs as u64)
    } else {
        format!("{}ms", (secs * 1000.0).round() as u64)
    })
}

/// Parameters accepted with no effect, and why.
const NO_EFFECT: &[(&str, &str)] = &[
    ("messagescan", "iorig reads no system log"),
    (
        "report",
        "iorig stores every run; its reports are iorig report and export",
    ),
    ("histogram", "iorig keeps full HDR histograms"),
    ("debug", "no vdbench debug modes"),
    (
        "create_anchors",
        "iorig creates a missing anchor's tree (format)",
    ),
    ("monitor", "iorig stops on Ctrl-C"),
    ("vdbench", "agents run iorig"),
    ("shell", "agents are reached over iorig's protocol"),
    ("user", "agents are reached over iorig's protocol"),
    ("jvms", "one iorig process per host"),
    ("clients", "one iorig process per host"),
    ("priority", "workloads of a step run at once"),
    ("align", "only a wd's align= sets iorig's offset alignment"),
];

/// The parameters iorig maps (beside [`NO_EFFECT`] and [`UNSUPPORTED`]):
/// what a misspelt name is matched against, and what docs/vdbench.md must
/// name (a test checks).
const MAPPED: &[&str] = &[
    "validate",
    "data_validation",
    "data_errors",
    "dedupratio",
    "compratio",
    "lun",
    "size",
    "threads",
    "openflags",
    "range",
    "hitarea",
    "sd",
    "xfersize",
    "rdpct",
    "seekpct",
    "skew",
    "iorate",
    "rhpct",
    "whpct",
    "wd",
    "curve",
    "elapsed",
    "warmup",
    "interval",
    "pause",
    "forxfersize",
    "forthreads",
    "forrdpct",
    "forseekpct",
    "forrate",
    "forrates",
    "forsizes",
    "forfiles",
    "forwidth",
    "fordepth",
    "anchor",
    "depth",
    "width",
    "files",
    "sizes",
    "fsd",
    "operation",
    "fileio",
    "fileselect",
    "stopafter",
    "fwd",
    "fwdrate",
    "format",
    "system",
    "maxdata",
    "dedupunit",
    "dedupsets",
    "dedupflipflop",
    "deduphotsets",
    "journal",
    "host",
];

/// Parameters iorig cannot do, with what to do instead.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("streams", "not supported"),
    (
        "shared",
        "several hosts in one fsd's files is not supported: each of iorig's hosts works a tree of its own",
    ),
    ("replay", "block-trace replay is a later iorig feature"),
    ("offset", "use range"),
    ("count", "list each sd"),
    ("fwdrate_curve", "not supported"),
    ("endcmd", "run commands around iorig"),
    ("startcmd", "run commands around iorig"),
];

/// What one `wd` (or `fwd` group) becomes: iorig keys.
type Keys = Vec<(&'static str, toml::Value)>;

struct Tr<'a> {
    opts: &'a Options,
    /// The names of the file's hosts (`hd=NAME`, not `default`).
    hd_names: Vec<String>,
    notices: Vec<String>,
    ignored: Vec<String>,
    noticed: Vec<String>,
    /// The first sd's or fsd's `journal=DIR`.
    journal_dir: Option<String>,
}

impl Tr<'_> {
    /// An sd's or fsd's `journal=DIR`: where the journal goes. iorig keeps
    /// one journal for the run, so the first directory is taken and a
    /// second one said; a raw journal device is refused (iorig's journal
    /// is a file).
    fn journal_dir(&mut self, d: &Def, dir: &str) -> Result<(), ImportError> {
        if dir.starts_with("/dev/") {
            return Err(usage(
                &d.loc,
                format!("{}={}: journal={dir}: a raw journal device is not supported; give a directory (iorig writes its journal there as a file)", d.kind, d.name),
            ));
        }
        match &self.journal_dir {
            None => self.journal_dir = Some(dir.to_string()),
            Some(first) if first != dir => {
                if !self.noticed.iter().any(|k| k == "journal dirs") {
                    self.noticed.push("journal dirs".into());
                    self.notices.push(format!("{}: journal={dir}: iorig keeps one journal for the run, in {first} (the first sd's or fsd's)", d.loc));
                }
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// Handles the parameters a definition kind does not map: accepted
    /// without effect (said once), or refused / ignored.
    fn other(&mut self, d: &Def, key: &str) -> Result<(), ImportError> {
        if matches!(key, "host" | "hd") && d.kind != "hd" {
            return self.host_of(d, key);
        }
        if let Some((_, why)) = NO_EFFECT.iter().find(|(k, _)| *k == key) {
            if !self.noticed.iter().any(|k| k == key) {
                self.noticed.push(key.to_string());
                self.notices
                    .push(format!("{}: {key}: accepted with no effect ({why})", d.loc));
            }
            return Ok(());
        }
        let hint = UNSUPPORTED
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, h)| h.to_string());
        let what = if d.kind.is_empty() {
            "general parameter".to_string()
        } else {
            format!("{} parameter", d.kind)
        };
        match hint {
            Some(h) if self.opts.ignore_unsupported => {
                self.ignored.push(format!("{} {key}", d.loc));
                let _ = h;
                Ok(())
            }
            Some(h) => Err(usage(
                &d.loc,
                format!("{what} '{key}' is not supported by iorig: {h}; remove it, or pass --ignore-unsupported"),
            )),
            None => Err(usage(
                &d.loc,
                format!(
                    "unknown {what} '{key}';{} see docs/vdbench.md for the parameters iorig reads",
                    iorig_spec::suggest::did_you_mean(
                        key,
                        MAPPED
                            .iter()
                            .chain(NO_EFFECT.iter().map(|(k, _)| k))
                            .chain(UNSUPPORTED.iter().map(|(k, _)| k))
                            .copied()
                    )
                ),
            )),
        }
    }
}

/// iorig's `data` from vdbench's data reduction: `compratio=R` is
/// compressible data (`compress:R`), `dedupratio=R` dedupable data
/// (`dedup:R`, iorig's 4 KiB chunks); the dedup options beside them are
/// checked against what iorig does, and without a ratio above 1 they ask
/// for nothing.
fn data_of(
    tr: &mut Tr<'_>,
    reduce: &[(String, f64, Loc)],
    dedup_opts: &[(String, String, Loc)],
) -> Result<Option<String>, ImportError> {
    let dedup = reduce.iter().any(|(k, ..)| k == "dedupratio");
    for (k, v, loc) in dedup_opts {
        let fits = match k.as_str() {
            // iorig deduplicates in 4 KiB chunks.
            "dedupunit" => size(v).is_ok_and(|b| b == 4096),
            _ => false,
        };
        if !dedup {
            tr.notices.push(format!(
                "{loc}: {k}: accepted with no effect (no dedupratio above 1 asks for dedupable data)"
            ));
        } else if !fits && !tr.opts.ignore_unsupported {
            return Err(usage(
                loc,
                format!("{k}={v} is not supported by iorig: its dedupable data repeats 4 KiB chunks from one shared set (dedupunit=4k); remove it, or pass --ignore-unsupported"),
            ));
        }
    }
    match reduce {
        [] => Ok(None),
        [(k, r, _)] => Ok(Some(if k == "dedupratio" {
            format!("dedup:{r}")
        } else {
            format!("compress:{r}")
        })),
        // vdbench's dedupable data is compressible at compratio too.
        [a, b] if a.0 != b.0 => {
            let (d, c) = if a.0 == "dedupratio" {
                (a.1, b.1)
            } else {
                (b.1, a.1)
            };
            Ok(Some(format!("dedup:{d},compress:{c}")))
        }
        [.., (k, _, loc)] => Err(usage(loc, format!("{k} is given twice; give it once"))),
    }
}

impl Tr<'_> {
    /// A definition's `host=` (or `hd=`): iorig runs every step on every
    /// host, so a value that means that (`local`, `default`, `*`, the one
    /// host of a single-host file) is taken; one host of several is refused.
    fn host_of(&mut self, d: &Def, key: &str) -> Result<(), ImportError> {
        let v = d.one(key).unwrap_or_default();
        let everywhere = matches!(
            v.to_ascii_lowercase().as_str(),
            "local" | "localhost" | "default" | "*" | "all"
        );
        let the_one = self.hd_names.len() == 1 && self.hd_names[0] == v;
        if everywhere || the_one {
            return Ok(());
        }
        let what = if self.hd_names.contains(&v) {
            "iorig runs every step on all of the file's hosts, not on one of them; drop it"
        } else {
            "no hd= of that name is defined; drop it, or define the host"
        };
        Err(usage(
            &d.loc,
            format!("{}={}: {key}={v}: {what}", d.kind, d.name),
        ))
    }
}

/// The general parameters (before any definition's name): validation, the
/// journal, the error limit and data reduction.
struct General {
    verify: bool,
    journal: bool,
    max_errors: Option<(u64, Loc)>,
    /// compratio/dedupratio above 1, and the dedup options beside them.
    reduce: Vec<(String, f64, Loc)>,
    dedup_opts: Vec<(String, String, Loc)>,
}

impl General {
    /// Takes the general parameters of `d`.
    fn take(&mut self, tr: &mut Tr<'_>, d: &Def) -> Result<(), ImportError> {
        for (k, v) in &d.params {
            let one = v.items().join(",");
            match k.as_str() {
                "validate" | "data_validation" => {
                    self.verify = !matches!(one.as_str(), "no" | "false" | "0") || self.journal;
                }
                "journal" => {
                    // Its words in any case (its value keeps its case for
                    // an sd's journal directory).
                    for item in v.items() {
                        match item.to_ascii_lowercase().as_str() {
                            "yes" | "y" => self.journal = true,
                            "no" | "n" => self.journal = tr.opts.journal,
                            // iorig syncs every journal record.
                            "noflush" => tr.notices.push(format!(
                                "{}: journal=noflush: iorig syncs its journal records all the same",
                                d.loc
                            )),
                            other => {
                                return Err(usage(
                                    &d.loc,
                                    format!("journal={other} is not supported; give journal=yes (the journal goes where --journal says, or beside the parameter file)"),
                                ))
                            }
                        }
                    }
                    // A journal records validated writes (vdbench: -j implies -v).
                    self.verify = self.verify || self.journal;
                }
                "dedupratio" | "compratio" => {
                    let r = number(&one).map_err(|w| usage(&d.loc, format!("{k}: {w}")))?;
                    // 1 (vdbench's default) asks for no reduction.
                    if r > 1.0 {
                        self.reduce.push((k.clone(), r, d.loc.clone()));
                    }
                }
                "dedupunit" | "dedupsets" | "dedupflipflop" | "deduphotsets" => {
                    self.dedup_opts.push((k.clone(), one, d.loc.clone()));
                }
                "data_errors" => {
                    // vdbench's limit of errors before it stops; it
                    // does not switch validation on (HCIBench writes
                    // data_errors=10000 into every file).
                    let n = number(&one).map_err(|w| usage(&d.loc, format!("data_errors: {w}")))?;
                    self.max_errors = Some((n.max(1.0) as u64, d.loc.clone()));
                }
                _ => tr.other(d, k)?,
            }
        }
        Ok(())
    }
}

/// Reads `path` (its text `text`) and translates it.
pub fn translate(path: &Path, text: &str, opts: &Options) -> Result<Translation, ImportError> {
    let defs = definitions(path, text, &opts.vars)?;
    let mut tr = Tr {
        opts,
        hd_names: Vec::new(),
        notices: Vec::new(),
        ignored: Vec::new(),
        noticed: Vec::new(),
        journal_dir: None,
    };
    let mut general = General {
        verify: opts.verify || opts.journal,
        journal: opts.journal,
        max_errors: None,
        reduce: Vec::new(),
        dedup_opts: Vec::new(),
    };
    let mut hosts: Vec<String> = Vec::new();
    // Definitions with their `default` entries applied.
    let mut defaults: BTreeMap<String, Vec<(String, Val)>> = BTreeMap::new();
    let mut sds: Vec<Def> = Vec::new();
    let mut wds: Vec<Def> = Vec::new();
    let mut fsds: Vec<Def> = Vec::new();
    let mut fwds: Vec<Def> = Vec::new();
    let mut rds: Vec<Def> = Vec::new();
    for d in defs {
        if d.kind.is_empty() {
            general.take(&mut tr, &d)?;
            continue;
        }
        if d.name == "default" {
            defaults
                .entry(d.kind.clone())
                .or_default()
                .extend(d.params.clone());
            continue;
        }
        let mut full = d.clone();
        let mut params = defaults.get(&d.kind).cloned().unwrap_or_default();
        params.extend(d.params.clone());
        full.params = params;
        let list = match d.kind.as_str() {
            "sd" => &mut sds,
            "wd" => &mut wds,
            "fsd" => &mut fsds,
            "fwd" => &mut fwds,
            "rd" => &mut rds,
            _ => {
                // hd=: a host; system= names its agent.
                for (k, _) in &full.params {
                    if !matches!(k.as_str(), "system") {
                        tr.other(&full, k)?;
                    }
                }
                let addr = full.one("system").unwrap_or_else(|| full.name.clone());
                hosts.push(addr);
                tr.hd_names.push(full.name.clone());
                continue;
            }
        };
        if list.iter().any(|x| x.name == full.name) {
            return Err(usage(
                &d.loc,
                format!(
                    "{}={} is defined twice; give each its own name",
                    d.kind, d.name
                ),
            ));
        }
        list.push(full);
    }
    let data = data_of(&mut tr, &general.reduce, &general.dedup_opts)?;
    let General {
        verify,
        journal,
        max_errors,
        ..
    } = general;
    if rds.is_empty() {
        return Err(ImportError::Usage(format!(
            "{}: no run definition (rd=); add e.g. rd=run1,wd=wd1,iorate=max,elapsed=60,interval=1",
            path.display()
        )));
    }

    // Each rd, in order, as plan steps.
    let mut steps = String::new();
    let mut runs = Vec::new();
    let mut plan_targets: Option<Vec<String>> = None;
    let mut plan_size: Option<String> = None;
    for rd in &rds {
        let (text, n) = if rd.get("fwd").is_some() {
            tr.fs_run(rd, &fsds, &fwds, &mut plan_targets)?
        } else {
            tr.raw_run(rd, &sds, &wds, &mut plan_targets, &mut plan_size)?
        };
        steps.push_str(&text);
        runs.push((rd.name.clone(), n));
    }

    let mut t = String::new();
    let name = path
        .file_stem()
        .map(|s| iorig_spec::printable(&s.to_string_lossy()))
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "vdbench".into());
    // The path as the plan shows it: a line break in a file's name would
    // end the comment, and labels take no control characters.
    let shown = iorig_spec::printable(&path.display().to_string());
    let _ = writeln!(
        t,
        "# Translated by iorig import from the vdbench parameter file {shown}."
    );
    let _ = writeln!(t, "name = {}", q(&name));
    let _ = writeln!(
        t,
        "description = {}",
        q(&format!("vdbench parameter file {shown}"))
    );
    if let Some(tg) = &plan_targets {
        let _ = writeln!(
            t,
            "targets = [{}]",
            tg.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ")
        );
    }
    if let Some(sz) = &plan_size {
        let _ = writeln!(t, "size = {}", q(sz));
    }
    if !hosts.is_empty() {
        let _ = writeln!(t, "\n[hosts]");
        let _ = writeln!(
            t,
            "list = [{}]",
            hosts.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ")
        );
    }
    let _ = writeln!(t, "\n[defaults]");
    let mut labels = vec![("source".to_string(), format!("vdbench:{shown}"))];
    if !tr.ignored.is_empty() {
        labels.push(("ignored".to_string(), tr.ignored.join("; ")));
    }
    let _ = writeln!(
        t,
        "labels = {{ {} }}",
        labels
            .iter()
            .map(|(k, v)| format!("{} = {}", q(k), q(v)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(data) = &data {
        let _ = writeln!(t, "data = {}", q(data));
    }
    if verify {
        let _ = writeln!(t, "verify = true");
        if let Some((m, _)) = &max_errors {
            let _ = writeln!(t, "max_errors = {m}");
        }
    } else if let Some((m, loc)) = &max_errors {
        tr.notices.push(format!(
            "{loc}: data_errors={m}: without validation (validate=yes) there are no data errors to count; a failed I/O ends its worker in iorig"
        ));
    }
    t.push_str(&steps);
    // A file-system run's anchor is the plan's one target.
    let anchor = plan_targets
        .as_ref()
        .and_then(|t| t.first())
        .filter(|_| rds.iter().any(|rd| rd.get("fwd").is_some()));
    crate::check_plan(path, &t, anchor.map(String::as_str))?;
    // An sd's journal directory says where a journal goes, not that
    // there is one (vdbench journals with journal=yes or -j).
    let journal_dir = match (tr.journal_dir.take(), journal) {
        (Some(dir), false) => {
            tr.notices.push(format!(
                "journal={dir} (on an sd or fsd): no effect without journal=yes or --journal, as in vdbench"
            ));
            None
        }
        (dir, _) => dir,
    };
    Ok(Translation {
        plan_toml: t,
        notices: tr.notices,
        ignored: tr.ignored,
        runs,
        journal,
        journal_dir,
    })
}

fn q(v: &str) -> String {
    toml::Value::String(v.to_string()).to_string()
}

/// Names from a `sd=`/`wd=` reference: one, a list, or `prefix*`.
fn select<'a>(
    refs: &Val,
    all: &'a [Def],
    what: &str,
    loc: &Loc,
) -> Result<Vec<&'a Def>, ImportError> {
    let mut out: Vec<&Def> = Vec::new();
    for r in refs.items() {
        // As the definitions' names are kept ([`definitions`]).
        let r = iorig_spec::printable(&r);
        let matched: Vec<&Def> = match (r.strip_suffix('*'), numbered_range(&r)) {
            (Some(prefix), _) => all.iter().filter(|d| d.name.starts_with(prefix)).collect(),
            // sd=(sd101-sd132): the names of that prefix numbered in the
            // range (a definition named so exactly is itself).
            (None, Some((prefix, lo, hi))) if !all.iter().any(|d| d.name == r) => all
                .iter()
                .filter(|d| {
                    d.name
                        .strip_prefix(prefix)
                        .and_then(|n| n.parse::<u64>().ok())
                        .is_some_and(|n| (lo..=hi).contains(&n))
                })
                .collect(),
            (None, _) => all.iter().filter(|d| d.name == r).collect(),
        };
        if matched.is_empty() {
            return Err(usage(
                loc,
                format!(
                    "{what}={r} is not defined; define it before (defined: {})",
                    if all.is_empty() {
                        "none".to_string()
                    } else {
                        all.iter()
                            .map(|d| d.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            ));
        }
        for m in matched {
            if !out.iter().any(|d| d.name == m.name) {
                out.push(m);
            }
        }
    }
    Ok(out)
}

/// The order in which vdbench's own parser tries a workload definition's
/// keywords (`WD_entry.readParms`): an abbreviation is the first of them
/// it begins (`s=` is skew, `x=` xfersize, `r=` readpct).
const WD_ORDER: &[&str] = &[
    "skew",
    "xfersize",
    "readpct",
    "rdpct",
    "writepct",
    "wrpct",
    "range",
    "hotband",
    "seekpct",
    "stride",
    "priority",
    "iorate",
    "rhpct",
    "whpct",
    "host",
    "openflags",
    "user",
    "threads",
    "streams",
];

/// A parameter's keyword as written (lower case), for a definition of
/// `kind` ("" for a general parameter), as iorig's table names it: a
/// keyword itself, vdbench's aliases (readpct, writepct and wrpct, whose
/// value is the write share: `true` asks the caller to flip it), or any
/// beginning of one, as vdbench reads `xf=`. An abbreviation that begins
/// several keywords is taken as vdbench takes it in a workload definition
/// (its parser's order) and refused elsewhere, naming them.
fn keyword(kind: &str, key: &str) -> Result<(String, bool), String> {
    let alias = |k: &str| -> Option<(String, bool)> {
        match k {
            "readpct" => Some(("rdpct".into(), false)),
            "writepct" | "wrpct" => Some(("rdpct".into(), true)),
            _ => None,
        }
    };
    let known = |k: &str| {
        MAPPED.contains(&k)
            || KINDS.contains(&k)
            || NO_EFFECT.iter().any(|(n, _)| *n == k)
            || UNSUPPORTED.iter().any(|(n, _)| *n == k)
    };
    if let Some(a) = alias(key) {
        return Ok(a);
    }
    if known(key) || key.is_empty() {
        return Ok((key.to_string(), false));
    }
    if kind == "wd" {
        if let Some(full) = WD_ORDER.iter().find(|w| w.starts_with(key)) {
            return Ok(alias(full).unwrap_or_else(|| (full.to_string(), false)));
        }
    }
    let mut candidates: Vec<&str> = MAPPED
        .iter()
        .copied()
        .chain(NO_EFFECT.iter().map(|(n, _)| *n))
        .chain(UNSUPPORTED.iter().map(|(n, _)| *n))
        .filter(|k| k.starts_with(key))
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    match candidates.as_slice() {
        // Unknown: said later, with a did-you-mean.
        [] => Ok((key.to_string(), false)),
        [one] => Ok((one.to_string(), false)),
        many => Err(format!(
            "{key}= begins several keywords ({}); write more of it",
            many.join(", ")
        )),
    }
}

/// The size of a lun that exists: a file's length, a block device's size
/// (opened for reading only, to seek to its end).
fn lun_size(path: &Path) -> Option<u64> {
    use std::io::Seek;
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path).ok()?;
    let n = if meta.is_file() {
        meta.len()
    } else if meta.file_type().is_block_device() {
        // Never a FIFO or a character device (a tape): opening one may
        // block or act.
        std::fs::File::open(path)
            .ok()?
            .seek(std::io::SeekFrom::End(0))
            .ok()?
    } else {
        return None;
    };
    (n > 0).then_some(n)
}

/// vdbench's range of numbered names, `sd101-sd132`: the prefix both ends
/// share and the numbers from and to.
fn numbered_range(r: &str) -> Option<(&str, u64, u64)> {
    let (a, b) = r.split_once('-')?;
    let digits = |s: &str| s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (pa, na) = a.split_at(a.len() - digits(a));
    let (pb, nb) = b.split_at(b.len() - digits(b));
    if pa != pb || na.is_empty() || nb.is_empty() {
        return None;
    }
    let (lo, hi) = (na.parse().ok()?, nb.parse().ok()?);
    (lo <= hi).then_some((pa, lo, hi))
}

/// xfersize: `4k` or a distribution `(4k,50,8k,50)`.
fn xfersize(v: &Val) -> Result<String, String> {
    match v {
        Val::One(s) => Ok(iorig_spec::format_size(size(s)?)),
        Val::List(items) if items.len() == 1 => Ok(iorig_spec::format_size(size(&items[0])?)),
        Val::List(items) => {
            if items.len() % 2 != 0 {
                return Err("a distribution is pairs of size and percentage: (4k,50,8k,50)".into());
            }
            let mut parts = Vec::new();
            let mut total = 0.0;
            for pair in items.chunks(2) {
                let b = size(&pair[0])?;
                let p = number(&pair[1])?;
                total += p;
                parts.push(format!(
                    "{}:{}",
                    iorig_spec::format_size(b),
                    p.round() as u64
                ));
            }
            if (total - 100.0).abs() > 0.01 {
                return Err(format!("the percentages add up to {total}, not 100"));
            }
            Ok(parts.join(","))
        }
    }
}

/// A job's targets as a list (one or many).
fn job_targets(w: &WorkloadFile) -> Vec<String> {
    match &w.target {
        Some(OneOrMany::One(t)) => vec![t.clone()],
        Some(OneOrMany::Many(v)) => v.clone(),
        None => Vec::new(),
    }
}

/// seekpct as iorig's `random` share: 0/seq/sequential, 100/random, eof
/// (sequential, one pass), or a number.
fn seekpct(v: &str) -> Result<(f64, bool), String> {
    match v.trim() {
        "seq" | "sequential" => Ok((0.0, false)),
        "eof" => Ok((0.0, true)),
        "random" | "rand" => Ok((100.0, false)),
        n => {
            let p = number(n)?;
            if !(0.0..=100.0).contains(&p) {
                return Err(format!("{p} is not a percentage"));
            }
            Ok((p, false))
        }
    }
}

impl Tr<'_> {
    /// A raw-I/O run definition.
    fn raw_run(
        &mut self,
        rd: &Def,
        sds: &[Def],
        wds: &[Def],
        plan_targets: &mut Option<Vec<String>>,
        plan_size: &mut Option<String>,
    ) -> Result<(String, usize), ImportError> {
        let loc = &rd.loc;
        let bad = |k: &str, w: String| usage(loc, format!("rd={}: {k}: {w}", rd.name));
        let wd_ref = rd.get("wd").ok_or_else(|| {
            usage(
                loc,
                format!("rd={} names no wd=; add wd=wd1 (or wd=wd*)", rd.name),
            )
        })?;
        let chosen = select(wd_ref, wds, "wd", loc)?;
        let r = self.rd_params(rd)?;
        let Rd {
            kind,
            ref sweeps,
            ref rate,
            ..
        } = r;
        if kind == "curve" && sweeps.iter().any(|(k, _)| *k == key::rate) {
            return Err(bad(
                "iorate",
                "curve and a list of rates both set the rate; keep one".into(),
            ));
        }
        if rate.is_none() && kind == "run" && !sweeps.iter().any(|(k, _)| *k == key::rate) {
            return Err(bad(
                "iorate",
                "missing; vdbench needs it too: give iorate=max, a number, or curve".into(),
            ));
        }
        // Each wd as a job.
        let n = chosen.len();
        let skews: Vec<Option<f64>> = chosen
            .iter()
            .map(|w| w.one("skew").and_then(|s| number(&s).ok()))
            .collect();
        let given: f64 = skews.iter().flatten().sum();
        let open = skews.iter().filter(|s| s.is_none()).count();
        if given > 100.01 || (open == 0 && (given - 100.0).abs() > 0.01 && n > 1) {
            return Err(bad(
                "skew",
                format!("the workloads' skews add up to {given}, not 100"),
            ));
        }
        let share = |i: usize| -> f64 {
            match skews[i] {
                Some(s) => s,
                None if open > 0 => (100.0 - given) / open as f64,
                None => 100.0 / n as f64,
            }
        };
        let swept: Vec<&str> = sweeps.iter().map(|(k, _)| *k).collect();
        let mut jobs: Vec<(String, WorkloadFile)> = Vec::new();
        for (i, wd) in chosen.iter().enumerate() {
            let w = self.wd_job(wd, sds, &r, &swept, n, share(i))?;
            jobs.push((wd.name.clone(), w));
        }
        rd_step(rd, r, &jobs, plan_targets, plan_size)
    }

    /// An rd's own parameters: the step's keys, its sweeps, its kind and
    /// rate, and what its workloads take from it.
    fn rd_params(&mut self, rd: &Def) -> Result<Rd, ImportError> {
        let loc = &rd.loc;
        let bad = |k: &str, w: String| usage(loc, format!("rd={}: {k}: {w}", rd.name));
        let mut step: Keys = Vec::new();
        let mut sweeps: Keys = Vec::new();
        let mut kind = "run";
        let mut curve: Option<Vec<f64>> = None;
        let mut rate: Option<String> = None;
        let mut threads_per_sd: u64 = 8;
        let mut openflags: Option<String> = None;
        // vdbench's arrivals under a rate: exponential gaps by default.
        let mut poisson = true;
        for (k, v) in &rd.params {
            let one = v.items().join(",");
            match k.as_str() {
                "wd" => {}
                "distribution" => {
                    poisson = match one.as_str() {
                        "exponential" | "x" => true,
                        "deterministic" | "d" => false,
                        other => {
                            return Err(bad(
                                k,
                                format!("'{other}' (gaps drawn evenly between 0 and twice the mean) is not supported; give exponential or deterministic"),
                            ))
                        }
                    }
                }
                "iorate" => match v {
                    Val::List(items) if items.len() > 1 => {
                        let vals: Result<Vec<toml::Value>, String> = items
                            .iter()
                            .map(|i| {
                                if i == "max" {
                                    Ok(toml::Value::String("max".into()))
                                } else {
                                    number(i).map(|n| toml::Value::Integer(n.round() as i64))
                                }
                            })
                            .collect();
                        sweeps.push((
                            key::rate,
                            toml::Value::Array(vals.map_err(|w| bad(k, w))?),
                        ));
                    }
                    _ => match one.as_str() {
                        "max" => rate = Some("max".into()),
                        "curve" => kind = "curve",
                        n => {
                            number(n).map_err(|w| bad(k, w))?;
                            rate = Some(n.to_string());
                        }
                    },
                },
                "curve" => {
                    curve = Some(
                        v.items()
                            .iter()
                            .map(|i| number(i))
                            .collect::<Result<_, _>>()
                            .map_err(|w| bad(k, w))?,
                    );
                }
                "elapsed" => step.push((
                    key::time,
                    toml::Value::String(seconds(&one).map_err(|w| bad(k, w))?),
                )),
                "maxdata" => step.push((
                    key::io_size,
                    toml::Value::String(maxdata(&one).map_err(|w| bad(k, w))?),
                )),
                "warmup" => step.push((
                    key::warmup,
                    toml::Value::String(seconds(&one).map_err(|w| bad(k, w))?),
                )),
                "interval" => step.push((
                    key::interval,
                    toml::Value::String(seconds(&one).map_err(|w| bad(k, w))?),
                )),
                "pause" => step.push((
                    "pause",
                    toml::Value::String(seconds(&one).map_err(|w| bad(k, w))?),
                )),
                "threads" => threads_per_sd = number(&one).map_err(|w| bad(k, w))?.max(1.0) as u64,
                "openflags" => openflags = Some(one),
                "forxfersize" => {
                    let vals = v
                        .items()
                        .iter()
                        .map(|i| size(i).map(|b| toml::Value::String(iorig_spec::format_size(b))))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|w| bad(k, w))?;
                    sweeps.push((key::bs, toml::Value::Array(vals)));
                }
                "forthreads" => {
                    let vals = v
                        .items()
                        .iter()
                        .map(|i| number(i).map(|n| toml::Value::Integer(n.max(1.0) as i64)))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|w| bad(k, w))?;
                    sweeps.push((key::threads, toml::Value::Array(vals)));
                }
                "forrdpct" => {
                    let vals = v
                        .items()
                        .iter()
                        .map(|i| number(i).map(toml::Value::Float))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|w| bad(k, w))?;
                    sweeps.push((key::read, toml::Value::Array(vals)));
                }
                "forseekpct" => {
                    let vals = v
                        .items()
                        .iter()
                        .map(|i| {
                            seekpct(i).and_then(|(p, eof)| {
                                if eof {
                                    Err("eof in a loop is not supported; give 0".to_string())
                                } else {
                                    Ok(toml::Value::Float(p))
                                }
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|w| bad(k, w))?;
                    sweeps.push((key::random, toml::Value::Array(vals)));
                }
                "forrate" | "forrates" => {
                    let vals = v
                        .items()
                        .iter()
                        .map(|i| {
                            if i == "max" {
                                Ok(toml::Value::String("max".into()))
                            } else {
                                number(i).map(|n| toml::Value::Integer(n.round() as i64))
                            }
                        })
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|w| bad(k, w))?;
                    sweeps.push((key::rate, toml::Value::Array(vals)));
                }
                _ => self.other(rd, k)?,
            }
        }
        Ok(Rd {
            step,
            sweeps,
            kind,
            curve,
            rate,
            threads_per_sd,
            openflags,
            poisson,
        })
    }

    /// One wd of an rd as a job: its storage (the sds it names), its I/O
    /// and its share of the rd's threads and rate (`share`, percent).
    fn wd_job(
        &mut self,
        wd: &Def,
        sds: &[Def],
        r: &Rd,
        swept: &[&str],
        n: usize,
        share: f64,
    ) -> Result<WorkloadFile, ImportError> {
        let (openflags, threads_per_sd, rate) = (&r.openflags, r.threads_per_sd, &r.rate);
        let wloc = &wd.loc;
        let wbad = |k: &str, w: String| usage(wloc, format!("wd={}: {k}: {w}", wd.name));
        let sd_ref = wd.get("sd").ok_or_else(|| {
            wbad(
                "sd",
                "missing; name the storage, e.g. sd=sd1 or sd=sd*".into(),
            )
        })?;
        let my_sds = select(sd_ref, sds, "sd", wloc)?;
        let mut w = WorkloadFile::default();
        let mut targets = Vec::new();
        let mut sizes = Vec::new();
        let mut flags = openflags.clone();
        let mut sd_threads = threads_per_sd;
        let mut sd_hitarea: Option<u64> = None;
        for sd in &my_sds {
            let mut lun = None;
            for (k, v) in &sd.params {
                let one = v.items().join(",");
                match k.as_str() {
                    "lun" => lun = Some(one),
                    "size" => sizes.push(
                        size(&one)
                            .map_err(|w| usage(&sd.loc, format!("sd={}: size: {w}", sd.name)))?,
                    ),
                    "threads" => {
                        sd_threads = number(&one)
                            .map_err(|w| usage(&sd.loc, format!("sd={}: threads: {w}", sd.name)))?
                            .max(1.0) as u64
                    }
                    "openflags" => flags = Some(one),
                    "journal" => self.journal_dir(sd, &one)?,
                    // Where a wd's rhpct/whpct hits go (1m by default).
                    "hitarea" => {
                        sd_hitarea =
                            Some(size(&one).map_err(|w| {
                                usage(&sd.loc, format!("sd={}: hitarea: {w}", sd.name))
                            })?)
                    }
                    "range" => {
                        let r = v.items();
                        if r.len() != 2 {
                            return Err(usage(
                                &sd.loc,
                                format!("sd={}: range: give (start%,end%)", sd.name),
                            ));
                        }
                        w.range = Some(format!("{}%-{}%", r[0], r[1]));
                    }
                    _ => self.other(sd, k)?,
                }
            }
            let lun = lun.ok_or_else(|| {
                usage(
                    &sd.loc,
                    format!("sd={} has no lun=; give the device or file", sd.name),
                )
            })?;
            targets.push(lun);
        }
        if let Some(s) = sizes.iter().min() {
            w.size = Some(StrOrNum::Str(iorig_spec::format_size(*s)));
        }
        // Without size= an sd is its whole lun (vdbench's default): the
        // luns' own sizes give the hit area's share and eof's pass, read
        // only when one of them asks.
        let wants_size = wd.params.iter().any(|(k, v)| {
            matches!(k.as_str(), "rhpct" | "whpct")
                || (k == "seekpct" && v.items().iter().any(|i| i == "eof"))
        });
        if sizes.is_empty() && wants_size {
            let own: Vec<u64> = targets
                .iter()
                .filter_map(|t| lun_size(Path::new(t)))
                .collect();
            if own.len() == targets.len() {
                sizes = own;
            }
        }
        w.target = Some(OneOrMany::Many(targets));
        // vdbench's defaults: 4k, reads, random.
        let mut read = 100.0;
        let mut random = 100.0;
        let mut eof = false;
        let mut bs = "4k".to_string();
        let mut hit: (Option<f64>, Option<f64>, u64) = (None, None, sd_hitarea.unwrap_or(1 << 20));
        // vdbench's hotband: the range, skewed by its curve.
        let mut hotband = None;
        let mut wd_range = false;
        for (k, v) in &wd.params {
            let one = v.items().join(",");
            match k.as_str() {
                "sd" | "skew" => {}
                "xfersize" => bs = xfersize(v).map_err(|w| wbad(k, w))?,
                "rdpct" => read = number(&one).map_err(|w| wbad(k, w))?,
                "seekpct" => (random, eof) = seekpct(&one).map_err(|w| wbad(k, w))?,
                "range" | "hotband" => {
                    let r = v.items();
                    if r.len() != 2 {
                        return Err(wbad(k, "give (start%,end%)".into()));
                    }
                    if hotband.is_some() || (k == "hotband" && wd_range) {
                        return Err(wbad(
                            k,
                            "give one of range= and hotband=: the band is the range its I/Os skew over".into(),
                        ));
                    }
                    // The wd's range (or band) replaces the sd's.
                    w.range = Some(format!("{}%-{}%", r[0], r[1]));
                    if k == "hotband" {
                        hotband = Some(AccessDist::Hotband);
                    } else {
                        wd_range = true;
                    }
                }
                "iorate" => {
                    number(&one).map_err(|w| wbad(k, w))?;
                    w.rate = Some(StrOrNum::Str(one));
                }
                "openflags" => flags = Some(one),
                "rhpct" => hit.0 = Some(number(&one).map_err(|w| wbad(k, w))?),
                "whpct" => hit.1 = Some(number(&one).map_err(|w| wbad(k, w))?),
                "hitarea" => hit.2 = size(&one).map_err(|w| wbad(k, w))?,
                "align" => {
                    let a = size(&one).map_err(|w| wbad(k, w))?;
                    w.align = Some(StrOrNum::Str(iorig_spec::format_size(a)));
                }
                _ => self.other(wd, k)?,
            }
        }
        if !swept.contains(&key::bs) {
            w.bs = Some(StrOrNum::Str(bs));
        }
        if !swept.contains(&key::read) {
            w.read = Some(StrOrNum::Float(read));
        }
        if !swept.contains(&key::random) {
            w.random = Some(StrOrNum::Float(random));
        }
        if eof {
            let Some(s) = sizes.iter().min() else {
                return Err(wbad(
                    "seekpct",
                    "eof needs the sd's size= (one pass over it)".into(),
                ));
            };
            w.io_size = Some(StrOrNum::Str(iorig_spec::format_size(
                s.saturating_mul(my_sds.len() as u64),
            )));
        }
        let hits = hit.0.is_some_and(|p| p > 0.0) || hit.1.is_some_and(|p| p > 0.0);
        if let Some(d) = hotband {
            if hits {
                return Err(wbad(
                    "hotband",
                    "a hotband with rhpct/whpct is not supported: vdbench bands only the misses and iorig draws every I/O from one distribution; give one of them".into(),
                ));
            }
            w.dist = Some(d);
        }
        if hits {
            let io = hit.0.or(hit.1).unwrap_or(0.0);
            if hit.1.is_some_and(|w| (w - io).abs() > 0.01) && read < 100.0 && read > 0.0 {
                return Err(wbad(
                    "whpct",
                    "a write hit share other than rhpct is not supported; give one".into(),
                ));
            }
            let Some(s) = sizes.iter().min() else {
                return Err(wbad(
                    "rhpct",
                    "the hit area's share needs the sd's size= (or a lun that exists, whose size it is)".into(),
                ));
            };
            let space = (hit.2 as f64 / *s as f64 * 100.0).clamp(0.001, 100.0);
            if io >= 100.0 {
                // Every I/O hits the area: the I/O stays in it.
                if w.range.as_ref().is_some_and(|r| r != "0%-100%") {
                    return Err(wbad(
                        "rhpct",
                        "rhpct=100 with a range= is not supported; the hit area lies at the start of the sd, so give one of them".into(),
                    ));
                }
                w.range = Some(format!("0%-{}%", trim_pct(space)));
            } else {
                w.dist = Some(
                    AccessDist::parse(&format!("hot:{io}/{space:.4}"))
                        .map_err(|e| wbad("rhpct", e.to_string()))?,
                );
            }
        }
        // vdbench threads: blocking I/Os, each one in flight, per sd.
        w.engine = Some(EngineKind::Psync);
        w.qd = Some(StrOrNum::Int(1));
        let flags = flags.unwrap_or_default();
        let direct = flags
            .split(',')
            .any(|f| matches!(f.trim(), "o_direct" | "directio"));
        if direct {
            w.direct = Some(true);
        } else {
            w.buffered = Some(true);
        }
        if flags.split(',').any(|f| f.trim() == "o_sync") {
            w.sync = Some(true);
        } else if flags.split(',').any(|f| f.trim() == "o_dsync") {
            w.dsync = Some(true);
        }
        let total_threads = sd_threads.saturating_mul(my_sds.len() as u64);
        if !swept.contains(&key::threads) {
            let t = if n > 1 && (rate.as_deref() == Some("max") || r.kind == "curve") {
                // At max (a curve's first run too), the skew shares the
                // threads.
                ((total_threads as f64 * share / 100.0).round() as u64).max(1)
            } else {
                total_threads
            };
            w.threads = Some(StrOrNum::count(t));
        }
        if let Some(r) = rate.as_deref().filter(|r| *r != "max") {
            if w.rate.is_none() {
                let total: f64 = r.parse().unwrap_or(0.0);
                let mine = (total * share / 100.0).max(1.0).round();
                w.rate = Some(StrOrNum::Int(mine as i64));
            }
        }
        Ok(w)
    }
}

/// An rd's parameters as its workloads and its step read them.
struct Rd {
    step: Keys,
    sweeps: Keys,
    kind: &'static str,
    curve: Option<Vec<f64>>,
    rate: Option<String>,
    threads_per_sd: u64,
    openflags: Option<String>,
    poisson: bool,
}

/// An rd's step as plan text, with how many steps it expands to: one
/// workload on the plan's storage is the step itself; others are jobs.
fn rd_step(
    rd: &Def,
    r: Rd,
    jobs: &[(String, WorkloadFile)],
    plan_targets: &mut Option<Vec<String>>,
    plan_size: &mut Option<String>,
) -> Result<(String, usize), ImportError> {
    let Rd {
        mut step,
        sweeps,
        kind,
        curve,
        rate,
        poisson,
        ..
    } = r;
    // The step.
    let paced = kind == "curve"
        || rate.as_deref().is_some_and(|r| r != "max")
        || sweeps.iter().any(|(k, _)| *k == key::rate);
    if paced && poisson {
        step.push((key::arrivals, toml::Value::String("poisson".into())));
    }
    let combos: usize = sweeps
        .iter()
        .map(|(_, v)| v.as_array().map_or(1, Vec::len))
        .product();
    let per = if kind == "curve" {
        1 + curve.as_ref().map_or(6, Vec::len)
    } else {
        1
    };
    if jobs.len() == 1 {
        // One workload is the step itself, on the plan's storage (so it
        // may run on hosts). Storage other than an earlier step's makes it
        // a one-job step.
        let tg = job_targets(&jobs[0].1);
        let sz = jobs[0].1.size.as_ref().map(StrOrNum::text);
        let fits = plan_targets.as_ref().is_none_or(|t| *t == tg)
            && (plan_size.is_none() || *plan_size == sz);
        if fits {
            *plan_targets = Some(tg.clone());
            *plan_size = sz.clone();
        }
    }
    let curve_head = |t: &mut String| {
        if kind == "curve" {
            let _ = writeln!(t, "kind = \"curve\"");
        }
        if let (Some(c), "curve") = (&curve, kind) {
            let _ = writeln!(
                t,
                "rates_pct = [{}]",
                c.iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    };
    if jobs.len() == 1
        && plan_targets
            .as_ref()
            .is_some_and(|t| *t == job_targets(&jobs[0].1))
    {
        let (_, job) = &jobs[0];
        let mut t = String::new();
        let _ = writeln!(t, "\n[[steps]]");
        let _ = writeln!(t, "name = {}", q(&rd.name));
        curve_head(&mut t);
        for (k, v) in step.iter().chain(sweeps.iter()) {
            let _ = writeln!(t, "{k} = {v}");
        }
        // The plan holds the storage; a curve sets its own rate.
        for (k, v) in job.to_pairs() {
            let skip = [key::target, key::size].contains(&k)
                || iorig_spec::plan::kind_owns(kind, k).is_some();
            if !skip {
                let _ = writeln!(t, "{k} = {v}");
            }
        }
        return Ok((t, combos * per));
    }
    // Jobs (one or more) run at once; a curve runs them together at max,
    // then each at the curve's share of what it reached there.
    let mut t = String::new();
    let _ = writeln!(t, "\n[[steps]]");
    let _ = writeln!(t, "name = {}", q(&rd.name));
    curve_head(&mut t);
    for (k, v) in &step {
        let _ = writeln!(t, "{k} = {v}");
    }
    for (k, v) in &sweeps {
        let _ = writeln!(t, "{k} = {v}");
    }
    for (name, job) in jobs {
        let _ = writeln!(t, "\n[[steps.jobs]]");
        let _ = writeln!(t, "name = {}", q(name));
        for (k, v) in job.to_pairs() {
            if iorig_spec::plan::kind_owns(kind, k).is_none() {
                let _ = writeln!(t, "{k} = {v}");
            }
        }
    }
    Ok((t, combos * per))
}

impl Tr<'_> {
    /// A file-system run definition: its fwds mixed by skew into one
    /// workload on their fsd's tree.
    fn fs_run(
        &mut self,
        rd: &Def,
        fsds: &[Def],
        fwds: &[Def],
        plan_targets: &mut Option<Vec<String>>,
    ) -> Result<(String, usize), ImportError> {
        let loc = &rd.loc;
        let bad = |k: &str, w: String| usage(loc, format!("rd={}: {k}: {w}", rd.name));
        let chosen = select(
            rd.get("fwd").ok_or_else(|| bad("fwd", "missing".into()))?,
            fwds,
            "fwd",
            loc,
        )?;
        let mut step: Keys = Vec::new();
        let mut sweeps: Keys = Vec::new();
        // A for-loop over the tree's shape (forsizes, ...): each run needs
        // its tree made anew.
        let mut tree_sweep: Option<String> = None;
        for (k, v) in &rd.params {
            let one = v.items().join(",");
            match k.as_str() {
                "fwd" => {}
                "fwdrate" => match one.as_str() {
                    "max" => {}
                    n => {
                        number(n).map_err(|w| bad(k, w))?;
                        step.push((key::rate, toml::Value::String(n.into())));
                    }
                },
                "format" => {
                    let m = match v.items().first().map(String::as_str).unwrap_or("no") {
                        "yes" => "yes",
                        "no" => "no",
                        "restart" => "restart",
                        "once" => "once",
                        "dirs" => "dirs",
                        other => {
                            return Err(bad(
                                k,
                                format!(
                                "'{other}' is not supported; give yes, no, restart, once or dirs"
                            ),
                            ))
                        }
                    };
                    step.push((key::format, toml::Value::String(m.into())));
                }
                "elapsed" => step.push((
                    key::time,
                    toml::Value::String(seconds(&one).map_err(|w| bad(k, w))?),
                )),
                "maxdata" => step.push((
                    key::io_size,
                    toml::Value::String(maxdata(&one).map_err(|w| bad(k, w))?),
                )),
                "warmup" => step.push((
                    key::warmup,
                    toml::Value::String(seconds(&one).map_err(|w| bad(k, w))?),
                )),
                "interval" => step.push((
                    key::interval,
                    toml::Value::String(seconds(&one).map_err(|w| bad(k, w))?),
                )),
                "pause" => step.push((
                    "pause",
                    toml::Value::String(seconds(&one).map_err(|w| bad(k, w))?),
                )),
                "forthreads" => {
                    let vals = v
                        .items()
                        .iter()
                        .map(|i| number(i).map(|n| toml::Value::Integer(n.max(1.0) as i64)))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|w| bad(k, w))?;
                    sweeps.push((key::threads, toml::Value::Array(vals)));
                }
                "forxfersize" => {
                    let vals = v
                        .items()
                        .iter()
                        .map(|i| size(i).map(|b| toml::Value::String(iorig_spec::format_size(b))))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|w| bad(k, w))?;
                    sweeps.push((key::bs, toml::Value::Array(vals)));
                }
                // vdbench's for-loops over the fsd: one run per tree shape.
                "forsizes" | "forfiles" | "forwidth" | "fordepth" => {
                    let param = match k.as_str() {
                        "forsizes" => key::file_size,
                        "forfiles" => key::files,
                        "forwidth" => key::width,
                        _ => key::depth,
                    };
                    let vals = v
                        .items()
                        .iter()
                        .map(|i| {
                            if param == key::file_size {
                                size(i).map(|b| toml::Value::String(iorig_spec::format_size(b)))
                            } else {
                                number(i).map(|n| toml::Value::Integer(n as i64))
                            }
                        })
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|w| bad(k, w))?;
                    tree_sweep = Some(k.clone());
                    sweeps.push((param, toml::Value::Array(vals)));
                }
                _ => self.other(rd, k)?,
            }
        }
        if let Some(k) = &tree_sweep {
            let fresh = step
                .iter()
                .any(|(key, v)| *key == key::format && v.as_str() == Some("yes"));
            if !fresh {
                return Err(bad(
                    k,
                    "each run of the loop has a tree of another shape; give format=yes on the rd so each run makes its tree anew (as vdbench needs too)".into(),
                ));
            }
        }
        // The fwds of one fsd become one workload on its tree; several
        // fsds become jobs side by side, a tree each.
        let mut groups: Vec<(&Def, Vec<&Def>)> = Vec::new();
        for fwd in &chosen {
            let fbad = |k: &str, w: String| usage(&fwd.loc, format!("fwd={}: {k}: {w}", fwd.name));
            let fsd_ref = fwd.get("fsd").ok_or_else(|| {
                fbad("fsd", "missing; name the file system, e.g. fsd=fsd1".into())
            })?;
            let my = select(fsd_ref, fsds, "fsd", &fwd.loc)?;
            if my.len() != 1 {
                return Err(fbad(
                    "fsd",
                    "one fsd per fwd: give each fsd its own fwd (fwds of several fsds run side by side)".into(),
                ));
            }
            match groups.iter_mut().find(|(f, _)| f.name == my[0].name) {
                Some((_, g)) => g.push(fwd),
                None => groups.push((my[0], vec![fwd])),
            }
        }
        let n = chosen.len();
        let mut trees = Vec::with_capacity(groups.len());
        for (fsd, group) in &groups {
            trees.push(self.fs_tree(fsd, group, n)?);
        }
        // A key the rd sweeps is the sweep's, not the fsd's one value.
        let swept = |k: &&str| sweeps.iter().any(|(s, _)| s == k);
        let combos: usize = sweeps
            .iter()
            .map(|(_, v)| v.as_array().map_or(1, Vec::len))
            .product();
        let mut t = String::new();
        let _ = writeln!(t, "\n[[steps]]");
        let _ = writeln!(t, "name = {}", q(&rd.name));
        // One tree on the plan's anchor (or the first) is the step itself;
        // a tree of its own makes a step of one job.
        let here = match trees.as_slice() {
            [tree]
                if plan_targets
                    .as_ref()
                    .is_none_or(|pt| pt.first() == Some(&tree.anchor)) =>
            {
                Some(tree)
            }
            _ => None,
        };
        if let Some(tree) = here {
            *plan_targets = Some(vec![tree.anchor.clone()]);
            for (k, v) in step
                .iter()
                .chain(tree.keys.iter().filter(|(k, _)| !swept(k)))
                .chain(sweeps.iter())
            {
                let _ = writeln!(t, "{k} = {v}");
            }
            let _ = writeln!(t, "ops = {}", q(&tree.ops));
            return Ok((t, combos));
        }
        // Several trees, or a tree other than the plan's: a job each, with
        // its own anchor. The rd's rate is shared by the fwds' skews; its
        // tree settings (format) go to every job, as the step holds no
        // tree.
        if trees.len() > 1 && !sweeps.is_empty() {
            return Err(bad(
                "fwd",
                "for-loops over fwds of several fsds are not supported; give each fsd its own rd, or loop in separate rds".into(),
            ));
        }
        let rate = step
            .iter()
            .find(|(k, _)| *k == key::rate)
            .and_then(|(_, v)| v.as_str().and_then(|r| r.parse::<f64>().ok()));
        let per_job = |k: &&str| *k == key::rate || WorkloadFile::has_role(k, iorig_spec::Role::Fs);
        for (k, v) in step
            .iter()
            .filter(|(k, _)| !per_job(k))
            .chain(sweeps.iter())
        {
            let _ = writeln!(t, "{k} = {v}");
        }
        for tree in &trees {
            let _ = writeln!(t, "\n[[steps.jobs]]");
            let _ = writeln!(t, "name = {}", q(&tree.name));
            let _ = writeln!(t, "anchor = {}", q(&tree.anchor));
            for (k, v) in step.iter().filter(|(k, _)| per_job(k) && *k != key::rate) {
                let _ = writeln!(t, "{k} = {v}");
            }
            for (k, v) in tree.keys.iter().filter(|(k, _)| !swept(k)) {
                let _ = writeln!(t, "{k} = {v}");
            }
            if let Some(r) = rate {
                let mine = (r * tree.skew / 100.0).max(1.0).round();
                let _ = writeln!(t, "rate = {}", mine as i64);
            }
            let _ = writeln!(t, "ops = {}", q(&tree.ops));
        }
        Ok((t, combos))
    }

    /// The fwds of one fsd as one workload on its tree: the fsd's shape,
    /// the shared settings of the fwds, and their operations mixed by
    /// skew (`n`: the rd's fwds, whose skew is shared when not given).
    fn fs_tree(&mut self, fsd: &Def, chosen: &[&Def], n: usize) -> Result<FsTree, ImportError> {
        // The fwds share their fileselect and threads; their operations
        // become one mix by skew. The transfer's shape is shared by the
        // fwds that move data only (a metadata operation, mkdir, getattr,
        // delete, ..., moves none): fileio and stopafter by those that read
        // or write, the xfersize per direction.
        let mut shared: Option<Keys> = None;
        let mut shared_data: Option<Keys> = None;
        // The xfersize of the fwds that read, of those that write (None
        // inside: not given).
        let mut read_bs: Option<Option<toml::Value>> = None;
        let mut write_bs: Option<Option<toml::Value>> = None;
        let mut first_transfer: Option<Keys> = None;
        let mut ops: Vec<(String, f64)> = Vec::new();
        let mut anchor_of: Option<String> = None;
        let mut skew_sum = 0.0;
        for fwd in chosen {
            let floc = &fwd.loc;
            let fbad = |k: &str, w: String| usage(floc, format!("fwd={}: {k}: {w}", fwd.name));
            let mut keys: Keys = Vec::new();
            let mut anchor = None;
            // vdbench's file system I/O is buffered unless openflags says
            // o_direct (iorig's own default is direct, so it is said here).
            let mut direct = false;
            for (k, v) in &fsd.params {
                let one = v.items().join(",");
                let sbad = |w: String| usage(&fsd.loc, format!("fsd={}: {k}: {w}", fsd.name));
                match k.as_str() {
                    "anchor" => anchor = Some(one),
                    "journal" => self.journal_dir(fsd, &one)?,
                    "depth" | "width" | "files" => {
                        number(&one).map_err(sbad)?;
                        let param = match k.as_str() {
                            "depth" => key::depth,
                            "width" => key::width,
                            _ => key::files,
                        };
                        keys.push((
                            param,
                            toml::Value::Integer(number(&one).unwrap_or(0.0) as i64),
                        ));
                    }
                    "size" | "sizes" => {
                        let sz = xfersize(v).map_err(sbad)?;
                        keys.push((key::file_size, toml::Value::String(sz)));
                    }
                    "openflags" => {
                        direct = one
                            .split(',')
                            .any(|f| matches!(f.trim(), "o_direct" | "directio"));
                    }
                    _ => self.other(fsd, k)?,
                }
            }
            keys.push((key::direct, toml::Value::Boolean(direct)));
            let anchor = anchor.ok_or_else(|| {
                usage(
                    &fsd.loc,
                    format!("fsd={} has no anchor=; give the directory", fsd.name),
                )
            })?;
            anchor_of = Some(anchor);
            let mut op = "read".to_string();
            let mut rdpct: Option<f64> = None;
            for (k, v) in &fwd.params {
                let one = v.items().join(",");
                match k.as_str() {
                    "fsd" | "skew" => {}
                    "operation" => {
                        op = match one.as_str() {
                            "read" | "write" | "create" | "delete" | "mkdir" | "rmdir" | "open" | "close" | "setattr" => one.clone(),
                            "getattr" => "stat".into(),
                            other => return Err(fbad(k, format!("'{other}' is not supported; iorig has read, write, create, delete, mkdir, rmdir, open, close, getattr, setattr"))),
                        }
                    }
                    "rdpct" => rdpct = Some(number(&one).map_err(|w| fbad(k, w))?),
                    "xfersize" => keys.push((key::bs, toml::Value::String(xfersize(v).map_err(|w| fbad(k, w))?))),
                    "fileio" => {
                        let items = v.items();
                        // fileio=(random,shared): threads sharing one file.
                        if items.iter().skip(1).any(|i| i == "shared") {
                            return Err(fbad(k, "shared (several threads in one file at once) is not supported: iorig's tree gives each worker a file of its own at a time; drop shared".into()));
                        }
                        if let Some(extra) = items.get(1) {
                            return Err(fbad(k, format!("'{extra}' after the order is not supported; give random or sequential")));
                        }
                        let mode = match items.first().map(String::as_str).unwrap_or("") {
                            "random" => "random",
                            "sequential" | "seq" => "sequential",
                            o => return Err(fbad(k, format!("'{o}': give random or sequential"))),
                        };
                        keys.push((key::fileio, toml::Value::String(mode.into())));
                    }
                    "fileselect" => keys.push((key::fileselect, toml::Value::String(match one.as_str() { "random" => "random", "sequential" | "seq" => "sequential", o => return Err(fbad(k, format!("'{o}': give random or sequential"))) }.into()))),
                    "threads" => keys.push((key::threads, toml::Value::Integer(number(&one).map_err(|w| fbad(k, w))?.max(1.0) as i64))),
                    "stopafter" => keys.push((key::stopafter, toml::Value::Integer(number(&one).map_err(|w| fbad(k, w))? as i64))),
                    _ => self.other(fwd, k)?,
                }
            }
            let skew = fwd
                .one("skew")
                .and_then(|s| number(&s).ok())
                .unwrap_or(100.0 / n as f64);
            skew_sum += skew;
            match (op.as_str(), rdpct) {
                ("read" | "write", Some(p)) => {
                    ops.push(("read".into(), skew * p / 100.0));
                    ops.push(("write".into(), skew * (100.0 - p) / 100.0));
                }
                _ => ops.push((op.clone(), skew)),
            }
            // Which directions this fwd moves data in: a create writes its
            // file whole, from its start, in xfersize transfers (as
            // vdbench's does), with no fileio or stopafter of its own.
            let (reads, writes) = match (op.as_str(), rdpct) {
                ("read", None) => (true, false),
                ("write", None) | ("create", _) => (false, true),
                ("read" | "write", Some(p)) => (p > 0.0, p < 100.0),
                _ => (false, false),
            };
            let reads_or_writes = matches!(op.as_str(), "read" | "write");
            let transfer = |k: &&str| [key::bs, key::fileio, key::stopafter].contains(k);
            let (data_keys, keys): (Keys, Keys) = keys.into_iter().partition(|(k, _)| transfer(k));
            let bs = data_keys
                .iter()
                .find(|(k, _)| *k == key::bs)
                .map(|(_, v)| v.clone());
            let other: Keys = data_keys
                .iter()
                .filter(|(k, _)| *k != key::bs)
                .cloned()
                .collect();
            if first_transfer.is_none() {
                first_transfer = Some(data_keys.clone());
            }
            // The xfersize is shared per direction: the fwds that read
            // one, those that write (or create) another.
            for (moves, seen, what) in [
                (reads, &mut read_bs, "read"),
                (writes, &mut write_bs, "write or create"),
            ] {
                if !moves {
                    continue;
                }
                match seen {
                    None => *seen = Some(bs.clone()),
                    Some(s) if *s == bs => {}
                    Some(_) => {
                        return Err(fbad(
                            "xfersize",
                            format!("the fwds of one fsd that {what} must share one xfersize: iorig's workers draw every {what} from one size mix; give them one, or give each its own fsd"),
                        ))
                    }
                }
            }
            for (mine, theirs, what) in [
                (Some(keys), &mut shared, "fileselect and threads: iorig's workers each draw their operation from one mix"),
                (
                    reads_or_writes.then_some(other),
                    &mut shared_data,
                    "fileio and stopafter (those that read or write): iorig opens every file alike",
                ),
            ] {
                let Some(mine) = mine else { continue };
                match theirs {
                    None => *theirs = Some(mine),
                    Some(s) if *s == mine => {}
                    Some(_) => {
                        return Err(fbad(
                            "fsd",
                            format!("the fwds of one fsd must share their {what}; give them the same, or give each its own fsd"),
                        ))
                    }
                }
            }
        }
        // The transfer sizes: one for both directions, or one each.
        let sizes: Keys = match (read_bs.flatten(), write_bs.flatten()) {
            (Some(r), Some(w)) if r != w => vec![(key::read_bs, r), (key::write_bs, w)],
            (Some(b), _) | (None, Some(b)) => vec![(key::bs, b)],
            // Metadata operations alone: the first fwd's xfersize.
            (None, None) => first_transfer
                .iter()
                .flatten()
                .filter(|(k, _)| *k == key::bs)
                .cloned()
                .collect(),
        };
        // Without a read or write: the first fwd's fileio and stopafter.
        let shared_data: Keys = shared_data
            .unwrap_or_else(|| {
                first_transfer
                    .into_iter()
                    .flatten()
                    .filter(|(k, _)| *k != key::bs)
                    .collect()
            })
            .into_iter()
            .chain(sizes)
            .collect();
        // Operations with the same name add up.
        let mut merged: Vec<(String, f64)> = Vec::new();
        for (o, w) in ops {
            match merged.iter_mut().find(|(m, _)| *m == o) {
                Some((_, x)) => *x += w,
                None => merged.push((o, w)),
            }
        }
        // Shares of this tree's own operations (its fwds' skews are part
        // of the rd's; they are scaled to add up to 100 here).
        let scale = if skew_sum > 0.0 {
            100.0 / skew_sum
        } else {
            1.0
        };
        let mix: Vec<String> = merged
            .iter()
            .filter(|(_, w)| *w > 0.0)
            .map(|(o, w)| format!("{o}:{}", (w * scale * 1000.0).round() / 1000.0))
            .collect();
        let keys: Keys = shared.into_iter().flatten().chain(shared_data).collect();
        Ok(FsTree {
            name: fsd.name.clone(),
            anchor: anchor_of.unwrap_or_default(),
            keys,
            ops: mix.join(","),
            skew: skew_sum,
        })
    }
}

/// One fsd's part of a file-system rd: its tree and the workload on it.
struct FsTree {
    /// The fsd's name (the job's, when the rd has several).
    name: String,
    anchor: String,
    /// The tree's shape and the fwds' shared settings.
    keys: Keys,
    /// The operations mixed by skew (`read:70,write:30`).
    ops: String,
    /// The fwds' skews added up: the tree's share of the rd's rate.
    skew: f64,
}

#[cfg(test)]
mod tests;
