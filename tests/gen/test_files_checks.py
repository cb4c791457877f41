"""innet.gen.files.write_atomic and innet.gen.checks: check_int, check_type, parse_whole,
parse_dims, shown and spell_shape."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

from innet.gen.checks import (
    MAX_DIGITS,
    check_int,
    check_type,
    parse_dims,
    parse_whole,
    shown,
    spell_shape,
)
from innet.gen.files import write_atomic, write_atomic_all


def test_write_atomic_writes_text_bytes_and_chunks(tmp_path):
    assert write_atomic(tmp_path / "a" / "t.txt", "x\ny") == tmp_path / "a" / "t.txt"
    assert (tmp_path / "a" / "t.txt").read_text() == "x\ny"
    write_atomic(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    write_atomic(tmp_path / "c.txt", (str(i) for i in range(4)))
    assert (tmp_path / "c.txt").read_text() == "0123"


def test_write_atomic_names_the_path_it_cannot_write(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("f")
    (tmp_path / "dir").mkdir()
    with pytest.raises(NotADirectoryError, match=rf"^\[Errno 20\] {tmp_path}/file is a file, "
                                                 rf"not a directory: '{tmp_path}/file/a/b.txt'$"):
        write_atomic(tmp_path / "file" / "a" / "b.txt", "x")
    with pytest.raises(IsADirectoryError, match=rf"^\[Errno 21\] Is a directory, not a file: "
                                                rf"'{tmp_path}/dir'$"):
        write_atomic(tmp_path / "dir", "x")
    monkeypatch.chdir(tmp_path / "dir")
    with pytest.raises(IsADirectoryError, match=r"^\[Errno 21\] Is a directory, not a file: "
                                                r"'.'$"):
        write_atomic("", "x")
    (tmp_path / "locked").mkdir(mode=0o500)
    with monkeypatch.context() as patch:
        if os.access(tmp_path / "locked", os.W_OK):
            # Root writes anywhere: the temporary file is refused as it is for anyone else.
            def refuse_temporary(*args, dir, **kwargs):
                raise PermissionError(13, "Permission denied", f"{dir}/.t.txt.x")

            patch.setattr(tempfile, "mkstemp", refuse_temporary)
        with pytest.raises(PermissionError, match=rf"^\[Errno 13\] Permission denied: "
                                                  rf"'{tmp_path}/locked/t.txt'$"):
            write_atomic(tmp_path / "locked" / "t.txt", "x")

    def refuse(source, target):
        raise OSError(28, "No space left on device", str(source))

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match=rf"^\[Errno 28\] No space left on device: "
                                      rf"'{tmp_path}/t.txt'$"):
        write_atomic(tmp_path / "t.txt", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "file", "locked"]
    assert list((tmp_path / "dir").iterdir()) == []


def test_write_atomic_gives_the_mode_of_a_plain_open(tmp_path):
    write_atomic(tmp_path / "a.txt", "a")
    with open(tmp_path / "b.txt", "w") as handle:
        handle.write("b")
    assert os.stat(tmp_path / "a.txt").st_mode == os.stat(tmp_path / "b.txt").st_mode


def test_write_atomic_failure_leaves_the_old_file_and_nothing_else(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old")

    def chunks():
        yield "new"
        raise ValueError("Bad chunk")

    with pytest.raises(ValueError, match=r"^Bad chunk$"):
        write_atomic(target, chunks())
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]


def test_check_int_accepts_and_returns():
    assert check_int("Radix", 4, low=2, high=16) == 4
    assert check_int("Depth", 0) == 0
    for value in (np.int64(4), np.uint8(4), np.int32(4)):
        assert type(check_int("Radix", value, low=2, high=16)) is int
        assert check_int("Radix", value, low=2, high=16) == 4


@pytest.mark.parametrize(("value", "error", "message"), [
    (True, TypeError, r"^Radix must be an integer, not True$"),
    (np.True_, TypeError, r"^Radix must be an integer, not np\.True_$"),
    (np.float64(4), TypeError, r"^Radix must be an integer, not np\.float64\(4\.0\)$"),
    (np.int64(17), ValueError, r"^Radix must be at most 16, not 17$"),
    (2.0, TypeError, r"^Radix must be an integer, not 2\.0$"),
    ("4", TypeError, r"^Radix must be an integer, not '4'$"),
    (1, ValueError, r"^Radix must be at least 2, not 1$"),
    (17, ValueError, r"^Radix must be at most 16, not 17$"),
    (2**128 - 1, ValueError, rf"^Radix must be at most 16, not {2**128 - 1}$"),
])
def test_check_int_refuses(value, error, message):
    with pytest.raises(error, match=message):
        check_int("Radix", value, low=2, high=16)


def test_check_int_names_a_huge_value_by_its_bits():
    # Its digits are beyond what Python converts to text.
    with pytest.raises(ValueError, match=r"^Radix must be at most 16, not a 16610-bit integer$"):
        check_int("Radix", 10**5000, low=2, high=16)
    with pytest.raises(ValueError, match=r"^Radix must be at least 2, not a 16610-bit integer$"):
        check_int("Radix", -(10**5000), low=2, high=16)


def test_check_type_returns_an_instance_and_names_the_wrong_type():
    assert check_type("Count", 3, int) == 3
    with pytest.raises(TypeError, match=r"^Topology must be a dict, not str$"):
        check_type("Topology", "mesh", dict)
    with pytest.raises(TypeError, match=r"^Value must be an int, not NoneType$"):
        check_type("Value", None, int)


def test_parse_whole_leaves_leading_zeros_and_blanks_aside():
    assert [parse_whole(t, "N") for t in ("0", "000", "0042", " 7 ", "0" * 5000 + "7")] == [
        0, 0, 42, 7, 7]
    assert parse_whole("9" * MAX_DIGITS, "N") == 10**MAX_DIGITS - 1
    assert parse_whole("0" * 50 + "255", "N", high=255) == 255


@pytest.mark.parametrize(("text", "high", "message"), [
    ("-1", None, r"^Count must be a whole number, not '-1'$"),
    ("", None, r"^Count must be a whole number, not ''$"),
    ("1.5", 9, r"^Count must be a whole number, not '1.5'$"),
    ("\u00b2", None, r"^Count must be a whole number, not '\u00b2'$"),
    ("9" * (MAX_DIGITS + 1), None, rf"^Count must have at most 18 digits, not {'9' * 19}$"),
    ("9" * 5000, None, rf"^Count must have at most 18 digits, not {'9' * 40}$"),
    ("256", 255, r"^Count must be between 0 and 255, not 256$"),
    ("1000", 255, r"^Count must be between 0 and 255, not 1000$"),
    ("9" * 5000, 255, rf"^Count must be between 0 and 255, not {'9' * 40}$"),
])
def test_parse_whole_refuses(text, high, message):
    with pytest.raises(ValueError, match=message):
        parse_whole(text, "Count", high=high)


def test_parse_dims_reads_sizes_joined_by_x():
    assert parse_dims("4x4x2", "Shape", "4x4") == (4, 4, 2)
    assert parse_dims(" 4, 4 * 02 ", "Shape", "4x4") == (4, 4, 2)
    assert parse_dims("0X7", "Shape", "4x4") == (0, 7)
    with pytest.raises(ValueError, match=r"^Shape must be sizes joined by 'x' such as 4x4, "
                                         r"not '4y4'$"):
        parse_dims("4y4", "Shape", "4x4")
    with pytest.raises(ValueError, match=rf"^Each size of shape must have at most 18 digits, "
                                         rf"not {'9' * 40}$"):
        parse_dims("4x" + "9" * 5000, "Shape", "4x4")


def test_shown_and_spell_shape_name_huge_values_by_their_bits():
    assert shown(-12) == "-12"
    assert shown(2**200) == "a 201-bit integer"
    assert shown(2**200, "<{bits}-bit>") == "<201-bit>"
    assert spell_shape((4, 4, 2)) == "4x4x2"
    assert spell_shape([2**200, 3]) == "<201-bit>x3"
    assert spell_shape(("a", 1.5, True)) == "ax1.5xTrue"
    assert spell_shape((1,) * 40) == "1x" * 28 + "1..."


def test_write_atomic_follows_a_symbolic_link(tmp_path):
    (tmp_path / "real.v").write_text("old")
    (tmp_path / "link.v").symlink_to("real.v")
    assert write_atomic(tmp_path / "link.v", "new") == tmp_path / "link.v"
    assert (tmp_path / "link.v").is_symlink()
    assert (tmp_path / "real.v").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.v", "real.v"]


def test_write_atomic_writes_a_fifo_in_place(tmp_path):
    import stat
    import threading

    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    write_atomic(fifo, ["a", "b"])
    reader.join(timeout=10)
    assert received == ["ab"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_write_atomic_writes_a_pipe_through_its_proc_link():
    # /dev/stdout on a pipe: a link to /proc/self/fd/1, whose target names no file.
    read, write = os.pipe()
    try:
        link = Path(f"/proc/self/fd/{write}")
        assert not os.path.exists(os.path.realpath(link))
        assert write_atomic(link, ["a", "b"]) == link
        os.close(write)
        write = None
        with os.fdopen(read) as handle:
            read = None
            assert handle.read() == "ab"
    finally:
        for fd in (read, write):
            if fd is not None:
                os.close(fd)


def test_write_atomic_all_writes_every_file_or_none(tmp_path):
    (tmp_path / "a.txt").write_text("old a")

    def failing():
        yield "half"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match=rf"^\[Errno 28\] No space left on device: "
                                      rf"'{tmp_path}/sub/b.txt'$"):
        write_atomic_all([(tmp_path / "a.txt", "new a"), (tmp_path / "sub" / "b.txt", failing())])
    assert (tmp_path / "a.txt").read_text() == "old a"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.txt", "sub"]
    # A path that cannot be a file is refused before anything is written.
    (tmp_path / "c.json").mkdir()
    with pytest.raises(IsADirectoryError, match=rf"'{tmp_path}/c.json'$"):
        write_atomic_all([(tmp_path / "a.txt", "new a"), (tmp_path / "c.json", "{}")])
    assert (tmp_path / "a.txt").read_text() == "old a"
    assert write_atomic_all([(tmp_path / "a.txt", "new a"), (tmp_path / "sub" / "b.txt",
                                                             ["b", "b"])]) == [
        tmp_path / "a.txt", tmp_path / "sub" / "b.txt"]
    assert ((tmp_path / "a.txt").read_text(), (tmp_path / "sub" / "b.txt").read_text()) == (
        "new a", "bb")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.txt", "b.txt", "c.json", "sub"]
