//! Text as it may reach a terminal. iorig's own text has no control
//! characters; names from job files, stores, agents and exporters may, and
//! every line the binary prints passes through here.

/// `text` as it may reach a terminal: control characters dropped (C0 but
/// newline and tab, DEL, C1), so a name from a job file, a store, an agent
/// or a storage exporter cannot move the cursor, clear the screen or set
/// the window title. iorig's own text has none, so this is the one place
/// every line passes, whatever its origin.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if text.contains(bad) {
        std::borrow::Cow::Owned(text.chars().filter(|&c| !bad(c)).collect())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// JSON as it may reach a terminal: serde_json escapes C0 controls in
/// strings but writes DEL and C1 (U+007F to U+009F) raw, and a terminal may
/// take U+009B for a control sequence. They only occur inside strings, where
/// `\u00XX` is the same value.
pub fn printable_json(text: &str) -> std::borrow::Cow<'_, str> {
    let raw = |c: char| ('\u{7f}'..='\u{9f}').contains(&c);
    if !text.contains(raw) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_never_reach_a_terminal() {
        assert_eq!(
            printable("job\u{1b}[2J\u{1b}]0;owned\u{7}x\r\u{9b}31m\u{7f}\tend\nnext"),
            "job[2J]0;ownedx31m\tend\nnext"
        );
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
        let json = serde_json::to_string(&serde_json::json!({"name": "a\u{9b}b\u{1b}c"}))
            .unwrap_or_default();
        let shown = printable_json(&json);
        assert_eq!(shown, r#"{"name":"a\u009bb\u001bc"}"#);
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap_or_default();
        assert_eq!(back["name"], "a\u{9b}b\u{1b}c", "the same value");
    }
}
