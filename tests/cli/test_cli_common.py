"""innet.sim.cli._common: atomic writes, output paths checked before any work, counted nouns."""

import os
import stat

import pytest

from innet.sim.cli._common import count, write_atomic


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


@pytest.mark.parametrize(("args", "message"), [
    (["topo", "polarfly", "--q", "3", "-o", "/proc/innet/t.json"],
     "--output '/proc/innet/t.json' cannot be written: No such file or directory"),
    (["regmap", "--radix", "4", "-o", "out"], "--output must be a file, not the directory 'out'"),
    (["regmap", "--radix", "4", "-o", "plain/a.h"],
     "--output 'plain/a.h' cannot be written: plain is a file, not a directory"),
    (["embed", "torus", "--shape", "4", "-o", "plain"],
     "--output must be a directory, not the file 'plain'"),
    (["embed", "torus", "--shape", "4", "-o", "new/emb", "--booksim-routing", "/proc/innet/r"],
     "--booksim-routing '/proc/innet/r' cannot be written: No such file or directory"),
    (["analyze", "piuma", "--max-nodes", "4", "--plot", "p.png", "-o", "/proc/innet/a.json"],
     "--output '/proc/innet/a.json' cannot be written: No such file or directory"),
    (["topo", "polarfly", "--q", "3", "--plot", "out"],
     "--plot writes a PNG file: name it with .png, not 'out'"),
    (["analyze", "piuma", "--max-nodes", "4", "--plot", "fig.txt"],
     "--plot writes a PNG file: name it with .png, not 'fig.txt'"),
    (["demo", "-o", "plain"], "--output must be a directory, not the file 'plain'"),
    (["bench", "--quick", "-o", "plain/b"],
     "--output 'plain/b' cannot be written: plain is a file, not a directory"),
    (["swing", "torus", "--shape", "8", "-o", "plain"],
     "--output must be a directory, not the file 'plain'"),
    (["embed", "torus", "--shape", "4", "-o", "emb.json"],
     ("--output is a directory to write files into, and 'emb.json' is named as a file: name a "
     "directory")),
    (["swing", "torus", "--shape", "8", "-o", "new/sched.JSON"],
     ("--output is a directory to write files into, and 'new/sched.JSON' is named as a file: "
     "name a directory")),
])
def test_an_output_that_cannot_be_written_is_refused_before_any_work(innet, tmp_path, args,
                                                                     message):
    (tmp_path / "out").mkdir()
    (tmp_path / "plain").write_text("p")
    done = innet(*args, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"innet: error: {message}\n")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["out", "plain"]
    assert (tmp_path / "plain").read_text() == "p"


def test_an_output_directory_named_like_a_file_is_taken_when_it_exists(innet, tmp_path):
    (tmp_path / "old.json").mkdir()
    done = innet("embed", "torus", "--shape", "4", "-o", "old.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "old.json" / "embedding.json").is_file()
    # A file of that name is named as the file it is.
    (tmp_path / "f.json").write_text("{}")
    done = innet("embed", "torus", "--shape", "4", "-o", "f.json", cwd=tmp_path)
    assert done.stderr == "innet: error: --output must be a directory, not the file 'f.json'\n"
    assert (tmp_path / "f.json").read_text() == "{}"


@pytest.mark.parametrize(("n", "what", "text"), [
    (0, "link", "0 links"), (1, "link", "1 link"), (2, "link", "2 links"),
    (1, "switch", "1 switch"), (13, "switch", "13 switches"), (3, "failed switch",
                                                                 "3 failed switches"),
])
def test_count_is_singular_for_one_only(n, what, text):
    assert count(n, what) == text


def test_embed_counts_one_participant_in_the_singular(innet):
    done = innet("embed", "polarfly", "--q", "3", "--participants", "5", "--fail-switches", "0")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == ("allreduce add int32 on collective id 0: 1 participant, root 5, depth 0, "
                        "1 switch, 0 links")
    assert "avoiding 0 failed links and 1 failed switch" in lines
