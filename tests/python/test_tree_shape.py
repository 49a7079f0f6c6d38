"""The tree's size guides, held by a test rather than by memory.

A source file of the product stays under 600 lines and its `//!` header under
40 (a crate's `lib.rs` is exempt from the header rule: it carries the crate map
and, for `sim`, the tutorial). The files already past a guide are listed with
the length they had when the rule came in: they may shrink, never grow, and
leave the list once they are back under it. Test files (`tests.rs`, `tests/`)
are not held to it; the Python package is.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILE_LINES = 600
HEADER_LINES = 40

# Past the file guide when the rule came in (2026-12-07): the most each may hold.
LONG_FILES = {
    "crates/sim/src/tcp/bbr3.rs": 787,
    "crates/sim/src/tcp/sender.rs": 611,
    "crates/aqm/src/cake.rs": 726,
    "crates/sim/src/scenario/mod.rs": 704,
    "crates/aqm/src/htb.rs": 698,
    "crates/aqm/src/dualpi2.rs": 694,
    "crates/sim/src/report.rs": 663,
    "crates/aqm/src/rem.rs": 648,
    "python/aqmlab/plot.py": 663,
}

# Past the header guide when the rule came in: the most each header may hold.
LONG_HEADERS = {
    "crates/sim/src/tcp/mod.rs": 42,
}


def product_sources():
    for path in sorted((ROOT / "crates").glob("*/src/**/*.rs")):
        rel = path.relative_to(ROOT)
        if path.name == "tests.rs" or "tests" in rel.parts[3:-1]:
            continue
        yield rel
    for path in sorted((ROOT / "python" / "aqmlab").rglob("*.py")):
        yield path.relative_to(ROOT)


def line_count(rel):
    return len((ROOT / rel).read_text().splitlines())


def header_lines(rel):
    count = 0
    for line in (ROOT / rel).read_text().splitlines():
        if not line.startswith("//!"):
            break
        count += 1
    return count


def test_files_stay_under_the_guide_or_shrink():
    sources = set(map(str, product_sources()))
    assert sources, "no sources found: the test looks in the wrong place"
    grown = []
    for rel in sorted(sources):
        lines = line_count(rel)
        ceiling = LONG_FILES.get(rel, FILE_LINES)
        if lines > ceiling:
            grown.append(f"{rel}: {lines} lines, at most {ceiling}")
    assert not grown, "split these files (docs/architecture.md says where parts go):\n" + "\n".join(grown)


def test_listed_long_files_still_exist_and_are_still_long():
    for rel, ceiling in LONG_FILES.items():
        assert (ROOT / rel).exists(), f"{rel} is gone: take it off LONG_FILES"
        assert line_count(rel) > FILE_LINES, f"{rel} is under {FILE_LINES} lines now: take it off LONG_FILES"
        assert ceiling > FILE_LINES


def test_headers_stay_under_the_guide():
    long = []
    for rel in map(str, product_sources()):
        if not rel.endswith(".rs") or rel.endswith("/lib.rs"):
            continue
        lines = header_lines(rel)
        if lines > LONG_HEADERS.get(rel, HEADER_LINES):
            long.append(f"{rel}: a {lines}-line header")
    assert not long, "say less in these headers (the detail belongs in docs/):\n" + "\n".join(long)
    for rel in LONG_HEADERS:
        assert header_lines(rel) > HEADER_LINES, f"{rel}'s header is short now: take it off LONG_HEADERS"
