//! fio job files as iorig plans.
//!
//! Each job section (with `[global]`'s options before its own, as fio
//! applies them) becomes one job of a plan step; jobs run at once until a
//! job with `stonewall` (or `wait_for_previous`) opens the next step, as
//! fio's groups do. Every option is mapped to its iorig meaning, accepted
//! with a stated lack of effect, or refused before anything runs with its
//! file, line and a hint (`--ignore-unsupported` turns the refusals into a
//! recorded list). `docs/fio.md` lists every option.

mod options;
pub mod parse;
pub mod units;

use crate::ImportError;
use iorig_spec::{
    AccessDist, Arrivals, DataPattern, EngineKind, FileSelect, FormatMode, OneOrMany, StrOrNum,
    WorkloadFile,
};
use options::{Arg, Treatment};
use parse::{usage, usage_key, usage_plain, Loc, Opt, Section};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use units::SizeOrPct;

/// How to translate.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Options iorig does not support are listed and left out instead of
    /// refused.
    pub ignore_unsupported: bool,
}

/// A job file as an iorig plan.
#[derive(Debug, Clone)]
pub struct Translation {
    /// The plan, as TOML that `iorig plan run` reads.
    pub plan_toml: String,
    /// Every job, in file order, and where it runs.
    pub jobs: Vec<JobMeta>,
    /// Options accepted without effect, one line each, naming why.
    pub notices: Vec<String>,
    /// Options left out under `--ignore-unsupported` (`file:line option`).
    pub ignored: Vec<String>,
    /// The `[global]` options as written (fio's `global options`).
    pub global_options: Vec<(String, String)>,
}

/// One fio job: its name, fio group, and its place in the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct JobMeta {
    pub name: String,
    /// fio's `groupid`: counted up by `stonewall` and `new_group`.
    pub groupid: u32,
    /// The plan step that runs it (from 0) and its position there.
    pub step: usize,
    pub position: usize,
    /// Its own options as written (not [global]'s), for fio's `job
    /// options`.
    pub options: Vec<(String, String)>,
    /// fio-format logs it asks for.
    pub logs: Logs,
    /// Its latency_target, when it has one (its step is a curve).
    pub latency: Option<Curve>,
}

/// fio's `write_bw_log`, `write_lat_log`, `write_iops_log`: the name each
/// log file starts with (`NAME_bw.1.log`), and `log_avg_msec`, the
/// averaging window (iorig's reporting interval of the job).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Logs {
    pub bw: Option<String>,
    pub lat: Option<String>,
    pub iops: Option<String>,
    pub avg_msec: Option<u64>,
    /// `log_offset`: each line carries an offset column (0 for averaged
    /// lines, as fio writes them).
    pub offset: bool,
}

/// Reads `path` (its text `text`) and translates it.
pub fn translate(
    path: &Path,
    text: &str,
    loader: &dyn crate::Loader,
    opts: &Options,
) -> Result<Translation, ImportError> {
    let sections = parse::sections(path, text, loader)?;
    let mut t = Translator {
        opts,
        loader,
        notices: Vec::new(),
        ignored: Vec::new(),
        noticed: Vec::new(),
        made: HashMap::new(),
    };
    let mut global: Vec<Opt> = Vec::new();
    let mut steps: Vec<Vec<JobOut>> = Vec::new();
    let mut metas: Vec<JobMeta> = Vec::new();
    let mut groupid = 0u32;
    for s in &sections {
        if s.name == "global" {
            // A later [global] applies to the jobs after it, as in fio.
            global.extend(s.opts.iter().cloned());
            continue;
        }
        let job = t.job(s, &global)?;
        let starts_group = job.stonewall || job.new_group;
        if starts_group && !metas.is_empty() {
            groupid += 1;
        }
        if steps.is_empty() || (job.stonewall && !steps.last().is_some_and(|v| v.is_empty())) {
            steps.push(Vec::new());
        }
        let step = steps.len() - 1;
        let jobs = steps.last_mut().ok_or_else(|| usage(&s.loc, "no step"))?;
        let mut name = job.name.clone();
        let mut n = 2;
        while jobs.iter().any(|j| j.name == name) {
            name = format!("{}#{n}", job.name);
            n += 1;
        }
        metas.push(JobMeta {
            name: name.clone(),
            groupid,
            step,
            position: jobs.len(),
            // Its own options only: fio lists [global]'s once, under
            // `global options`, not again in every job's.
            options: s
                .opts
                .iter()
                .map(|o| (o.key.clone(), o.value.clone().unwrap_or_default()))
                .collect(),
            logs: job.logs.clone(),
            latency: job.curve.clone(),
        });
        jobs.push(JobOut { name, ..job });
    }
    for jobs in steps.iter_mut() {
        // A job alone in its step waits out its delay in the warmup, then
        // ramps, then runs its runtime measured, as fio does. (Jobs side by
        // side share one clock: theirs are idle inside the measured time.)
        if let [job] = jobs.as_mut_slice() {
            if let Some((delay, ramp, runtime)) = job.delay {
                job.workload.warmup = as_text(&ns_text(ramp.saturating_add(delay)));
                if let (Some(rt), true) = (runtime, job.workload.time.is_some()) {
                    job.workload.time = as_text(&ns_text(rt));
                }
            }
        }
    }
    for jobs in &steps {
        if let (true, Some(v)) = (jobs.len() > 1, jobs.iter().find_map(|j| j.steady.as_ref())) {
            return Err(usage_plain(
                &v.loc,
                "ss in a job that runs at once with others is not supported (iorig judges a whole step); put stonewall before and after it",
            ));
        }
        if let (true, Some(c)) = (jobs.len() > 1, jobs.iter().find_map(|j| j.curve.as_ref())) {
            return Err(usage_plain(
                &c.loc,
                "latency_target in a job that runs at once with others is not supported (iorig's curve measures one workload); put stonewall before and after it",
            ));
        }
        if let (true, Some(v)) = (jobs.len() > 1, jobs.iter().find_map(|j| j.verify.as_ref())) {
            return Err(usage_plain(
                &v.loc,
                "verify in a job that runs at once with others is not supported (iorig validates a whole step); put stonewall before and after it",
            ));
        }
    }
    if metas.is_empty() {
        let file = path.display();
        return Err(ImportError::Usage(format!(
            "{file}: no job sections, only [global]; add a job such as [job1] with rw=randread"
        )));
    }
    let plan_name = path
        .file_stem()
        .map(|s| iorig_spec::printable(&s.to_string_lossy()))
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "fio".into());
    let plan_toml = emit_plan(&plan_name, path, &steps, &t.ignored);
    crate::check_plan(path, &plan_toml, None)?;
    Ok(Translation {
        plan_toml,
        jobs: metas,
        notices: t.notices,
        ignored: t.ignored,
        global_options: global
            .iter()
            .map(|o| (o.key.clone(), o.value.clone().unwrap_or_default()))
            .collect(),
    })
}

struct Translator<'a> {
    opts: &'a Options,
    loader: &'a dyn crate::Loader,
    notices: Vec<String>,
    ignored: Vec<String>,
    /// Options already told about (once per option name).
    noticed: Vec<String>,
    /// The size each file is made with by a job so far, so that a later
    /// size-less job reads the file an earlier one wrote, as fio does.
    made: HashMap<String, u64>,
}

/// A job as an iorig workload.
#[derive(Debug, Clone, Default)]
struct JobOut {
    name: String,
    stonewall: bool,
    new_group: bool,
    workload: WorkloadFile,
    /// fio's exitall: when it ends, the other jobs of its step end too.
    exitall: bool,
    logs: Logs,
    verify: Option<Verify>,
    steady: Option<Steady>,
    /// fio's startdelay, ramp_time and runtime (ns), when it has a delay:
    /// a job alone in its step takes the delay into its warmup.
    delay: Option<(u64, u64, Option<u64>)>,
    /// fio's latency_target: the job is a curve step.
    curve: Option<Curve>,
}

/// fio's latency_target, latency_percentile and latency_window as a curve
/// step: max IOPS, then rates of it, each run for one window; the answer is
/// the best IOPS whose latency at the percentile stays under the target.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub threshold_ns: u64,
    pub percentile: f64,
    /// fio's window (0: each rate ran for the job's runtime).
    pub window_ns: u64,
    /// Where latency_target was written.
    pub loc: Loc,
}

/// fio's steady-state detection as a plan step's `steady_state`: one-second
/// rounds (fio samples each second), a window of `ss_dur`, judged after
/// `ss_ramp`, for at most the job's runtime.
#[derive(Debug, Clone, PartialEq)]
struct Steady {
    rule: String,
    window_rounds: u64,
    ramp_ns: u64,
    max_rounds: u64,
    loc: Loc,
}

/// A job's data validation: written blocks read back at once (`after`),
/// and stop at the first error (`verify_fatal`).
#[derive(Debug, Clone, PartialEq)]
struct Verify {
    /// fio's verify_pattern, as iorig writes it.
    pattern: Option<String>,
    /// fio's verify_only.
    only: bool,
    after: bool,
    max_errors: Option<u64>,
    loc: Loc,
}

/// A size, duration or share as a workload writes it.
fn as_text(v: &str) -> Option<StrOrNum> {
    Some(StrOrNum::Str(v.to_string()))
}

