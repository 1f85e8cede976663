//! fio's options, one table as fio's own `options.c` is: each option with
//! its aliases and what iorig does with it: maps it (a function that reads
//! its value into the job's state), accepts it with no effect (the note
//! shown once), or refuses it (the reason, and what to do instead).
//! `docs/fio.md` has a row for each, in the section of its treatment (a
//! test checks both ways).

use super::*;

/// One option as a handler sees it: its name as written (an alias
/// included), its value and where it was written.
pub(super) struct Arg<'a> {
    pub key: &'a str,
    pub val: Option<&'a str>,
    pub loc: &'a Loc,
}

impl Arg<'_> {
    /// The value as fio's boolean (a bare option is true).
    pub fn flag(&self) -> Result<bool, ImportError> {
        units::flag(self.val).map_err(|w| self.bad(w))
    }

    /// The value as a whole number.
    pub fn int(&self) -> Result<u64, ImportError> {
        units::int(self.need()?).map_err(|w| self.bad(w))
    }

    /// The value as a time in ns, `unit_ns` when it has no unit.
    pub fn time_ns(&self, unit_ns: u64) -> Result<u64, ImportError> {
        units::time_ns(self.need()?, unit_ns).map_err(|w| self.bad(w))
    }

    /// The value as a size under the file's `kb_base`.
    pub fn size(&self, kb_base: u64) -> Result<u64, ImportError> {
        units::size(self.need()?, kb_base).map_err(|w| self.bad(w))
    }

    /// The value as a size or a percentage.
    pub fn size_or_pct(&self, kb_base: u64) -> Result<SizeOrPct, ImportError> {
        units::size_or_pct(self.need()?, kb_base).map_err(|w| self.bad(w))
    }

    /// The value, which this option must have.
    pub fn need(&self) -> Result<&str, ImportError> {
        let key = self.key;
        self.val
            .filter(|v| !v.is_empty())
            .ok_or_else(|| usage_plain(self.loc, format!("{key} needs a value, e.g. {key}=...")))
    }

    /// A refusal of this option's value: the file, line and option with
    /// `why` (never the value, which may come from an included file).
    pub fn bad(&self, why: String) -> ImportError {
        usage_key(self.loc, self.key, why)
    }
}

/// Reads one option into the job's state.
pub(super) type Handler = fn(&mut Translator<'_>, &mut State, &Arg<'_>) -> Result<(), ImportError>;

/// What iorig does with an option.
#[derive(Clone, Copy)]
pub(super) enum Treatment {
    /// Read into the job by this function.
    Mapped(Handler),
    /// Accepted; the note says why it changes nothing (shown once).
    NoEffect(&'static str),
    /// Refused before anything runs, with what to do instead (left out and
    /// listed under --ignore-unsupported; a zero or off value asks for
    /// nothing and passes).
    Refused(&'static str),
}

/// One row: the option's name, then its aliases.
pub(super) struct FioOption {
    pub names: &'static [&'static str],
    pub treatment: Treatment,
}

const fn mapped(names: &'static [&'static str], read: Handler) -> FioOption {
    FioOption {
        names,
        treatment: Treatment::Mapped(read),
    }
}

const fn no_effect(names: &'static [&'static str], why: &'static str) -> FioOption {
    FioOption {
        names,
        treatment: Treatment::NoEffect(why),
    }
}

const fn refused(names: &'static [&'static str], instead: &'static str) -> FioOption {
    FioOption {
        names,
        treatment: Treatment::Refused(instead),
    }
}

