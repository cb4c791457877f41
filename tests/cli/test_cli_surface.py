"""The ``innet`` command is one surface: every subcommand, found by walking the command tree,
shows its help, and an option shared by several commands means the same in each (same name,
type, grammar, default and help)."""

from __future__ import annotations

import inspect
from collections import defaultdict

import click
import pytest
from click.testing import CliRunner

from innet.gen.embed import embed
from innet.gen.topology import piuma
from innet.hw.endpoint import Endpoint
from innet.hw.flit import FlitParams
from innet.sim.cli import main
from innet.sim.cli._options import KINDS
from innet.sim.cli._parse import SIZE_GRAMMAR, Size, Sizes


def _walk(command: click.Command, path: tuple[str, ...] = ()):
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            yield from _walk(command.get_command(ctx, name), (*path, name))


COMMANDS = dict(_walk(main))
LEAVES = {path: c for path, c in COMMANDS.items() if not isinstance(c, click.Group)}

#: The commands that take a topology.
TOPOLOGY_COMMANDS = {("topo",), ("embed",), ("swing",), ("image", "build"),
                     ("sim", "allreduce"), ("synth", "network")}
#: The topology options, as click parameter names.
TOPOLOGY_OPTIONS = {"q", "r0", "r1", "shape", "mesh", "nodes", "sockets", "cores", "core_mesh",
                    "placement", "latency_core", "latency_socket", "latency_node"}
#: Options whose meaning, type, default and help are one everywhere.
SAME_EVERYWHERE = {"json", "op", "dtype", "local_depth", "buffer_depth", "payload_width",
                   "p2p_vcs", "index_width", "tag_width", *TOPOLOGY_OPTIONS}
#: Options that count elements or bytes: the one size grammar.
SIZE_OPTIONS = {"elements", "sizes", "model_sizes", "vector_depth",
                "max_nodes", "generate_up_to", "vector"}
#: Commands that only read or check: no -o.
NO_OUTPUT = {("doctor",), ("image", "inspect"), ("image", "validate")}


def _name(path: tuple[str, ...]) -> str:
    return " ".join(("innet", *path))


def _options(command: click.Command) -> dict[str, click.Option]:
    """The options of ``command`` by their long name (``--tag-width`` is ``tag_width``)."""
    return {max(p.opts, key=len).lstrip("-").replace("-", "_"): p for p in command.params
            if isinstance(p, click.Option)}


def _by_name() -> dict[str, dict[tuple[str, ...], click.Option]]:
    found: dict[str, dict] = defaultdict(dict)
    for path, command in LEAVES.items():
        for name, option in _options(command).items():
            found[name][path] = option
    return found


def _type(param: click.Parameter) -> tuple:
    t = param.type
    return (type(t).__name__, tuple(getattr(t, "choices", ()) or ()), getattr(t, "low", None),
            getattr(t, "unit", None))


def _describe(option: click.Option) -> tuple:
    return (tuple(option.opts), tuple(option.secondary_opts), _type(option), option.default,
            option.help, option.is_flag, option.required, option.show_default,
            option.metavar)


def test_the_walk_finds_every_command():
    assert {path for path in COMMANDS if len(path) == 1} == {
        (name,) for name in main.list_commands(click.Context(main))}
    assert set(LEAVES) >= TOPOLOGY_COMMANDS | NO_OUTPUT
    assert len(LEAVES) >= 20


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=_name)
def test_help_of_every_group_and_command(path):
    done = CliRunner().invoke(main, [*path, "--help"], prog_name="innet")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(f"Usage: {_name(path)} ")


@pytest.mark.parametrize("name", sorted(SAME_EVERYWHERE))
def test_shared_options_agree(name):
    uses = _by_name()[name]
    assert uses, f"no command takes --{name}"
    shapes = {_describe(option) for option in uses.values()}
    assert len(shapes) == 1, {_name(p): _describe(o) for p, o in uses.items()}


def test_library_defaults():
    uses = _by_name()
    defaults = inspect.signature(embed).parameters
    assert {o.default for o in uses["dtype"].values()} == {defaults["dtype"].default}
    assert {o.default for o in uses["op"].values()} == {defaults["op"].default}
    for name in ("collective_ids", "routing_depth", "p2p_vcs", "index_width", "tag_width"):
        want = FlitParams.__dataclass_fields__[name].default
        found = {o.default for p, o in uses[name].items() if p != ("image", "build")}
        assert found == {want}, name
    endpoint = inspect.signature(Endpoint.__init__).parameters
    assert {o.default for o in uses["buffer_depth"].values()} == {
        endpoint["buffer_depth"].default}
    pi = inspect.signature(piuma).parameters
    for name in ("sockets", "cores", "placement"):
        assert {o.default for o in uses[name].values()} == {pi[name].default}, name


