"""gen.regmap.export: byte-stable JSON, C and Markdown; the C header compiles, agrees with JSON."""

import json
import os
import re
import subprocess
import sys
from dataclasses import replace

import pytest

from innet.gen.regmap import (
    ERROR_FLAGS,
    Array,
    Cluster,
    Field,
    Map,
    Register,
    endpoint_map,
    switch_map,
    to_c_header,
    to_json,
    to_markdown,
)

MAPS = {
    "switch-2-2-4": lambda: switch_map(2, 2, 4),
    "switch-8-4-16": lambda: switch_map(8, 4, 16),
    "switch-40-3-9": lambda: switch_map(40, 3, 9, node_id_width=8),
    "endpoint-2-4-64": lambda: endpoint_map(2, 4, 64),
    "endpoint-5-3-1000": lambda: endpoint_map(5, 3, 1000, node_id_width=12),
    "nested": lambda: Map("nest", [
        Register("id", [Field("v", 8, access="ro", reset=7)]),
        Array(Cluster("unit", [Register("ctrl", [Field("en", 1)]),
                               Array(Cluster("lane", [Register("cfg", [Field("w", 3)]),
                                                      Register("mask", [Field("m", 70)])]), 3),
                               Register("stat", [Field("s", 8, access="ro", volatile=True)])]),
              2),
        Register("tail", [Field("t", 32, reset=0xDEADBEEF)], offset=0x100)]),
}


@pytest.fixture(params=sorted(MAPS))
def regmap(request):
    return MAPS[request.param]()


def test_exports_are_byte_stable(regmap):
    again = MAPS[next(k for k in MAPS if MAPS[k]().digest == regmap.digest)]()
    for export in (to_json, to_c_header, to_markdown):
        assert export(regmap) == export(again)
        assert export(regmap).endswith("\n")
        assert "\r" not in export(regmap)


def test_exports_do_not_depend_on_the_interpreter_run(tmp_path):
    code = ("from innet.gen.regmap import *; m = switch_map(8, 4, 16); "
            "print(to_json(m) + to_c_header(m) + to_markdown(m) + m.digest)")
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env={**os.environ, "PYTHONHASHSEED": seed},
                              cwd=tmp_path).stdout for seed in ("0", "1", "12345")}
    assert len(outputs) == 1


def test_json_lists_every_register(regmap):
    data = json.loads(to_json(regmap))
    assert data["format"] == "innet-regmap"
    assert data["addressing"] == "word"
    assert data["word_bits"] == 32
    assert data["size"] == regmap.size
    assert data["digest"] == regmap.digest
    assert data["params"] == regmap.params
    assert [(r["name"], r["address"], r["template"]) for r in data["registers"]] == [
        (r.name, r.address, r.template) for r in regmap]
    for r in regmap:
        t = data["templates"][r.template]
        assert t["words"] == r.words
        assert t["reset"] == r.reset
        assert [(f["name"], f["offset"], f["width"], f["access"]) for f in t["fields"]] == [
            (f.name, f.offset, f.width, f.access.value) for f in r.fields]


def test_json_tree_addresses_match_the_flat_list(regmap):
    """Re-derive every address from the JSON tree alone (offsets, strides, counts)."""
    def walk(nodes, base, prefix):
        for node in nodes:
            address, name = base + node["offset"], prefix + node["name"]
            if node["kind"] == "register":
                yield name, address
            elif node["kind"] == "cluster":
                yield from walk(node["members"], address, name + ".")
            else:
                for i in range(node["count"]):
                    element = dict(node["element"], offset=0, name=f"{node['name']}[{i}]")
                    yield from walk([element], address + i * node["stride"], prefix)

    data = json.loads(to_json(regmap))
    assert sorted(walk(data["tree"], 0, ""), key=lambda x: x[1]) == [
        (r["name"], r["address"]) for r in data["registers"]]


