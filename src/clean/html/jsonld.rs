//! `articleBody` read out of JSON-LD: pages rendered by scripts may carry
//! their text nowhere else.

/// Decoded JSON string values following each occurrence of `key` (quoted),
/// found by a linear scan without parsing the whole document.
pub(super) fn json_strings_for_key(json: &str, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = json;
    while let Some(pos) = rest.find(key) {
        rest = &rest[pos + key.len()..];
        let after = rest.trim_start();
        let Some(after) = after.strip_prefix(':') else {
            continue;
        };
        let after = after.trim_start();
        let Some(after) = after.strip_prefix('"') else {
            continue;
        };
        let mut val = String::new();
        let mut chars = after.char_indices();
        let mut end = after.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    end = i + 1;
                    break;
                }
                '\\' => match chars.next().map(|(_, e)| e) {
                    Some('n') => val.push('\n'),
                    Some('t' | 'r') => val.push(' '),
                    Some('u') => {
                        let hex: String = chars.by_ref().take(4).map(|(_, h)| h).collect();
                        let mut code = u32::from_str_radix(&hex, 16).unwrap_or(0xFFFD);
                        if (0xD800..0xDC00).contains(&code) {
                            // A surrogate pair: `\uD83D\uDE00`.
                            let low: String = chars.clone().take(6).map(|(_, h)| h).collect();
                            if let Some(l) = low
                                .strip_prefix("\\u")
                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                .filter(|l| (0xDC00..0xE000).contains(l))
                            {
                                for _ in 0..6 {
                                    chars.next();
                                }
                                code = 0x10000 + ((code - 0xD800) << 10) + (l - 0xDC00);
                            }
                        }
                        val.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                    }
                    Some(e) => val.push(e),
                    None => break,
                },
                _ => val.push(c),
            }
        }
        rest = &after[end..];
        out.push(val);
    }
    out
}