/// Every fio option iorig reads.
pub(super) const OPTIONS: &[FioOption] = &[
    mapped(&["kb_base"], opt_kb_base),
    mapped(&["new_group"], opt_new_group),
    mapped(&["name"], opt_name),
    mapped(&["rw", "readwrite"], opt_rw),
    mapped(&["rwmixread"], opt_rwmixread),
    mapped(&["rwmixwrite"], opt_rwmixread),
    mapped(&["bs", "blocksize"], opt_bs),
    mapped(&["bssplit"], opt_bssplit),
    mapped(&["bsrange", "blocksize_range"], opt_bsrange),
    mapped(
        &["blocksize_unaligned", "bs_unaligned"],
        opt_blocksize_unaligned,
    ),
    mapped(&["blockalign", "ba"], opt_blockalign),
    mapped(&["size"], opt_size),
    mapped(&["io_size", "io_limit"], opt_io_size),
    mapped(&["offset"], opt_offset),
    mapped(&["filename"], opt_filename),
    mapped(&["directory"], opt_directory),
    mapped(&["nrfiles", "nr_files"], opt_nrfiles),
    mapped(&["numjobs"], opt_numjobs),
    mapped(&["iodepth"], opt_iodepth),
    mapped(
        &["iodepth_batch", "iodepth_batch_submit"],
        opt_iodepth_batch,
    ),
    mapped(&["ioengine"], opt_ioengine),
    mapped(&["direct"], opt_direct),
    mapped(&["buffered"], opt_buffered),
    mapped(&["sync"], opt_sync),
    mapped(&["runtime", "timeout"], opt_runtime),
    mapped(&["time_based"], opt_time_based),
    mapped(&["ramp_time"], opt_ramp_time),
    mapped(&["startdelay"], opt_startdelay),
    mapped(&["ss", "steadystate"], opt_ss),
    mapped(&["ss_dur", "steadystate_duration"], opt_ss_dur),
    mapped(&["ss_ramp", "steadystate_ramp_time"], opt_ss_ramp),
    mapped(&["thinktime"], opt_thinktime),
    mapped(&["thinktime_spin"], opt_thinktime_spin),
    mapped(&["thinktime_blocks"], opt_thinktime_blocks),
    mapped(&["thinktime_blocks_type"], opt_thinktime_blocks_type),
    mapped(&["rate_ignore_thinktime"], opt_rate_ignore_thinktime),
    mapped(&["rate"], opt_rate),
    mapped(&["rate_iops"], opt_rate_iops),
    mapped(&["rate_process"], opt_rate_process),
    mapped(&["percentage_random"], opt_percentage_random),
    mapped(&["random_distribution"], opt_random_distribution),
    mapped(&["randseed"], opt_randseed),
    mapped(&["loops"], opt_loops),
    mapped(&["stonewall", "wait_for_previous"], opt_stonewall),
    mapped(&["zero_buffers"], opt_zero_buffers),
    mapped(
        &["buffer_compress_percentage"],
        opt_buffer_compress_percentage,
    ),
    mapped(&["dedupe_percentage"], opt_buffer_compress_percentage),
    mapped(&["buffer_compress_chunk"], opt_buffer_compress_chunk),
    mapped(&["verify_pattern"], opt_verify_pattern),
    mapped(&["buffer_pattern"], opt_buffer_pattern),
    mapped(&["verify_only"], opt_verify_only),
    mapped(&["verify"], opt_verify),
    mapped(&["do_verify"], opt_do_verify),
    mapped(&["exitall"], opt_exitall),
    mapped(&["latency_target"], opt_latency_target),
    mapped(&["latency_window"], opt_latency_window),
    mapped(&["latency_percentile"], opt_latency_percentile),
    mapped(&["latency_run"], opt_latency_run),
    mapped(&["offset_increment"], opt_offset_increment),
    mapped(&["unlink"], opt_unlink),
    mapped(&["invalidate"], opt_invalidate),
    mapped(&["fsync"], opt_fsync),
    mapped(&["rate_min", "ratemin"], opt_rate_min),
    mapped(&["rate_iops_min"], opt_rate_min),
    mapped(&["rate_cycle", "ratecycle"], opt_rate_cycle),
    mapped(&["zonemode"], opt_zonemode),
    mapped(&["zonerange"], opt_zonerange),
    mapped(&["zonesize"], opt_zonesize),
    mapped(&["zoneskip"], opt_zoneskip),
    mapped(&["filesize"], opt_filesize),
    mapped(&["stat_type"], opt_stat_type),
    mapped(&["fdatasync"], opt_fdatasync),
    mapped(&["log_offset"], opt_log_offset),
    mapped(&["openfiles"], opt_openfiles),
    mapped(&["file_service_type"], opt_file_service_type),
    mapped(&["io_submit_mode"], opt_io_submit_mode),
    mapped(&["continue_on_error"], opt_continue_on_error),
    mapped(&["ignore_error"], opt_ignore_error),
    mapped(&["exit_what"], opt_exit_what),
    mapped(&["fill_device"], opt_fill_device),
    mapped(&["cpus_allowed"], opt_cpus_allowed),
    mapped(&["cpumask"], opt_cpumask),
    mapped(&["cpus_allowed_policy"], opt_cpus_allowed_policy),
    mapped(&["number_ios"], opt_number_ios),
    mapped(&["verify_fatal"], opt_verify_fatal),
    mapped(&["verify_backlog"], opt_verify_backlog),
    mapped(&["verify_interval"], opt_verify_backlog),
    mapped(&["write_bw_log"], opt_write_bw_log),
    mapped(&["write_lat_log"], opt_write_bw_log),
    mapped(&["write_iops_log"], opt_write_bw_log),
    mapped(&["log_avg_msec"], opt_log_avg_msec),
    mapped(&["end_fsync", "fsync_on_close"], opt_end_fsync),
    no_effect(&["thread"], "iorig's workers are always threads"),
    no_effect(
        &["group_reporting"],
        "a job's clones (numjobs) are reported as one job",
    ),
    no_effect(&["description"], "a comment"),
    no_effect(
        &["gtod_reduce"],
        "iorig times every I/O with the monotonic clock",
    ),
    no_effect(
        &["clocksource"],
        "iorig times every I/O with the monotonic clock",
    ),
    no_effect(
        &["random_generator"],
        "iorig's offsets come from its own seeded generator",
    ),
    no_effect(
        &["randrepeat"],
        "iorig's offsets repeat by seed (randseed) on every run",
    ),
    mapped(&["norandommap", "softrandommap"], opt_norandommap),
    no_effect(&["unit_base"], "iorig reports bytes and decimal MB/s"),
    no_effect(
        &["lat_percentiles"],
        "iorig reports its own percentiles (fio-json: fio's list)",
    ),
    no_effect(
        &["clat_percentiles"],
        "iorig reports its own percentiles (fio-json: fio's list)",
    ),
    no_effect(
        &["slat_percentiles"],
        "iorig reports its own percentiles (fio-json: fio's list)",
    ),
    no_effect(
        &["percentile_list"],
        "iorig reports its own percentiles (fio-json: fio's list)",
    ),
    no_effect(
        &["per_job_logs"],
        "iorig writes one log per job, its clones together (.1), as fio does with per_job_logs=0",
    ),
    no_effect(&["disable_lat"], "iorig measures every latency"),
    no_effect(&["disable_clat"], "iorig measures every latency"),
    no_effect(&["disable_slat"], "iorig measures every latency"),
    no_effect(&["disable_bw_measurement"], "iorig measures every interval"),
    no_effect(
        &["fallocate"],
        "iorig creates scratch files filled with data",
    ),
    no_effect(
        &["allow_file_create"],
        "iorig creates missing scratch files",
    ),
    no_effect(
        &["create_on_open"],
        "iorig creates scratch files before the I/O starts",
    ),
    no_effect(
        &["overwrite"],
        "iorig creates scratch files filled with data",
    ),
    no_effect(
        &["refill_buffers"],
        "iorig writes fresh data for every write",
    ),
    no_effect(
        &["scramble_buffers"],
        "iorig writes fresh data for every write",
    ),
    no_effect(
        &["iodepth_low"],
        "iorig refills the queue as completions come",
    ),
    no_effect(
        &["iodepth_batch_complete"],
        "iorig reaps what has completed",
    ),
    no_effect(
        &["iodepth_batch_complete_min"],
        "iorig reaps what has completed",
    ),
    no_effect(
        &["iodepth_batch_complete_max"],
        "iorig reaps what has completed",
    ),
    no_effect(&["fadvise_hint"], "iorig gives the kernel no access hints"),
    no_effect(
        &["exitall_on_error"],
        "a failed I/O stops its worker; the others go on",
    ),
    no_effect(
        &["unified_rw_reporting"],
        "iorig reports reads, writes and their total",
    ),
    no_effect(
        &["ioscheduler"],
        "iorig leaves the device's scheduler as it is (its facts record it)",
    ),
    refused(
        &["thinktime_iotime"],
        "iorig pauses after a count of I/Os (thinktime_blocks), not after a time of I/O",
    ),
    refused(&["write_hist_log"], "use iorig export --format hlog"),
    refused(&["numa_cpu_nodes"], "pin iorig with numactl instead"),
    refused(&["numa_mem_policy"], "pin iorig with numactl instead"),
    refused(&["nice"], "run iorig under nice instead"),
    refused(&["prio"], "run iorig under ionice instead"),
    refused(&["prioclass"], "run iorig under ionice instead"),
    refused(
        &["wait_for"],
        "iorig orders steps by stonewall; put the job after a stonewall",
    ),
    refused(&["fill_fs"], "give size= (the bytes to write) instead"),
    refused(&["unlink_each_loop"], "iorig keeps its scratch files"),
    refused(&["error_dump"], "errors are stored with the run"),
    refused(
        &["dedupe_mode"],
        "dedupe_percentage is mapped; the mode is not",
    ),


    refused(&["write_barrier"], "not supported"),
    refused(&["sync_file_range"], "not supported"),
    refused(&["lockmem"], "not supported"),
    refused(&["mem"], "iorig allocates its own aligned buffers"),
    refused(&["iomem"], "iorig allocates its own aligned buffers"),
    refused(
        &["hugepage-size"],
        "iorig allocates its own aligned buffers",
    ),
    refused(&["exec_prerun"], "run the command before iorig"),
    refused(&["exec_postrun"], "run the command after iorig"),
    refused(
        &["trim_percentage"],
        "give rw=randtrim or iorig's trim share",
    ),
    refused(&["trim_backlog"], "not supported"),
    refused(
        &["replay_redirect"],
        "block-trace replay is iorig trace replay (issue 19)",
    ),
    refused(
        &["read_iolog"],
        "block-trace replay is iorig trace replay (issue 19)",
    ),
    refused(
        &["write_iolog"],
        "use iorig run --lat-log for a per-I/O record",
    ),
    refused(&["hipri"], "polled I/O is not supported"),
    no_effect(&["fixedbufs"], "iorig registers its own buffers"),
    no_effect(&["registerfiles"], "iorig registers its own files"),
    refused(&["sqthread_poll"], "not supported"),
    refused(&["nowait"], "not supported"),
    refused(&["uncached"], "not supported"),
    refused(&["serialize_overlap"], "not supported"),
    refused(&["create_serialize"], "not supported"),
    refused(&["create_fsync"], "not supported"),
    refused(&["pre_read"], "not supported"),
    refused(&["loops_increment"], "not supported"),
    refused(&["flow"], "not supported"),
    refused(&["flow_id"], "not supported"),
    refused(&["cgroup"], "run iorig in the cgroup instead"),
    refused(&["uid"], "run iorig as that user instead"),
    refused(&["gid"], "run iorig as that group instead"),
    refused(&["atomic"], "not supported"),
    // The rest of fio 3.33's options (tests/fixtures/fio-3.33-options.txt),
    // so that "unknown" means a typo only.
    mapped(&["rw_sequencer"], opt_rw_sequencer),
    mapped(&["filename_format"], opt_filename_format),
    no_effect(
        &["unique_filename"],
        "it names files in fio's client/server mode; iorig names its own",
    ),
    no_effect(
        &["allrandrepeat"],
        "iorig's random streams repeat by seed on every run",
    ),
    no_effect(&["verifysort", "verifysort_nr"], "deprecated in fio"),
    no_effect(&["verify_offset"], "iorig writes its own block header"),
    no_effect(&["verify_dump"], "iorig stores the errors with the run"),
    no_effect(
        &["verify_async"],
        "each worker checks its blocks as they are read",
    ),
    no_effect(
        &["verify_backlog_batch"],
        "iorig checks each block as it is read back",
    ),
    no_effect(
        &["experimental_verify"],
        "iorig checks blocks against its own key map",
    ),
    no_effect(
        &["verify_state_save"],
        "iorig's validation state is its journal (iorig run --journal)",
    ),
    refused(
        &["verify_state_load"],
        "check a crashed run's data with iorig verify --journal",
    ),
    refused(&["trim_verify_zero"], "give rw=randtrim or iorig's trim share"),
    refused(&["trim_backlog_batch"], "give rw=randtrim or iorig's trim share"),
    refused(
        &["read_iolog_chunked"],
        "block-trace replay is iorig trace replay",
    ),
    refused(&["replay_no_stall"], "block-trace replay is iorig trace replay"),
    refused(&["replay_scale"], "block-trace replay is iorig trace replay"),
    refused(&["replay_align"], "block-trace replay is iorig trace replay"),
    refused(
        &["replay_time_scale"],
        "block-trace replay is iorig trace replay",
    ),
    refused(&["replay_skip"], "block-trace replay is iorig trace replay"),
    refused(
        &["merge_blktrace_file"],
        "block-trace replay is iorig trace replay",
    ),
    refused(
        &["merge_blktrace_scalars"],
        "block-trace replay is iorig trace replay",
    ),
    refused(
        &["merge_blktrace_iters"],
        "block-trace replay is iorig trace replay",
    ),
    refused(
        &["zonecapacity"],
        "it is for zonemode=zbd; iorig does not drive a zoned device's write pointers",
    ),
    refused(
        &["read_beyond_wp"],
        "it is for zonemode=zbd; iorig does not drive a zoned device's write pointers",
    ),
    refused(
        &["max_open_zones"],
        "it is for zonemode=zbd; iorig does not drive a zoned device's write pointers",
    ),
    refused(
        &["job_max_open_zones"],
        "it is for zonemode=zbd; iorig does not drive a zoned device's write pointers",
    ),
    refused(
        &["ignore_zone_limits"],
        "it is for zonemode=zbd; iorig does not drive a zoned device's write pointers",
    ),
    refused(
        &["zone_reset_threshold"],
        "it is for zonemode=zbd; iorig does not drive a zoned device's write pointers",
    ),
    refused(
        &["zone_reset_frequency"],
        "it is for zonemode=zbd; iorig does not drive a zoned device's write pointers",
    ),
    refused(
        &["max_latency"],
        "a job does not end on one slow I/O; find the load that keeps a latency with latency_target (iorig's curve)",
    ),
    refused(&["write_hint"], "iorig sets no write lifetime hints"),
    refused(
        &["create_only"],
        "iorig creates its scratch files before each step; run a short step to make them",
    ),
    refused(
        &["allow_mounted_write"],
        "iorig never writes to a mounted device",
    ),
    refused(
        &["opendir"],
        "name the files with filename=, or use an iorig file-system workload",
    ),
    refused(&["lockfile"], "iorig does not lock files between jobs"),
    refused(
        &["file_append"],
        "iorig's I/O stays within the file's size",
    ),
    refused(&["offset_align"], "not supported"),
    no_effect(
        &["bwavgtime"],
        "iorig reports every interval (its interval)",
    ),
    no_effect(
        &["iopsavgtime"],
        "iorig reports every interval (its interval)",
    ),
    no_effect(&["log_entries"], "iorig's logs grow as needed"),
    refused(&["log_hist_msec"], "use iorig export --format hlog"),
    refused(&["log_hist_coarseness"], "use iorig export --format hlog"),
    refused(
        &["log_max_value"],
        "iorig's logs hold each window's mean",
    ),
    no_effect(
        &["log_prio"],
        "iorig sets no I/O priorities: the log's priority column is 0 either way",
    ),
    no_effect(&["log_compression"], "iorig writes its logs uncompressed"),
    no_effect(
        &["log_compression_cpus"],
        "iorig writes its logs uncompressed",
    ),
    no_effect(
        &["log_store_compressed"],
        "iorig writes its logs uncompressed",
    ),
    refused(
        &["log_unix_epoch"],
        "iorig's logs count from the job's start, as fio's do by default",
    ),
    refused(
        &["log_alternate_epoch"],
        "iorig's logs count from the job's start, as fio's do by default",
    ),
    no_effect(
        &["log_alternate_epoch_clock_id"],
        "it applies only with log_alternate_epoch",
    ),
    no_effect(
        &["block_error_percentiles"],
        "trim errors are counted, not charted",
    ),
    no_effect(&["stats"], "iorig always keeps every figure"),
    refused(
        &["dedupe_working_set_percentage"],
        "dedupe_percentage is mapped; its working-set mode is not",
    ),
    refused(
        &["dedupe_global"],
        "dedupe_percentage is mapped per job; a set shared by jobs is not",
    ),
    no_effect(
        &["significant_figures"],
        "fio-json's numbers are written in full",
    ),
    no_effect(&["disk_util"], "iorig samples the device's use itself"),
    no_effect(
        &["gtod_cpu"],
        "iorig times every I/O with the monotonic clock",
    ),
    refused(
        &["profile"],
        "fio's built-in profiles are not supported; write the jobs out",
    ),
    refused(&["cgroup_nodelete"], "run iorig in the cgroup instead"),
    refused(&["cgroup_weight"], "run iorig in the cgroup instead"),
    refused(&["flow_sleep"], "not supported"),
    // Options of the general-purpose engines (fio --enghelp=ENGINE).
    refused(&["cmdprio"], "run iorig under ionice instead"),
    refused(&["cmdprio_class"], "run iorig under ionice instead"),
    refused(&["cmdprio_percentage"], "run iorig under ionice instead"),
    refused(&["cmdprio_bssplit"], "run iorig under ionice instead"),
    refused(&["force_async"], "not supported"),
    refused(&["hipri_percentage"], "polled I/O is not supported"),
    no_effect(
        &["nonvectored"],
        "iorig's io_uring engine issues its own read and write commands",
    ),
    refused(&["sqthread_poll_cpu"], "not supported"),
    refused(
        &["cmd_type"],
        "uring passthrough commands are not supported",
    ),
    no_effect(
        &["userspace_reap"],
        "iorig's io_uring engine reaps its own completions",
    ),
    refused(&["thp"], "the mmap engine is not supported"),
];

