//! Plan TOML → [`Plan`] with its blocks still holding lists.
//!
//! The text is read into an order-preserving `toml::Table` rather than a serde
//! struct because (a) the order keys are written in is the order sweep axes nest,
//! and (b) every rejected key must be reported with the step it sits in.

use super::{HotSize, Pause, Plan, SteadyStateSpec};
use crate::units::{format_size, parse_duration, parse_size};
use crate::{key, DataPattern, Role, SpecError, WorkloadFile};
use std::fmt;
use std::time::Duration;
use toml::{Table, Value};

/// Whether a list given for `key` is a sweep axis: every workload key but
/// the ones that are one value by nature ([`Role::Fixed`]).
pub(super) fn sweeps(key: &str) -> bool {
    WorkloadFile::is_key(key) && !WorkloadFile::has_role(key, Role::Fixed)
}

/// Workload keys a step kind sets itself, with what to say to a block of
/// that kind that sets one.
const KIND_OWNED: &[(&str, &str, &str)] = &[
    (
        "curve",
        key::rate,
        "a curve sets the rate itself (max, then rates_pct of max); remove rate",
    ),
    (
        "qd_cycle",
        key::qd,
        "a qd_cycle sets qd itself; give qd_max or qd_list instead",
    ),
];

/// Why a step of `kind` may not set `key`, when its kind sets it itself
/// (a curve its rate, a qd_cycle its qd).
pub fn kind_owns(kind: &str, key: &str) -> Option<&'static str> {
    KIND_OWNED
        .iter()
        .find(|(k, w, _)| *k == kind && *w == key)
        .map(|(_, _, why)| *why)
}

/// Keys that steer a step rather than its I/O (besides `warmup` and `time`,
/// which are workload keys and so may sweep).
const CONTROL_KEYS: &[&str] = &[
    "name",
    "pause",
    "pause_mb_per_s",
    "steady_state",
    "hot_size",
    "hot",
    "threads_per_target",
];

/// The default block size of a precondition: SNIA PTS fills with 128 KiB writes.
pub(super) const PRECONDITION_BS_BYTES: u64 = 128 << 10;
/// vdbench's default curve: 10, 50, 70, 80, 90, 100 % of max.
pub(super) const DEFAULT_RATES_PCT: [f64; 6] = [10.0, 50.0, 70.0, 80.0, 90.0, 100.0];

/// A curve's bisection rounds at most: 8 halvings narrow a gap of 10 % of
/// the max to 0.04 %, far below the noise of one step.
pub const MAX_REFINE: u32 = 8;
/// The latency target of the sweet-spot answer unless a curve says otherwise.
pub(super) const DEFAULT_THRESHOLD_MS: f64 = 1.0;
/// Queue-depth cycles go 1, 2, 4, ... up to this unless told otherwise (Iometer).
pub(super) const DEFAULT_QD_MAX: u32 = 512;

/// Where in the file something is, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    Top,
    Defaults,
    Step(usize),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Top => Ok(()),
            Place::Defaults => write!(f, " [defaults]"),
            Place::Step(n) => write!(f, " step {n}"),
        }
    }
}

pub(super) fn plan_error(path: &str, place: impl ToString, why: impl ToString) -> SpecError {
    SpecError::BadPlan {
        path: path.to_string(),
        place: place.to_string(),
        why: why.to_string(),
    }
}

/// Which plan-level hot size a step uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum HotRef {
    /// `hot = true`: the plan's `hot_size`.
    Plan,
    /// `hot_size = ...` in the block itself.
    Given(HotSize),
}

/// The kind of a block and its kind-specific settings.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum KindParams {
    Run,
    Precondition {
        passes: u32,
        random: bool,
        bs_bytes: u64,
        data: DataPattern,
        trim: bool,
    },
    Curve {
        rates_pct: Vec<f64>,
        stop_latency_ms: Option<f64>,
        threshold_ms: f64,
        threshold_percentile: Option<f64>,
        /// Bisection rounds after the rates (0 to [`MAX_REFINE`]).
        refine: u32,
    },
    QdCycle {
        qds: Vec<u32>,
    },
}

