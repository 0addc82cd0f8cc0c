//! A `gpgpusim.config` read as GPGPU-Sim's own option parser reads it (`src/option_parser.cc`,
//! `OptionParser::ParseFile`): `#` starts a comment to the end of its line, the lines join into
//! one stream of whitespace-separated tokens, a token that opens with `"` runs to the token that
//! closes it (across lines, quotes removed), every option is `-name value`, and the last of an
//! option's occurrences wins (docs/gpgpusim.md §1).

use std::path::Path;

/// Largest configuration file read (GPGPU-Sim's tested configurations are under 10 KiB).
pub const MAX_BYTES: u64 = 1 << 20;

/// One option as written: its name (with the leading `-`), its value and the line it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opt {
    pub name: String,
    pub value: String,
    pub line: usize,
}

/// A configuration file's options, in file order, repeats included.
#[derive(Clone, Debug)]
pub struct Config {
    /// The file as the user named it, for messages.
    pub file: String,
    pub options: Vec<Opt>,
}

impl Config {
    /// Reads and parses `path`; every problem is one line naming the file (and the line).
    pub fn read(path: &Path) -> Result<Config, String> {
        let file = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {file}: {e}"))?;
        if meta.is_dir() {
            return Err(format!("cannot read {file}: it is a directory"));
        }
        if meta.len() > MAX_BYTES {
            return Err(format!(
                "{file}: {} bytes; allowed: a GPGPU-Sim configuration of at most {MAX_BYTES} bytes",
                meta.len()
            ));
        }
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read {file}: {e}"))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            format!(
                "{file}: not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            )
        })?;
        Config::parse(&file, &text)
    }

    /// Parses `text` (named `file` in messages).
    pub fn parse(file: &str, text: &str) -> Result<Config, String> {
        let tokens = tokens(file, text)?;
        let mut options = vec![];
        let mut i = 0;
        while i < tokens.len() {
            let (line, name) = &tokens[i];
            if !name.starts_with('-') || name.len() < 2 {
                return Err(format!(
                    "{file} line {line}: `{}` is not an option; allowed: -name value pairs",
                    smrtl_hdl::shown(name)
                ));
            }
            if name == "-config" {
                return Err(format!(
                    "{file} line {line}: -config includes another file; allowed: one self-contained \
                     file (copy the included options in)"
                ));
            }
            // A value is the next token, unless that is the next option: then this one is a
            // flag given alone, which GPGPU-Sim sets to 1 (`OptionRegistry<bool>::fromString`).
            let value = match tokens.get(i + 1) {
                Some((_, v)) if !is_option(v) => {
                    i += 1;
                    v.clone()
                }
                _ => "1".to_string(),
            };
            options.push(Opt {
                name: name.clone(),
                value,
                line: *line,
            });
            i += 1;
        }
        Ok(Config {
            file: file.to_string(),
            options,
        })
    }

    /// The option `name` as it takes effect: its last occurrence.
    pub fn get(&self, name: &str) -> Option<&Opt> {
        self.options.iter().rev().find(|o| o.name == name)
    }

    /// Every option name once, at its last occurrence, in file order.
    pub fn effective(&self) -> Vec<&Opt> {
        self.options
            .iter()
            .enumerate()
            .filter(|(i, o)| !self.options[i + 1..].iter().any(|l| l.name == o.name))
            .map(|(_, o)| o)
            .collect()
    }
}

/// Whether token `t` is an option name rather than a value (`-5` is a value).
fn is_option(t: &str) -> bool {
    t.starts_with('-') && !t[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

/// The file's tokens with the line each starts on: comments dropped, quoted values joined.
fn tokens(file: &str, text: &str) -> Result<Vec<(usize, String)>, String> {
    let words: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .flat_map(|(n, line)| {
            let code = line.split('#').next().unwrap_or("");
            code.split_whitespace().map(move |w| (n + 1, w))
        })
        .collect();
    let mut out = vec![];
    let mut i = 0;
    while i < words.len() {
        let (line, word) = words[i];
        if !word.starts_with('"') {
            out.push((line, word.to_string()));
            i += 1;
            continue;
        }
        // As `ParseStringStream`: join the following words with one space until one ends
        // with a quote, then drop the first and last characters.
        let mut joined = word.to_string();
        while joined.len() < 2 || !joined.ends_with('"') {
            i += 1;
            let Some((_, next)) = words.get(i) else {
                return Err(format!(
                    "{file} line {line}: a quoted value is not closed; allowed: \"...\" closed by a \
                     quote, on this line or a later one"
                ));
            };
            joined = format!("{joined} {next}");
        }
        out.push((line, joined[1..joined.len() - 1].to_string()));
        i += 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(text: &str) -> Vec<(String, String, usize)> {
        Config::parse("t.config", text)
            .unwrap()
            .options
            .into_iter()
            .map(|o| (o.name, o.value, o.line))
            .collect()
    }

    #[test]
    fn comments_quotes_flags_and_the_last_occurrence() {
        let text = "# a comment\n-a 1 # trailing\n-b \"x=1:y=2:\n   z=3\"\n-flag\n-c -5\n-a 2\n";
        let o = opts(text);
        assert_eq!(
            o,
            vec![
                ("-a".into(), "1".into(), 2),
                ("-b".into(), "x=1:y=2: z=3".into(), 3),
                ("-flag".into(), "1".into(), 5),
                ("-c".into(), "-5".into(), 6),
                ("-a".into(), "2".into(), 7),
            ]
        );
        let c = Config::parse("t.config", text).unwrap();
        assert_eq!(c.get("-a").unwrap().value, "2");
        let names: Vec<&str> = c.effective().iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["-b", "-flag", "-c", "-a"]);
    }

    #[test]
    fn refusals_name_the_line() {
        let e = Config::parse("t.config", "-a 1\nstray\n").unwrap_err();
        assert!(
            e.contains("line 2") && e.contains("`stray` is not an option"),
            "{e}"
        );
        let e = Config::parse("t.config", "-a \"open\n-b 2\n").unwrap_err();
        assert!(e.contains("line 1") && e.contains("not closed"), "{e}");
        let e = Config::parse("t.config", "-config other.config\n").unwrap_err();
        assert!(e.contains("-config includes another file"), "{e}");
    }
}