/// The row of `name` (an option or one of its aliases).
pub(super) fn lookup(name: &str) -> Option<&'static FioOption> {
    OPTIONS.iter().find(|o| o.names.contains(&name))
}

/// Every name the table knows, aliases included.
pub(super) fn names() -> impl Iterator<Item = &'static str> {
    OPTIONS.iter().flat_map(|o| o.names.iter().copied())
}

/// rw_sequencer: how an `rw=MODE:N` modifier makes the next offset;
/// `sequential` (fio's default) is what iorig does.
fn opt_rw_sequencer(
    _t: &mut Translator<'_>,
    _st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    match arg.need()? {
        "sequential" => Ok(()),
        other => Err(arg.bad(format!(
            "'{other}': iorig's offset modifiers are sequential; give rw_sequencer=sequential or leave it out"
        ))),
    }
}

/// filename_format: how the job's own files are named (no `filename=`),
/// with fio's `$jobname`, `$jobnum` and `$filenum`.
fn opt_filename_format(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let format = arg.need()?;
    if format.contains("$clientuid") {
        return Err(
            arg.bad("$clientuid names files in fio's client/server mode; leave it out".into())
        );
    }
    st.filename_format = Some(format.to_string());
    Ok(())
}

/// kb_base: the base of this file's sizes.
fn opt_kb_base(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.kb_base = match arg.need()? {
        "1000" => 1000,
        "1024" => 1024,
        other => return Err(arg.bad(format!("'{other}': give 1024 or 1000"))),
    };
    Ok(())
}