impl KindParams {
    /// The kind as a plan writes it.
    pub(super) fn name(&self) -> &'static str {
        match self {
            KindParams::Run => "run",
            KindParams::Precondition { .. } => "precondition",
            KindParams::Curve { .. } => "curve",
            KindParams::QdCycle { .. } => "qd_cycle",
        }
    }
}

/// `[defaults]` or one `[[steps]]` block as written. `None` in a step-control
/// field means "not said here": the step takes the value from `[defaults]`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Block {
    /// 1-based position among `[[steps]]`; 0 for `[defaults]`.
    pub number: usize,
    pub kind: KindParams,
    pub name: Option<String>,
    pub pause: Option<Pause>,
    /// `Some(None)` is an explicit `steady_state = false`.
    pub steady_state: Option<Option<SteadyStateSpec>>,
    /// `Some(None)` is an explicit `hot = false`.
    pub hot: Option<Option<HotRef>>,
    /// `threads_per_target`: workers per target of the host that runs it.
    pub threads_per_target: Option<u32>,
    /// Workload keys in written order; an array is a sweep axis unless the key
    /// is one value by nature ([`Role::Fixed`]).
    pub workload: Vec<(String, Value)>,
    /// `jobs`: workloads that run at once in this step, each over the
    /// step's keys (empty: the step is one workload).
    pub jobs: Vec<JobBlock>,
}

/// One entry of a step's `jobs`: its name and its own workload keys
/// (scalars; `target` and `size` allowed, as each job may have its own).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct JobBlock {
    pub name: String,
    pub workload: Vec<(String, Value)>,
    /// `exitall = true`: when this job ends, the step's other jobs end.
    pub exitall: bool,
}

/// Most jobs one step runs at once.
pub(super) const MAX_JOBS: usize = 256;

impl Block {
    pub(super) fn has(&self, key: &str) -> bool {
        self.workload.iter().any(|(k, _)| k == key)
    }
}