def test_digest_ignores_descriptions_only():
    a = Map("m", [Register("r", [Field("f", 4, desc="one")], desc="x")], desc="first")
    b = Map("m", [Register("r", [Field("f", 4, desc="two")], desc="y")], desc="second")
    assert a.digest == b.digest
    assert to_json(a) != to_json(b)
    base = Register("r", [Field("f", 4)])
    changed = [
        Map("m", [Register("r", [Field("f", 5)])]),
        Map("m", [Register("r", [Field("f", 4, offset=1)])]),
        Map("m", [Register("r", [Field("f", 4, access="ro")])]),
        Map("m", [Register("r", [Field("f", 4, reset=1)])]),
        Map("m", [Register("r", [Field("f", 4, max=9)])]),
        Map("m", [Register("r", [Field("g", 4)])]),
        Map("m", [replace(base, offset=1)]),
        Map("m", [base], version=2),
        Map("m", [base], params={"radix": 1}),
        Map("n", [base]),
    ]
    digests = {m.digest for m in changed} | {Map("m", [base]).digest}
    assert len(digests) == len(changed) + 1


def c_macro(prefix, name):
    """The C expression for the offset of a flat register name, derived from the name alone."""
    indices = re.findall(r"\[(\d+)\]", name)
    stem = re.sub(r"\[\d+\]", "", name).replace(".", "_").upper()
    return f"{prefix}_{stem}_OFFSET" + (f"({', '.join(indices)})" if indices else "")


def test_c_header_compiles_and_matches_the_json(regmap, tmp_path):
    header = tmp_path / "regs.h"
    header.write_text(to_c_header(regmap))
    data = json.loads(to_json(regmap))
    prefix = f"INNET_{regmap.name.upper()}"
    checks = []
    for r in data["registers"]:
        checks.append(f'printf("%s %lu\\n", "{r["name"]}", '
                      f'(unsigned long)({c_macro(prefix, r["name"])}));')
    for template, t in data["templates"].items():
        stem = f"{prefix}_{re.sub(r'[^A-Za-z0-9]+', '_', template.replace('[]', '')).upper()}"
        checks.append(f'printf("%s size %lu\\n", "{template}", (unsigned long){stem}_SIZE);')
        for f in t["fields"]:
            fs = f"{stem}_{f['name'].upper()}"
            checks.append(f'printf("%s.%s %lu %lu\\n", "{template}", "{f["name"]}", '
                          f"(unsigned long){fs}_SHIFT, (unsigned long){fs}_WIDTH);")
            if f["offset"] + f["width"] <= 64:
                checks.append(f'printf("%s.%s mask %llx\\n", "{template}", "{f["name"]}", '
                              f"(unsigned long long){fs}_MASK);")
    if "memory" in data:
        checks.append(f'printf("memory %lu %lu %lu\\n", (unsigned long){prefix}_MEMORY_BASE, '
                      f"(unsigned long){prefix}_MEMORY_DEPTH, "
                      f"(unsigned long){prefix}_BUS_ADDRESS_WIDTH);")
    program = tmp_path / "check.c"
    program.write_text('#include <stdio.h>\n#include "regs.h"\n#include "regs.h"\n'
                       "int main(void) {\n" + "\n".join(checks) + "\nreturn 0;\n}\n")
    subprocess.run(["cc", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "regs.h"], check=True,
                   cwd=tmp_path)
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-o", "check",
                    "check.c"], check=True, cwd=tmp_path)
    lines = subprocess.run(["./check"], capture_output=True, text=True, check=True,
                           cwd=tmp_path).stdout.splitlines()
    expected = [f"{r['name']} {r['address']}" for r in data["registers"]]
    for template, t in data["templates"].items():
        expected.append(f"{template} size {t['words']}")
        for f in t["fields"]:
            expected.append(f"{template}.{f['name']} {f['offset']} {f['width']}")
            if f["offset"] + f["width"] <= 64:
                mask = ((1 << f["width"]) - 1) << f["offset"]
                expected.append(f"{template}.{f['name']} mask {mask:x}")
    if "memory" in data:
        memory = data["memory"]
        expected.append(f"memory {memory['base']} {memory['depth']} "
                        f"{memory['bus_address_width']}")
    assert lines == expected