/// new_group: a new fio group id (fio-json's groupid); iorig reports each
/// job on its own and in its step's total either way.
fn opt_new_group(t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.new_group = true;
    let (key, loc) = (arg.key, arg.loc);
    t.notice_once(
        key,
        format!("{loc}: {key}: accepted with no effect (each job is reported on its own and in the step's total)"),
    );
    Ok(())
}

/// Shown and stored as the job's name: without control
/// characters, as a section's name.
fn opt_name(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let name = iorig_spec::printable(need()?);
    if name.trim().is_empty() {
        return Err(bad(
            "give a name of printable characters, e.g. name=job1".into()
        ));
    }
    st.name = name.trim().to_string();
    Ok(())
}

fn opt_rw(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let loc = arg.loc;
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    let (mode, skip) = match v.split_once(':') {
        Some((m, s)) => (m, Some(s)),
        None => (v, None),
    };
    // Read once the mode is known: a size for sequential
    // modes, a count for random ones.
    st.rw_suffix = skip.map(|s| (s.to_string(), loc.clone()));
    st.rw = match mode {
            "read" => (Rw::Read, false),
            "write" => (Rw::Write, false),
            "trim" => (Rw::Trim, false),
            "randread" => (Rw::Read, true),
            "randwrite" => (Rw::Write, true),
            "randtrim" => (Rw::Trim, true),
            "rw" | "readwrite" => (Rw::Mixed, false),
            "randrw" => (Rw::Mixed, true),
            "trimwrite" | "randtrimwrite" => {
                return Err(bad(format!(
                    "'{mode}' (a trim before each write) is not supported; give iorig's trim share with rw=randrw"
                )))
            }
            other => {
                return Err(bad(format!(
                    "'{other}' is not an access pattern; give read, write, randread, randwrite, rw, randrw, trim or randtrim"
                )))
            }
        };
    Ok(())
}