pub(super) fn parse_plan(path: &str, text: &str) -> Result<Plan, SpecError> {
    let top: Table = toml::from_str(text).map_err(|e| {
        if let Some(hint) = crate::foreign::foreign_hint("plan", text) {
            return plan_error(path, Place::Top, hint);
        }
        let line = e
            .span()
            .map(|s| format!(" (line {})", line_of(text, s.start)))
            .unwrap_or_default();
        plan_error(path, Place::Top, format!("{}{line}", e.message().trim()))
    })?;
    let err = |why: String| plan_error(path, Place::Top, why);

    let mut name = None;
    let mut description = None;
    let mut targets = None;
    let mut size_bytes = None;
    let mut hot_size = HotSize::DEFAULT;
    let mut cache_size_bytes = None;
    let mut defaults = Block {
        number: 0,
        kind: KindParams::Run,
        name: None,
        pause: None,
        steady_state: None,
        hot: None,
        threads_per_target: None,
        workload: Vec::new(),
        jobs: Vec::new(),
    };
    let mut steps = Vec::new();
    let mut hosts = None;
    for (key, value) in &top {
        match key.as_str() {
            "hosts" => {
                let Value::Table(_) = value else {
                    return Err(err("hosts must be a table: [hosts] with list = [\"host:port\", ...] or file = \"hosts.toml\"".into()));
                };
                let h: super::PlanHosts =
                    value.clone().try_into().map_err(|e: toml::de::Error| {
                        err(format!("[hosts]: {}", e.message().trim()))
                    })?;
                if h.list.is_none() == h.file.is_none() {
                    return Err(err("[hosts]: give list = [\"host:port\", ...] or file = \"hosts.toml\" (one of them)".into()));
                }
                hosts = Some(h);
            }
            "name" => name = Some(name_string(value).map_err(|w| err(format!("name: {w}")))?),
            "description" => {
                description =
                    Some(nonempty_string(value).map_err(|w| err(format!("description: {w}")))?)
            }
            "targets" => targets = Some(parse_targets(value).map_err(err)?),
            "target" => {
                return Err(err(
                    "unknown key 'target'; a plan lists its targets as targets = [\"/dev/...\"]"
                        .into(),
                ))
            }
            "size" => {
                let text = scalar_text(value)
                    .ok_or_else(|| err("size: give a size such as \"1g\"".into()))?;
                let bytes =
                    parse_size(&text).map_err(|e| plan_error(path, Place::Top, e.to_string()))?;
                if bytes == 0 {
                    return Err(err("size 0; give a size such as \"1g\"".into()));
                }
                size_bytes = Some(bytes);
            }
            "hot_size" => {
                hot_size = parse_hot_size(value).map_err(err)?;
            }
            "cache_size" => {
                let text = scalar_text(value)
                    .ok_or_else(|| err("cache_size: give a size such as \"400g\"".into()))?;
                let bytes =
                    parse_size(&text).map_err(|e| plan_error(path, Place::Top, e.to_string()))?;
                if bytes == 0 {
                    return Err(err(
                        "cache_size 0; give each host's cache, e.g. \"400g\"".into()
                    ));
                }
                cache_size_bytes = Some(bytes);
            }
            "defaults" => {
                let Value::Table(t) = value else {
                    return Err(err("defaults must be a table: [defaults]".into()));
                };
                defaults = parse_block(path, Place::Defaults, t)?;
            }
            "steps" => {
                let Value::Array(list) = value else {
                    return Err(err(
                        "steps must be an array of tables: write each step as [[steps]]".into(),
                    ));
                };
                for (i, v) in list.iter().enumerate() {
                    let place = Place::Step(i + 1);
                    let Value::Table(t) = v else {
                        return Err(plan_error(
                            path,
                            place,
                            "a step must be a table: write it as [[steps]]",
                        ));
                    };
                    steps.push(parse_block(path, place, t)?);
                }
            }
            other => {
                let top = [
                    "name",
                    "description",
                    "targets",
                    "size",
                    "hot_size",
                    "cache_size",
                    "hosts",
                    "defaults",
                    "steps",
                ];
                return Err(err(format!(
                    "unknown key '{other}';{} a plan's top level takes name, description, targets, size, hot_size, cache_size, [hosts], [defaults] and [[steps]] (workload keys go in [defaults] or a step)",
                    crate::suggest::did_you_mean(other, top)
                )));
            }
        }
    }
    if steps.is_empty() {
        return Err(err(
            "the plan has no steps; add at least one [[steps]] block".into(),
        ));
    }
    let name = name.unwrap_or_else(|| default_name(path));
    Ok(Plan {
        path: path.to_string(),
        name,
        description,
        targets,
        size_bytes,
        hot_size,
        cache_size_bytes,
        anchor: None,
        files: None,
        file_size: None,
        hosts,
        defaults,
        steps,
        step_time: None,
    })
}

fn line_of(text: &str, byte: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(byte)
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// `dir/my-plan.toml` → `my-plan`.
fn default_name(path: &str) -> String {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    file.strip_suffix(".toml").unwrap_or(file).to_string()
}

fn parse_targets(value: &Value) -> Result<Vec<String>, String> {
    let list = match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                _ => Err("targets must be paths in quotes, e.g. [\"/dev/loop0\"]".to_string()),
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err("targets must be a list of paths, e.g. [\"/dev/loop0\"]".into()),
    };
    if list.is_empty() {
        return Err("targets = [] names no target; give at least one path or drop the key".into());
    }
    if list.iter().any(|t| t.trim().is_empty()) {
        return Err("targets contains an empty path".into());
    }
    Ok(list)
}

fn parse_hot_size(value: &Value) -> Result<HotSize, String> {
    let text = scalar_text(value).ok_or_else(|| {
        "hot_size: give a size such as \"8g\" or a percentage \"10%\"".to_string()
    })?;
    HotSize::parse(&text).map_err(|e| e.to_string())
}

fn nonempty_string(value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
        Value::String(_) => Err("empty text".into()),
        _ => Err("give text in quotes".into()),
    }
}

/// A plan's, step's or job's name: text, shown on terminals and stored, so
/// without control characters (as labels are, [`crate::check_label`]).
fn name_string(value: &Value) -> Result<String, String> {
    let name = nonempty_string(value)?;
    crate::check_name(&name)?;
    Ok(name)
}

