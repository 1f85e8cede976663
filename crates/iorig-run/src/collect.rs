//! Storage-side metrics beside iorig's own (`--collect`): at every interval
//! each source is asked for its figures (a Prometheus exporter's page, or a
//! command printing `name value` lines, such as an array's CLI or an SNMP
//! query), and what it answers is sent as [`Event::External`] aligned to
//! that interval, for the store, the reports and the live view. A source
//! that fails, answers garbage or takes too long gives a failure for that
//! interval; the test goes on.
//!
//! Each source has a thread of its own, so a slow one never holds up the
//! intervals; an interval whose source is still busy with the previous
//! one is recorded as missed.

use crate::event::{Event, ExternalSample};
use std::io::Read;
use std::str::FromStr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The longest a source may take for one interval (less when the
/// interval is shorter).
pub const MAX_WAIT: Duration = Duration::from_secs(5);
/// Series a source may give per interval; more is a failure (the match
/// pattern should narrow it).
pub const MAX_SERIES: usize = 500;

/// Where storage-side figures come from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CollectSource {
    /// `prometheus=http://HOST:PORT/PATH[,match=GLOB|GLOB...]`: a page in
    /// Prometheus' text format (an exporter's `/metrics`, or Prometheus'
    /// own `/federate`); with `match`, only series whose name matches
    /// one of the globs (`*` any run of characters).
    Prometheus { url: String, matches: Vec<String> },
    /// `cmd=COMMAND`: run by `sh -c` at each interval; each line of its
    /// output `NAME VALUE` (NAME may carry `{labels}`).
    Command { command: String },
}

impl CollectSource {
    /// How the source is named in the store and the reports.
    pub fn name(&self) -> String {
        let name = match self {
            CollectSource::Prometheus { url, .. } => url.clone(),
            CollectSource::Command { command } => format!("cmd: {command}"),
        };
        iorig_spec::printable(&name)
    }
}

impl FromStr for CollectSource {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(command) = s.strip_prefix("cmd=") {
            if command.trim().is_empty() {
                return Err(
                    "cmd= needs a command, e.g. --collect 'cmd=array-cli stats --short'".into(),
                );
            }
            return Ok(CollectSource::Command {
                command: command.to_owned(),
            });
        }
        if let Some(rest) = s.strip_prefix("prometheus=") {
            let mut parts = rest.split(',');
            let url = parts.next().unwrap_or("").trim().to_owned();
            let mut matches = Vec::new();
            for p in parts {
                match p.split_once('=') {
                    Some(("match", globs)) => {
                        matches.extend(globs.split('|').filter(|g| !g.is_empty()).map(str::to_owned))
                    }
                    _ => {
                        return Err(format!(
                            "{p}: a prometheus source takes match=GLOB only, e.g. prometheus=http://array:9100/metrics,match=node_disk_*"
                        ))
                    }
                }
            }
            if url.starts_with("https://") {
                return Err(format!(
                    "{url}: https is not spoken; collect from an http:// exporter (or a local Prometheus' /federate)"
                ));
            }
            let Some(authority) = url.strip_prefix("http://") else {
                return Err(format!(
                    "{url}: give the exporter's page as http://HOST:PORT/PATH"
                ));
            };
            let host = authority.split('/').next().unwrap_or("");
            if host.is_empty() {
                return Err(format!("{url}: no host in it"));
            }
            return Ok(CollectSource::Prometheus { url, matches });
        }
        Err(format!(
            "--collect {s}: give prometheus=http://HOST:PORT/metrics[,match=GLOB] or cmd=COMMAND"
        ))
    }
}

/// Which interval a source is asked for.
#[derive(Debug, Clone, Copy)]
struct Tick {
    index: usize,
    seq: u64,
    wait: Duration,
}

/// One source's answer for one interval.
struct Answer {
    tick: Tick,
    source: usize,
    samples: Result<Vec<(String, f64)>, String>,
}

/// The sources of a run, each on its thread.
pub struct Collector {
    names: Vec<String>,
    asks: Vec<mpsc::SyncSender<Tick>>,
    answers: mpsc::Receiver<Answer>,
    /// Ticks asked and not answered yet, per source.
    pending: Vec<usize>,
}