/// A count as a workload writes it.
fn num(v: u64) -> Option<StrOrNum> {
    Some(StrOrNum::count(v))
}

/// Direction-pair values as fio writes them: `A` (both) or `A,B`.
fn pair(v: &str) -> (String, String) {
    let mut it = v.split(',');
    let r = it.next().unwrap_or("").trim().to_string();
    let w = it
        .next()
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| r.clone());
    let w = if w.is_empty() { r.clone() } else { w };
    (r, w)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rw {
    Read,
    Write,
    Trim,
    Mixed,
}

/// What a job's options say, before it becomes iorig keys.
struct State {
    /// The section's name: fio's `$jobname` in default file names, even
    /// when `name=` renames the job.
    section: String,
    name: String,
    kb_base: u64,
    rw: (Rw, bool),
    read_mix: Option<f64>,
    bs: Option<(u64, u64)>,
    bssplit: Option<(String, String)>,
    /// fio's bsrange per direction: (min, max).
    bsrange: Option<((u64, u64), (u64, u64))>,
    bs_unaligned: bool,
    align: Option<u64>,
    /// rw's `:N`: a skip in bytes (sequential) or I/Os per seek (random).
    rw_suffix: Option<(String, Loc)>,
    size: Option<SizeOrPct>,
    io_size: Option<u64>,
    offset: Option<SizeOrPct>,
    filenames: Option<Vec<String>>,
    /// fio's filename_format (default `$jobname.$jobnum.$filenum`).
    filename_format: Option<String>,
    directory: Option<String>,
    nrfiles: u64,
    numjobs: u64,
    iodepth: u64,
    batch: Option<u64>,
    engine: &'static str,
    engine_sync: bool,
    direct: bool,
    sync: Option<&'static str>,
    runtime_ns: Option<u64>,
    time_based: bool,
    ramp_ns: u64,
    rate_bytes: Option<(u64, u64)>,
    rate_iops: Option<(u64, u64)>,
    pct_random: Option<f64>,
    dist: Option<AccessDist>,
    seed: Option<u64>,
    loops: u64,
    stonewall: bool,
    new_group: bool,
    data: Option<DataPattern>,
    /// fio's buffer_pattern.
    buffer_pattern: Option<Vec<u8>>,
    logs: Logs,
    /// fio's verify (a checksum named), do_verify, verify_fatal.
    verify: bool,
    /// Where `verify` was written, for messages.
    verify_loc: Option<Loc>,
    do_verify: bool,
    verify_fatal: bool,
    /// fio's verify_pattern (as iorig writes it, 0x and hex) and
    /// verify=pattern.
    verify_pattern: Option<String>,
    verify_is_pattern: bool,
    verify_only: bool,
    number_ios: Option<u64>,
    cpus: Option<String>,
    /// fio's cpus_allowed_policy=split.
    cpus_split: bool,
    exitall: bool,
    fill_device: Option<Loc>,
    poisson: bool,
    offset_increment: Option<SizeOrPct>,
    /// fio's rate_min (bytes/s) and rate_iops_min, per clone and
    /// direction, and rate_cycle (ms).
    rate_min_bytes: Option<(u64, u64)>,
    rate_min_iops: Option<(u64, u64)>,
    rate_cycle_ms: Option<u64>,
    /// fio's zonemode=strided, zonerange, zonesize, zoneskip.
    zonemode: Option<(String, Loc)>,
    zonerange: Option<u64>,
    zonesize: Option<u64>,
    zoneskip: Option<u64>,
    /// fio's filesize (each file's size).
    filesize: Option<u64>,
    /// fio's fsync=N / fdatasync=N.
    fsync: u64,
    /// fio's end_fsync, and its fsync_on_close (each may be turned off
    /// again by a job after [global] turned it on).
    end_fsync: bool,
    fsync_on_close: bool,
    /// fio's norandommap (or softrandommap).
    norandommap: bool,
    fdatasync: u64,
    unlink: bool,
    /// invalidate=0: leave the page cache as it is.
    keep_cache: bool,
    openfiles: Option<u64>,
    file_service: Option<(String, Loc)>,
    /// continue_on_error=verify: validation errors do not end the job.
    continue_verify: bool,
    /// continue_on_error on reads, on writes.
    continue_io: (bool, bool),
    /// ignore_error's lists for reads, writes, validation.
    ignore_lists: Option<(String, String, String, Loc)>,
    /// fio's ss (metric, rule), ss_dur and ss_ramp.
    ss: Option<(String, Loc)>,
    ss_dur_ns: u64,
    ss_ramp_ns: u64,
    /// fio's thinktime, thinktime_spin (µs by default) and thinktime_blocks.
    think_ns: u64,
    think_spin_ns: u64,
    think_blocks: u64,
    /// fio's rate_ignore_thinktime: pauses move the rate's schedule.
    think_moves_rate: bool,
    start_delay_ns: u64,
    /// fio's latency_target (where written), latency_window (ns) and
    /// latency_percentile.
    latency_target: Option<(u64, Loc)>,
    latency_window_ns: u64,
    latency_pct: (f64, Loc),
}