/// Text of a scalar as a user would write it in a flag (`"4k"`, `70`, `true`).
pub(super) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Integer(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn duration_value(value: &Value) -> Result<Duration, String> {
    let text = match value {
        Value::String(_) | Value::Integer(_) | Value::Float(_) => scalar_text(value),
        _ => None,
    }
    .ok_or_else(|| "give a duration such as \"30s\"".to_string())?;
    parse_duration(&text).map_err(|e| e.to_string())
}

fn positive_number(value: &Value) -> Result<f64, String> {
    let v = match value {
        Value::Integer(i) => *i as f64,
        Value::Float(f) => *f,
        _ => return Err("give a number".into()),
    };
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("{v} must be above 0"));
    }
    Ok(v)
}

fn whole_number(value: &Value, min: u32, max: u32) -> Result<u32, String> {
    match value {
        Value::Integer(i) if (min as i64..=max as i64).contains(i) => Ok(*i as u32),
        Value::Integer(i) => Err(format!("{i} is outside {min}-{max}")),
        _ => Err(format!("give a whole number from {min} to {max}")),
    }
}

/// Checks one workload value's type by deserializing it alone into a
/// [`WorkloadFile`], so a wrong type is reported with its key and step now
/// rather than as a bare serde message during expansion.
fn check_workload_value(key: &str, value: &Value) -> Result<(), String> {
    let mut t = Table::new();
    t.insert(key.to_string(), value.clone());
    Value::Table(t)
        .try_into::<WorkloadFile>()
        .map(|_| ())
        .map_err(|e| format!("bad value for '{key}': {}", e.message().trim()))
}

fn parse_steady_state(value: &Value) -> Result<Option<SteadyStateSpec>, String> {
    let t = match value {
        Value::Boolean(false) => return Ok(None),
        Value::Boolean(true) => return Ok(Some(SteadyStateSpec::DEFAULT)),
        Value::Table(t) => t,
        _ => return Err(
            "steady_state: write { round = \"1m\", max_rounds = 10, window = 5 }, true or false"
                .into(),
        ),
    };
    let mut spec = SteadyStateSpec::DEFAULT;
    for (k, v) in t {
        match k.as_str() {
            "round" => {
                spec.round = duration_value(v).map_err(|w| format!("steady_state.round: {w}"))?;
                if spec.round.is_zero() {
                    return Err("steady_state.round is 0; give e.g. \"1m\"".into());
                }
            }
            "max_rounds" => {
                spec.max_rounds = whole_number(v, 1, 100_000)
                    .map_err(|w| format!("steady_state.max_rounds: {w}"))?
            }
            "window" => {
                spec.window = whole_number(v, 2, 100_000)
                    .map_err(|w| format!("steady_state.window: {w}"))?
            }
            "rule" => {
                let Value::String(r) = v else {
                    return Err("steady_state.rule: give a string such as \"deviation:10%\"".into());
                };
                spec.rule = super::SteadyRule::parse(r)?;
            }
            "ramp" => {
                spec.ramp = duration_value(v).map_err(|w| format!("steady_state.ramp: {w}"))?;
            }
            other => {
                return Err(format!(
                    "unknown key 'steady_state.{other}'; steady_state takes round, max_rounds, window, rule and ramp"
                ))
            }
        }
    }
    if spec.window > spec.max_rounds {
        return Err(format!(
            "steady_state.window {} is above max_rounds {}; steadiness is judged over the last window rounds, so raise max_rounds or lower window",
            spec.window, spec.max_rounds
        ));
    }
    if spec.window as usize + spec.ramp_rounds() > spec.max_rounds as usize {
        return Err(format!(
            "steady_state: the ramp's {} round(s) and the window's {} leave no judged window within max_rounds {}; raise max_rounds",
            spec.ramp_rounds(),
            spec.window,
            spec.max_rounds
        ));
    }
    Ok(Some(spec))
}

/// Kind-specific keys, for messages and checks.
fn kind_keys(kind: &str) -> &'static [&'static str] {
    match kind {
        "precondition" => &["passes", "pattern", "bs", "data", "trim"],
        "curve" => &[
            "rates_pct",
            "stop_latency_ms",
            "threshold_ms",
            "threshold_percentile",
            "refine",
        ],
        "qd_cycle" => &["qd_max", "qd_list"],
        _ => &[],
    }
}