impl Collector {
    /// Starts a thread for each source.
    pub fn start(sources: &[CollectSource]) -> Collector {
        let (answer_tx, answers) = mpsc::channel();
        let mut asks = Vec::new();
        for (i, source) in sources.iter().enumerate() {
            // Room for one tick: a source busy with the last one misses
            // the next (recorded), never queues behind.
            let (tx, rx) = mpsc::sync_channel::<Tick>(1);
            let answer_tx = answer_tx.clone();
            let source = source.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("iorig-collect-{i}"))
                .spawn(move || {
                    for tick in rx {
                        let samples = fetch(&source, tick.wait);
                        if answer_tx
                            .send(Answer {
                                tick,
                                source: i,
                                samples,
                            })
                            .is_err()
                        {
                            return;
                        }
                    }
                });
            if spawned.is_err() {
                // Without its thread the source answers nothing; every
                // tick is recorded as missed.
            }
            asks.push(tx);
        }
        Collector {
            names: sources.iter().map(CollectSource::name).collect(),
            asks,
            answers,
            pending: vec![0; sources.len()],
        }
    }

    /// Asks every source for interval `seq` of step `index`; returns the
    /// failures of sources that could not take it (still busy).
    fn ask(
        &mut self,
        index: usize,
        seq: u64,
        duration_s: f64,
    ) -> Vec<(usize, u64, ExternalSample)> {
        let wait = Duration::from_secs_f64(duration_s.max(0.05)).min(MAX_WAIT);
        let mut missed = Vec::new();
        for (i, ask) in self.asks.iter().enumerate() {
            match ask.try_send(Tick { index, seq, wait }) {
                Ok(()) => self.pending[i] += 1,
                Err(_) => missed.push((
                    index,
                    seq,
                    ExternalSample {
                        source: self.names[i].clone(),
                        name: String::new(),
                        value: None,
                        error: Some("still collecting the previous interval".into()),
                    },
                )),
            }
        }
        missed
    }

    /// The answers that came, as samples by (step index, seq).
    fn take(&mut self, wait_for_all: Option<Duration>) -> Vec<(usize, u64, ExternalSample)> {
        let mut out = Vec::new();
        let deadline = wait_for_all.map(|d| Instant::now() + d);
        loop {
            let answer = match deadline {
                Some(d) if self.pending.iter().any(|p| *p > 0) => {
                    let left = d.saturating_duration_since(Instant::now());
                    match self.answers.recv_timeout(left) {
                        Ok(a) => a,
                        Err(_) => break,
                    }
                }
                _ => match self.answers.try_recv() {
                    Ok(a) => a,
                    Err(_) => break,
                },
            };
            self.pending[answer.source] = self.pending[answer.source].saturating_sub(1);
            let source = self.names[answer.source].clone();
            let (index, seq) = (answer.tick.index, answer.tick.seq);
            match answer.samples {
                Ok(samples) => out.extend(samples.into_iter().map(|(name, value)| {
                    (
                        index,
                        seq,
                        ExternalSample {
                            source: source.clone(),
                            name,
                            value: Some(value),
                            error: None,
                        },
                    )
                })),
                Err(why) => out.push((
                    index,
                    seq,
                    ExternalSample {
                        source,
                        name: String::new(),
                        value: None,
                        error: Some(why),
                    },
                )),
            }
        }
        out
    }

    /// After an interval is sent: asks for this one, and gives what came
    /// back for earlier ones as events.
    pub(crate) fn after_interval(&mut self, index: usize, seq: u64, duration_s: f64) -> Vec<Batch> {
        let mut got = self.ask(index, seq, duration_s);
        got.extend(self.take(None));
        batches(got)
    }

    /// Before a step's end is sent: waits (at most [`MAX_WAIT`]) for the
    /// answers still due.
    pub(crate) fn before_step_end(&mut self) -> Vec<Batch> {
        batches(self.take(Some(MAX_WAIT)))
    }
}

/// The samples of one interval.
pub(crate) struct Batch {
    pub index: usize,
    pub seq: u64,
    pub samples: Vec<ExternalSample>,
}

impl Batch {
    pub(crate) fn event(&self) -> Event<'_> {
        Event::External {
            index: self.index,
            seq: self.seq,
            samples: &self.samples,
        }
    }
}

fn batches(mut got: Vec<(usize, u64, ExternalSample)>) -> Vec<Batch> {
    got.sort_by_key(|(i, s, _)| (*i, *s));
    let mut out: Vec<Batch> = Vec::new();
    for (index, seq, sample) in got {
        match out.last_mut() {
            Some(b) if b.index == index && b.seq == seq => b.samples.push(sample),
            _ => out.push(Batch {
                index,
                seq,
                samples: vec![sample],
            }),
        }
    }
    out
}

/// One source's figures now.
fn fetch(source: &CollectSource, wait: Duration) -> Result<Vec<(String, f64)>, String> {
    let (text, matches) = match source {
        CollectSource::Prometheus { url, matches } => (http_get(url, wait)?, matches.as_slice()),
        CollectSource::Command { command } => (run_command(command, wait)?, &[][..]),
    };
    let samples = parse_samples(&text, matches)?;
    if samples.len() > MAX_SERIES {
        return Err(format!(
            "{} series, more than {MAX_SERIES}: narrow it with match=",
            samples.len()
        ));
    }
    Ok(samples)
}

