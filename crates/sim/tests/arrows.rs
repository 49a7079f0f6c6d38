//! The arrows of docs/architecture.md, read off the source: inside `sim`, `setup`
//! fills the network, `engine` runs it and `observe` reads it, so neither `engine`
//! nor `observe` names `setup`, and the network and the engine's data below them
//! name none of the three; transports and scenarios name none of them either. In
//! `aqm`, a qdisc's files name no other qdisc: what several share is in `parts/`
//! (or, for the fair-queueing family, in `fq/`, which no registry kind is), and
//! `fq/`'s buffer managers do not name the dispatch over them.
//!
//! A module "names" another when a path `crate::other` (or `crate::{other, ..}`,
//! or `aqm::other`) appears outside a comment, a macro's path too
//! (`crate::delta::counters!`): `sim` exports no macro from its root, where its
//! path would not say which module it comes from.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir` (or `dir` itself when it is a file), sorted.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return out;
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(sources(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

/// The modules `text` names after `prefix` (`crate::` or `aqm::`), with the line
/// of each, comments left out.
fn named(text: &str, prefix: &str) -> Vec<(usize, String)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find(prefix) {
            // `mycrate::x` is not `crate::x`.
            let before = rest[..at].chars().last();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a::x, b}`: the first name of each item at depth 1.
                let mut depth = 1;
                let mut item_start = true;
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        ',' if depth == 1 => item_start = true,
                        c if c.is_whitespace() => {}
                        _ if item_start && depth == 1 => {
                            out.push((n + 1, ident(&group[i..])));
                            item_start = false;
                        }
                        _ => {}
                    }
                }
            } else {
                out.push((n + 1, ident(rest)));
            }
        }
    }
    out
}

/// The places under `dirs` (relative to `root`) that name one of `banned`.
fn violations(root: &Path, dirs: &[&str], prefix: &str, banned: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for d in dirs {
        for file in sources(&root.join(d)) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (line, module) in named(&text, prefix) {
                if banned.contains(&module.as_str()) {
                    let rel = file.strip_prefix(root).unwrap().display();
                    out.push(format!("{rel}:{line} names {prefix}{module}"));
                }
            }
        }
    }
    out
}

fn sim_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn engine_and_observe_do_not_import_setup() {
    let v = violations(
        &sim_src(),
        &["engine", "observe", "report.rs"],
        "crate::",
        &["setup", "build"],
    );
    assert!(
        v.is_empty(),
        "arrows point back to setup:\n{}",
        v.join("\n")
    );
}

/// The emulator names `sim`'s front doors only: `runner` for setting up,
/// counting and reporting as the engine does, the scenario and the transports'
/// settings it checks, results and their text; items of `sim`'s root
/// (`sim::Scenario`) too. Everything else of `sim` it reaches through `runner`.
#[test]
fn the_emulator_names_only_the_front_doors_of_sim() {
    const FRONT_DOORS: [&str; 6] = ["runner", "results", "scenario", "tcp", "udp", "text"];
    // sim's modules, from the `mod` lines of its root.
    let lib = std::fs::read_to_string(sim_src().join("lib.rs")).unwrap();
    let modules: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_suffix(';'))
        .filter_map(|l| l.split_once("mod ").map(|(_, m)| m.trim()))
        .collect();
    assert!(
        modules.contains(&"runner") && modules.contains(&"link"),
        "{modules:?}"
    );
    let emu = Path::new(env!("CARGO_MANIFEST_DIR")).join("../emu/src");
    let mut v = Vec::new();
    for file in sources(&emu) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, module) in named(&text, "sim::") {
            if modules.contains(&module.as_str()) && !FRONT_DOORS.contains(&module.as_str()) {
                let rel = file.strip_prefix(&emu).unwrap().display();
                v.push(format!("emu/src/{rel}:{line} names sim::{module}"));
            }
        }
    }
    assert!(
        v.is_empty(),
        "the emulator reaches past sim's front doors (add what it needs to sim::runner):\n{}",
        v.join("\n")
    );
}

#[test]
fn the_network_imports_none_of_the_parts_above_it() {
    let v = violations(
        &sim_src(),
        &["net", "link.rs", "wire.rs", "flow.rs", "header.rs", "event"],
        "crate::",
        &["setup", "build", "engine", "observe", "report", "front"],
    );
    assert!(
        v.is_empty(),
        "the network imports upward:\n{}",
        v.join("\n")
    );
}

#[test]
fn transports_and_scenarios_import_no_part_that_uses_them() {
    let v = violations(
        &sim_src(),
        &["tcp", "udp.rs", "probe.rs", "scenario"],
        "crate::",
        &["setup", "build", "engine", "observe", "report", "front"],
    );
    assert!(v.is_empty(), "imports upward:\n{}", v.join("\n"));
}

#[test]
fn every_macro_is_named_by_the_path_of_its_module() {
    let mut v = Vec::new();
    for file in sources(&sim_src()) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line
                .split("//")
                .next()
                .unwrap_or("")
                .contains("#[macro_export]")
            {
                let rel = file.strip_prefix(sim_src()).unwrap().display();
                v.push(format!("{rel}:{}", n + 1));
            }
        }
    }
    assert!(
        v.is_empty(),
        "a #[macro_export] macro is named from the crate's root, hiding its module \
         from these rules: declare it with `pub(crate) use NAME;` instead:\n{}",
        v.join("\n")
    );
}

/// The modules of the qdisc kinds in `aqm`'s registry (`any.rs`).
fn qdisc_modules(aqm: &Path) -> BTreeSet<String> {
    let any = std::fs::read_to_string(aqm.join("any.rs")).unwrap();
    let mut out = BTreeSet::new();
    for line in any.lines() {
        // `    Red = "red": Box<crate::red::Red>, crate::red::RedParams;`
        let Some((_, ty)) = line.split_once("\": ") else {
            continue;
        };
        let ty = ty.trim_start_matches("Box<");
        if let Some(path) = ty.strip_prefix("crate::") {
            out.insert(path.split("::").next().unwrap().to_string());
        }
    }
    out
}

#[test]
fn no_qdisc_imports_another() {
    let aqm = Path::new(env!("CARGO_MANIFEST_DIR")).join("../aqm/src");
    let qdiscs = qdisc_modules(&aqm);
    assert!(
        qdiscs.len() >= 19 && qdiscs.contains("red") && qdiscs.contains("drr"),
        "the registry was not read: {qdiscs:?}"
    );
    let mut v = Vec::new();
    for q in &qdiscs {
        let others: Vec<&str> = qdiscs
            .iter()
            .filter(|o| *o != q)
            .map(String::as_str)
            .collect();
        // A tree's example configurations (`htb/examples.rs`) name the kinds
        // of its leaves; its own code reaches them only through the registry.
        let mut dirs = vec![format!("{q}.rs")];
        if aqm.join(q).join("examples.rs").exists() {
            for e in std::fs::read_dir(aqm.join(q)).unwrap() {
                let name = e.unwrap().file_name().into_string().unwrap();
                if name != "examples.rs" {
                    dirs.push(format!("{q}/{name}"));
                }
            }
        } else {
            dirs.push(q.clone());
        }
        let dirs: Vec<&str> = dirs
            .iter()
            .map(String::as_str)
            .filter(|d| aqm.join(d).exists())
            .collect();
        v.extend(violations(&aqm, &dirs, "crate::", &others));
        v.extend(violations(&aqm, &dirs, "aqm::", &others));
    }
    assert!(v.is_empty(), "a qdisc imports another:\n{}", v.join("\n"));
}

/// The fair-queueing family's buffer managers implement the interface in
/// `fq/manager.rs` and never name `fq/buffer.rs`, the dispatch over them, so the
/// two are not a circle. (A manager's unit tests may look inside a built qdisc
/// through the dispatch, by `crate::fq::buffer`.)
#[test]
fn buffer_managers_do_not_name_the_dispatch_over_them() {
    let fq = Path::new(env!("CARGO_MANIFEST_DIR")).join("../aqm/src/fq");
    let managers = [
        "droptail.rs",
        "dropfront.rs",
        "lqd.rs",
        "alqd.rs",
        "alqd_plus.rs",
        "manager.rs",
    ];
    let v = violations(&fq, &managers, "super::", &["buffer"]);
    assert!(v.is_empty(), "a circle in fq/:\n{}", v.join("\n"));
    let named: Vec<String> = named(
        &std::fs::read_to_string(fq.join("lqd.rs")).unwrap(),
        "super::",
    )
    .into_iter()
    .map(|(_, m)| m)
    .collect();
    assert!(
        named.contains(&"manager".to_string()),
        "not read: {named:?}"
    );
}

/// The scanner itself: paths in code count, in comments not; grouped imports and
/// other crates' `crate::` do.
#[test]
fn the_scanner_reads_paths_as_rust_writes_them() {
    let text = "use crate::setup::Network; // crate::engine\n\
                use crate::{observe::Observers, link};\n\
                /// [`crate::report`]\n\
                let x = mycrate::engine::f();\n\
                crate::delta::counters! {\n";
    let got: Vec<String> = named(text, "crate::").into_iter().map(|(_, m)| m).collect();
    assert_eq!(got, ["setup", "observe", "link", "delta"]);
}