/// Workload keys a block of this kind may set (besides its kind keys).
fn allowed_workload_keys(kind: &str) -> Vec<&'static str> {
    match kind {
        "precondition" => WorkloadFile::KEYS
            .iter()
            .filter(|p| p.is(Role::Pre))
            .map(|p| p.key)
            .collect(),
        _ => WorkloadFile::KEYS
            .iter()
            .filter(|p| !p.is(Role::Plan) && kind_owns(kind, p.key).is_none())
            .map(|p| p.key)
            .collect(),
    }
}

fn valid_keys_text(kind: &str, defaults: bool) -> String {
    let mut keys: Vec<&str> = Vec::new();
    if !defaults {
        keys.push("kind");
    }
    keys.extend(kind_keys(kind));
    keys.extend(allowed_workload_keys(kind));
    for k in CONTROL_KEYS {
        let skip = (defaults && *k == "name")
            || (kind == "precondition" && matches!(*k, "steady_state" | "hot_size" | "hot"));
        if !skip {
            keys.push(k);
        }
    }
    keys.join(", ")
}

fn parse_block(path: &str, place: Place, t: &Table) -> Result<Block, SpecError> {
    let err = |why: String| plan_error(path, place, why);
    let is_defaults = place == Place::Defaults;
    let kind = match t.get("kind") {
        None => "run".to_string(),
        Some(_) if is_defaults => {
            return Err(err(
                "kind belongs to a step, not to [defaults]; remove it".into()
            ))
        }
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(err(
                "kind must be one of \"run\", \"precondition\", \"curve\", \"qd_cycle\"".into(),
            ))
        }
    };
    let kind = match kind.as_str() {
        "run" | "precondition" | "curve" | "qd_cycle" => kind,
        "qd-cycle" => "qd_cycle".to_string(),
        other => {
            return Err(err(format!(
                "unknown kind '{other}'; use run, precondition, curve or qd_cycle"
            )))
        }
    };
    let workload_keys = allowed_workload_keys(&kind);
    let own_kind_keys = kind_keys(&kind);

    let mut block = Block {
        number: match place {
            Place::Step(n) => n,
            _ => 0,
        },
        kind: KindParams::Run,
        name: None,
        pause: None,
        steady_state: None,
        hot: None,
        threads_per_target: None,
        workload: Vec::new(),
        jobs: Vec::new(),
    };
    // Kind-specific values, checked after the loop once all are known.
    let mut kind_values: Vec<(&str, &Value)> = Vec::new();

    for (key, value) in t {
        let key = key.as_str();
        if key == "kind" {
            continue;
        }
        if key == "jobs" {
            if is_defaults || !matches!(kind.as_str(), "run" | "curve") {
                return Err(err(format!(
                    "'jobs' belongs to a run step (jobs run at once within one step) or a curve step (one job){}",
                    if is_defaults {
                        ", not to [defaults]"
                    } else {
                        "; remove kind or jobs"
                    }
                )));
            }
            block.jobs = parse_jobs(value).map_err(err)?;
            // A curve paces its jobs itself: a job may carry its own
            // targets (a fio job's files), never a rate of its own. Several
            // jobs run together at max, then each at the curve's share of
            // what it reached there.
            if kind == "curve" {
                for one in &block.jobs {
                    if let Some(why) = one.workload.iter().find_map(|(k, _)| kind_owns("curve", k))
                    {
                        return Err(err(format!("job '{}': {why}", one.name)));
                    }
                }
            }
            continue;
        }
        if WorkloadFile::has_role(key, Role::Plan) {
            return Err(err(format!(
                "'{key}' cannot be set in {}; give {} at the top of the plan or --{key} on the command line",
                if is_defaults { "[defaults]" } else { "a step" },
                if key == "target" { "targets = [...]" } else { "size = \"...\"" },
            )));
        }
        if let Some(k) = own_kind_keys.iter().find(|k| **k == key) {
            kind_values.push((k, value));
            continue;
        }
        if CONTROL_KEYS.contains(&key) {
            if matches!(value, Value::Array(_)) {
                return Err(err(format!(
                    "'{key}' cannot be a list; only workload keys sweep"
                )));
            }
            // A precondition fills a working set sized from the cache (the
            // largest a cluster plan measures), never a hot slice of it.
            let of_cache = key == "hot_size"
                && scalar_text(value).is_some_and(|t| t.trim_end().ends_with("of cache"));
            let precondition_skip = kind == "precondition"
                && matches!(
                    key,
                    "steady_state" | "hot_size" | "hot" | "threads_per_target"
                )
                && !of_cache;
            if precondition_skip {
                return Err(err(format!(
                    "'{key}' does not apply to a precondition, which writes the whole target; remove it"
                )));
            }
            let bad = |w: String| err(format!("{key}: {w}"));
            match key {
                "name" if is_defaults => {
                    return Err(err(
                        "name belongs to a step; name the plan with name = ... at the top".into(),
                    ))
                }
                "name" => block.name = Some(name_string(value).map_err(bad)?),
                "pause" => {
                    if t.contains_key("pause_mb_per_s") {
                        return Err(err("give pause or pause_mb_per_s, not both".into()));
                    }
                    let d = duration_value(value).map_err(bad)?;
                    block.pause = Some(if d.is_zero() {
                        Pause::None
                    } else {
                        Pause::Fixed(d)
                    });
                }
                "pause_mb_per_s" => {
                    let mb = positive_number(value).map_err(bad)?;
                    // MB is decimal here, as in every throughput figure iorig prints.
                    block.pause = Some(Pause::WrittenBytesAt {
                        bytes_per_s: mb * 1e6,
                    });
                }
                "steady_state" => {
                    if t.contains_key("time") {
                        return Err(err(
                            "steady_state measures in rounds, so time has no effect here; remove time or steady_state".into(),
                        ));
                    }
                    block.steady_state = Some(parse_steady_state(value).map_err(err)?);
                }
                "threads_per_target" => {
                    let n = match value {
                        Value::Integer(n) if (1..=4096).contains(n) => *n as u32,
                        _ => {
                            return Err(bad(
                                "give a whole number of workers per target, 1 to 4096".into()
                            ))
                        }
                    };
                    if t.contains_key("threads") {
                        return Err(err(
                            "threads_per_target sets threads from each host's target count; give it or threads, not both".into(),
                        ));
                    }
                    block.threads_per_target = Some(n);
                }
                "hot_size" => {
                    if t.contains_key("hot") {
                        return Err(err("give hot or hot_size, not both".into()));
                    }
                    if t.contains_key("range") {
                        return Err(err(
                            "hot_size and range both set the working set; keep one".into()
                        ));
                    }
                    block.hot = Some(Some(HotRef::Given(parse_hot_size(value).map_err(bad)?)));
                }
                _ => {
                    // "hot"
                    let Value::Boolean(on) = value else {
                        return Err(bad(
                            "write hot = true (use the plan's hot_size) or hot = false".into(),
                        ));
                    };
                    if *on && t.contains_key("range") {
                        return Err(err(
                            "hot and range both set the working set; keep one".into()
                        ));
                    }
                    block.hot = Some(on.then_some(HotRef::Plan));
                }
            }
            continue;
        }
        if workload_keys.contains(&key) {
            let is_axis = matches!(value, Value::Array(_)) && sweeps(key);
            if let (true, Value::Array(items)) = (is_axis, value) {
                if kind == "precondition" {
                    return Err(err(format!(
                        "'{key}' is a list, but a precondition cannot sweep; give one value"
                    )));
                }
                if items.is_empty() {
                    return Err(err(format!(
                        "'{key} = []' sweeps over nothing; give at least one value"
                    )));
                }
                for item in items {
                    if matches!(item, Value::Array(_) | Value::Table(_)) {
                        return Err(err(format!(
                            "'{key}' is a list of lists; a sweep axis is a flat list of values"
                        )));
                    }
                    check_workload_value(key, item).map_err(&err)?;
                }
            } else {
                check_workload_value(key, value).map_err(&err)?;
            }
            block.workload.push((key.to_string(), value.clone()));
            continue;
        }
        let why = if let Some(why) = kind_owns(&kind, key) {
            why.to_string()
        } else if WorkloadFile::is_key(key) && kind == "precondition" {
            format!(
                "'{key}' does not apply to a precondition; it takes {}",
                valid_keys_text(&kind, false)
            )
        } else if kind_keys("precondition")
            .iter()
            .chain(kind_keys("curve"))
            .chain(kind_keys("qd_cycle"))
            .any(|k| *k == key)
        {
            if is_defaults {
                format!("'{key}' belongs to a step of its kind, not to [defaults]")
            } else {
                format!("'{key}' does not belong to a {kind} step; set kind or remove it")
            }
        } else {
            let valid = valid_keys_text(&kind, is_defaults);
            format!(
                "unknown key '{key}';{} valid keys here: {valid}",
                crate::suggest::did_you_mean(key, valid.split(", "))
            )
        };
        return Err(err(why));
    }

    block.kind = kind_params(&kind, &kind_values).map_err(err)?;
    Ok(block)
}