/// `NAME VALUE` lines (Prometheus' text format is such lines, with
/// comments and optional timestamps): the samples whose name matches.
pub fn parse_samples(text: &str, matches: &[String]) -> Result<Vec<(String, f64)>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // The name ends where its labels close, or at the first space.
        let name_end = match line.find('{') {
            Some(open) if open < line.find(' ').unwrap_or(usize::MAX) => line[open..]
                .find('}')
                .map(|c| open + c + 1)
                .ok_or_else(|| format!("line {}: labels not closed: {}", n + 1, shown(line)))?,
            _ => line.find(char::is_whitespace).unwrap_or(line.len()),
        };
        let (name, rest) = line.split_at(name_end);
        let value = rest
            .split_whitespace()
            .next()
            .ok_or_else(|| format!("line {}: no value after the name: {}", n + 1, shown(line)))?;
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v
                .parse()
                .map_err(|_| format!("line {}: {} is not a number", n + 1, shown(v)))?,
        };
        if !value.is_finite() {
            continue;
        }
        let bare = name.split('{').next().unwrap_or(name);
        if matches.is_empty() || matches.iter().any(|g| glob(g, bare)) {
            // Stored and shown on terminals and pages: a source's control
            // characters (an escape in a label value) are dropped.
            out.push((iorig_spec::printable(name), value));
        }
    }
    Ok(out)
}

/// A source's text in a failure: one line of at most 60 characters.
fn shown(text: &str) -> String {
    iorig_spec::shown_label(text, 60)
}

/// `*` matches any run of characters; everything else itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut at = first.len();
    let end = text.len() - last.len();
    for p in &parts[1..parts.len() - 1] {
        match text[at..end].find(p) {
            Some(i) => at += i + p.len(),
            None => return false,
        }
    }
    true
}

/// A plain HTTP GET within `wait`, by ureq: no redirects followed, no
/// proxy from the environment (the exporter is asked directly, as before),
/// the answer capped at [`MAX_ANSWER_BYTES`].
fn http_get(url: &str, wait: Duration) -> Result<String, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(wait))
        .max_redirects(0)
        .http_status_as_error(false)
        .proxy(None)
        .user_agent("iorig")
        .build()
        .into();
    let mut answer = agent
        .get(url)
        .header("Accept", "text/plain")
        .call()
        .map_err(|e| shown(&e.to_string()))?;
    let status = answer.status();
    if status != ureq::http::StatusCode::OK {
        return Err(format!("HTTP {}", status.as_u16()));
    }
    let body = answer
        .body_mut()
        .with_config()
        .limit(MAX_ANSWER_BYTES as u64)
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(_) => over_cap(),
            e => format!("no whole answer within {wait:?}: {}", shown(&e.to_string())),
        })?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The largest answer a source may give per interval: an exporter's page
/// or a command's output. More is a failure for that interval (and a
/// command is killed), so a runaway source never takes the memory or the
/// time of the test.
pub const MAX_ANSWER_BYTES: usize = 16 << 20;

fn over_cap() -> String {
    format!(
        "an answer over {} MiB, more than a source may give per interval; narrow it (match=, or the command's own filters)",
        MAX_ANSWER_BYTES >> 20
    )
}

/// What came of reading a command's output.
enum Output {
    Whole(Vec<u8>),
    /// More than the cap: reading stopped there.
    OverCap,
    Failed(std::io::Error),
}

/// Reads `from` to its end, keeping at most `cap` bytes.
fn read_capped(from: impl Read, cap: usize) -> Output {
    let mut kept = Vec::new();
    let mut limited = from.take(cap as u64 + 1);
    match limited.read_to_end(&mut kept) {
        Err(e) => Output::Failed(e),
        Ok(_) if kept.len() > cap => Output::OverCap,
        Ok(_) => Output::Whole(kept),
    }
}

