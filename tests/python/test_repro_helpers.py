"""The reproductions' shared layer: the list of papers and the helpers every
paper's experiments are written with (:mod:`aqmlab.repro._helpers`)."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pandas as pd
import pytest

import aqmlab
from aqmlab.repro import EXPERIMENTS, PAPERS
from aqmlab.repro._core import Experiment, index, load_scenario
from aqmlab.repro._helpers import kbit, mean_sd, means, rate, select, with_qdisc


def test_repro_is_a_plain_function():
    assert inspect.isfunction(aqmlab.repro)
    assert aqmlab.repro.__module__ == "aqmlab.repro"


def test_importing_aqmlab_loads_no_paper():
    """A plain run imports aqmlab, and with it aqmlab.repro for the function, but
    needs no experiment: the papers load when their names are first used."""
    code = (
        "import sys, aqmlab\n"
        "loaded = [m for m in sys.modules if m.startswith(('aqmlab.repro.', 'aqmlab._runner'))]\n"
        "assert not loaded, loaded\n"
        "from aqmlab.repro import EXPERIMENTS\n"
        "assert 'aqmlab.repro.papers' in sys.modules and len(EXPERIMENTS) > 30\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_experiments_are_the_papers_lists_in_order():
    listed = [e for paper in PAPERS for e in paper.EXPERIMENTS]
    assert list(EXPERIMENTS.values()) == listed
    assert all(isinstance(e, Experiment) for e in listed)
    # One block per paper: `repro --list` shows each paper's experiments together.
    papers = [e.paper for e in listed]
    assert papers == sorted(papers, key=[*dict.fromkeys(papers)].index)


def test_an_experiment_listed_twice_is_refused():
    exp = EXPERIMENTS["choke-fig3"]
    with pytest.raises(ValueError, match="choke-fig3"):
        index([exp, exp])


RUNS = pd.DataFrame({"qdisc": ["red", "red", "red", "sfb"], "n": [1, 1, 2, 1], "x": [1.0, 3.0, 8.0, 5.0]})


def test_mean_sd_is_the_mean_and_sample_sd_of_the_selected_runs():
    assert mean_sd(RUNS, "x", qdisc="red", n=1) == (2.0, pytest.approx(2**0.5))
    assert mean_sd(RUNS, "x", qdisc="sfb") == (5.0, 0.0)  # one run: no spread
    with pytest.raises(KeyError, match="no runs with"):
        mean_sd(RUNS, "x", qdisc="choke")
    assert list(select(RUNS, n=2)["x"]) == [8.0]
    assert means(RUNS, "n", "x", qdisc="red").to_dict() == {1: 2.0, 2: 8.0}


def test_rates_have_one_spelling():
    assert rate(0.1) == kbit(100) == kbit(100.4) == "100kbit"
    assert rate(45.0) == "45000kbit"


def test_with_qdisc_sets_the_bottleneck_or_a_named_link():
    base = load_scenario("sfb-fig2b")
    red = {"kind": "red", "limit": 50}
    on_link = with_qdisc(base, red, link=("A", "B"))
    ab = next(lk for lk in on_link["topology"]["links"] if (lk["from"], lk["to"]) == ("A", "B"))
    assert ab["qdisc"] == red
    assert base != on_link  # a copy: the base is left as it was
    with pytest.raises(KeyError, match="no link B -> A"):
        with_qdisc(base, red, link=("B", "A"))
    choke = load_scenario("choke-fig3")
    assert with_qdisc(choke, red)["qdisc"] == red  # replaced whole
    updated = with_qdisc(choke, limit=7)["qdisc"]  # keys alone update the table
    assert updated == {**choke["qdisc"], "limit": 7}