/// A step's `jobs = [{ name = "a", ... }, ...]` (or `[[steps.jobs]]`).
fn parse_jobs(value: &Value) -> Result<Vec<JobBlock>, String> {
    let Value::Array(items) = value else {
        return Err("jobs must be an array of tables: write each job as [[steps.jobs]]".into());
    };
    if items.is_empty() {
        return Err("jobs = [] runs nothing; give at least one job or drop jobs".into());
    }
    if items.len() > MAX_JOBS {
        return Err(format!(
            "{} jobs in one step, more than {MAX_JOBS}; split them over steps",
            items.len()
        ));
    }
    let mut jobs: Vec<JobBlock> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Table(t) = item else {
            return Err(format!("job {} must be a table with a name", i + 1));
        };
        let name = match t.get("name") {
            Some(v) => name_string(v).map_err(|w| format!("job {}: name: {w}", i + 1))?,
            None => return Err(format!("job {} has no name; give name = \"...\"", i + 1)),
        };
        if jobs.iter().any(|j| j.name == name) {
            return Err(format!(
                "two jobs are named '{name}'; give each its own name"
            ));
        }
        let mut workload = Vec::new();
        let mut exitall = false;
        for (key, v) in t {
            let key = key.as_str();
            if key == "name" {
                continue;
            }
            if key == "exitall" {
                let Value::Boolean(b) = v else {
                    return Err(format!("job '{name}': exitall is true or false"));
                };
                exitall = *b;
                continue;
            }
            if !WorkloadFile::is_key(key) {
                return Err(format!(
                    "job '{name}': unknown key '{key}';{} a job takes name and workload keys",
                    crate::suggest::did_you_mean(key, WorkloadFile::KEYS.iter().map(|p| p.key))
                ));
            }
            if WorkloadFile::has_role(key, Role::Step) {
                return Err(format!(
                    "job '{name}': '{key}': data validation runs on a whole step, not on one of its jobs; give it in the step or [defaults]"
                ));
            }
            if matches!(v, Value::Array(_)) && !WorkloadFile::has_role(key, Role::List) {
                return Err(format!(
                    "job '{name}': '{key}' is a list; a job's keys are single values (sweep in the step)"
                ));
            }
            check_workload_value(key, v).map_err(|w| format!("job '{name}': {w}"))?;
            workload.push((key.to_string(), v.clone()));
        }
        jobs.push(JobBlock {
            name,
            workload,
            exitall,
        });
    }
    Ok(jobs)
}

