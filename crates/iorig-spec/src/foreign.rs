//! Recognising the job files of other tools, so a user who hands iorig a fio
//! job file or a vdbench parmfile is told what it is instead of getting a
//! TOML syntax error (until iorig reads those formats).

/// The other tool whose file `text` looks like, if any.
pub fn foreign_format(text: &str) -> Option<&'static str> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with('#') && !l.starts_with(';') && !l.starts_with('*')
        })
        .collect();
    // vdbench: definitions such as `sd=sd1,lun=/dev/sdb` or `rd=run1,wd=wd1,...`.
    let vdbench = [
        "sd=",
        "wd=",
        "rd=",
        "hd=",
        "fsd=",
        "fwd=",
        "sd=default",
        "wd=default",
    ];
    // vdbench reads its keywords in any case (`SD=sd1,LUN=...`).
    if lines.iter().any(|l| {
        let l = l.to_ascii_lowercase();
        vdbench.iter().any(|p| l.starts_with(p)) && l.contains(',')
    }) {
        return Some("a vdbench parameter file");
    }
    // fio: `[global]` or `[job]` sections of `key=value` lines with fio's keys.
    let fio_keys = [
        "rw=",
        "readwrite=",
        "ioengine=",
        "iodepth=",
        "bs=",
        "numjobs=",
        "runtime=",
        "filename=",
        "direct=",
        "size=",
        "rwmixread=",
        "time_based",
    ];
    // `include FILE` is fio's own directive.
    let fio_lines = lines
        .iter()
        .filter(|l| {
            fio_keys.iter().any(|k| l.replace(' ', "").starts_with(k)) || l.starts_with("include ")
        })
        .count();
    let has_section = lines.iter().any(|l| l.starts_with('[') && l.ends_with(']'));
    let unquoted = lines.iter().any(|l| {
        l.split_once('=').is_some_and(|(_, v)| {
            let v = v.trim();
            !v.is_empty()
                && !v.starts_with('"')
                && !v.starts_with('\'')
                && v.parse::<f64>().is_err()
                && v != "true"
                && v != "false"
                && !v.starts_with('[')
                && !v.starts_with('{')
        })
    });
    // An unquoted text value is not TOML: with a fio key beside it, the
    // file is a job file (even one with a broken section line).
    let opens_section = lines.iter().any(|l| l.starts_with('['));
    if (fio_lines >= 2 && (has_section || unquoted))
        || (fio_lines >= 1 && unquoted && opens_section)
    {
        return Some("a fio job file");
    }
    None
}

/// The message for a file that does not parse as iorig TOML but looks like
/// another tool's: what it is and what to do.
pub fn foreign_hint(what: &str, text: &str) -> Option<String> {
    foreign_format(text).map(|tool| {
        format!(
            "this looks like {tool}, not an iorig {what}; run it as it is with iorig run FILE (iorig import FILE prints the plan it becomes)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_and_vdbench_files_are_recognised_and_toml_is_not() {
        let fio =
            "[global]\nioengine=libaio\ndirect=1\n\n[randread]\nrw=randread\nbs=4k\niodepth=32\n";
        assert_eq!(foreign_format(fio), Some("a fio job file"));
        let fio_no_section = "rw=randwrite\nbs=64k\nfilename=/dev/sdb\n";
        assert_eq!(foreign_format(fio_no_section), Some("a fio job file"));
        let vdbench = "* comment\nsd=sd1,lun=/dev/sdb,openflags=o_direct\nwd=wd1,sd=sd1,xfersize=4k,rdpct=70\nrd=run1,wd=wd1,iorate=max,elapsed=60,interval=1\n";
        assert_eq!(foreign_format(vdbench), Some("a vdbench parameter file"));
        let toml = "bs = \"4k\"\nread = 70\nqd = 16\ntime = \"30s\"\n";
        assert_eq!(foreign_format(toml), None);
        let plan = "name = \"x\"\n[defaults]\nbs = \"4k\"\n[[steps]]\nqd = [1, 2]\n";
        assert_eq!(foreign_format(plan), None);
    }
}