impl Translator<'_> {
    fn notice_once(&mut self, key: &str, line: String) {
        if !self.noticed.iter().any(|k| k == key) {
            self.noticed.push(key.to_string());
            self.notices.push(line);
        }
    }

    fn job(&mut self, s: &Section, global: &[Opt]) -> Result<JobOut, ImportError> {
        let mut st = State {
            name: s.name.clone(),
            section: s.name.clone(),
            kb_base: 1024,
            rw: (Rw::Read, false),
            read_mix: None,
            bs: None,
            bssplit: None,
            bsrange: None,
            bs_unaligned: false,
            align: None,
            rw_suffix: None,
            size: None,
            io_size: None,
            offset: None,
            filenames: None,
            filename_format: None,
            directory: None,
            nrfiles: 1,
            numjobs: 1,
            iodepth: 1,
            batch: None,
            // fio's default engine on Linux.
            engine: "psync",
            engine_sync: true,
            direct: false,
            sync: None,
            runtime_ns: None,
            time_based: false,
            ramp_ns: 0,
            rate_bytes: None,
            rate_iops: None,
            pct_random: None,
            dist: None,
            buffer_pattern: None,
            seed: None,
            loops: 1,
            stonewall: false,
            new_group: false,
            data: None,
            logs: Logs::default(),
            verify: false,
            verify_loc: None,
            do_verify: true,
            verify_fatal: false,
            verify_pattern: None,
            verify_is_pattern: false,
            verify_only: false,
            number_ios: None,
            cpus: None,
            cpus_split: false,
            exitall: false,
            fill_device: None,
            poisson: false,
            offset_increment: None,
            rate_min_bytes: None,
            rate_min_iops: None,
            rate_cycle_ms: None,
            zonemode: None,
            zonerange: None,
            zonesize: None,
            zoneskip: None,
            filesize: None,
            fsync: 0,
            end_fsync: false,
            fsync_on_close: false,
            norandommap: false,
            fdatasync: 0,
            unlink: false,
            keep_cache: false,
            openfiles: None,
            file_service: None,
            continue_verify: false,
            continue_io: (false, false),
            ignore_lists: None,
            ss: None,
            ss_dur_ns: 0,
            ss_ramp_ns: 0,
            think_ns: 0,
            think_spin_ns: 0,
            think_blocks: 1,
            think_moves_rate: false,
            start_delay_ns: 0,
            latency_target: None,
            latency_window_ns: 0,
            latency_pct: (100.0, s.loc.clone()),
        };
        // A job is named after its section, whatever `[global]` says (fio
        // names it so once the global options are read); its own `name=`
        // still renames it.
        for o in global.iter().filter(|o| o.key != "name").chain(&s.opts) {
            self.apply(&mut st, o)?;
        }
        self.finish(st, &s.loc)
    }

    fn apply(&mut self, st: &mut State, o: &Opt) -> Result<(), ImportError> {
        let arg = Arg {
            key: o.key.as_str(),
            val: o.value.as_deref(),
            loc: &o.loc,
        };
        let (key, val, loc) = (arg.key, arg.val, arg.loc);
        match options::lookup(key).map(|row| row.treatment) {
            Some(Treatment::Mapped(read)) => read(self, st, &arg),
            Some(Treatment::NoEffect(why)) => {
                self.notice_once(
                    key,
                    format!("{loc}: {key}: accepted with no effect ({why})"),
                );
                Ok(())
            }
            Some(Treatment::Refused(hint)) => {
                // A zero or off value of an unsupported option asks for nothing.
                let off = matches!(val.map(str::trim), Some("0") | Some("none") | Some(""))
                    && !matches!(key, "verify_pattern" | "buffer_pattern");
                if off {
                    return Ok(());
                }
                if self.opts.ignore_unsupported {
                    self.ignored.push(format!("{loc} {key}"));
                    return Ok(());
                }
                Err(usage_plain(
                    loc,
                    format!(
                        "{key} is not supported by iorig: {hint}; remove it, or pass --ignore-unsupported to run without it"
                    ),
                ))
            }
            None => Err(usage(
                loc,
                format!(
                    "unknown fio option '{key}';{} see docs/fio.md for the options iorig reads",
                    iorig_spec::suggest::did_you_mean(key, options::names())
                ),
            )),
        }
    }

    fn finish(&mut self, mut st: State, loc: &Loc) -> Result<JobOut, ImportError> {
        if matches!(st.engine, "filecreate" | "filestat" | "filedelete") {
            return self.finish_tree(st, loc);
        }
        let mut w = WorkloadFile::default();
        let files = self.job_targets(&st, loc, &mut w)?;
        let sizes = self.job_sizes(&st, loc, &mut w)?;
        job_engine(self, &st, loc, &mut w)?;
        self.job_rate(&mut st, loc, &mut w, &sizes)?;
        self.job_time(&st, loc, &mut w, &files, &sizes)?;
        self.job_errors_and_files(&st, loc, &mut w, &files, &sizes)?;
        let verify = self.job_verify(&st, loc, &mut w, &sizes)?;
        let steady = job_steady(&st, &sizes)?;
        let curve = job_curve(&st, &mut w, verify.is_some(), steady.is_some())?;
        Ok(JobOut {
            curve,
            steady,
            delay: (st.start_delay_ns > 0).then_some((
                st.start_delay_ns,
                st.ramp_ns,
                st.runtime_ns,
            )),
            exitall: st.exitall,
            name: st.name,
            stonewall: st.stonewall,
            new_group: st.new_group,
            workload: w,
            logs: st.logs,
            verify,
        })
    }

    /// The job's targets, their size and the tested range.
    fn job_targets(
        &mut self,
        st: &State,
        loc: &Loc,
        w: &mut WorkloadFile,
    ) -> Result<Files, ImportError> {
        let jerr = |why: String| job_err(loc, &st.name, why);
        // Targets: the named files, or the job's own files in its directory.
        let files: Vec<String> = match &st.filenames {
            Some(names) => names
                .iter()
                .map(|n| match &st.directory {
                    // directory=/mnt/x/ gives /mnt/x/n, not /mnt/x//n.
                    Some(d) if !Path::new(n).is_absolute() => {
                        format!("{}/{n}", d.trim_end_matches('/'))
                    }
                    _ => n.clone(),
                })
                .collect(),
            None => {
                let dir = st.directory.clone().unwrap_or_else(|| ".".into());
                let format = st
                    .filename_format
                    .as_deref()
                    .unwrap_or("$jobname.$jobnum.$filenum");
                let mut v: Vec<String> = Vec::new();
                let mut seen = std::collections::HashSet::new();
                for n in 0..st.numjobs {
                    for f in 0..st.nrfiles {
                        // $jobname is the section's name even when name=
                        // renames the job, as fio names the files.
                        let name = format
                            .replace("$jobname", &st.section)
                            .replace("$jobnum", &n.to_string())
                            .replace("$filenum", &f.to_string());
                        let path = if Path::new(&name).is_absolute() {
                            name
                        } else {
                            format!("{}/{name}", dir.trim_end_matches('/'))
                        };
                        // A format without $jobnum gives the clones the
                        // same files, as in fio.
                        if seen.insert(path.clone()) {
                            v.push(path);
                        }
                    }
                }
                v
            }
        };
        if let Some(at) = &st.fill_device {
            // On a device fio's size is already the whole device; on a file
            // it writes until the file system is full.
            if st.filenames.is_none() || files.iter().any(|f| !f.starts_with("/dev/")) {
                return Err(usage(
                    at,
                    "fill_device on files (writing until the file system is full) is not supported; give size=",
                ));
            }
            self.notice_once(
                "fill_device",
                format!(
                    "{at}: fill_device: the job covers the whole device, as it does without size="
                ),
            );
        }
        let per_job_files = if st.filenames.is_some() {
            files.len() as u64
        } else {
            st.nrfiles
        };
        w.target = Some(OneOrMany::Many(files.clone()));
        // fio's size is a job's bytes over all its files; filesize each
        // file's. Both: the files are made at filesize, and the job's I/O
        // is size over them (each file's first size ÷ files bytes), at most
        // the files' own (fio 3.33: 2 files of filesize=4m with size=2m
        // make two 4 MiB files and read 2 MiB).
        let (size, file_bytes) = match (st.filesize, st.size) {
            (Some(f), Some(SizeOrPct::Bytes(s))) => (
                Some(SizeOrPct::Bytes(s.min(f.saturating_mul(per_job_files)))),
                Some(f),
            ),
            (Some(_), Some(SizeOrPct::Pct(_))) => {
                return Err(jerr(
                    "size as a percentage with filesize is not supported; give size in bytes, or filesize alone".into(),
                ))
            }
            (Some(f), None) => (Some(SizeOrPct::Bytes(f.saturating_mul(per_job_files))), None),
            (None, s) => (s, None),
        };
        let (size_bytes, range_end_pct) = match size {
            Some(SizeOrPct::Bytes(b)) => (Some(b / per_job_files.max(1)), None),
            Some(SizeOrPct::Pct(p)) => (None, Some(p)),
            None => (None, None),
        };
        if size_bytes == Some(0) {
            return Err(jerr(format!(
                "size is smaller than its {per_job_files} files; give a larger size"
            )));
        }
        // offset_increment: clone i starts i increments further. When the
        // increment is the clone's size the clones lie side by side, which
        // is iorig's one job over their union: sequential workers each take
        // their own stretch of it, random ones spread over it evenly.
        let clones_side_by_side = match st.offset_increment {
            None => 1,
            Some(_) if st.numjobs == 1 => 1,
            Some(inc) => {
                let same = match (inc, st.size) {
                    (SizeOrPct::Bytes(i), Some(SizeOrPct::Bytes(_))) => {
                        per_job_files == 1 && Some(i) == size_bytes
                    }
                    (SizeOrPct::Pct(i), Some(SizeOrPct::Pct(p))) => (i - p).abs() < 1e-9,
                    _ => false,
                };
                if !same || st.filenames.is_none() {
                    return Err(jerr(
                        "offset_increment is supported when it equals size on one named file or device (the clones side by side); give size= equal to it and filename=".into(),
                    ));
                }
                st.numjobs
            }
        };
        let range_end_pct = range_end_pct.map(|e| e * clones_side_by_side as f64);
        if range_end_pct.is_some_and(|e| e > 100.0 + 1e-9) {
            return Err(jerr(
                "the clones' sizes (size × numjobs) pass the end of the target".into(),
            ));
        }
        // A size-less job on files an earlier job of this file makes (and
        // that are not there yet) takes their size from that job, as fio
        // finds them made when the job starts.
        let (size_bytes, range_end_pct) = match (size_bytes, range_end_pct) {
            (None, None) if st.filenames.is_some() => {
                let missing: Vec<&String> = files
                    .iter()
                    .filter(|f| !self.loader.exists(Path::new(f)))
                    .collect();
                let made: Option<Vec<u64>> =
                    missing.iter().map(|f| self.made.get(*f).copied()).collect();
                match made.as_deref() {
                    Some([first, rest @ ..]) if rest.iter().all(|b| b == first) => {
                        (Some(*first), None)
                    }
                    _ => (None, None),
                }
            }
            other => other,
        };
        let span_bytes = size_bytes.map(|b| b * clones_side_by_side);
        let mut range: Option<(f64, f64)> = range_end_pct.map(|e| (0.0, e));
        let mut target_size = span_bytes;
        match (st.offset, span_bytes) {
            (None, _) | (Some(SizeOrPct::Bytes(0)), _) => {}
            (Some(SizeOrPct::Pct(p)), _) => {
                let end = range.map_or(100.0, |r| r.1);
                if p >= end {
                    return Err(jerr(format!("offset {p}% leaves nothing to test")));
                }
                range = Some((p, (p + end).min(100.0)));
            }
            (Some(SizeOrPct::Bytes(off)), Some(sz)) => {
                // The files reach to offset + size; the range is the tail.
                let total = off + sz;
                target_size = Some(total);
                range = Some((off as f64 * 100.0 / total as f64, 100.0));
            }
            (Some(SizeOrPct::Bytes(_)), None) => {
                return Err(jerr(
                    "offset in bytes needs size (iorig tests a share of each target); give size=, or offset as a percentage".into(),
                ))
            }
        }
        // size below the files' filesize: the files at their size, the I/O
        // in each one's first part.
        if let (Some(f), Some(span)) = (file_bytes, span_bytes) {
            if f > span {
                if range.is_some() {
                    return Err(jerr(
                        "offset with size below filesize is not supported; give one of them".into(),
                    ));
                }
                target_size = Some(f);
                range = Some((0.0, span as f64 * 100.0 / f as f64));
            }
        }
        if let Some(b) = target_size {
            w.size = as_text(&iorig_spec::format_size(b));
            for f in &files {
                self.made.entry(f.clone()).or_insert(b);
            }
        }
        if let Some((a, b)) = range {
            w.range = Some(format!("{}%-{}%", trim_float(a), trim_float(b)));
        }

        Ok(Files {
            files,
            per_job_files,
            size_bytes,
            range_end_pct,
            clones_side_by_side,
        })
    }

    /// Block sizes, directions, random share, zones and alignment.
    fn job_sizes(
        &mut self,
        st: &State,
        loc: &Loc,
        w: &mut WorkloadFile,
    ) -> Result<Sizes, ImportError> {
        let jerr = |why: String| job_err(loc, &st.name, why);
        // Block sizes.
        let (read_bs, write_bs) = match (&st.bssplit, st.bs) {
            (Some((r, w)), _) => (r.clone(), w.clone()),
            (None, _) if st.bsrange.is_some() => {
                let ((rmin, rmax), (wmin, wmax)) = st.bsrange.unwrap_or_default();
                (
                    bsrange(rmin, rmax, st.bs_unaligned).map_err(&jerr)?,
                    bsrange(wmin, wmax, st.bs_unaligned).map_err(&jerr)?,
                )
            }
            (None, Some((r, w))) => (iorig_spec::format_size(r), iorig_spec::format_size(w)),
            (None, None) => ("4k".to_string(), "4k".to_string()),
        };
        let (mode, random) = st.rw;
        if let Some((suffix, at)) = &st.rw_suffix {
            let e = |why: String| usage(at, format!("rw: ':{suffix}': {why}"));
            if random {
                let n = units::int(suffix).map_err(&e)?;
                if n > 1 {
                    if st.pct_random.is_some_and(|p| p < 100.0) {
                        return Err(e(
                            "I/Os per seek together with percentage_random is not supported; give one".into(),
                        ));
                    }
                    w.run_length = num(n);
                }
            } else {
                let n = units::size(suffix, st.kb_base).map_err(&e)?;
                if n > 0 {
                    w.skip = as_text(&iorig_spec::format_size(n));
                }
            }
        }
        // fio's zones: strided gives them their meaning; without a zonemode,
        // zone sizes mean strided zones too, as fio takes them.
        let zoned = !matches!(st.zonemode.as_ref().map(|z| z.0.as_str()), Some("none"));
        if let (false, Some((_, at))) = (zoned, &st.zonemode) {
            if st.zonerange.is_some() || st.zonesize.is_some() {
                return Err(usage(
                    at,
                    "zonemode=none with zone sizes (fio refuses this too); give zonemode=strided or drop the sizes",
                ));
            }
        }
        if zoned && st.zonesize.is_none() && st.zonerange.is_some() {
            // fio: zonerange without zonesize makes no zones (and is an
            // error under an explicit strided).
            if let Some((_, at)) = &st.zonemode {
                return Err(usage(
                    at,
                    "zonemode=strided needs zonesize (zonerange alone makes no zones)",
                ));
            }
            self.notice_once(
                "zonerange",
                format!("{loc}: zonerange without zonesize: no zones, as in fio"),
            );
        }
        if zoned && st.zonesize.is_some() {
            if st.offset_increment.is_some() {
                return Err(jerr(
                    "zones with offset_increment are not supported (iorig's workers share one zone walk); give each clone its own job".into(),
                ));
            }
            let range = st.zonerange.or(st.zonesize).unwrap_or(0);
            w.zone_range = as_text(&iorig_spec::format_size(range));
            if let Some(z) = st.zonesize.filter(|z| *z != range) {
                w.zone_size = as_text(&iorig_spec::format_size(z));
            }
            if let Some(z) = st.zoneskip.filter(|z| *z > 0) {
                w.zone_skip = as_text(&iorig_spec::format_size(z));
            }
        } else if let (true, Some((_, at)), None) = (zoned, &st.zonemode, st.zonerange) {
            return Err(usage(at, "zonemode=strided needs zonesize"));
        }
        if let Some(a) = st.align {
            w.align = as_text(&iorig_spec::format_size(a));
        } else if (st.bssplit.is_some() || st.bsrange.is_some()) && !(st.verify && st.do_verify) {
            // fio aligns random offsets to the smallest size by default;
            // iorig's own default for mixed sizes stops at 4k.
            let min = [&read_bs, &write_bs]
                .iter()
                .filter_map(|t| iorig_spec::BsSpec::parse(t).ok())
                .flat_map(|b| b.sizes.into_iter().map(|(size, _)| size))
                .min();
            if let Some(m) = min.filter(|m| m.is_multiple_of(512) && *m > 4096) {
                w.align = as_text(&iorig_spec::format_size(m));
            }
        }
        let read_pct = match mode {
            Rw::Read => 100.0,
            Rw::Write | Rw::Trim => 0.0,
            Rw::Mixed => st.read_mix.unwrap_or(50.0),
        };
        let mixed_sizes = |bs: &str| bs.contains(',') || bs.contains(':');
        let sizes_used = match mode {
            Rw::Read => mixed_sizes(&read_bs),
            Rw::Write | Rw::Trim => mixed_sizes(&write_bs),
            Rw::Mixed => mixed_sizes(&read_bs) || mixed_sizes(&write_bs),
        };
        if random && sizes_used && !st.norandommap {
            self.notice_once(
                "randommap",
                format!(
                    "{loc}: job '{}': random I/O of mixed block sizes without norandommap: fio's random map covers each block once a pass and shrinks I/Os to fit its holes, so fio's mean I/O size falls below the mix's as the map fills; iorig draws with replacement (fio's norandommap) and keeps the mix. Add norandommap to the job file to run fio the same way",
                    st.name
                ),
            );
        }
        if read_bs == write_bs {
            w.bs = as_text(&read_bs);
        } else {
            match mode {
                Rw::Read => w.bs = as_text(&read_bs),
                Rw::Write | Rw::Trim => w.bs = as_text(&write_bs),
                Rw::Mixed => {
                    w.read_bs = as_text(&read_bs);
                    w.write_bs = as_text(&write_bs);
                }
            }
        }
        w.read = Some(StrOrNum::Float(read_pct));
        if mode == Rw::Trim {
            w.trim = num(100);
        }
        let random_pct = if random {
            st.pct_random.unwrap_or(100.0)
        } else {
            0.0
        };
        w.random = Some(StrOrNum::Float(random_pct));
        if let Some(d) = &st.dist {
            // fio lays zones in each file; iorig lays them over the job's
            // files end to end.
            let files = st.filenames.as_ref().map_or(st.nrfiles, |f| f.len() as u64);
            let zones = matches!(d, AccessDist::Zoned { .. } | AccessDist::ZonedAbs { .. });
            if zones && files > 1 {
                return Err(jerr(format!(
                    "'{d}' over {files} files: fio lays the zones in each file, iorig over the files end to end; give each file a job of its own"
                )));
            }
            w.dist = Some(*d);
        }

        Ok(Sizes {
            read_bs,
            write_bs,
            mode,
            random,
        })
    }

    /// The rate, its floor and think time: fio's are per clone, iorig's
    /// the job's total.
    fn job_rate(
        &mut self,
        st: &mut State,
        loc: &Loc,
        w: &mut WorkloadFile,
        sizes: &Sizes,
    ) -> Result<(), ImportError> {
        let jerr = |why: String| job_err(loc, &st.name, why);
        let (read_bs, write_bs, mode) = (&sizes.read_bs, &sizes.write_bs, sizes.mode);
        let bs = (read_bs.as_str(), write_bs.as_str());
        let pace = job_iops(mode, st.rate_iops, st.rate_bytes, bs, ("rate", "rate_iops"))
            .map_err(&jerr)?;
        let rate_iops = match pace {
            Pace::Total(r) => Some(r),
            _ => None,
        };
        if let Pace::Caps { read, write } = pace {
            if st.poisson {
                return Err(jerr(
                    "rate_process=poisson with a mixed job's rates is not supported (iorig caps each direction as fio does, without arrivals); give one direction per job, or drop rate_process".into(),
                ));
            }
            // A direction the mix never issues has no cap (fio's rate of it
            // paces nothing).
            let share = st.read_mix.unwrap_or(50.0);
            w.read_rate = read
                .filter(|_| share > 0.0)
                .and_then(|r| num(r * st.numjobs));
            w.write_rate = write
                .filter(|_| share < 100.0)
                .and_then(|r| num(r * st.numjobs));
        }
        // fio's floor: the job fails once a rate_cycle's rate falls below
        // it (per clone); iorig's is the job's total per interval.
        let min_iops = if mode == Rw::Mixed
            && (st.rate_min_iops.is_some() || st.rate_min_bytes.is_some())
        {
            return Err(jerr(
                "a rate floor for a mixed job (fio judges reads and writes each) is not supported; give it to a job that only reads or only writes".into(),
            ));
        } else {
            match job_iops(
                mode,
                st.rate_min_iops,
                st.rate_min_bytes,
                bs,
                ("rate_min", "rate_iops_min"),
            )
            .map_err(&jerr)?
            {
                Pace::Total(m) => Some(m),
                _ => None,
            }
        };
        if let Some(m) = min_iops {
            if mode == Rw::Mixed {
                return Err(jerr(
                    "a rate floor for a mixed job (fio judges reads and writes each) is not supported; give it to a job that only reads or only writes".into(),
                ));
            }
            w.min_iops = num(m * st.numjobs);
            // The floor is judged per reporting interval: fio's rate_cycle.
            let cycle = st.rate_cycle_ms.unwrap_or(1000);
            match st.logs.avg_msec {
                Some(ms) if ms != cycle => {
                    return Err(jerr(format!(
                        "rate_cycle={cycle} and log_avg_msec={ms} differ; iorig judges the floor and writes the logs per interval, so give them the same value"
                    )))
                }
                Some(_) => {}
                None if cycle != 1000 => {
                    if cycle < 10 {
                        return Err(jerr(format!("rate_cycle={cycle}: give 10 ms or more")));
                    }
                    st.logs.avg_msec = Some(cycle);
                }
                None => {}
            }
        } else if st.rate_cycle_ms.is_some() {
            self.notice_once(
                "rate_cycle",
                format!("{loc}: rate_cycle: accepted with no effect (iorig paces by schedule, not by averaging cycles; it times a rate_min)"),
            );
        }
        if let Some(r) = rate_iops {
            w.rate = num(r * st.numjobs);
            if st.poisson {
                w.arrivals = Some(Arrivals::Poisson);
            }
        }
        if st.think_moves_rate && (st.think_ns == 0 || pace == Pace::Free) {
            self.notice_once(
                "rate_ignore_thinktime",
                format!("{loc}: rate_ignore_thinktime: no effect without both a rate and a thinktime, as in fio"),
            );
        }
        if st.think_ns > 0 {
            // Under a rate fio keeps the schedule through the pauses and
            // catches up after each, unless rate_ignore_thinktime moves it.
            if pace != Pace::Free && st.think_moves_rate {
                w.think_moves_rate = Some(true);
            }
            if st.think_spin_ns > st.think_ns {
                return Err(jerr(
                    "thinktime_spin is longer than thinktime; the spin is part of the think time"
                        .into(),
                ));
            }
            w.think_time = as_text(&ns_text(st.think_ns));
            if st.think_blocks > 1 {
                w.think_every = num(st.think_blocks);
            }
            if st.think_spin_ns > 0 {
                w.think_spin = as_text(&ns_text(st.think_spin_ns));
            }
        }

        Ok(())
    }

    /// When the job ends (time or bytes), its delays and what it carries
    /// as is (seed, data, CPUs, cache).
    fn job_time(
        &mut self,
        st: &State,
        loc: &Loc,
        w: &mut WorkloadFile,
        files: &Files,
        sizes: &Sizes,
    ) -> Result<(), ImportError> {
        let jerr = |why: String| job_err(loc, &st.name, why);
        let (read_bs, write_bs, mode) = (&sizes.read_bs, &sizes.write_bs, sizes.mode);
        let bs = sizes.bs();
        let (per_job_files, size_bytes, range_end_pct, clones_side_by_side) = (
            files.per_job_files,
            files.size_bytes,
            files.range_end_pct,
            files.clones_side_by_side,
        );
        let files = &files.files;
        // Time and bytes: time_based runs for runtime; otherwise the job
        // ends when each clone did its bytes (size × loops), or at runtime.
        // number_ios: I/Os of one block size each (fio ends a clone there).
        let ios_bytes = match st.number_ios {
            None => None,
            Some(n) => {
                let one = iorig_spec::parse_size(bs)
                    .ok()
                    .filter(|_| read_bs == write_bs || mode != Rw::Mixed);
                let Some(one) = one else {
                    return Err(jerr(format!(
                        "number_ios with mixed block sizes ({read_bs}/{write_bs}) has no byte count; give io_size"
                    )));
                };
                Some(n.saturating_mul(one))
            }
        };
        let io_per_clone = match (ios_bytes.or(st.io_size), size_bytes) {
            (Some(b), _) => Some(IoAmount::Bytes(b)),
            (None, Some(b)) => Some(IoAmount::Bytes(b * per_job_files)),
            // fio's size defaults to the named files' (or devices') own,
            // and a percentage is of them: a clone does its working set.
            (None, None) if st.filenames.is_some() || range_end_pct.is_some() => {
                if let Some(f) = files.iter().find(|f| !self.loader.exists(Path::new(f))) {
                    return Err(jerr(format!(
                        "{f} does not exist and no size= says how large to make it (fio refuses this too); give size="
                    )));
                }
                Some(IoAmount::Pct(100))
            }
            (None, None) => None,
        };
        if st.time_based {
            let Some(rt) = st.runtime_ns else {
                return Err(jerr(
                    "time_based without runtime runs until stopped; give runtime=".into(),
                ));
            };
            w.time = as_text(&ns_text(rt.saturating_add(st.start_delay_ns)));
        } else {
            let Some(io) = io_per_clone else {
                return Err(jerr(
                    "without size= or filename= iorig cannot tell what to create or when the job ends; give size=, or runtime= with time_based".into(),
                ));
            };
            let times = st.loops.saturating_mul(st.numjobs);
            let io_size = match io {
                IoAmount::Bytes(b) => iorig_spec::format_size(b.saturating_mul(times)),
                // Clones side by side each do their share of the union.
                IoAmount::Pct(p) => {
                    format!("{}%", p.saturating_mul(times) / clones_side_by_side.max(1))
                }
            };
            w.io_size = as_text(&io_size);
            w.time = as_text(&st.runtime_ns.map_or_else(
                || "1000h".to_string(),
                |rt| ns_text(rt.saturating_add(st.start_delay_ns)),
            ));
        }
        if st.start_delay_ns > 0 {
            // fio's runtime starts after the delay; iorig's time holds it.
            w.start_delay = as_text(&ns_text(st.start_delay_ns));
        }
        if st.ramp_ns > 0 {
            w.warmup = as_text(&ns_text(st.ramp_ns));
        }
        if let Some(seed) = st.seed {
            w.seed = Some(seed);
        }
        w.data = self.job_data(st, loc)?;
        if let Some(c) = &st.cpus {
            w.cpus = Some(c.to_string());
        }
        if st.cpus_split {
            // Without cpus_allowed fio splits every CPU of the machine.
            if w.cpus.is_none() {
                let n = self.loader.keyword("ncpus").unwrap_or(1).max(1);
                w.cpus = Some(format!("0-{}", n - 1));
            }
            w.cpus_policy = Some(iorig_spec::CpuPolicy::Split);
        }
        if st.unlink {
            w.unlink = Some(true);
        }
        if st.keep_cache {
            w.keep_cache = Some(true);
        }
        Ok(())
    }

    /// Going on past errors, syncs, the job's files and its interval.
    fn job_errors_and_files(
        &mut self,
        st: &State,
        loc: &Loc,
        w: &mut WorkloadFile,
        files: &Files,
        sizes: &Sizes,
    ) -> Result<(), ImportError> {
        let jerr = |why: String| job_err(loc, &st.name, why);
        let (mode, random) = (sizes.mode, sizes.random);
        let per_job_files = files.per_job_files;
        // fio goes on past a failed I/O when continue_on_error covers its
        // direction and the error is in ignore_error's list for it (by
        // default fio's non-fatal EIO and EILSEQ).
        let list_for = |read: bool| -> Option<String> {
            let covered = if read {
                st.continue_io.0
            } else {
                st.continue_io.1
            };
            covered.then(|| {
                let given = st
                    .ignore_lists
                    .as_ref()
                    .map(|l| if read { &l.0 } else { &l.1 });
                match given.filter(|g| !g.is_empty()) {
                    Some(g) => g.replace(':', ","),
                    None => "EIO,EILSEQ".to_string(),
                }
            })
        };
        let ignore = match mode {
            Rw::Read => list_for(true),
            Rw::Write | Rw::Trim => list_for(false),
            Rw::Mixed => match (list_for(true), list_for(false)) {
                (None, None) => None,
                (Some(r), Some(w)) if r == w => Some(r),
                _ => {
                    return Err(jerr(
                        "a mixed job that goes on past read errors and write errors differently is not supported; give continue_on_error=io and one error list for both".into(),
                    ))
                }
            },
        };
        if let Some(list) = ignore {
            if st.verify && st.do_verify {
                return Err(jerr(
                    "going on past failed I/Os together with verify is not supported (a failed write leaves its block unknown to validation); give continue_on_error=verify or none".into(),
                ));
            }
            w.ignore_errors = Some(list);
        } else if let Some((.., at)) = &st.ignore_lists {
            self.notice_once(
                "ignore_error",
                format!("{at}: ignore_error: no effect without continue_on_error for the job's direction (as in fio)"),
            );
        }
        if st.end_fsync || st.fsync_on_close {
            w.fsync_at_end = Some(true);
        }
        match (st.fsync, st.fdatasync) {
            (0, 0) => {}
            (n, 0) => w.fsync_every = num(n),
            (0, n) => w.fdatasync_every = num(n),
            _ => {
                return Err(jerr(
                    "fsync and fdatasync together are not supported; give one".into(),
                ))
            }
        }
        if let Some(n) = st.openfiles {
            if n < per_job_files {
                // fio opens files as its I/O reaches them and closes one
                // when the limit is hit; neither call is an I/O it times.
                // iorig opens all of them first: the same I/Os, no
                // open or close among them.
                self.notice_once(
                    "openfiles",
                    format!(
                        "{loc}: job '{}': openfiles={n}: iorig opens all {per_job_files} files before the I/O and keeps them open (fio opens and closes them as it goes, outside its timed I/O); the I/Os are the same",
                        st.name
                    ),
                );
            }
        }
        // fio's file_service_type, roundrobin by default. Random offsets
        // over the files laid end to end give each file its share, as
        // fio's random and roundrobin do; a sequential job takes its files
        // in that order, each read on from where it was left.
        let (order, at) = match &st.file_service {
            Some((v, at)) => (v.as_str(), Some(at)),
            None => ("roundrobin", None),
        };
        let order = iorig_spec::TargetOrder::parse(order).map_err(|e| jerr(e.to_string()))?;
        if per_job_files > 1 {
            if !random {
                if order != iorig_spec::TargetOrder::Sequential {
                    w.target_order = Some(order);
                }
            } else if let (iorig_spec::TargetOrder::Sequential, Some(at)) = (order, at) {
                return Err(usage(
                    at,
                    format!(
                        "file_service_type=sequential with random access over {per_job_files} files (one file's random I/O, then the next's) is not iorig's order (each I/O at a random place among all files); give file_service_type=random"
                    ),
                ));
            }
        }
        if let Some(ms) = st.logs.avg_msec {
            w.interval = as_text(&format!("{ms}ms"));
        }
        Ok(())
    }

    /// What the job's writes carry: fio's buffer_pattern fills every
    /// buffer unless compression or validation shapes the data.
    fn job_data(&mut self, st: &State, loc: &Loc) -> Result<Option<DataPattern>, ImportError> {
        let Some(p) = &st.buffer_pattern else {
            return Ok(st.data.clone());
        };
        if st.verify && st.do_verify {
            // fio writes its verify blocks over the pattern.
            self.notice_once(
                "buffer_pattern verify",
                format!("{loc}: job '{}': buffer_pattern with verify: the verify data is written, not the pattern, as in fio", st.name),
            );
            return Ok(st.data.clone());
        }
        match &st.data {
            Some(d @ (DataPattern::Compress { .. } | DataPattern::Dedup { .. })) => {
                // fio fills the compressible part of each buffer with the
                // pattern where iorig leaves zeros: both compress alike.
                self.notice_once(
                    "buffer_pattern compress",
                    format!("{loc}: job '{}': buffer_pattern with a compress or dedupe percentage: fio puts the pattern only in the part of a buffer that is to compress (none for dedupe alone), where iorig's '{d}' puts zeros; both compress the same", st.name),
                );
                Ok(st.data.clone())
            }
            // The pattern wins over zero_buffers, as in fio.
            _ => DataPattern::parse(&format!("pattern:{}", iorig_spec::format_pattern(p)))
                .map(Some)
                .map_err(|e| job_err(loc, &st.name, e.to_string())),
        }
    }

    /// Data validation, which belongs to the job's step.
    fn job_verify(
        &mut self,
        st: &State,
        loc: &Loc,
        w: &mut WorkloadFile,
        sizes: &Sizes,
    ) -> Result<Option<Verify>, ImportError> {
        let jerr = |why: String| job_err(loc, &st.name, why);
        let mode = sizes.mode;
        // Validation belongs to a step: carried beside the job's keys.
        if st.verify_is_pattern && st.verify_pattern.is_none() {
            return Err(jerr(
                "verify=pattern checks the pattern verify_pattern gives; add verify_pattern=0x..."
                    .into(),
            ));
        }
        if st.verify && st.verify_pattern.is_some() && !st.verify_is_pattern {
            self.notice_once(
                "verify_pattern",
                format!(
                    "{loc}: job '{}': verify with verify_pattern: iorig checks every byte against the pattern; fio's header (offset, checksum) is not written, so a block written to the wrong place is not seen",
                    st.name
                ),
            );
        }
        if st.verify_only {
            if !st.verify {
                return Err(jerr(
                    "verify_only checks data a verify job wrote; give its verify= (and verify_pattern=)".into(),
                ));
            }
            // fio replays the write job's offsets without writing and
            // checks each block; iorig reads the job's whole range once,
            // in order, and checks every block (docs/fio.md).
            w.trim = None;
            w.fsync_every = None;
            w.fdatasync_every = None;
            w.fsync_at_end = None;
            w.min_iops = None;
            w.read = Some(StrOrNum::Float(100.0));
            w.random = Some(StrOrNum::Float(0.0));
            w.threads = num(1);
            w.io_size = as_text("100%");
            w.time = as_text("1000h");
        }
        // fio checks every block a read job reads; iorig's plain verify
        // checks only blocks the plan wrote, so a read job checks all.
        let verify = (st.verify && st.do_verify).then(|| Verify {
            pattern: st.verify_pattern.clone(),
            only: st.verify_only || mode == Rw::Read,
            after: mode != Rw::Read && !st.verify_only,
            max_errors: if st.verify_fatal {
                Some(1)
            } else if st.continue_verify {
                Some(u64::from(u32::MAX))
            } else {
                None
            },
            loc: st.verify_loc.clone().unwrap_or_else(|| loc.clone()),
        });
        Ok(verify)
    }
}