fn kind_params(kind: &str, values: &[(&str, &Value)]) -> Result<KindParams, String> {
    let get = |k: &str| values.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    match kind {
        "precondition" => {
            let passes = match get("passes") {
                None => 2,
                Some(v) => whole_number(v, 1, 1000).map_err(|w| format!("passes: {w}"))?,
            };
            let random = match get("pattern") {
                None => false,
                Some(Value::String(s)) if s == "seq" || s == "sequential" => false,
                Some(Value::String(s)) if s == "random" => true,
                Some(_) => return Err("pattern: use \"seq\" or \"random\"".into()),
            };
            let bs_bytes = match get("bs") {
                None => PRECONDITION_BS_BYTES,
                Some(v) => {
                    let text = match v {
                        Value::String(_) | Value::Integer(_) => scalar_text(v),
                        _ => None,
                    }
                    .ok_or("bs: give one block size such as \"128k\"")?;
                    let bytes = parse_size(&text).map_err(|e| e.to_string())?;
                    if bytes == 0 || bytes > u32::MAX as u64 {
                        return Err(format!(
                            "bs {text}: give one block size from 512 to 4g, e.g. \"128k\""
                        ));
                    }
                    bytes
                }
            };
            let data = match get("data") {
                None => DataPattern::Random,
                Some(Value::String(s)) => DataPattern::parse(s).map_err(|e| e.to_string())?,
                Some(_) => return Err("data: use \"random\" or \"zero\"".into()),
            };
            let trim = match get("trim") {
                None => false,
                Some(Value::Boolean(b)) => *b,
                Some(_) => return Err("trim: use true or false".into()),
            };
            Ok(KindParams::Precondition {
                passes,
                random,
                bs_bytes,
                data,
                trim,
            })
        }
        "curve" => {
            let rates_pct = match get("rates_pct") {
                None => DEFAULT_RATES_PCT.to_vec(),
                Some(Value::Array(items)) if !items.is_empty() => items
                    .iter()
                    .map(|v| {
                        let p = positive_number(v).map_err(|w| format!("rates_pct: {w}"))?;
                        if p > 100.0 {
                            return Err(format!(
                                "rates_pct: {p} is above 100; rates are percentages of the measured max"
                            ));
                        }
                        Ok(p)
                    })
                    .collect::<Result<Vec<_>, String>>()?,
                Some(_) => {
                    return Err(
                        "rates_pct: give a list of percentages, e.g. [10, 50, 70, 80, 90, 100]"
                            .into(),
                    )
                }
            };
            let stop_latency_ms = get("stop_latency_ms")
                .map(|v| positive_number(v).map_err(|w| format!("stop_latency_ms: {w}")))
                .transpose()?;
            let threshold_ms = get("threshold_ms")
                .map(|v| positive_number(v).map_err(|w| format!("threshold_ms: {w}")))
                .transpose()?
                .unwrap_or(DEFAULT_THRESHOLD_MS);
            let threshold_percentile = get("threshold_percentile")
                .map(|v| {
                    let p = positive_number(v)
                        .map_err(|w| format!("threshold_percentile: {w}"))?;
                    if crate::plan::THRESHOLD_PERCENTILES.contains(&p) {
                        Ok(p)
                    } else {
                        Err(format!(
                            "threshold_percentile: {p} is not one of the percentiles a step keeps; give 50, 90, 99, 99.9, 99.99 or 100 (the maximum)"
                        ))
                    }
                })
                .transpose()?;
            let refine = get("refine")
                .map(|v| whole_number(v, 0, MAX_REFINE).map_err(|w| format!("refine: {w}")))
                .transpose()?
                .unwrap_or(0);
            Ok(KindParams::Curve {
                rates_pct,
                stop_latency_ms,
                threshold_ms,
                threshold_percentile,
                refine,
            })
        }
        "qd_cycle" => {
            let max_qd = crate::workload::MAX_QD;
            let qds = match (get("qd_max"), get("qd_list")) {
                (Some(_), Some(_)) => return Err("give qd_max or qd_list, not both".into()),
                (None, Some(Value::Array(items))) if !items.is_empty() => items
                    .iter()
                    .map(|v| whole_number(v, 1, max_qd).map_err(|w| format!("qd_list: {w}")))
                    .collect::<Result<Vec<_>, String>>()?,
                (None, Some(_)) => {
                    return Err("qd_list: give a list of queue depths, e.g. [1, 8, 64]".into())
                }
                (max, None) => {
                    let qd_max = match max {
                        None => DEFAULT_QD_MAX,
                        Some(v) => {
                            whole_number(v, 1, max_qd).map_err(|w| format!("qd_max: {w}"))?
                        }
                    };
                    doubling_to(qd_max)
                }
            };
            Ok(KindParams::QdCycle { qds })
        }
        _ => Ok(KindParams::Run),
    }
}

/// 1, 2, 4, ... up to `max`, ending with `max` itself when it is not a power of two.
pub(super) fn doubling_to(max: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut qd = 1u32;
    while qd <= max {
        out.push(qd);
        match qd.checked_mul(2) {
            Some(next) => qd = next,
            None => break,
        }
    }
    if out.last() != Some(&max) {
        out.push(max);
    }
    out
}

/// A size in bytes as text `parse_size` reads back exactly.
pub(super) fn size_text(bytes: u64) -> String {
    format_size(bytes)
}
