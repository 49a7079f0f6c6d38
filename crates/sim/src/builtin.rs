//! Scenarios shipped with aqmlab, embedded so the CLI and Python find them without
//! a checkout: `aqmlab run` with no file runs [`DEFAULT`].

/// (name, TOML text), one per file under `scenarios/`.
pub const BUILTINS: &[(&str, &str)] = &[
    ("choke", include_str!("../../../scenarios/choke.toml")),
    (
        "choke-fig3",
        include_str!("../../../scenarios/choke-fig3.toml"),
    ),
    (
        "choke-fig5",
        include_str!("../../../scenarios/choke-fig5.toml"),
    ),
    (
        "choke-fig9",
        include_str!("../../../scenarios/choke-fig9.toml"),
    ),
    (
        "choke-table1",
        include_str!("../../../scenarios/choke-table1.toml"),
    ),
    (
        "sfb-fig2b",
        include_str!("../../../scenarios/sfb-fig2b.toml"),
    ),
    ("sfb-fig4", include_str!("../../../scenarios/sfb-fig4.toml")),
    ("sfb-fig8", include_str!("../../../scenarios/sfb-fig8.toml")),
    (
        "aggfq-fig3",
        include_str!("../../../scenarios/aggfq-fig3.toml"),
    ),
    (
        "breathe-fig2",
        include_str!("../../../scenarios/breathe-fig2.toml"),
    ),
    (
        "sfred-nlred-fig1",
        include_str!("../../../scenarios/sfred-nlred-fig1.toml"),
    ),
    (
        "sfred-nlred-fig12",
        include_str!("../../../scenarios/sfred-nlred-fig12.toml"),
    ),
    (
        "dumbbell-red",
        include_str!("../../../scenarios/dumbbell-red.toml"),
    ),
];

/// What `aqmlab run` runs when given no file.
pub const DEFAULT: &str = "choke";

/// The TOML text of a built-in scenario.
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The first comment line of a built-in scenario, as its one-line description.
pub fn describe(text: &str) -> &str {
    text.lines()
        .find_map(|l| l.strip_prefix("# "))
        .unwrap_or("")
}

/// What `aqmlab scenarios` prints: each built-in's name and description, one a
/// line, the default marked.
pub fn listing() -> String {
    BUILTINS
        .iter()
        .map(|(name, body)| {
            let mark = if *name == DEFAULT { " (default)" } else { "" };
            format!("{name:<16} {}{mark}\n", describe(body))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

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