fn opt_rwmixread(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let key = arg.key;
    let bad = |why: String| arg.bad(why);
    let p = arg.int()?;
    if p > 100 {
        return Err(bad(format!("{p} is above 100")));
    }
    st.read_mix = Some(if key == "rwmixread" {
        p as f64
    } else {
        100.0 - p as f64
    });
    Ok(())
}

fn opt_bs(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let (r, w) = pair(need()?);
    let r = units::size(&r, st.kb_base).map_err(&bad)?;
    let w = units::size(&w, st.kb_base).map_err(&bad)?;
    if r == 0 || w == 0 {
        return Err(bad("a block size of 0".into()));
    }
    st.bs = Some((r, w));
    Ok(())
}

fn opt_bssplit(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let (r, w) = pair(need()?);
    st.bssplit = Some((
        bssplit(&r, st.kb_base).map_err(&bad)?,
        bssplit(&w, st.kb_base).map_err(&bad)?,
    ));
    Ok(())
}

fn opt_bsrange(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let (r, w) = pair(need()?);
    let range = |t: &str| -> Result<(u64, u64), ImportError> {
        let (a, b) = t
            .split_once('-')
            .ok_or_else(|| bad(format!("'{t}': give MIN-MAX, e.g. 4k-64k")))?;
        let a = units::size(a, st.kb_base).map_err(&bad)?;
        let b = units::size(b, st.kb_base).map_err(&bad)?;
        if a == 0 || a > b {
            return Err(bad(format!("'{t}': give MIN-MAX with 0 < MIN <= MAX")));
        }
        Ok((a, b))
    };
    st.bsrange = Some((range(&r)?, range(&w)?));
    Ok(())
}

fn opt_blocksize_unaligned(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.bs_unaligned = arg.flag()?;
    Ok(())
}

fn opt_blockalign(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let (r, w) = pair(need()?);
    if r != w {
        return Err(bad(
            "different alignments for reads and writes are not supported; give one".into(),
        ));
    }
    let a = units::size(&r, st.kb_base).map_err(&bad)?;
    st.align = (a > 0).then_some(a);
    Ok(())
}

fn opt_size(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.size = Some(arg.size_or_pct(st.kb_base)?);
    Ok(())
}

fn opt_io_size(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.io_size = Some(arg.size(st.kb_base)?);
    Ok(())
}

fn opt_offset(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.offset = Some(arg.size_or_pct(st.kb_base)?);
    Ok(())
}

fn opt_filename(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let names: Vec<String> = need()?
        .split(':')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        return Err(bad("no file names".into()));
    }
    st.filenames = Some(names);
    Ok(())
}

fn opt_directory(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let d = need()?;
    if d.contains(':') {
        return Err(bad(
            "several directories are not supported; give one directory".into(),
        ));
    }
    st.directory = Some(d.to_string());
    Ok(())
}

fn opt_nrfiles(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.nrfiles = arg.int()?.max(1);
    Ok(())
}

fn opt_numjobs(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let bad = |why: String| arg.bad(why);
    let n = arg.int()?;
    if n == 0 || n > 4096 {
        return Err(bad(format!("{n}: give 1 to 4096")));
    }
    st.numjobs = n;
    Ok(())
}

fn opt_iodepth(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let bad = |why: String| arg.bad(why);
    let n = arg.int()?;
    if n == 0 || n > 16384 {
        return Err(bad(format!("{n}: give 1 to 16384")));
    }
    st.iodepth = n;
    Ok(())
}

fn opt_iodepth_batch(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.batch = Some(arg.int()?);
    Ok(())
}

fn opt_ioengine(t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let loc = arg.loc;
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    let (engine, sync) = match v {
            "libaio" | "io_uring" | "posixaio" => ("io_uring", false),
            "psync" | "pvsync" | "pvsync2" | "sync" | "vsync" => ("psync", true),
            "null" => ("null", false),
            "mmap" => ("mmap", true),
            // The file-system workload's operations.
            "filecreate" => ("filecreate", true),
            "filestat" => ("filestat", true),
            "filedelete" => ("filedelete", true),
            other => {
                return Err(bad(format!(
                    "engine '{other}' is not supported; iorig runs libaio and io_uring jobs on io_uring, psync/pvsync/pvsync2/sync on psync, mmap on mmap, null on null"
                )))
            }
        };
    if v != engine {
        t.notice_once(
            &format!("ioengine={v}"),
            format!("{loc}: ioengine={v} runs on iorig's {engine} engine"),
        );
    }
    st.engine = engine;
    st.engine_sync = sync;
    Ok(())
}

fn opt_direct(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.direct = arg.flag()?;
    Ok(())
}

fn opt_buffered(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.direct = !arg.flag()?;
    Ok(())
}

fn opt_sync(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let val = arg.val;
    let bad = |why: String| arg.bad(why);
    st.sync = match val.map(str::trim) {
        None | Some("1") | Some("sync") => Some("sync"),
        Some("0") | Some("none") => None,
        Some("dsync") => Some("dsync"),
        Some(other) => return Err(bad(format!("'{other}': give 0, 1 (sync) or dsync"))),
    };
    Ok(())
}

fn opt_runtime(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    let ns = units::time_ns(v, 1_000_000_000)
        .and_then(|ns| run_time(v, ns))
        .map_err(&bad)?;
    st.runtime_ns = (ns > 0).then_some(ns);
    Ok(())
}

fn opt_time_based(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.time_based = arg.flag()?;
    Ok(())
}

fn opt_ramp_time(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    st.ramp_ns = units::time_ns(v, 1_000_000_000)
        .and_then(|ns| run_time(v, ns))
        .map_err(&bad)?;
    Ok(())
}

fn opt_startdelay(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    if v.contains('-') {
        return Err(bad(format!(
            "'{v}': a random delay from a range is not supported; give one time"
        )));
    }
    st.start_delay_ns = units::time_ns(v, 1_000_000_000)
        .and_then(|ns| run_time(v, ns))
        .map_err(&bad)?;
    Ok(())
}

fn opt_ss(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let loc = arg.loc;
    let need = || arg.need();
    let v = need()?;
    st.ss = (!matches!(v.trim(), "0" | "none")).then(|| (v.to_string(), loc.clone()));
    Ok(())
}

