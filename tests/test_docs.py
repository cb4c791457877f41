"""The examples in README.md and docs/*.md are real: they run and print what the text shows.

What is checked, per Markdown file:

- A console example is a fenced ``console`` or ``sh`` block whose lines start with ``$ ``: each
  such line is a command (a line ending in ``\\`` continues on the next), and the lines up to the
  next command are its expected output. The commands of one file run in order, through bash, in
  one temporary directory (so an example may read what an earlier one wrote), with the project's
  ``innet`` and ``python`` first on ``PATH`` and ``COLUMNS=120``; stdout and stderr are compared
  together. The comparison is exact except that trailing spaces are ignored and a line ``...``
  in the expected output matches any run of lines, none included.
- A Python example is a fenced ``pycon`` block; it runs as a doctest (``...`` inside a line
  matches anything, as doctest's ELLIPSIS) in the same directory, after the console examples
  above it in the file. Amaranth's warning for a component never elaborated is off there.
- An example that takes longer than a few seconds is marked by the line ``<!-- docs: slow -->``
  right before its fence (blank lines between are allowed) and is not run. Its commands, like
  every other command in the docs, are still checked: the subcommands of ``innet`` exist,
  each option is one of the options that subcommand takes (its ``--help``) and no more
  arguments are given than it takes (``...`` and placeholders in capitals pass), ``python -m``
  names an importable module, and files named after ``pytest`` exist. Commands in inline code
  spans (`` `innet ...` ``) and in plain ``sh`` blocks are checked the same way.

A failure names the file and line of the block, the command and the difference. When the
output of a command changes on purpose, ``python tests/test_docs.py --update FILE.md...`` runs
the file's examples like this test and writes each differing output into the file (outputs with
a ``...`` line are left to edit by hand); read the diff before committing it.
"""

from __future__ import annotations

import argparse
import difflib
import doctest
import gc
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest

__all__ = [
    "Block",
    "Example",
    "command_errors",
    "innet_usage_errors",
    "lines_match",
    "parse_markdown",
    "update",
]

ROOT = Path(__file__).resolve().parent.parent
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
SLOW = "<!-- docs: slow -->"
ELLIPSIS = "..."
#: A guard only: the examples that are run take seconds; a slow one must be marked ``SLOW``.
TIMEOUT = 120
FENCE = re.compile(r"^```\s*([\w-]*)\s*$")
INLINE = re.compile(r"`((?:\.venv/bin/)?innet(?:\s[^`]*)?)`")


@dataclass
class Example:
    """One ``$ command`` and the output the text shows for it."""

    command: str
    line: int
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    """A fenced code block: its language, first line (1-based, the fence), text and examples."""

    path: Path
    line: int
    lang: str
    text: str
    slow: bool
    examples: list[Example]

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def parse_markdown(path: Path) -> list[Block]:
    """Every fenced block of ``path``, in order, with its console examples."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if opened is None:
            i += 1
            continue
        before = next((text.strip() for text in reversed(lines[:i]) if text.strip()), "")
        start, body = i, []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"{path}:{start + 1}: Unclosed code block")
        lang = opened.group(1)
        examples = _examples(body, start + 2) if lang in ("console", "sh") else []
        blocks.append(Block(path, start + 1, lang, "\n".join(body) + "\n", before == SLOW,
                            examples))
        i += 1
    return blocks


def _examples(body: list[str], first: int) -> list[Example]:
    examples: list[Example] = []
    continued = False
    for number, text in enumerate(body, first):
        if continued:
            examples[-1].command += "\n" + text
        elif text.startswith("$ "):
            examples.append(Example(text[2:], number))
        elif examples:
            examples[-1].expected.append(text)
        continued = bool(examples) and text.endswith("\\") and (
            continued or text.startswith("$ "))
    return examples


def lines_match(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` equals ``expected`` line for line (trailing spaces ignored), a line
    ``...`` in ``expected`` matching any run of lines, none included."""
    want = [text.rstrip() for text in expected]
    got = [text.rstrip() for text in actual]
    # reach[j]: the first i lines of want can match the first j lines of got
    reach = [True] + [False] * len(got)
    for text in want:
        if text == ELLIPSIS:
            for j in range(1, len(got) + 1):
                reach[j] = reach[j] or reach[j - 1]
        else:
            reach = [False] + [reach[j] and got[j] == text for j in range(len(got))]
    return reach[-1]


