"""The object cache of innet.sim.objcache, driven with a stand-in compiler that counts its runs
(the Verilator builds of the other tests use it with the real one)."""

import os
import subprocess

import pytest

from innet.sim.objcache import objcache_command

#: A compiler: ``fakecc -c -o OUT SRC`` writes OUT (the source's text) and OUT's ``.d`` file
#: (the source and ``$FAKE_DEPS``), and counts its runs in ``runs``.
FAKECC = """#!/bin/sh
echo run >> "$(dirname "$0")/runs"
out= prev= src=
for arg in "$@"; do [ "$prev" = "-o" ] && out=$arg; prev=$arg; src=$arg; done
cat "$src" > "$out"
echo "$out: $src $FAKE_DEPS" > "${out%.o}.d"
"""


@pytest.fixture
def tools(tmp_path):
    cc = tmp_path / "fakecc"
    cc.write_text(FAKECC)
    cc.chmod(0o755)
    return objcache_command(tmp_path / "store"), cc


def compile_(tools, source, out, *flags, deps=""):
    wrapper, cc = tools
    # As Verilator's rules do: the object named relative to the build directory.
    subprocess.run([wrapper, str(cc), *flags, "-c", "-o", out.name, str(source)], check=True,
                   cwd=out.parent, env={**os.environ, "FAKE_DEPS": deps})
    runs = cc.parent / "runs"
    return len(runs.read_text().splitlines()) if runs.exists() else 0


def test_a_shared_object_is_compiled_once_per_command_and_source(tools, tmp_path):
    source = tmp_path / "verilated.cpp"
    source.write_text("int a;\n")
    first, second = tmp_path / "b1", tmp_path / "b2"
    first.mkdir(), second.mkdir()
    assert compile_(tools, source, first / "verilated.o", "-Os") == 1
    assert compile_(tools, source, second / "verilated.o", "-Os") == 1  # copied
    assert (second / "verilated.o").read_text() == "int a;\n"
    assert (second / "verilated.d").read_text() == (first / "verilated.d").read_text()
    assert compile_(tools, source, second / "verilated.o", "-O0") == 2  # other flags
    source.write_text("int b;\n")
    assert compile_(tools, source, second / "verilated.o", "-O0") == 3  # other source
    assert (second / "verilated.o").read_text() == "int b;\n"


def test_an_object_that_includes_a_file_of_the_build_directory_is_always_compiled(tools,
                                                                                  tmp_path):
    # cocotb's main: its source is installed, but it includes the model's header.
    source = tmp_path / "verilator.cpp"
    source.write_text("#include <Vtop.h>\n")
    build = tmp_path / "b"
    build.mkdir()
    headers = f"{source.parent}/verilated.h \\\n Vtop.h"
    assert compile_(tools, source, build / "verilator.o", deps=headers) == 1
    assert compile_(tools, source, build / "verilator.o", deps=headers) == 2
    assert compile_(tools, source, build / "verilator.o", deps=f"{source.parent}/x.h") == 3
    assert compile_(tools, source, build / "verilator.o", deps=f"{source.parent}/x.h") == 3


def test_the_models_own_files_are_always_compiled(tools, tmp_path):
    (tmp_path / "Vtop.cpp").write_text("int m;\n")
    for expected in (1, 2):
        subprocess.run([tools[0], str(tools[1]), "-c", "-o", "Vtop.o", "Vtop.cpp"],
                       check=True, cwd=tmp_path)
        assert len((tmp_path / "runs").read_text().splitlines()) == expected


def test_a_failed_compile_fails_and_stores_nothing(tools, tmp_path):
    wrapper, _ = tools
    source = tmp_path / "broken.cpp"
    source.write_text("")
    done = subprocess.run([wrapper, "false", "-c", "-o", str(tmp_path / "broken.o"),
                           str(source)], check=False)
    assert done.returncode == 1
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == ["objcache.sh"]