/// A refusal that names the job.
fn job_err(loc: &Loc, name: &str, why: String) -> ImportError {
    usage(loc, format!("job '{name}': {why}"))
}

/// The job's targets as its later parts read them.
struct Files {
    files: Vec<String>,
    per_job_files: u64,
    size_bytes: Option<u64>,
    range_end_pct: Option<f64>,
    clones_side_by_side: u64,
}

/// The job's block sizes and directions as its later parts read them.
struct Sizes {
    read_bs: String,
    write_bs: String,
    mode: Rw,
    random: bool,
}

impl Sizes {
    /// The block size of the job's direction (rates in bytes/s, number_ios).
    fn bs(&self) -> &str {
        match self.mode {
            Rw::Read => &self.read_bs,
            _ => &self.write_bs,
        }
    }
}

/// Engine, depth and workers.
fn job_engine(
    t: &mut Translator<'_>,
    st: &State,
    loc: &Loc,
    w: &mut WorkloadFile,
) -> Result<(), ImportError> {
    w.engine =
        Some(EngineKind::parse(st.engine).map_err(|e| job_err(loc, &st.name, e.to_string()))?);
    let qd = if st.engine_sync {
        if st.iodepth > 1 {
            t.notice_once(
                    "iodepth-sync",
                    format!(
                        "{loc}: job '{}': iodepth={} has no effect on a synchronous engine (as in fio); each of its {} worker(s) keeps one I/O in flight",
                        st.name, st.iodepth, st.numjobs
                    ),
                );
        }
        1
    } else {
        st.iodepth
    };
    w.qd = num(qd);
    if let Some(b) = st.batch.filter(|b| *b > 1 && !st.engine_sync) {
        w.submit_batch = num(b.min(qd));
    }
    w.threads = num(st.numjobs);
    if st.direct && st.engine == "mmap" {
        // fio's mmap engine syncs and drops the pages of every I/O under
        // direct=1 (msync, then madvise DONTNEED), which iorig's does not.
        return Err(job_err(
            loc,
            &st.name,
            "direct=1 with ioengine=mmap (fio syncs and drops each I/O's pages from the cache) is not supported; drop direct=1, or use a psync or io_uring engine for direct I/O".into(),
        ));
    } else if st.direct {
        w.direct = Some(true);
    } else {
        w.buffered = Some(true);
    }
    match st.sync {
        Some("sync") => w.sync = Some(true),
        Some(_) => w.dsync = Some(true),
        None => {}
    }
    Ok(())
}