def test_switch_and_endpoint_headers_compile_together(tmp_path):
    (tmp_path / "switch.h").write_text(to_c_header(switch_map(8, 4, 16)))
    (tmp_path / "endpoint.h").write_text(to_c_header(endpoint_map(4, 8, 256)))
    (tmp_path / "both.c").write_text(
        '#include "switch.h"\n#include "endpoint.h"\n'
        "unsigned f(void) { return INNET_SWITCH_COLL_CTRL_OFFSET(3) + INNET_OP_MAX "
        "+ INNET_ENDPOINT_STEP_SEND_PEER_OFFSET(2) + INNET_TARGET_ENDPOINT; }\n"
        "typedef char same_op[INNET_OP_MAX == 2 ? 1 : -1];\n")
    subprocess.run(["cc", "-fsyntax-only", "-std=c99", "-Wall", "-Wextra", "-pedantic",
                    "-Werror", "both.c"], check=True, cwd=tmp_path)


def test_markdown_describes_every_template(regmap):
    text = to_markdown(regmap)
    rows = [line for line in text.splitlines() if line.startswith("| `0x")]
    assert len(rows) == len(regmap.templates)
    assert all(line.count(" | ") == 5 for line in rows)
    for r, row in zip(regmap.templates, rows, strict=True):
        display = re.sub(r"\[\]", "[{}]", r.template)
        cells = row.split(" | ")
        # "`0x20 + 8i + 2j`, i < 4, j < 3": evaluate the address formula at every index.
        formula, *bounds = cells[0].strip("| ").split(", ")
        base, *terms = formula.strip("`").split(" + ")
        counts = [int(b.split(" < ")[1]) for b in bounds]
        strides = [int(t[:-1] or 1) for t in terms]
        assert cells[1] == f"`{display.format(*'ijklmn'[:len(counts)])}`"
        for m in regmap:
            if m.template == r.template:
                assert all(i < c for i, c in zip(m.index, counts, strict=True))
                assert m.address == int(base, 16) + sum(
                    i * s for i, s in zip(m.index, strides, strict=True))
        assert f"### `{display.format(*'ijklmn'[:len(counts)])}`" in text
    assert regmap.digest in text


def test_exports_show_the_rw1c_error_flags():
    """The switch's sticky error flags appear as RW1C in every export."""
    m = switch_map(2, 2, 4)
    data = json.loads(to_json(m))
    fields = data["templates"]["errors"]["fields"]
    assert [(f["name"], f["access"], f["reset"]) for f in fields] == [
        (name, "rw1c", 0) for name in ERROR_FLAGS]
    header = to_c_header(m)
    assert "/* errors (RW1C): sticky error flags (read; write 1 to clear) */" in header
    assert "#define INNET_SWITCH_ERRORS_NO_ROUTE_MASK 4u" in header
    markdown = to_markdown(m)
    assert "| `0x06` | `errors` | 1 | RW1C | `0x0` |" in markdown
    assert f"| 2 | `no_route` | RW1C | 0 | 0..1 | {ERROR_FLAGS['no_route']} |" in markdown


@pytest.mark.parametrize("export", [to_json, to_c_header, to_markdown])
def test_exports_refuse_what_is_not_a_map(export):
    with pytest.raises(TypeError, match=r"^Register map must be a Map, not dict$"):
        export(switch_map(4, 2, 16).as_dict())


@pytest.mark.parametrize("prefix", ["has space", "", "1X", None])
def test_a_c_header_prefix_must_be_a_c_identifier(prefix):
    with pytest.raises(ValueError, match=r"^Prefix must be a C identifier such as INNET, not "):
        to_c_header(switch_map(4, 2, 16), prefix=prefix)
