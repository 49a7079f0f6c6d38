//! Scenarios shipped with aqmlab, embedded so the CLI and Python find them without
//! a checkout: `aqmlab run` with no file runs [`DEFAULT`].

/// (name, TOML text), one per file under `scenarios/`.
pub const BUILTINS: &[(&str, &str)] = &[
    ("choke", include_str!("../../../../scenarios/choke.toml")),
    (
        "choke-fig3",
        include_str!("../../../../scenarios/choke-fig3.toml"),
    ),
    (
        "choke-fig5",
        include_str!("../../../../scenarios/choke-fig5.toml"),
    ),
    (
        "choke-fig9",
        include_str!("../../../../scenarios/choke-fig9.toml"),
    ),
    (
        "choke-table1",
        include_str!("../../../../scenarios/choke-table1.toml"),
    ),
    (
        "sfb-fig2b",
        include_str!("../../../../scenarios/sfb-fig2b.toml"),
    ),
    (
        "sfb-fig4",
        include_str!("../../../../scenarios/sfb-fig4.toml"),
    ),
    (
        "sfb-fig8",
        include_str!("../../../../scenarios/sfb-fig8.toml"),
    ),
    (
        "aggfq-fig3",
        include_str!("../../../../scenarios/aggfq-fig3.toml"),
    ),
    (
        "breathe-fig2",
        include_str!("../../../../scenarios/breathe-fig2.toml"),
    ),
    (
        "sfred-nlred-fig1",
        include_str!("../../../../scenarios/sfred-nlred-fig1.toml"),
    ),
    (
        "sfred-nlred-fig12",
        include_str!("../../../../scenarios/sfred-nlred-fig12.toml"),
    ),
    (
        "dumbbell-red",
        include_str!("../../../../scenarios/dumbbell-red.toml"),
    ),
    (
        "rate-step",
        include_str!("../../../../scenarios/rate-step.toml"),
    ),
    (
        "l4s-dualpi2",
        include_str!("../../../../scenarios/l4s-dualpi2.toml"),
    ),
    (
        "l4s-pie",
        include_str!("../../../../scenarios/l4s-pie.toml"),
    ),
    (
        "l4s-red",
        include_str!("../../../../scenarios/l4s-red.toml"),
    ),
    (
        "bbr-vs-cubic",
        include_str!("../../../../scenarios/bbr-vs-cubic.toml"),
    ),
    (
        "rrul-like",
        include_str!("../../../../scenarios/rrul-like.toml"),
    ),
    (
        "cake-hosts",
        include_str!("../../../../scenarios/cake-hosts.toml"),
    ),
];

/// What `aqmlab run` runs when given no file.
pub const DEFAULT: &str = "choke";

/// The TOML text of a built-in scenario.
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The first sentence of a built-in scenario: its leading comment's first paragraph.
pub fn describe(text: &str) -> String {
    // The first paragraph of the leading comment: one sentence, which may take
    // more than one line.
    text.lines()
        .skip_while(|l| !l.starts_with("# "))
        .map_while(|l| l.strip_prefix("# "))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Columns `aqmlab scenarios` wraps its descriptions at.
const WIDTH: usize = 80;

/// What `aqmlab scenarios` prints: each built-in's name and description, the
/// description wrapped under itself, the default marked.
pub fn listing() -> String {
    const NAME: usize = 18;
    let mut out = String::new();
    for (name, body) in BUILTINS {
        let mark = if *name == DEFAULT { " (default)" } else { "" };
        let text = format!("{}{mark}", describe(body));
        // A name longer than its column takes a line of its own.
        let mut line = if name.len() < NAME {
            format!("{name:<NAME$}")
        } else {
            out.push_str(name);
            out.push('\n');
            " ".repeat(NAME)
        };
        let mut empty = true;
        for word in text.split_whitespace() {
            if !empty && line.len() + 1 + word.len() > WIDTH {
                out.push_str(&line);
                out.push('\n');
                line = " ".repeat(NAME);
                empty = true;
            }
            if !empty {
                line.push(' ');
            }
            line.push_str(word);
            empty = false;
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    #[test]
    fn the_listing_gives_every_description_whole_and_wrapped() {
        let listing = listing();
        for (name, text) in BUILTINS {
            let d = describe(text);
            assert!(d.ends_with('.'), "{name}: {d:?} is not a whole sentence");
            let words: Vec<&str> = d.split_whitespace().collect();
            assert!(
                listing
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .windows(words.len())
                    .any(|w| w == words.as_slice()),
                "{name}: {d:?} is not whole in the listing"
            );
        }
        assert!(listing.lines().all(|l| l.len() <= WIDTH), "{listing}");
        assert!(listing.contains(&format!("{DEFAULT} ")));
    }

    #[test]
    fn every_builtin_parses_and_builds() {
        for (name, text) in BUILTINS {
            let s = Scenario::from_toml(text, name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.file.name, *name, "a built-in's name matches its file");
            crate::Simulation::new(&s).unwrap();
        }
        assert!(builtin(DEFAULT).is_some());
    }

    #[test]
    fn every_file_under_scenarios_is_a_builtin() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let name = path.file_stem().unwrap().to_str().unwrap();
                let text = std::fs::read_to_string(&path).unwrap();
                assert_eq!(
                    builtin(name),
                    Some(text.as_str()),
                    "scenarios/{name}.toml is not in BUILTINS"
                );
            }
        }
    }
}
