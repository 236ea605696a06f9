//! Run-length encoding of text.

/// Each run of one character becomes the character followed by the run's length.
pub fn encode(text: &str) -> String {
    let mut out = String::new();
    let mut run: Option<(char, usize)> = None;
    for c in text.chars() {
        run = match run {
            Some((last, n)) if last == c => Some((last, n + 1)),
            Some((last, n)) => {
                out.push_str(&format!("{}{}", last, n));
                Some((c, 1))
            }
            None => Some((c, 1)),
        };
    }
    out
}