# Commands are checked against the click tree of ``innet`` itself: the same options --help lists.

def _cli() -> click.Group:
    from innet.sim.cli import main
    return main


def _option(command: click.Command, name: str) -> click.Option | None:
    if name in ("-h", "--help"):
        return click.Option(["--help"], is_flag=True)
    for param in command.params:
        if isinstance(param, click.Option) and name in (*param.opts, *param.secondary_opts):
            return param
    return None


def innet_usage_errors(words: list[str]) -> list[str]:
    """What is wrong with ``innet WORDS`` as a command line, without running it: a subcommand
    that does not exist, an option the (sub)command does not take, or more arguments than it
    takes. ``...`` and placeholders in capitals are allowed as arguments."""
    group = _cli()
    command: click.Command = group
    path = ["innet"]
    ctx = click.Context(group, info_name="innet")
    rest = list(words)
    while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        name = rest[0]
        if name == ELLIPSIS or re.fullmatch(r"[A-Z][A-Z_]*", name):
            return []
        sub = command.get_command(ctx, name)
        if sub is None:
            return [(f"`{' '.join(path)}` has no subcommand {name!r} "
                    f"(it has {', '.join(command.list_commands(ctx))})")]
        path.append(rest.pop(0))
        command = sub
        ctx = click.Context(command, info_name=name, parent=ctx)
    arguments = []
    words = iter(rest)
    for word in words:
        if word == "--" or not word.lstrip("[").startswith("-") or re.fullmatch(r"-\d.*", word):
            arguments.append(word)
            continue
        name = word.split("=", 1)[0].strip("[]")
        option = _option(command, name)
        if option is None:  # and what follows it cannot be told from its value
            return [f"`{' '.join(path)}` has no option {name} (see `{' '.join(path)} --help`)"]
        if "=" not in word and not word.endswith("]") and not option.is_flag \
                and not option.count:
            for _ in range(option.nargs):  # the option's values
                next(words, None)
    named = [a for a in arguments if a not in ("--", ELLIPSIS)
             and not re.fullmatch(r"\[?[A-Z][A-Z_.]*\]?", a)]
    takes = [p.nargs for p in command.params if isinstance(p, click.Argument)]
    if -1 in takes or len(named) <= sum(takes) or isinstance(command, click.Group):
        return []
    count = f"{sum(takes) or 'no'} argument{'s' * (sum(takes) != 1)}"
    where = " ".join(path)
    return [f"`{where}` takes {count}, not {' '.join(named)} (see `{where} --help`)"]


def _prose(text: str) -> str:
    """``text`` with the lines of fenced blocks blanked (line numbers kept)."""
    lines, fence = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
            line = ""
        lines.append("" if fence else line)
    return "\n".join(lines)


def _simple_commands(text: str) -> list[list[str]]:
    """The simple commands of a shell line: split at pipes, ``&&``, ``||`` and ``;``."""
    try:
        words = shlex.split(text.replace("\\\n", " "), comments=True)
    except ValueError as error:
        return [[f"unparsable: {error}"]]
    commands, current = [], []
    for word in words:
        if word in ("|", "&&", "||", ";"):
            commands.append(current)
            current = []
        elif word.endswith(";") and len(word) > 1:
            current.append(word[:-1])
            commands.append(current)
            current = []
        else:
            current.append(word)
    commands.append(current)
    return [command for command in commands if command]