fn opt_ss_dur(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.ss_dur_ns = arg.time_ns(1_000_000_000)?;
    Ok(())
}

fn opt_ss_ramp(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.ss_ramp_ns = arg.time_ns(1_000_000_000)?;
    Ok(())
}

fn opt_thinktime(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.think_ns = arg.time_ns(1_000)?;
    Ok(())
}

fn opt_thinktime_spin(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.think_spin_ns = arg.time_ns(1_000)?;
    Ok(())
}

fn opt_thinktime_blocks(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.think_blocks = arg.int()?.max(1);
    Ok(())
}

fn opt_thinktime_blocks_type(
    t: &mut Translator<'_>,
    _st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let (key, loc) = (arg.key, arg.loc);
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    match need()? {
        "complete" | "issue" => t.notice_once(
            key,
            format!("{loc}: {key}: iorig counts I/Os as they are issued and pauses once they have completed, which is what both types amount to"),
        ),
        other => return Err(bad(format!("'{other}': give complete or issue"))),
    };
    Ok(())
}

fn opt_rate_ignore_thinktime(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.think_moves_rate = arg.flag()?;
    Ok(())
}

fn opt_rate(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let (r, w) = pair(need()?);
    let p = |s: &str| -> Result<u64, ImportError> {
        if s.is_empty() {
            Ok(0)
        } else {
            units::size(s, st.kb_base).map_err(&bad)
        }
    };
    st.rate_bytes = Some((p(&r)?, p(&w)?));
    Ok(())
}

fn opt_rate_iops(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let (r, w) = pair(need()?);
    let p = |s: &str| -> Result<u64, ImportError> {
        if s.is_empty() {
            Ok(0)
        } else {
            units::int(s).map_err(&bad)
        }
    };
    st.rate_iops = Some((p(&r)?, p(&w)?));
    Ok(())
}

fn opt_rate_process(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    st.poisson = match need()? {
        "linear" => false,
        "poisson" => true,
        other => return Err(bad(format!("'{other}': give linear or poisson"))),
    };
    Ok(())
}

fn opt_percentage_random(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let (r, w) = pair(need()?);
    if r != w {
        return Err(bad(
            "different random shares for reads and writes are not supported; give one value".into(),
        ));
    }
    let p = units::int(&r).map_err(&bad)?;
    if p > 100 {
        return Err(bad(format!("{p} is above 100")));
    }
    st.pct_random = Some(p as f64);
    Ok(())
}

fn opt_random_distribution(
    t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    if v.contains(',') {
        return Err(bad(
            "a distribution per direction (',') is not supported; give one for both".into(),
        ));
    }
    let parse = |text: &str| AccessDist::parse(text).map_err(|e| bad(e.to_string()));
    st.dist = match v.split_once(':') {
        None if v == "random" => None,
        // fio's zipf, pareto, normal and zoned are iorig's, with the same
        // parameters (zoned: IO%/SPACE% zones from the range's start).
        Some((kind @ ("zipf" | "pareto" | "normal"), args)) => {
            let (value, center) = match args.split_once(':') {
                Some((value, center)) => (value, Some(center)),
                None => (args, None),
            };
            if let Some(c) = center {
                let ok = c.trim().parse::<f64>().is_ok_and(|c| (0.0..=1.0).contains(&c));
                if !ok {
                    return Err(bad(format!("center '{c}': give 0 to 1")));
                }
                // fio hashes the ranks over the range and then adds the
                // center as an offset: it moves where the scattered hot
                // blocks lie, not how hot they are.
                t.notice_once(
                    "random_distribution center",
                    format!(
                        "{}: the center of '{v}' is left out: fio scatters the ranks over the range and then shifts them by the center, which moves the hot blocks but not their share; iorig scatters them with its own permutation",
                        arg.loc
                    ),
                );
            }
            Some(parse(&format!("{kind}:{value}"))?)
        }
        Some(("zoned", _)) => Some(parse(v)?),
        // The sizes as fio reads them (kb_base), written in bytes.
        Some(("zoned_abs", zones)) => {
            let mut out = Vec::new();
            for z in zones.split(':') {
                let (io, size) = z
                    .split_once('/')
                    .ok_or_else(|| bad(format!("zone '{z}': give IO%/SIZE, e.g. 60/20g")))?;
                let bytes = units::size(size, st.kb_base).map_err(|w| bad(format!("zone '{z}': {w}")))?;
                out.push(format!("{io}/{bytes}"));
            }
            Some(parse(&format!("zoned_abs:{}", out.join(":")))?)
        }
        _ => {
            return Err(bad(format!(
                "'{v}' is not supported; iorig has random, zipf:THETA, pareto:H, normal:DEV, zoned:IO%/SPACE%:... and zoned_abs:IO%/SIZE:... (and its own hot:IO%/SPACE%)"
            )))
        }
    };
    Ok(())
}

fn opt_randseed(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.seed = Some(arg.int()?);
    Ok(())
}

fn opt_loops(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.loops = arg.int()?.max(1);
    Ok(())
}

fn opt_stonewall(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.stonewall = arg.flag()?;
    Ok(())
}

fn opt_zero_buffers(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    if arg.flag()? {
        st.data = Some(DataPattern::Zero);
    }
    Ok(())
}

fn opt_buffer_compress_percentage(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let key = arg.key;
    let bad = |why: String| arg.bad(why);
    let p = arg.int()?;
    if p >= 100 {
        return Err(bad(format!("{p}: give 0 to 99")));
    }
    if p > 0 {
        let ratio = 100.0 / (100.0 - p as f64);
        let kind = if key == "dedupe_percentage" {
            "dedup"
        } else {
            "compress"
        };
        // The ratio as the plan shows it (a few digits), read back.
        let this = DataPattern::parse(&format!("{kind}:{}", trim_float(ratio)))
            .map_err(|e| bad(e.to_string()))?;
        // fio's dedupe_percentage and buffer_compress_percentage together:
        // duplicate buffers whose every buffer compresses too.
        st.data = Some(match (st.data.take(), this) {
            (Some(DataPattern::Dedup { ratio, .. }), DataPattern::Compress { ratio: c })
            | (Some(DataPattern::Compress { ratio: c }), DataPattern::Dedup { ratio, .. })
            | (Some(DataPattern::Dedup { compress: c, .. }), DataPattern::Dedup { ratio, .. }) => {
                DataPattern::Dedup { ratio, compress: c }
            }
            (_, this) => this,
        });
    }
    Ok(())
}

