"""innet.sim.cli._common: atomic writes."""

import os
import stat

import pytest

from innet.sim.cli._common import write_atomic


def test_write_atomic_writes_with_the_usual_mode(tmp_path):
    umask = os.umask(0o022)
    try:
        path = write_atomic(tmp_path / "sub" / "out.txt", "hello")
    finally:
        os.umask(umask)
    assert path.read_text() == "hello"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["out.txt"]


def test_write_atomic_leaves_nothing_behind_on_failure(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(TypeError):
        write_atomic(target, 42)  # neither str nor bytes: the write fails part-way
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]
