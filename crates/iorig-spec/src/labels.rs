//! What a run's label may hold. Labels come from command lines, plan files,
//! agents and (later) web pages, and go to terminals, HTML pages, CSV and
//! metrics: the store takes only what every one of them can carry — bounded
//! in size, no control characters (a terminal escape or a line break in a
//! label would rewrite what a user reads). Markup such as `<script>` is
//! allowed and escaped by whatever shows it.

/// The longest key, in bytes.
pub const LABEL_KEY_MAX_BYTES: usize = 128;
/// The longest value, in bytes.
pub const LABEL_VALUE_MAX_BYTES: usize = 1024;

/// A label (or its key) as an error message shows it: without control
/// characters and at most `max_chars` characters, `…` marking a cut, so
/// the message stays one readable line.
pub fn shown_label(text: &str, max_chars: usize) -> String {
    let mut shown: String = text
        .chars()
        .filter(|c| !c.is_control())
        .take(max_chars)
        .collect();
    if text.chars().filter(|c| !c.is_control()).count() > max_chars {
        shown.push('…');
    }
    shown
}

/// `text` without its control characters (C0, DEL, C1): a name taken from
/// another tool's file (a fio section, a vdbench `sd=`) as iorig shows and
/// stores it, so an escape sequence written in the file never reaches a
/// terminal through `iorig run`, `runs show` or the store.
pub fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// Checks a name a user writes (a plan's, a step's, a job's); the reason
/// it cannot be taken, as a phrase. Names are shown as labels are, so they
/// hold no control characters either.
pub fn check_name(text: &str) -> Result<(), String> {
    match text.chars().find(|c| c.is_control()) {
        Some(c) => Err(format!(
            "holds a control character (U+{:04X}); names are shown on terminals and pages, so give printable text",
            u32::from(c)
        )),
        None => Ok(()),
    }
}

/// Checks one label; the reason it cannot be stored, as a phrase ("the key
/// is empty").
pub fn check_label(key: &str, value: &str) -> Result<(), String> {
    if key.trim().is_empty() {
        return Err("the key is empty".into());
    }
    if key.len() > LABEL_KEY_MAX_BYTES {
        return Err(format!(
            "the key is {} bytes long; give at most {LABEL_KEY_MAX_BYTES}",
            key.len()
        ));
    }
    if key.contains('=') {
        return Err("the key holds '=' (KEY=VALUE splits at the first '=')".into());
    }
    if value.len() > LABEL_VALUE_MAX_BYTES {
        return Err(format!(
            "the value is {} bytes long; give at most {LABEL_VALUE_MAX_BYTES}",
            value.len()
        ));
    }
    for (part, text) in [("key", key), ("value", value)] {
        if let Some(c) = text.chars().find(|c| c.is_control()) {
            return Err(format!(
                "the {part} holds a control character (U+{:04X}); labels are shown on terminals and pages",
                u32::from(c)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_bounded_and_printable_and_markup_is_allowed() {
        assert_eq!(check_label("fw", "1.2"), Ok(()));
        assert_eq!(check_label("note", "<script>alert(1)</script>"), Ok(()));
        assert_eq!(check_label("site", "東京 ü"), Ok(()));
        assert_eq!(check_label("k", ""), Ok(()));
        assert!(check_label(" ", "v").unwrap_err().contains("empty"));
        assert!(check_label(&"k".repeat(129), "v")
            .unwrap_err()
            .contains("at most 128"));
        assert_eq!(check_label(&"k".repeat(128), &"v".repeat(1024)), Ok(()));
        assert!(check_label("k", &"v".repeat(1025))
            .unwrap_err()
            .contains("at most 1024"));
        assert!(check_label("a=b", "v").unwrap_err().contains("'='"));
        assert!(check_label("k", "red\u{1b}[31m")
            .unwrap_err()
            .contains("U+001B"));
        assert!(check_label("k\n", "v").unwrap_err().contains("the key"));
        assert!(check_label("k", "two\nlines")
            .unwrap_err()
            .contains("U+000A"));
        assert_eq!(shown_label("a\u{1b}[2Jb", 10), "a[2Jb");
        assert_eq!(
            shown_label(&"x".repeat(50), 40),
            format!("{}…", "x".repeat(40))
        );
        assert_eq!(shown_label("short", 40), "short");
    }

    #[test]
    fn names_lose_or_refuse_control_characters() {
        // C0 (ESC, BEL, line breaks), DEL and C1 (CSI, U+009B) all go.
        assert_eq!(
            printable("job\u{1b}[2Jx\u{7}\n\u{7f}\u{9b}31m ü"),
            "job[2Jx31m ü"
        );
        assert_eq!(check_name("read 4k <b>"), Ok(()));
        assert!(check_name("a\u{1b}[2J").unwrap_err().contains("U+001B"));
        assert!(check_name("a\u{9b}").unwrap_err().contains("U+009B"));
    }
}