/// fio's steady-state detection as the step's steady_state.
fn job_steady(st: &State, sizes: &Sizes) -> Result<Option<Steady>, ImportError> {
    let (read_bs, write_bs) = (&sizes.read_bs, &sizes.write_bs);
    let steady = match &st.ss {
        None => None,
        Some((v, at)) => {
            let e = |why: String| usage(at, format!("ss={v}: {why}"));
            let (metric, limit) = v
                .split_once(':')
                .ok_or_else(|| e("give METRIC:LIMIT%, e.g. iops:10% or bw_slope:0.1%".into()))?;
            let pct = limit.trim().strip_suffix('%').ok_or_else(|| {
                    e("an absolute limit is not supported; give it as a percentage of the mean, e.g. iops:10%".into())
                })?;
            let kind = match metric.trim() {
                "iops" | "bw" => "deviation",
                "iops_slope" | "bw_slope" => "slope",
                other => {
                    return Err(e(format!(
                        "'{other}': give iops, iops_slope, bw or bw_slope"
                    )))
                }
            };
            // Bandwidth and IOPS move together when every I/O has one
            // size, and both limits are relative to the mean.
            if metric.starts_with("bw") && (read_bs != write_bs || read_bs.contains(':')) {
                return Err(e(
                        "a bandwidth rule with mixed block sizes is not supported (iorig judges IOPS); give iops or iops_slope".into(),
                    ));
            }
            if st.ss_dur_ns < 1_000_000_000 {
                return Err(e("give ss_dur (the window, 2s or more)".into()));
            }
            let window_rounds = st.ss_dur_ns.div_ceil(1_000_000_000).max(2);
            let ramp_rounds = st.ss_ramp_ns.div_ceil(1_000_000_000);
            let max_rounds = match st.runtime_ns {
                Some(rt) => rt.div_ceil(1_000_000_000),
                None => 100_000,
            };
            if window_rounds + ramp_rounds > max_rounds {
                return Err(e(format!(
                        "ss_ramp and ss_dur ({}s) exceed the runtime ({max_rounds}s), so steadiness is never judged; lengthen runtime",
                        window_rounds + ramp_rounds
                    )));
            }
            Some(Steady {
                rule: format!("{kind}:{}", pct.trim()).replace(' ', "") + "%",
                window_rounds,
                ramp_ns: st.ss_ramp_ns,
                max_rounds,
                loc: at.clone(),
            })
        }
    };
    Ok(steady)
}

