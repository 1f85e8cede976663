//! "Did you mean ...?" for a mistyped key: the nearest known name by edit
//! distance, when it is near enough to be a typo rather than another word.

/// The candidate nearest to `word` (Damerau-Levenshtein), if at most a
/// third of the word's letters away (at least one edit allowed).
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// ` Did you mean 'NAME'?` for `word`, or nothing.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    nearest(word, candidates)
        .map(|c| format!(" Did you mean '{c}'?"))
        .unwrap_or_default()
}

/// A serde "unknown field" message (`unknown field `x`, expected one of `a`,
/// `b``) with the nearest expected name suggested after it.
pub fn unknown_field_hint(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message.to_owned();
    };
    let Some((field, expected)) = rest.split_once('`') else {
        return message.to_owned();
    };
    let names = expected.split('`').skip(1).step_by(2);
    format!("{message}.{}", did_you_mean(field, names))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_are_matched_and_other_words_are_not() {
        let keys = ["threads", "time", "qd", "read", "random", "rate"];
        assert_eq!(nearest("treads", keys), Some("threads"));
        assert_eq!(nearest("thraeds", keys), Some("threads"));
        assert_eq!(nearest("qdd", keys), Some("qd"));
        assert_eq!(nearest("bandwidth", keys), None);
        assert_eq!(
            unknown_field_hint("unknown field `treads`, expected one of `time`, `threads`"),
            "unknown field `treads`, expected one of `time`, `threads`. Did you mean 'threads'?"
        );
        assert_eq!(unknown_field_hint("invalid type"), "invalid type");
    }
}
