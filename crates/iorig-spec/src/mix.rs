//! Weighted size mixes, one grammar for every parameter that takes one:
//! block sizes (`bs`, `read_bs`, `write_bs`) and file sizes (`file_size`).
//! `SIZE` alone, or `SIZE:WEIGHT,SIZE:WEIGHT,...` with whole weights above 0
//! (relative: they need not sum to 100). What a size may be (zero, a
//! ceiling) is the parameter's rule, given to [`parse`].

use crate::units::{format_size, parse_size};
use crate::SpecError;

/// What one parameter accepts of the grammar.
pub(crate) struct MixRules {
    /// The parameter's name, as errors give it.
    pub key: &'static str,
    /// An example of a mix, for the error on an empty entry.
    pub example: &'static str,
    /// Whether a size of 0 is allowed (an empty file).
    pub zero_ok: bool,
    /// The largest size allowed, and how to say it.
    pub max: Option<(u64, &'static str)>,
}

/// Parses `text` under `rules` into (size in bytes, weight) entries.
pub(crate) fn parse(text: &str, rules: &MixRules) -> Result<Vec<(u64, u32)>, SpecError> {
    let bad = |why: String| SpecError::bad(rules.key, text, why);
    let mut sizes = Vec::new();
    for part in text.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(bad(format!("empty entry; write e.g. {}", rules.example)));
        }
        let (size, weight) = match part.split_once(':') {
            Some((s, w)) => {
                let w: u32 = w.trim().parse().ok().filter(|w| *w > 0).ok_or_else(|| {
                    bad(format!(
                        "weight '{}' is not a whole number above 0 (drop an entry instead of weighting it 0)",
                        w.trim()
                    ))
                })?;
                (s, w)
            }
            None => (part, 1),
        };
        let bytes = parse_size(size).map_err(|e| match e {
            SpecError::BadSize { value, why } => bad(format!(
                "size '{value}': {why} (use e.g. 512, 4k, 64k or 1m)"
            )),
            other => other,
        })?;
        if bytes == 0 && !rules.zero_ok {
            return Err(bad("size 0; give a size such as 4k".into()));
        }
        if let Some((max, said)) = rules.max {
            if bytes > max {
                return Err(bad(format!("size {} above {said}", format_size(bytes))));
            }
        }
        sizes.push((bytes, weight));
    }
    Ok(sizes)
}

/// The mix as [`parse`] reads it: `4k`, or `4k:50,8k:30`.
pub(crate) fn format(sizes: &[(u64, u32)]) -> String {
    if let [(s, _)] = sizes {
        return format_size(*s);
    }
    sizes
        .iter()
        .map(|(s, w)| format!("{}:{w}", format_size(*s)))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const FILES: MixRules = MixRules {
        key: "file-size",
        example: "4k:70,64k:30",
        zero_ok: true,
        max: None,
    };
    const BLOCKS: MixRules = MixRules {
        key: "bs",
        example: "4k:50,8k:50",
        zero_ok: false,
        max: Some((u32::MAX as u64, "4 GiB")),
    };

    #[test]
    fn one_grammar_two_rules() {
        for rules in [&FILES, &BLOCKS] {
            assert_eq!(parse("4k", rules).unwrap(), [(4096, 1)]);
            let mix = parse(" 4k:70 , 64k:30", rules).unwrap();
            assert_eq!(mix, [(4096, 70), (65536, 30)]);
            assert_eq!(format(&mix), "4k:70,64k:30");
            assert_eq!(parse(&format(&mix), rules).unwrap(), mix, "round trip");
            for bad in ["", "4k,", "4k:0", "4k:x", "4q", "4k:-1"] {
                let e = parse(bad, rules).unwrap_err().to_string();
                assert!(e.starts_with(&format!("bad {} '", rules.key)), "{bad}: {e}");
            }
        }
        // The rules: files may be empty, blocks may not; blocks stop at 4 GiB.
        assert_eq!(parse("0", &FILES).unwrap(), [(0, 1)]);
        assert!(parse("0", &BLOCKS)
            .unwrap_err()
            .to_string()
            .contains("size 0"));
        assert!(parse("8g", &BLOCKS)
            .unwrap_err()
            .to_string()
            .contains("above 4 GiB"));
        assert_eq!(parse("8g", &FILES).unwrap(), [(8 << 30, 1)]);
    }
}