/// Bisection rounds of a curve made from latency_target: from the default
/// rates' widest bracket (10 % to 50 % of the max) down to 1.25 % of it.
const FIO_CURVE_REFINE: u32 = 5;

/// fio's latency_target as a curve step.
fn job_curve(
    st: &State,
    w: &mut WorkloadFile,
    verify: bool,
    steady: bool,
) -> Result<Option<Curve>, ImportError> {
    let curve = match &st.latency_target {
        None => None,
        Some((target_ns, at)) => {
            let e = |why: &str| usage(at, format!("job '{}': latency_target with {why}", st.name));
            let conflicts: [(bool, &str); 7] = [
                    (
                        st.rate_iops.is_some() || st.rate_bytes.is_some(),
                        "rate/rate_iops: the curve sets the rate itself (its max, then shares of it); remove the rate",
                    ),
                    (
                        st.rate_min_iops.is_some() || st.rate_min_bytes.is_some(),
                        "rate_min/rate_iops_min is not supported; remove the floor",
                    ),
                    (steady, "ss is not supported; give ss its own job"),
                    (
                        verify,
                        "verify is not supported; validate in a job of its own",
                    ),
                    (
                        st.start_delay_ns > 0,
                        "startdelay is not supported; remove it",
                    ),
                    (
                        st.logs.bw.is_some() || st.logs.lat.is_some() || st.logs.iops.is_some(),
                        "write_*_log is not supported (each rate of the curve is its own step in the store); remove the log",
                    ),
                    (
                        st.number_ios.is_some() || st.io_size.is_some(),
                        "number_ios/io_size is not supported (each rate runs for latency_window); remove it",
                    ),
                ];
            if let Some((_, why)) = conflicts.iter().find(|(given, _)| *given) {
                return Err(e(why));
            }
            // Only where it is used: fio ignores it without a target.
            let (pct, pct_at) = &st.latency_pct;
            if !iorig_spec::plan::THRESHOLD_PERCENTILES.contains(pct) {
                return Err(usage(
                        pct_at,
                        format!(
                            "latency_percentile={pct}: iorig judges a curve at the percentiles every step keeps; give 50, 90, 99, 99.9, 99.99 or 100"
                        ),
                    ));
            }
            // Each rate runs for one window (fio judges a depth over
            // one window), or for the job's runtime without a window.
            let step_ns = match (st.latency_window_ns, st.runtime_ns) {
                    (w, _) if w > 0 => w,
                    (_, Some(rt)) => rt,
                    _ => {
                        return Err(e(
                            "no latency_window or runtime: give latency_window, the time each rate of the curve runs",
                        ))
                    }
                };
            w.io_size = None;
            w.time = as_text(&ns_text(step_ns));
            Some(Curve {
                threshold_ns: *target_ns,
                percentile: st.latency_pct.0,
                window_ns: st.latency_window_ns,
                loc: at.clone(),
            })
        }
    };
    Ok(curve)
}

