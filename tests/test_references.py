"""Every name of innet that the docs and the docstrings cite in code (``innet.gen.cost.CostModel``,
``hw.alu.multi``, :func:`innet.gen.embed.embed`) exists, so that a renamed or removed name leaves
no stale reference behind. A name is looked up as a module, then attribute by attribute; a
dataclass field or an annotated attribute counts as an attribute of its class."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
           *sorted(p for part in ("gen", "hw", "sim") for p in (ROOT / part).rglob("*.py"))]
#: A code span: `x`, ``x`` or :role:`x`.
SPAN = re.compile(r"`+([^`\n]+)`+")
#: A dotted name of the package, with or without its ``innet.`` prefix.
NAME = re.compile(r"(?<![\w./-])((?:innet\.)?(?:gen|hw|sim)(?:\.[A-Za-z_]\w*)+)")
#: File names are not Python names.
FILE_SUFFIXES = (".py", ".md", ".toml", ".json", ".txt", ".v", ".png")


def _has(obj: object, attribute: str) -> bool:
    if hasattr(obj, attribute):
        return True
    return attribute in getattr(obj, "__dataclass_fields__", {}) or attribute in getattr(
        obj, "__annotations__", {})


def resolves(name: str) -> bool:
    """Whether ``name`` (``innet.`` optional) is a module of innet or an attribute in one."""
    parts = (name if name.startswith("innet.") else f"innet.{name}").split(".")
    for split in range(len(parts), 1, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            if not _has(obj, attribute):
                return False
            obj = getattr(obj, attribute, None)
        return True
    return False


def unresolved(text: str) -> list[str]:
    """The names cited in the code spans of ``text`` that do not resolve."""
    names = {name.rstrip(".") for span in SPAN.finditer(text)
             for name in NAME.findall(span.group(1))}
    return sorted(name for name in names
                  if not name.endswith(FILE_SUFFIXES) and not resolves(name))


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_cited_name_exists(path: Path) -> None:
    assert unresolved(path.read_text(encoding="utf-8")) == []


def test_a_stale_name_is_found():
    text = ("See :func:`innet.gen.cost.no_such_function` and ``hw.no_such_module``, not "
            "`innet.gen.cost.CostModel`, `gen.cost.reduce_cycles`, ``sim/network.py`` or "
            ":attr:`innet.sim.network.Outcome.latency_cycles` (a dataclass field).")
    assert unresolved(text) == ["hw.no_such_module", "innet.gen.cost.no_such_function"]