/// fio fills each chunk of this size with its random and its compressible
/// share; iorig shapes each 4 KiB chunk so. Any chunk that divides 4 KiB
/// gives every 4 KiB block the same share, which is what a compressing
/// array sees; a larger one would make whole blocks zero (deduplicable),
/// which iorig's data does not do.
fn opt_buffer_compress_chunk(
    t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let v = arg.need()?;
    let chunk = units::size(v, st.kb_base).map_err(|e| arg.bad(e))?;
    if chunk == 0 || chunk > 4096 || 4096 % chunk != 0 {
        return Err(arg.bad(format!(
            "{chunk} bytes: iorig shapes compressibility in 4 KiB chunks; give a chunk that divides 4k (512, 1k, 2k or 4k), or drop it"
        )));
    }
    if chunk != 4096 {
        t.notice_once(
            "buffer_compress_chunk",
            format!(
                "{}: buffer_compress_chunk={chunk}: iorig shapes each 4 KiB chunk to the percentage; every 4 KiB block compresses as with fio's {chunk}-byte chunks",
                arg.loc
            ),
        );
    }
    Ok(())
}

fn opt_verify_pattern(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let loc = arg.loc;
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    let bytes = iorig_spec::parse_pattern(v).map_err(&bad)?;
    st.verify_pattern = Some(iorig_spec::format_pattern(&bytes));
    // fio: a pattern without a verify method verifies the pattern.
    if st.verify_loc.is_none() {
        st.verify = true;
        st.verify_is_pattern = true;
        st.verify_loc = Some(loc.clone());
    }
    Ok(())
}

fn opt_buffer_pattern(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let bytes = iorig_spec::parse_pattern(arg.need()?).map_err(|w| arg.bad(w))?;
    st.buffer_pattern = Some(bytes);
    Ok(())
}

fn opt_verify_only(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.verify_only = arg.flag()?;
    Ok(())
}

fn opt_verify(t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let loc = arg.loc;
    let need = || arg.need();
    let v = need()?.trim();
    st.verify = !matches!(v, "0" | "none");
    st.verify_is_pattern = v == "pattern";
    st.verify_loc = Some(loc.clone());
    if st.verify && !st.verify_is_pattern {
        t.notice_once(
                "verify",
                format!(
                    "{loc}: verify: iorig's own validation (a CRC-32C stamp per block; each written block read back and checked at once, reads of known blocks checked), not fio's checksum and verify pass (docs/verify.md)"
                ),
            );
    }
    Ok(())
}

fn opt_do_verify(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.do_verify = arg.flag()?;
    Ok(())
}

fn opt_exitall(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.exitall = arg.flag()?;
    Ok(())
}

/// fio's latency profiling finds the deepest queue that keeps
/// the percentile under the target; iorig's curve answers the
/// same question by rate (max, then shares of it).
fn opt_latency_target(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let loc = arg.loc;
    let ns = arg.time_ns(1_000)?;
    st.latency_target = (ns > 0).then(|| (ns, loc.clone()));
    Ok(())
}

fn opt_latency_window(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.latency_window_ns = arg.time_ns(1_000)?;
    Ok(())
}

fn opt_latency_percentile(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let loc = arg.loc;
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    let p: f64 = v
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| bad(format!("'{v}': give a percentage, e.g. 99.9")))?;
    st.latency_pct = (p, loc.clone());
    Ok(())
}

fn opt_latency_run(
    _t: &mut Translator<'_>,
    _st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let bad = |why: String| arg.bad(why);
    if arg.flag()? {
        return Err(bad(
                "iorig's curve measures and ends; it does not keep adjusting the load to hold the target; remove latency_run".into(),
            ));
    }
    Ok(())
}

fn opt_offset_increment(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let v = arg.size_or_pct(st.kb_base)?;
    st.offset_increment = match v {
        SizeOrPct::Bytes(0) => None,
        other => Some(other),
    };
    Ok(())
}

fn opt_unlink(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.unlink = arg.flag()?;
    Ok(())
}

/// fio drops a file's cached pages when it opens it unless
/// invalidate=0; iorig does the same before each step.
fn opt_invalidate(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.keep_cache = !arg.flag()?;
    Ok(())
}

fn opt_fsync(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.fsync = arg.int()?;
    Ok(())
}

/// iorig draws random offsets with replacement, as fio with norandommap:
/// said once, and the job is not told its sizes differ from fio's.
fn opt_norandommap(
    t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.norandommap = arg.flag()?;
    t.notice_once(
        arg.key,
        format!(
            "{}: {}: iorig draws random offsets with replacement, as fio does with norandommap",
            arg.loc, arg.key
        ),
    );
    Ok(())
}

/// fio's end_fsync and fsync_on_close: iorig keeps its targets open to the
/// end, so a sync at close is the sync at the end. Each is its own
/// setting, so a job's `end_fsync=0` undoes [global]'s `end_fsync=1` only.
fn opt_end_fsync(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let on = arg.flag()?;
    if arg.key == "end_fsync" {
        st.end_fsync = on;
    } else {
        st.fsync_on_close = on;
    }
    Ok(())
}

fn opt_rate_min(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let key = arg.key;
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let (r, w) = pair(need()?);
    let iops = key == "rate_iops_min";
    let p = |s: &str| -> Result<u64, ImportError> {
        if s.is_empty() {
            Ok(0)
        } else if iops {
            units::int(s).map_err(&bad)
        } else {
            units::size(s, st.kb_base).map_err(&bad)
        }
    };
    let v = Some((p(&r)?, p(&w)?));
    if iops {
        st.rate_min_iops = v;
    } else {
        st.rate_min_bytes = v;
    }
    Ok(())
}

fn opt_rate_cycle(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.rate_cycle_ms = Some(arg.int()?);
    Ok(())
}

fn opt_zonemode(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let loc = arg.loc;
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    match v {
            "none" | "strided" => st.zonemode = Some((v.to_string(), loc.clone())),
            other => {
                return Err(bad(format!(
                    "'{other}' is not supported (zbd drives a zoned device's write pointers); give strided or none"
                )))
            }
        }
    Ok(())
}

fn opt_zonerange(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.zonerange = Some(arg.size(st.kb_base)?);
    Ok(())
}

fn opt_zonesize(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.zonesize = Some(arg.size(st.kb_base)?);
    Ok(())
}

fn opt_zoneskip(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    st.zoneskip = Some(arg.size(st.kb_base)?);
    Ok(())
}