impl Translator<'_> {
    /// A job of fio's filecreate, filestat or filedelete engine as iorig's
    /// file-system workload: the job's files are slots of a tree of depth 0
    /// in its directory, each clone a worker walking its own share of them.
    fn finish_tree(&mut self, st: State, loc: &Loc) -> Result<JobOut, ImportError> {
        let jerr = |why: String| job_err(loc, &st.name, why);
        let (op, format) = match st.engine {
            "filecreate" => ("create", FormatMode::Dirs),
            "filestat" => ("stat", FormatMode::Restart),
            _ => ("delete", FormatMode::Restart),
        };
        // What a tree's operations cannot do is refused, not dropped.
        let unsupported: [(bool, &str); 16] = [
            (
                st.rate_iops.is_some() || st.rate_bytes.is_some(),
                "rate/rate_iops",
            ),
            (st.think_ns > 0, "thinktime"),
            (st.start_delay_ns > 0, "startdelay"),
            (st.ss.is_some(), "ss"),
            (st.verify, "verify"),
            (st.fsync > 0 || st.fdatasync > 0, "fsync/fdatasync"),
            (
                st.end_fsync || st.fsync_on_close,
                "end_fsync/fsync_on_close",
            ),
            (st.cpus_split, "cpus_allowed_policy=split"),
            (st.offset_increment.is_some(), "offset_increment"),
            (st.loops > 1, "loops"),
            (
                st.number_ios.is_some() || st.io_size.is_some(),
                "number_ios/io_size",
            ),
            (
                st.rw_suffix.is_some() || st.align.is_some(),
                "rw's :N / blockalign",
            ),
            (
                st.logs.bw.is_some() || st.logs.lat.is_some() || st.logs.iops.is_some(),
                "write_*_log",
            ),
            (op == "stat" && st.unlink, "unlink"),
            (st.latency_target.is_some(), "latency_target"),
            (st.verify_only, "verify_only"),
        ];
        if let Some((_, what)) = unsupported.iter().find(|(given, _)| *given) {
            return Err(jerr(format!(
                "{what} with ioengine={} is not supported (iorig's file-system workload has no such setting); remove it",
                st.engine
            )));
        }
        let Some(dir) = &st.directory else {
            return Err(jerr(format!(
                "ioengine={} works on files in directory=; give an empty directory (iorig builds its tree there)",
                st.engine
            )));
        };
        if st.filenames.is_some() {
            return Err(jerr(format!(
                "ioengine={} with filename= is not supported; give directory= and nrfiles=",
                st.engine
            )));
        }
        // fio's filecreate writes nothing; filestat and filedelete find the
        // files laid out at their size.
        let file_size = if op == "create" {
            0
        } else {
            match (st.filesize, st.size) {
                (Some(f), _) => f,
                (None, Some(SizeOrPct::Bytes(b))) => b / st.nrfiles.max(1),
                _ => 0,
            }
        };
        let files = st.nrfiles.saturating_mul(st.numjobs);
        let mut w = WorkloadFile {
            anchor: Some(dir.to_string()),
            depth: num(0),
            files: num(files),
            file_size: as_text(&iorig_spec::format_size(file_size)),
            ops: Some(op.to_string()),
            fileselect: Some(FileSelect::Sequential),
            format: Some(format),
            threads: num(st.numjobs),
            ..WorkloadFile::default()
        };
        if st.direct {
            w.direct = Some(true);
        } else {
            w.buffered = Some(true);
        }
        let time = match (op, st.time_based, st.runtime_ns) {
            // time_based: stat the files over and over for the runtime.
            ("stat", true, Some(rt)) => ns_text(rt),
            // Otherwise fio stats each file once (fio 3.33: nrfiles=50
            // gives 50 stats), which is one pass in order.
            ("stat", _, rt) => {
                w.file_passes = num(1);
                rt.map_or_else(|| "1000h".into(), ns_text)
            }
            // Creates and deletes end when every file is done.
            (_, _, Some(rt)) => ns_text(rt),
            (_, _, None) => "1000h".into(),
        };
        w.time = as_text(&time);
        if st.ramp_ns > 0 {
            w.warmup = as_text(&ns_text(st.ramp_ns));
        }
        if let Some(seed) = st.seed {
            w.seed = Some(seed);
        }
        if let Some(c) = &st.cpus {
            w.cpus = Some(c.to_string());
        }
        if let Some(ms) = st.logs.avg_msec {
            w.interval = as_text(&format!("{ms}ms"));
        }
        // The files a filecreate job made in this run go with the tree it
        // made; a filedelete job removes its files anyway.
        if st.unlink && op == "create" {
            w.cleanup = Some(true);
        }
        self.notice_once(
            st.engine,
            format!(
                "{loc}: ioengine={}: iorig's file-system workload with ops = \"{op}\" over {files} file(s) in {dir} (it must be empty or an iorig tree)",
                st.engine
            ),
        );
        Ok(JobOut {
            name: st.name,
            stonewall: st.stonewall,
            new_group: st.new_group,
            workload: w,
            exitall: false,
            logs: st.logs,
            verify: None,
            steady: None,
            delay: None,
            curve: None,
        })
    }
}

/// fio's bsrange as iorig's weighted sizes, with fio's odds: a size drawn
/// evenly from [min, min + max), rounded down to a multiple of min (of 512
/// with bs_unaligned, the sector alignment iorig keeps), capped at max.
fn bsrange(min: u64, max: u64, unaligned: bool) -> Result<String, String> {
    if min == max {
        return Ok(iorig_spec::format_size(min));
    }
    let step = if unaligned { 512 } else { min };
    if !step.is_multiple_of(512) || !min.is_multiple_of(512) {
        return Err(format!(
            "bsrange {min}-{max}: iorig's sizes are multiples of 512 bytes; give such a range"
        ));
    }
    if (max - min) / step > 4096 {
        return Err(format!(
            "bsrange {min}-{max} spans over 4096 sizes; give bssplit with the sizes that matter"
        ));
    }
    // Each size gets the length of the draws that land on it.
    let mut sizes: Vec<(u64, u64)> = Vec::new();
    let end = min + max;
    let mut v = if unaligned { min / step * step } else { min };
    while v < end {
        let lo = v.max(min);
        let hi = (v + step).min(end);
        let size = v.clamp(min, max);
        match sizes.last_mut() {
            Some(last) if last.0 == size => last.1 += hi - lo,
            _ => sizes.push((size, hi - lo)),
        }
        v += step;
    }
    let g = sizes.iter().fold(0, |a, s| gcd(a, s.1));
    Ok(sizes
        .iter()
        .map(|(size, w)| format!("{}:{}", iorig_spec::format_size(*size), w / g.max(1)))
        .collect::<Vec<_>>()
        .join(","))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// How fio paces one clone: no pace, the one direction's IOPS, or a
/// mixed job's caps per direction.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pace {
    Free,
    Total(u64),
    Caps {
        read: Option<u64>,
        write: Option<u64>,
    },
}