@pytest.mark.parametrize("name", ["step_depth", "collective_ids", "routing_depth"])
def test_image_sizes_fit_the_content(name):
    """The hardware takes the library's default; an image is sized to its content unless told,
    with the same option otherwise."""
    uses = _by_name()[name]
    image = uses.pop(("image", "build"))
    (hardware,) = {_describe(o) for o in uses.values()}
    some = next(iter(uses.values()))
    assert (_type(image), image.default, image.opts) == (_type(some), None, some.opts)
    assert image.help.startswith(f"{some.help} [")
    assert hardware[3] is not None


def test_step_depth_default_is_the_endpoints():
    uses = _by_name()["step_depth"]
    assert set(uses) == {("verilog", "endpoint"), ("synth", "endpoint"), ("regmap",),
                         ("image", "build")}
    assert uses[("regmap",)].default == inspect.signature(
        Endpoint.__init__).parameters["step_depth"].default


def test_mul_is_one_flag_pair_everywhere():
    """One ``--mul/--no-mul`` pair with one help text; its default is that of the block the
    command builds (the ALU and the endpoint with their multiplier, the collective engine
    without)."""
    from innet.hw.alu import ALU
    from innet.hw.ceng import CollectiveEngine

    uses = _by_name()
    assert "no_mul" not in uses
    builds = {"alu": ALU.__init__, "endpoint": Endpoint.__init__,
              "switch": CollectiveEngine.__init__, "ceng": CollectiveEngine.__init__,
              "reduction": CollectiveEngine.__init__}
    assert len({option.help for option in uses["mul"].values()}) == 1
    for path, option in uses["mul"].items():
        want = inspect.signature(builds[path[-1]]).parameters["mul"].default
        assert (option.opts, option.secondary_opts, option.default) == (
            ["--mul"], ["--no-mul"], want), _name(path)


def test_sizes_have_one_grammar():
    uses = _by_name()
    for name in SIZE_OPTIONS:
        assert name in uses, name
        for path, option in uses[name].items():
            assert isinstance(option.type, Size | Sizes), (_name(path), name)
            assert SIZE_GRAMMAR in option.help, (_name(path), name)
    for name, found in uses.items():
        for path, option in found.items():
            if isinstance(option.type, Size | Sizes):
                assert name in SIZE_OPTIONS, (_name(path), name)
    for name in SIZE_OPTIONS:  # an option name counts in one unit everywhere
        assert len({option.type.unit for option in uses[name].values()}) == 1, name


def test_one_way_to_choose_a_topology():
    uses = _by_name()
    assert "topology" not in uses
    takers = set()
    for path, command in LEAVES.items():
        kind = next((p for p in command.params if p.name == "kind"
                     and isinstance(p, click.Argument)), None)
        names = set(_options(command))
        if kind is None:
            assert not names & TOPOLOGY_OPTIONS - {"nodes", "sockets", "cores", "core_mesh",
                                                    "placement", "latency_core",
                                                    "latency_socket", "latency_node"}, path
            continue
        takers.add(path)
        assert tuple(kind.type.choices) == KINDS, _name(path)
        assert command.params[0] is kind, _name(path)
        assert names >= TOPOLOGY_OPTIONS, _name(path)
    assert takers == TOPOLOGY_COMMANDS
    # PIUMA's options elsewhere (innet analyze piuma) are the same options.
    assert ("analyze", "piuma") in uses["core_mesh"]


def test_json_and_output_wherever_something_is_produced():
    uses = _by_name()
    assert set(uses["json"]) == set(LEAVES)
    assert set(uses["output"]) == set(LEAVES) - NO_OUTPUT
    for path, option in uses["output"].items():
        assert (option.opts, _type(option)[0]) == (["-o", "--output"], "Path"), _name(path)
        assert option.required or option.default is None, _name(path)
        assert option.help, _name(path)


@pytest.mark.parametrize("path", sorted(LEAVES), ids=_name)
def test_every_option_says_what_it_is(path):
    for name, option in _options(LEAVES[path]).items():
        assert len((option.help or "").split()) >= 2, (_name(path), name, option.help)


@pytest.mark.parametrize("path", sorted(p for p, c in COMMANDS.items()
                                        if isinstance(c, click.Group)), ids=_name)
def test_a_group_lists_whole_first_sentences(path):
    # click takes a command's first sentence for the list; an abbreviation ("Eq. 1") ends it
    # early, which shows as an open parenthesis without the ellipsis of a long line.
    group = COMMANDS[path]
    context = click.Context(group)
    for name in group.list_commands(context):
        short = group.get_command(context, name).get_short_help_str(limit=45)
        assert short.endswith("...") or short.count("(") == short.count(")"), (name, short)