fn opt_filesize(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    if v.contains('-') || v.contains(':') {
        return Err(bad(format!(
            "'{v}': a range of file sizes is not supported; give one size"
        )));
    }
    st.filesize = Some(units::size(v, st.kb_base).map_err(&bad)?);
    Ok(())
}

fn opt_stat_type(
    _t: &mut Translator<'_>,
    _st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    match need()? {
        "stat" => {}
        other => {
            return Err(bad(format!(
                "'{other}': iorig's stat operation is stat(2); give stat_type=stat"
            )))
        }
    };
    Ok(())
}

fn opt_fdatasync(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.fdatasync = arg.int()?;
    Ok(())
}

fn opt_log_offset(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.logs.offset = arg.flag()?;
    Ok(())
}

fn opt_openfiles(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.openfiles = Some(arg.int()?);
    Ok(())
}

fn opt_file_service_type(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let loc = arg.loc;
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    let kind = v.split(':').next().unwrap_or(v).trim();
    match kind {
            "random" | "roundrobin" | "sequential" => {
                iorig_spec::TargetOrder::parse(v).map_err(|e| bad(e.to_string()))?;
                st.file_service = Some((v.trim().to_string(), loc.clone()));
            }
            other => {
                return Err(bad(format!(
                    "'{other}': iorig spreads I/O over a job's files by offset; random, roundrobin and sequential are read"
                )))
            }
        }
    Ok(())
}

fn opt_io_submit_mode(
    t: &mut Translator<'_>,
    _st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let (key, loc) = (arg.key, arg.loc);
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    match need()? {
        "inline" => {}
        "offload" => t.notice_once(
            key,
            format!("{loc}: io_submit_mode=offload: accepted; iorig submits from each worker itself (fio hands submissions to a pool of threads), the same I/O stream"),
        ),
        other => return Err(bad(format!("'{other}': give inline or offload"))),
    };
    Ok(())
}

fn opt_continue_on_error(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    (st.continue_io, st.continue_verify) = match need()?.trim() {
        "none" | "0" => ((false, false), false),
        "read" => ((true, false), false),
        "write" => ((false, true), false),
        "io" => ((true, true), false),
        "verify" => ((false, false), true),
        "all" | "1" => ((true, true), true),
        other => {
            return Err(bad(format!(
                "'{other}': give none, read, write, io, verify or all"
            )))
        }
    };
    Ok(())
}

fn opt_ignore_error(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let loc = arg.loc;
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    let mut parts = v.split(',').map(|p| p.trim().to_string());
    let r = parts.next().unwrap_or_default();
    let w = parts.next().unwrap_or_default();
    let vf = parts.next().unwrap_or_default();
    if parts.next().is_some() {
        return Err(bad(format!(
            "'{v}': give READ_LIST,WRITE_LIST,VERIFY_LIST (each error list with ':')"
        )));
    }
    if !vf.is_empty() {
        return Err(bad(
                "a verify error list is not supported (iorig's validation counts its errors with max_errors); leave the third list empty".into(),
            ));
    }
    st.ignore_lists = Some((r, w, vf, loc.clone()));
    Ok(())
}

fn opt_exit_what(
    _t: &mut Translator<'_>,
    _st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    match need()? {
        "group" | "stonewall" => {}
        other => {
            return Err(bad(format!(
                "'{other}': exitall ends the job's step (its group), which is fio's group and stonewall; all is not supported"
            )))
        }
    };
    Ok(())
}

fn opt_fill_device(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let loc = arg.loc;
    st.fill_device = arg.flag()?.then(|| loc.clone());
    Ok(())
}

fn opt_cpus_allowed(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    let v = need()?;
    iorig_spec::parse_cpu_list(v).map_err(|e| bad(e.to_string()))?;
    st.cpus = Some(v.to_string());
    Ok(())
}

fn opt_cpumask(_t: &mut Translator<'_>, st: &mut State, arg: &Arg<'_>) -> Result<(), ImportError> {
    let need = || arg.need();
    let bad = |why: String| arg.bad(why);
    // An integer, as fio reads it: decimal unless 0x (fio's own
    // example cpumask=34 is CPUs 1 and 5).
    let v = need()?;
    let t = v.trim();
    let mask = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse::<u64>(),
    }
    .map_err(|_| {
        bad(format!(
            "'{v}' is not a CPU mask (a number, 0x for hexadecimal)"
        ))
    })?;
    let cpus: Vec<String> = (0..64)
        .filter(|b| mask >> b & 1 == 1)
        .map(|b| b.to_string())
        .collect();
    if cpus.is_empty() {
        return Err(bad("an empty mask names no CPU".into()));
    }
    st.cpus = Some(cpus.join(","));
    Ok(())
}

fn opt_cpus_allowed_policy(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.cpus_split = match arg.need()? {
        "shared" => false,
        "split" => true,
        other => return Err(arg.bad(format!("'{other}': give shared or split"))),
    };
    Ok(())
}

fn opt_number_ios(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let n = arg.int()?;
    st.number_ios = (n > 0).then_some(n);
    Ok(())
}

fn opt_verify_fatal(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    st.verify_fatal = arg.flag()?;
    Ok(())
}

fn opt_verify_backlog(
    t: &mut Translator<'_>,
    _st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let (key, loc) = (arg.key, arg.loc);
    t.notice_once(
        key,
        format!(
            "{loc}: {key}: accepted with no effect (iorig checks each block as it is read back)"
        ),
    );
    Ok(())
}

fn opt_write_bw_log(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let (key, val) = (arg.key, arg.val);
    // A bare option names the log after the job.
    let name = match val.map(str::trim) {
        None | Some("") | Some("1") => st.name.clone(),
        Some("0") => return Ok(()),
        Some(v) => v.to_string(),
    };
    match key {
        "write_bw_log" => st.logs.bw = Some(name),
        "write_lat_log" => st.logs.lat = Some(name),
        _ => st.logs.iops = Some(name),
    }
    Ok(())
}

fn opt_log_avg_msec(
    _t: &mut Translator<'_>,
    st: &mut State,
    arg: &Arg<'_>,
) -> Result<(), ImportError> {
    let bad = |why: String| arg.bad(why);
    let ms = arg.int()?;
    if ms > 0 && ms < 10 {
        return Err(bad(format!(
            "{ms} ms: iorig's intervals are at least 10 ms; give 10 or more"
        )));
    }
    st.logs.avg_msec = (ms > 0).then_some(ms);
    Ok(())
}
