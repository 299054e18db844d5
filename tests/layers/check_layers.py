#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fails when the engine's folders stop being its layers (ARCHITECTURE.md).

Each folder of engine/src is a layer, lowest first in LAYERS; a file may include headers of its
own layer and of lower ones only, always by their folder ("physics/estimate.h"). api.cpp, the
façade behind engine/include/gpuplan/api.h, sits on top. Also checked: nlohmann only in json/;
the physics takes a stack's policies (stacks/policy.h), never its registry, and compares no
value with a stack's id; the engine opens no file, reads no clock and knows no Emscripten;
every layer has its README.md.

Usage: check_layers.py ENGINE_DIR   |   check_layers.py --self-test"""
import json
import os
import re
import shutil
import sys
import tempfile

LAYERS = ["core", "model", "stacks", "physics", "plan", "after", "json"]
# What the physics may see of stacks/: the policy types, not the named profiles.
PHYSICS_STACK_HEADERS = {"stacks/policy.h", "stacks/settings.h"}
BANNED_SYSTEM = ("fstream", "iostream", "filesystem", "chrono", "ctime", "thread", "emscripten")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def stack_ids(engine):
    """The profile ids of catalog/stacks.json, beside the engine folder."""
    path = os.path.join(engine, "..", "catalog", "stacks.json")
    if not os.path.exists(path):
        return set()
    with open(path, encoding="utf-8") as f:
        return {s["id"] for s in json.load(f)["stacks"]}


def check(engine):
    src = os.path.join(engine, "src")
    problems = []
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    ids = stack_ids(engine)
    for entry in sorted(os.listdir(src)):
        path = os.path.join(src, entry)
        if os.path.isdir(path) and entry not in rank:
            problems.append(f"src/{entry}/: a folder that is not a layer (add it to LAYERS)")
        elif os.path.isfile(path) and entry != "api.cpp":
            problems.append(f"src/{entry}: engine files live in a layer's folder")
    for layer in LAYERS:
        folder = os.path.join(src, layer)
        if not os.path.isdir(folder):
            problems.append(f"src/{layer}/: missing")
            continue
        if not os.path.isfile(os.path.join(folder, "README.md")):
            problems.append(f"src/{layer}/README.md: missing (what it holds, what it may include)")
    files = [("api", os.path.join(src, "api.cpp"))] if os.path.isfile(os.path.join(src, "api.cpp")) else []
    for layer in LAYERS:
        folder = os.path.join(src, layer)
        if os.path.isdir(folder):
            files += [(layer, os.path.join(folder, n)) for n in sorted(os.listdir(folder))
                      if n.endswith((".cpp", ".h"))]
    for layer, path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        where = os.path.relpath(path, engine)
        own = len(LAYERS) if layer == "api" else rank[layer]
        for kind, inc in INCLUDE.findall(text):
            if kind == "<":
                if inc.startswith("nlohmann") and layer != "json":
                    problems.append(f"{where}: includes <{inc}>: only json/ reads and writes JSON")
                if inc.split("/")[0].split(".")[0] in BANNED_SYSTEM:
                    problems.append(f"{where}: includes <{inc}>: the engine does no I/O, "
                                    "reads no clock and knows no Emscripten")
                continue
            if inc == "gpuplan/api.h":
                if layer != "api":
                    problems.append(f"{where}: includes the façade gpuplan/api.h")
                continue
            target = inc.split("/")[0]
            if "/" not in inc or target not in rank:
                problems.append(f'{where}: includes "{inc}": name headers by their layer folder')
                continue
            if rank[target] > own:
                problems.append(f'{where}: includes "{inc}": {layer}/ is below {target}/')
            if layer == "physics" and target == "stacks" and inc not in PHYSICS_STACK_HEADERS:
                problems.append(f'{where}: includes "{inc}": the physics takes policies '
                                f"({', '.join(sorted(PHYSICS_STACK_HEADERS))}), not stack profiles")
        if layer in ("physics", "plan"):
            code = re.sub(r"//[^\n]*", "", text)
            for line in code.splitlines():
                named = [s for s in STRING.findall(line) if s in ids]
                if named and re.search(r"==|!=|strcmp|case\b|\.compare\(", line):
                    problems.append(f"{where}: compares with stack id {named[0]!r}: give the "
                                    "physics a policy value instead")
    return problems


def self_test():
    """The check must catch each kind of breach in a copy of a small tree."""
    base = tempfile.mkdtemp()
    try:
        os.makedirs(os.path.join(base, "catalog"))
        with open(os.path.join(base, "catalog", "stacks.json"), "w") as f:
            json.dump({"stacks": [{"id": "vllm"}]}, f)
        def tree(files):
            root = os.path.join(base, str(len(os.listdir(base))))
            for layer in LAYERS:
                os.makedirs(os.path.join(root, "src", layer))
                with open(os.path.join(root, "src", layer, "README.md"), "w") as f:
                    f.write("x\n")
            for name, text in files.items():
                with open(os.path.join(root, "src", name), "w", encoding="utf-8") as f:
                    f.write(text)
            return root
        ok = tree({"physics/a.cpp": '#include "model/b.h"\n#include "stacks/policy.h"\n'
                                    '// if (id == "vllm") in a comment is fine\n'})
        assert check(ok) == [], check(ok)
        breaches = {
            "upward": {"model/a.cpp": '#include "physics/estimate.h"\n'},
            "unqualified": {"plan/a.cpp": '#include "estimate.h"\n'},
            "facade": {"plan/a.cpp": '#include "gpuplan/api.h"\n'},
            "json": {"physics/a.cpp": "#include <nlohmann/json.hpp>\n"},
            "io": {"model/a.cpp": "#include <fstream>\n"},
            "registry": {"physics/a.cpp": '#include "stacks/registry.h"\n'},
            "branch": {"physics/a.cpp": 'bool f(const char* id) { return id == "vllm"; }\n'},
            "stray": {"loose.cpp": "\n"},
        }
        for what, files in breaches.items():
            found = check(tree(files))
            assert len(found) == 1, f"{what}: {found}"
        root = tree({})
        os.remove(os.path.join(root, "src", "plan", "README.md"))
        assert len(check(root)) == 1
    finally:
        shutil.rmtree(base)
    print("self-test: every kind of breach is caught")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    found = check(sys.argv[1])
    for p in found:
        print(p)
    print(f"{len(found)} layering problem(s)" if found else "layers: every include points down")
    sys.exit(1 if found else 0)