def command_errors(text: str) -> list[str]:
    """What is wrong with the ``innet``, ``python -m`` and ``pytest`` commands in ``text``."""
    errors = []
    for words in _simple_commands(text):
        program = Path(words[0]).name
        if words[0].startswith("unparsable"):
            errors.append(words[0])
        elif program == "innet":
            errors += innet_usage_errors(words[1:])
        elif program.startswith("python") and words[1:2] == ["-m"]:
            module = words[2]
            if module not in ("venv", "pip", "pytest") and importlib.util.find_spec(module) is None:
                errors.append(f"python -m {module}: no such module")
        elif program == "pytest":
            for word in words[1:]:
                if word.startswith("tests") and not (ROOT / word.split("::")[0]).exists():
                    errors.append(f"pytest {word}: no such file")
    return errors


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(COLUMNS="120", LINES="50", NO_COLOR="1", TERM="dumb")
    env.pop("INNET_DEBUG", None)
    env.pop("FORCE_COLOR", None)
    return env


def _run(example: Example, cwd: Path) -> list[str]:
    try:
        done = subprocess.run(["bash", "-c", example.command], cwd=cwd, env=_environment(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return [f"<timed out after {TIMEOUT} s: mark the block {SLOW}>"]
    return done.stdout.splitlines()


def _console_failure(block: Block, example: Example, actual: list[str]) -> str:
    diff = difflib.unified_diff([text.rstrip() for text in example.expected],
                                [text.rstrip() for text in actual], "expected (the docs)", "actual",
                                lineterm="", n=2)
    return (f"{block.path.relative_to(ROOT)}:{example.line}: `$ {example.command}` printed "
            "something else:\n" + "\n".join(diff))


def _doctest_failure(block: Block, cwd: Path) -> str | None:
    from amaranth.hdl import UnusedElaboratable

    parser = doctest.DocTestParser()
    test = parser.get_doctest(block.text, {}, block.where, str(block.path), block.line)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    here = Path.cwd()
    os.chdir(cwd)
    # An example may build a component only to show its interface, never elaborating it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        try:
            runner.run(test, out=report.append, clear_globs=True)
        finally:
            os.chdir(here)
            gc.collect()
    if runner.failures == 0:
        return None
    return f"{block.where}: the Python example fails:\n" + "".join(report)


@pytest.mark.parametrize("path", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_examples_print_what_the_docs_show(path: Path, tmp_path: Path) -> None:
    failures = []
    for block in parse_markdown(path):
        if block.slow:
            continue
        if block.lang == "pycon":
            failure = _doctest_failure(block, tmp_path)
            if failure:
                failures.append(failure)
        for example in block.examples:
            actual = _run(example, tmp_path)
            if not lines_match(example.expected, actual):
                failures.append(_console_failure(block, example, actual))
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("path", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_command_in_the_docs_is_real(path: Path) -> None:
    errors = []
    text = path.read_text(encoding="utf-8")
    for block in parse_markdown(path):
        if block.lang not in ("console", "sh"):
            continue
        commands = ([example.command for example in block.examples] if block.examples
                    else [block.text])
        for command in commands:
            errors += [f"{block.where}: {error}" for error in command_errors(command)]
    prose = _prose(text)
    for span in INLINE.finditer(prose):
        number = prose.count("\n", 0, span.start()) + 1
        command = " ".join(span.group(1).split())
        errors += [f"{path.relative_to(ROOT)}:{number}: `{command}`: {error}"
                   for error in command_errors(command)]
    assert not errors, "\n".join(errors)


def test_the_docs_have_examples_and_mark_slow_ones() -> None:
    blocks = [block for path in DOCS for block in parse_markdown(path)]
    assert any(block.examples and not block.slow for block in blocks)
    marked = [block.where for block in blocks if block.slow and not (
        block.examples or block.lang == "pycon")]
    assert not marked, f"{SLOW} before a block that is no example: {marked}"


def test_the_readme_keeps_the_ci_test_command() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    marker = text.index("<!-- ci: tests -->")
    block = FENCE.match(text[marker:].splitlines()[1])
    assert block is not None
    assert block.group(1) == "sh"
    command = text[marker:].splitlines()[2]
    assert command.endswith(".venv/bin/pytest -n 2 --dist worksteal"), command


@pytest.mark.parametrize(("expected", "actual", "matches"), [
    (["a", "b"], ["a", "b"], True),
    (["a", "b"], ["a", "b  "], True),
    (["a", "b"], ["a"], False),
    (["a", "...", "d"], ["a", "b", "c", "d"], True),
    (["a", "...", "d"], ["a", "d"], True),
    (["a", "...", "d"], ["a", "b", "c"], False),
    (["...", "c"], ["a", "b", "c"], True),
    (["..."], [], True),
    ([], ["a"], False),
])
def test_an_ellipsis_line_matches_any_run_of_lines(expected, actual, matches) -> None:
    assert lines_match(expected, actual) is matches


def test_examples_are_split_into_commands_and_outputs(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("text\n\n<!-- docs: slow -->\n\n```console\n$ innet a \\\n  --b\nout\n"
                   "...\n$ innet c\n```\n\n```sh\nplain\n```\n", encoding="utf-8")
    slow, plain = parse_markdown(doc)
    assert (slow.line, slow.lang, slow.slow, plain.slow) == (5, "console", True, False)
    assert [(e.command, e.line, e.expected) for e in slow.examples] == [
        ("innet a \\\n  --b", 6, ["out", "..."]), ("innet c", 10, [])]
    assert plain.examples == []


def test_an_unclosed_block_is_an_error(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("```console\n$ innet\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^.*doc\.md:1: Unclosed code block$"):
        parse_markdown(doc)


def test_unreal_commands_are_reported() -> None:
    assert command_errors("innet topo polarfly --q 3 | head -1") == []
    assert command_errors("innet image build polarfly --embed allreduce -o x.img") == []
    assert command_errors("innet nosuch") == [
        "`innet` has no subcommand 'nosuch' (it has " + ", ".join(
            _cli().list_commands(click.Context(_cli()))) + ")"]
    assert command_errors("innet image build polarfly --nope 3") == [
        "`innet image build` has no option --nope (see `innet image build --help`)"]
    assert command_errors("innet bench sim_matrix_16") == [
        "`innet bench` takes no arguments, not sim_matrix_16 (see `innet bench --help`)"]
    assert command_errors("innet image build polarfly torus -o x.img") == [
        ("`innet image build` takes 1 argument, not polarfly torus "
         "(see `innet image build --help`)")]
    assert command_errors("innet bench --only sim_ -o DIR [--json]") == []
    assert command_errors("innet synth reduction --leaves N [--datapath tree]") == []
    assert command_errors("innet COMMAND --help") == []
    assert command_errors("python -m innet.no_such_module") == [
        "python -m innet.no_such_module: no such module"]
    assert command_errors("pytest tests/no_such_test.py") == [
        "pytest tests/no_such_test.py: no such file"]


def update(paths: list[Path]) -> int:
    """Run the console examples of ``paths`` and write the outputs that differ into the files,
    except outputs with an ``...`` line; print every difference; return how many remain."""
    left = 0
    for path in paths:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        edits = []
        with tempfile.TemporaryDirectory() as tmp:
            for block in parse_markdown(path):
                if block.slow:
                    continue
                if block.lang == "pycon":
                    failure = _doctest_failure(block, Path(tmp))
                    if failure:
                        print(failure)
                        left += 1
                for example in block.examples:
                    actual = [text.rstrip() for text in _run(example, Path(tmp))]
                    if lines_match(example.expected, actual):
                        continue
                    print(_console_failure(block, example, actual))
                    if ELLIPSIS in example.expected:
                        left += 1
                        continue
                    start = example.line + example.command.count("\n")
                    edits.append((start, len(example.expected), actual))
        for start, count, actual in sorted(edits, reverse=True):
            lines[start:start + count] = [text + "\n" for text in actual]
        if edits:
            path.write_text("".join(lines), encoding="utf-8")
            print(f"{path}: {len(edits)} outputs rewritten")
    return left


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Rewrite the outputs of the docs' examples.")
    parser.add_argument("--update", nargs="+", type=Path, required=True, metavar="FILE")
    sys.exit(1 if update([path.resolve() for path in parser.parse_args().update]) else 0)