/// Runs `sh -c COMMAND` in a process group of its own, killed (the whole
/// group: a pipeline's every process) after `wait` or as soon as its output
/// passes [`MAX_ANSWER_BYTES`]; its standard output.
fn run_command(command: &str, wait: Duration) -> Result<String, String> {
    use std::os::unix::process::CommandExt;
    let mut child = std::process::Command::new("sh")
        .args(["-c", command])
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting sh: {e}"))?;
    let stdout = child.stdout.take().ok_or("no output")?;
    let (out_tx, out_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = out_tx.send(read_capped(stdout, MAX_ANSWER_BYTES));
    });
    // The first line of its errors is all that is shown; the rest is read
    // and dropped, so a chatty command never blocks on a full pipe.
    let stderr = child.stderr.take();
    let (err_tx, err_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut first = Vec::new();
        if let Some(e) = stderr {
            let mut e = std::io::BufReader::new(e);
            let _ = std::io::BufRead::read_until(&mut (&mut e).take(4096), b'\n', &mut first);
            let _ = err_tx.send(String::from_utf8_lossy(&first).into_owned());
            let _ = std::io::copy(&mut e, &mut std::io::sink());
        }
    });
    let kill = |child: &mut std::process::Child| {
        // The group this child leads (made by process_group(0) above).
        if let Some(pgid) = i32::try_from(child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
        let _ = child.kill();
        let _ = child.wait();
    };
    let started = Instant::now();
    let mut output: Option<Vec<u8>> = None;
    let status = loop {
        if output.is_none() {
            match out_rx.try_recv() {
                Ok(Output::Whole(bytes)) => output = Some(bytes),
                Ok(Output::OverCap) => {
                    kill(&mut child);
                    return Err(over_cap());
                }
                Ok(Output::Failed(e)) => {
                    kill(&mut child);
                    return Err(format!("reading its output: {e}"));
                }
                Err(_) => {}
            }
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < wait => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                kill(&mut child);
                return Err(format!("still running after {wait:?}; killed"));
            }
            Err(e) => return Err(e.to_string()),
        }
    };
    // It has exited; its output ends once whatever it left behind in its
    // group closes the pipe, which the wait bounds too (with a moment's
    // grace for the last bytes of one that exited at the deadline).
    let output = match output {
        Some(o) => o,
        None => {
            let left = wait.saturating_sub(started.elapsed()) + Duration::from_millis(200);
            match out_rx.recv_timeout(left) {
                Ok(Output::Whole(o)) => o,
                Ok(Output::OverCap) => return Err(over_cap()),
                Ok(Output::Failed(e)) => return Err(format!("reading its output: {e}")),
                Err(_) => {
                    // What is left of its group holds the pipe open.
                    kill(&mut child);
                    return Err(format!("its output did not end within {wait:?}"));
                }
            }
        }
    };
    if !status.success() {
        let err = err_rx
            .recv_timeout(Duration::from_millis(200))
            .unwrap_or_default();
        return Err(format!(
            "exited with {status}{}",
            err.lines()
                .next()
                .map(|l| format!(": {}", shown(l)))
                .unwrap_or_default()
        ));
    }
    Ok(String::from_utf8_lossy(&output).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse_and_bad_ones_say_what_to_give() {
        assert_eq!(
            "prometheus=http://a:9100/metrics,match=node_disk_*|node_load1".parse(),
            Ok(CollectSource::Prometheus {
                url: "http://a:9100/metrics".into(),
                matches: vec!["node_disk_*".into(), "node_load1".into()]
            })
        );
        assert_eq!(
            "cmd=echo a 1, b".parse(),
            Ok(CollectSource::Command {
                command: "echo a 1, b".into()
            })
        );
        for bad in [
            "prometheus=https://a/m",
            "prometheus=a:9100",
            "snmp=x",
            "cmd=",
            "prometheus=http://a/m,every=2",
        ] {
            assert!(bad.parse::<CollectSource>().is_err(), "{bad}");
        }
    }

    #[test]
    fn samples_are_read_as_prometheus_writes_them() {
        let text = "# HELP x y\n# TYPE up gauge\nup 1\nnode_disk_io_now{device=\"sda\"} 3 1700000000\nnode_load1 0.5\nbad_inf +Inf\n";
        let all = parse_samples(text, &[]).unwrap_or_default();
        assert_eq!(
            all,
            vec![
                ("up".to_owned(), 1.0),
                ("node_disk_io_now{device=\"sda\"}".to_owned(), 3.0),
                ("node_load1".to_owned(), 0.5)
            ]
        );
        let some = parse_samples(text, &["node_*".to_owned()]).unwrap_or_default();
        assert_eq!(some.len(), 2);
        assert!(parse_samples("x notanumber\n", &[]).is_err());
        assert_eq!(
            parse_samples("t{a=\"\u{1b}[2J\u{9b}x\"} 1\n", &[]).unwrap_or_default(),
            vec![("t{a=\"[2Jx\"}".to_owned(), 1.0)],
            "control characters in a series name are dropped"
        );
        assert!(parse_samples("x{a=\"b\" 1\n", &[]).is_err());
        assert!(glob("a*c*e", "abcde") && !glob("a*c", "abd") && glob("*", "x"));
    }
}
