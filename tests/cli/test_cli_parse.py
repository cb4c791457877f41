"""innet.sim.cli._parse: the one size grammar, times, bandwidths, node and link lists."""

import click
import pytest
from click.testing import CliRunner

from innet.sim.cli._parse import (
    Size,
    Sizes,
    format_bytes,
    format_count,
    parse_bandwidth,
    parse_links,
    parse_mesh,
    parse_node_ids,
    parse_size,
    parse_sizes,
    parse_time,
)


@pytest.mark.parametrize(("text", "size"), [
    ("64", 64), (" 64 ", 64), ("1K", 1024), ("1k", 1024), ("4Ki", 4096), ("4ki", 4096),
    ("1M", 1 << 20), ("1Mi", 1 << 20), ("2G", 2 << 30), ("2Gi", 2 << 30), ("0", 0),
    ("16 Ki", 16 << 10),
])
def test_size_multipliers_are_binary(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize(("text", "size"), [
    ("32B", 32), ("32", 32), ("4KiB", 4096), ("4k", 4096), ("4KB", 4096), ("128MiB", 128 << 20),
    (" 2 GiB ", 2 << 30), ("3MB", 3 << 20),
])
def test_byte_sizes_take_a_trailing_b(text, size):
    assert parse_size(text, unit="B") == size


@pytest.mark.parametrize("text", ["", "x", "1.5K", "-3", "12 apples", "4Kx", "4iK", "4B"])
def test_size_rejects(text):
    with pytest.raises(ValueError, match=rf"^--elements must be a size such as 64, 4K or 1Mi, "
                                         rf"not {text!r}$"):
        parse_size(text, "--elements")


def test_sizes_above_high_are_refused():
    assert parse_size("1Mi", "--elements", high=1 << 20) == 1 << 20
    with pytest.raises(ValueError, match=r"^--elements must be at most 1,048,576, not '999G'$"):
        parse_size("999G", "--elements", high=1 << 20)
    assert parse_sizes("1..1K", "--sizes", high=1024) == [1, 4, 16, 64, 256, 1024]
    with pytest.raises(ValueError, match=r"^--sizes must be at most 1,024, not '4K'$"):
        parse_sizes("1..4K", "--sizes", high=1024)
    with pytest.raises(ValueError, match=r"^--sizes must be at most 1,024, not '2K'$"):
        parse_sizes("1,2K", "--sizes", high=1024)


def test_byte_size_rejects_and_low():
    with pytest.raises(ValueError, match=r"^--vector must be a size such as 64, 4Ki or 1MiB, "
                                         r"not '1.5KiB'$"):
        parse_size("1.5KiB", "--vector", unit="B")
    with pytest.raises(ValueError, match=r"^--vector must be at least 1, not '0B'$"):
        parse_size("0B", "--vector", low=1, unit="B")


def test_sizes_lists_and_ranges():
    assert parse_sizes("1,64,1024") == [1, 64, 1024]
    assert parse_sizes("1, 64,4K") == [1, 64, 4096]
    assert parse_sizes("1..1M") == [4**k for k in range(11)]
    assert parse_sizes("0..16") == [0, 1, 4, 16]
    assert parse_sizes("2..10") == [2, 8, 10]
    assert parse_sizes("4Ki,1mi, 2G") == [4096, 1 << 20, 2 << 30]
    assert parse_sizes("5..5") == [5]
    assert parse_sizes("32B..128MiB", unit="B") == [32 * 4**k for k in range(12)]
    assert parse_sizes("1KiB..5KiB", unit="B") == [1024, 4096, 5120]


@pytest.mark.parametrize(("text", "message"), [
    ("1,,2", r"^--sizes must be a size such as 64, 4K or 1Mi, not ''$"),
    ("1,x", r"^--sizes must be a size such as 64, 4K or 1Mi, not 'x'$"),
    ("1M..1K", r"^--sizes range '1M..1K' is empty: 1K is below 1M$"),
    ("1,0", r"^--sizes must be at least 1, not '0'$"),
])
def test_sizes_reject(text, message):
    with pytest.raises(ValueError, match=message):
        parse_sizes(text, "--sizes", low=1)


def test_formats_read_back():
    assert [format_count(c) for c in (0, 64, 1024, 1536, 1 << 20, 2 << 30, 2.5)] == [
        "0", "64", "1K", "1536", "1M", "2G", "2.5"]
    for size, text in ((32, "32B"), (4096, "4KiB"), (1536, "1536B"), (128 << 20, "128MiB"),
                       (1 << 30, "1GiB")):
        assert format_bytes(size) == text
        assert parse_size(text, unit="B") == size
    assert parse_size(format_count(1 << 20)) == 1 << 20


def test_click_types_name_the_option():
    @click.command()
    @click.option("--elements", type=Size(low=1), default=1024)
    @click.option("--sizes", type=Sizes(unit="B"), default=None)
    def cmd(elements, sizes):
        click.echo(f"{elements} {sizes}")

    done = CliRunner().invoke(cmd, ["--elements", "4K", "--sizes", "1KiB,2Ki"])
    assert done.output == "4096 [1024, 2048]\n"
    assert CliRunner().invoke(cmd, []).output == "1024 None\n"
    done = CliRunner().invoke(cmd, ["--elements", "0"])
    assert isinstance(done.exception, ValueError)
    assert str(done.exception) == "--elements must be at least 1, not '0'"
    done = CliRunner().invoke(cmd, ["--sizes", "1..x"])
    assert str(done.exception) == "--sizes must be a size such as 64, 4Ki or 1MiB, not 'x'"
    assert Size().get_metavar(None) == "SIZE"
    assert Sizes().get_metavar(None) == "SIZES"


def test_times_and_bandwidths():
    assert parse_time("5ns") == 5.0
    assert parse_time("0.5us") == 500.0
    assert parse_time("25") == 25.0
    assert parse_time("1 ms") == 1e6
    with pytest.raises(ValueError, match=r"^--latency-core must be a time such as 5ns or "
                                         r"0.5us, not 'fast'$"):
        parse_time("fast", "--latency-core")
    assert parse_bandwidth("51.2Gbps") == 51.2
    assert parse_bandwidth("64 Gbit/s") == 64.0
    assert parse_bandwidth("1Tbps") == 1000.0
    with pytest.raises(ValueError, match=r"^--bw-mem must be a bandwidth such as 51.2Gbps, not "
                                         r"'51.2GB'$"):
        parse_bandwidth("51.2GB", "--bw-mem")


def test_mesh_nodes_and_links():
    assert parse_mesh("2x4") == (2, 4)
    assert parse_mesh(None) is None
    with pytest.raises(ValueError, match=r"^Core mesh must be rows x cols such as 2x4, not "
                                         r"'2x4x1'$"):
        parse_mesh("2x4x1")
    assert parse_node_ids("0-3,9", "--participants", nodes=10) == [0, 1, 2, 3, 9]
    assert parse_node_ids("007," + "0" * 5000 + "8", "--participants", nodes=10) == [7, 8]
    with pytest.raises(ValueError, match=r"^--participants must be node ids such as 0,3,5 or "
                                         r"0-7, not '5-2'$"):
        parse_node_ids("5-2", "--participants", nodes=10)
    with pytest.raises(ValueError, match=r"^--participants names node 10, outside 0..9$"):
        parse_node_ids("0-3,10", "--participants", nodes=10)
    # A range is bounded by the network before it is expanded.
    with pytest.raises(ValueError, match=r"^--participants names node 99999999999, outside "
                                         r"0..9$"):
        parse_node_ids("0-99999999999", "--participants", nodes=10)
    assert parse_links("0-1, 2-7", nodes=8) == [(0, 1), (2, 7)]
    with pytest.raises(ValueError, match=r"^--fail-links must be links u-v separated by "
                                         r"commas, not '0:1'$"):
        parse_links("0:1", nodes=8)
    with pytest.raises(ValueError, match=r"^--fail-links names node 8, outside 0..7$"):
        parse_links("0-8", nodes=8)


def test_numbers_of_thousands_of_digits_are_refused_by_their_digits():
    with pytest.raises(ValueError, match=rf"^--elements must have at most 18 digits, "
                                         rf"not {'9' * 40}$"):
        parse_size("9" * 5000, "--elements")
    with pytest.raises(ValueError, match=rf"^--elements must have at most 18 digits, "
                                         rf"not {'9' * 40}$"):
        parse_size("9" * 5000 + "K", "--elements", high=1024)
    assert parse_size("0" * 5000 + "7") == 7
    with pytest.raises(ValueError, match=rf"^Each size of core mesh must have at most 18 digits, "
                                         rf"not {'9' * 40}$"):
        parse_mesh("2x" + "9" * 5000)
    with pytest.raises(ValueError, match=rf"^--participants names node {'9' * 40}, outside "
                                         r"0..9$"):
        parse_node_ids("9" * 5000, "--participants", nodes=10)


def test_seeds_leave_leading_zeros_aside():
    from innet.sim.cli.synth import Seeds

    assert Seeds().convert("00000000001, 2", None, None) == (1, 2)
    assert Seeds().convert(str(2**31 - 1), None, None) == (2**31 - 1,)
    with pytest.raises(click.BadParameter, match=r"^Seeds must be whole numbers from 0 to "
                                                 r"2147483647 separated by commas, not "
                                                 r"'1,2147483648'$"):
        Seeds().convert("1,2147483648", None, None)