/// One clone's pace from fio's pair of a bytes/s option and an IOPS option
/// (`names`: bytes, IOPS), each an `r,w` pair (one value is both);
/// bytes/s are divided by each direction's mean block size.
///
/// fio paces each direction of a mixed job on its own: when one is ahead
/// of its rate it issues the other instead (`rate_ddir` in fio's io_u.c),
/// so a mixed job does r reads and w writes a second whatever its
/// rwmixread (fio 3.33, null engine: `rate_iops=500` with `rwmixread=70`
/// gives 500 and 500), and with a rate for one direction only the other
/// runs unpaced. That is iorig's `read_rate` and `write_rate`.
fn job_iops(
    mode: Rw,
    iops: Option<(u64, u64)>,
    bytes: Option<(u64, u64)>,
    (read_bs, write_bs): (&str, &str),
    names: (&str, &str),
) -> Result<Pace, String> {
    let (by_bytes, by_iops) = names;
    let mean = |bs: &str| -> Result<f64, String> {
        iorig_spec::BsSpec::parse(bs)
            .map(|b| {
                let total: u64 = b.sizes.iter().map(|(_, w)| u64::from(*w)).sum();
                b.sizes
                    .iter()
                    .map(|(s, w)| *s as f64 * f64::from(*w))
                    .sum::<f64>()
                    / total.max(1) as f64
            })
            .map_err(|e| format!("{by_bytes}: {e}"))
    };
    // Each direction's IOPS limit (0: none).
    let (r, w) = match (iops, bytes) {
        (Some(_), Some(_)) => return Err(format!("give {by_bytes} or {by_iops}, not both")),
        (Some(pair), None) => pair,
        (None, Some((r, w))) => {
            let per = |b: u64, bs: &str| -> Result<u64, String> {
                Ok(if b == 0 {
                    0
                } else {
                    ((b as f64 / mean(bs)?).round() as u64).max(1)
                })
            };
            (per(r, read_bs)?, per(w, write_bs)?)
        }
        (None, None) => return Ok(Pace::Free),
    };
    let v = match mode {
        Rw::Read => r,
        Rw::Write | Rw::Trim => w,
        Rw::Mixed if r == 0 && w == 0 => 0,
        Rw::Mixed => {
            return Ok(Pace::Caps {
                read: (r > 0).then_some(r),
                write: (w > 0).then_some(w),
            })
        }
    };
    Ok(if v > 0 { Pace::Total(v) } else { Pace::Free })
}

/// What one clone of a job transfers before it ends.
enum IoAmount {
    Bytes(u64),
    /// A share of the job's working set (its files' own size).
    Pct(u64),
}

/// fio's `bssplit` (`4k/10:64k/50:32k/`) as iorig's weighted list
/// (`4k:10,64k:50,32k:40`): an entry without a share takes what is left,
/// split evenly.
fn bssplit(text: &str, kb_base: u64) -> Result<String, String> {
    let mut sizes: Vec<(u64, Option<u64>)> = Vec::new();
    for part in text.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let (b, p) = match part.split_once('/') {
            Some((b, p)) if p.trim().is_empty() => (b, None),
            Some((b, p)) => (b, Some(units::int(p)?)),
            None => (part, None),
        };
        let bytes = units::size(b, kb_base)?;
        if bytes == 0 {
            return Err(format!("'{part}': a block size of 0"));
        }
        sizes.push((bytes, p));
    }
    if sizes.is_empty() {
        return Err("no block sizes; write e.g. 4k/50:64k/50".into());
    }
    let given: u64 = sizes.iter().filter_map(|(_, p)| *p).sum();
    if given > 100 {
        return Err(format!("the shares add up to {given}%, more than 100"));
    }
    let open = sizes.iter().filter(|(_, p)| p.is_none()).count() as u64;
    let left = 100 - given;
    if open == 0 && left > 0 {
        return Err(format!(
            "the shares add up to {given}%, not 100; fix them or leave one share empty to take the rest"
        ));
    }
    let mut out = Vec::new();
    let mut k = 0;
    for (b, p) in sizes {
        let w = match p {
            Some(p) => p,
            None => {
                // The rest, split evenly; the first open entries take any
                // remainder so the shares add up to 100.
                k += 1;
                left / open + u64::from(k <= left % open)
            }
        };
        if w > 0 {
            out.push(format!("{}:{w}", iorig_spec::format_size(b)));
        }
    }
    if out.is_empty() {
        return Err("every share is 0".into());
    }
    Ok(out.join(","))
}

fn trim_float(v: f64) -> String {
    let t = format!("{v:.6}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    t.to_string()
}

/// `ns` (fio's `v`) if iorig runs that long: fio's nanoseconds hold times
/// past the longest a run takes, which the run's own rule
/// ([`iorig_spec::parse_duration`]) refuses here with the option's line.
fn run_time(v: &str, ns: u64) -> Result<u64, String> {
    iorig_spec::parse_duration(&ns_text(ns))
        .map(|_| ns)
        .map_err(|e| match e {
            iorig_spec::SpecError::BadDuration { why, .. } => format!("'{v}': {why}"),
            other => other.to_string(),
        })
}

/// Exact duration text iorig reads back.
fn ns_text(ns: u64) -> String {
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{}us", (ns / 1_000).max(1))
    }
}

fn quoted(v: &str) -> String {
    toml::Value::String(v.to_string()).to_string()
}

/// The plan: one step per group of concurrent jobs, each job a
/// `[[steps.jobs]]` table.
fn emit_plan(name: &str, path: &Path, steps: &[Vec<JobOut>], ignored: &[String]) -> String {
    let mut t = String::new();
    // The path as the plan shows it: a line break in a file's name would
    // end the comment, and labels take no control characters.
    let shown = iorig_spec::printable(&path.display().to_string());
    let _ = writeln!(
        t,
        "# Translated by iorig import from the fio job file {shown}."
    );
    let _ = writeln!(t, "name = {}", quoted(name));
    let _ = writeln!(
        t,
        "description = {}",
        quoted(&format!("fio job file {shown}"))
    );
    // Labels recorded with every step: where it came from and what was
    // left out.
    let _ = writeln!(t, "\n[defaults]");
    let mut labels = vec![("source".to_string(), format!("fio:{shown}"))];
    if !ignored.is_empty() {
        labels.push(("ignored".to_string(), ignored.join("; ")));
    }
    let _ = writeln!(
        t,
        "labels = {{ {} }}",
        labels
            .iter()
            .map(|(k, v)| format!("{} = {}", quoted(k), quoted(v)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (k, jobs) in steps.iter().enumerate() {
        let _ = writeln!(t, "\n[[steps]]");
        let step_name = if jobs.len() == 1 {
            jobs[0].name.clone()
        } else {
            format!("group {}", k + 1)
        };
        let _ = writeln!(t, "name = {}", quoted(&step_name));
        if let Some(c) = jobs.iter().find_map(|j| j.curve.as_ref()) {
            let _ = writeln!(t, "kind = \"curve\"");
            let _ = writeln!(
                t,
                "threshold_ms = {}",
                trim_float(c.threshold_ns as f64 / 1e6)
            );
            let _ = writeln!(t, "threshold_percentile = {}", trim_float(c.percentile));
            // fio searches for its answer; the curve narrows on it too,
            // halving the bracket between the rates that held and failed.
            let _ = writeln!(t, "refine = {FIO_CURVE_REFINE}");
        }
        if let Some(v) = jobs.iter().find_map(|j| j.verify.as_ref()) {
            let _ = writeln!(
                t,
                "{} = true",
                if v.after { "verify_after" } else { "verify" }
            );
            if let Some(m) = v.max_errors {
                let _ = writeln!(t, "max_errors = {m}");
            }
            if let Some(p) = &v.pattern {
                let _ = writeln!(t, "verify_pattern = {}", quoted(p));
            }
            if v.only {
                let _ = writeln!(t, "verify_only = true");
            }
        }
        if let Some(ss) = jobs.iter().find_map(|j| j.steady.as_ref()) {
            let ramp = if ss.ramp_ns > 0 {
                format!(", ramp = {}", quoted(&ns_text(ss.ramp_ns)))
            } else {
                String::new()
            };
            let _ = writeln!(
                t,
                "steady_state = {{ round = \"1s\", window = {}, max_rounds = {}, rule = {}{ramp} }}",
                ss.window_rounds,
                ss.max_rounds,
                quoted(&ss.rule)
            );
        }
        for j in jobs {
            let _ = writeln!(t, "\n[[steps.jobs]]");
            let _ = writeln!(t, "name = {}", quoted(&j.name));
            for (key, v) in j.workload.to_pairs() {
                let _ = writeln!(t, "{key} = {v}");
            }
            if j.exitall {
                let _ = writeln!(t, "exitall = true");
            }
        }
    }
    t
}

#[cfg(test)]
mod tests;
