//! Writing a `--json` document.

use serde::Serialize;

/// Writes a `--json` document: pretty-printed to FILE, or alone on stdout for `-`.
pub fn write_json_doc<T: Serialize>(
    printer: &super::Printer,
    dest: &str,
    doc: &T,
) -> Result<(), crate::Failure> {
    let text = serde_json::to_string_pretty(doc)
        .map_err(|e| crate::Failure::runtime(format!("encoding JSON: {e}")))?;
    if dest == "-" {
        printer.json_stdout(&text);
        Ok(())
    } else {
        crate::store::write_output(
            "--json",
            std::path::Path::new(dest),
            (text + "\n").as_bytes(),
        )
    }
}
