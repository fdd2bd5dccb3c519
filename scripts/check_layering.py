#!/usr/bin/env python3
"""Checks that the libraries under lib/ depend on each other in one direction.

The layers below are the intended shape of the compiler, lowest first:

- a library links only libraries of lower layers, so the graph has no
  cycle and the dialect depends on no pass;
- its sources and headers (its public headers under include/ and its
  internal ones beside its sources) include only headers of itself or of
  libraries it links, directly or through them;
- no target library reaches an importer: weights are read through
  PipeWeights.

A library that is not in the table, or that is declared twice, is an
error: adding one means placing it here.

Usage: check_layering.py [SOURCE_ROOT]   (exit 1 and one line per violation)
"""

import os
import re
import sys

LAYERS = [
    ["MLIRPipe", "PipeWeights"],
    ["PipeTransforms", "PipeImportONNX", "PipeTargetCommon"],
    ["PipeTargetCUDA"],
    ["PipePlan"],
    ["PipePlanDriver", "PipePlanTesting"],
    ["PipeStageTransforms"],
    ["PipePipelines", "PipeTargetCPU"],
]

# Which library owns a public header, by its path under include/ (first
# match wins).
HEADER_OWNERS = [
    ("pipe/Dialect/", "MLIRPipe"),
    ("pipe/Weights/", "PipeWeights"),
    ("pipe/Import/", "PipeImportONNX"),
    ("pipe/Transforms/Passes.h", "PipeTransforms"),
    ("pipe/Transforms/", "PipeStageTransforms"),
    ("pipe/Plan/Testing/", "PipePlanTesting"),
    ("pipe/Plan/PlanDriver.h", "PipePlanDriver"),
    ("pipe/Plan/", "PipePlan"),
    ("pipe/Target/Common/", "PipeTargetCommon"),
    ("pipe/Target/CPU/", "PipeTargetCPU"),
    ("pipe/Target/CUDA/", "PipeTargetCUDA"),
    ("pipe/Pipelines/", "PipePipelines"),
]

LIBRARY = re.compile(r"\badd_\w*library\(\s*(\w+)(.*?)\)", re.S)
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
KEYWORDS = {"ADDITIONAL_HEADER_DIRS", "DEPENDS", "LINK_LIBS", "LINK_COMPONENTS",
            "PUBLIC", "PRIVATE", "STATIC", "SHARED"}


def is_pipe_library(name):
    return name.startswith("Pipe") or name == "MLIRPipe"


def read_libraries(root, errors):
    """{name: (folder, sources, linked pipe libraries)} from lib/."""
    found = {}
    for folder, _, files in sorted(os.walk(os.path.join(root, "lib"))):
        if "CMakeLists.txt" not in files:
            continue
        with open(os.path.join(folder, "CMakeLists.txt")) as f:
            text = re.sub(r"#.*", "", f.read())
        for name, body in LIBRARY.findall(text):
            words = body.split()
            links = []
            if "LINK_LIBS" in words:
                links = [w for w in words[words.index("LINK_LIBS") + 1:]
                         if w not in KEYWORDS and is_pipe_library(w)]
            sources = []
            for word in words:
                if word in KEYWORDS:
                    break
                if word.endswith(".cpp"):
                    sources.append(os.path.join(folder, word))
            if name in found:
                errors.append(f"library {name} is declared twice")
            found[name] = (folder, sources, links)
    return found


def closure(name, found):
    """The libraries `name` links, directly or through others."""
    seen, stack = set(), [name]
    while stack:
        for link in found.get(stack.pop(), ("", [], []))[2]:
            if link not in seen:
                seen.add(link)
                stack.append(link)
    return seen


def public_owner(header):
    for prefix, name in HEADER_OWNERS:
        if header.startswith(prefix):
            return name
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), ".."))
    layer = {name: i for i, names in enumerate(LAYERS) for name in names}
    errors = []
    found = read_libraries(root, errors)
    if not found:
        print(f"no library found under {root}/lib")
        return 1

    # The files each library is made of: its sources, the internal headers
    # beside them, and its public headers.
    files = {name: list(sources) for name, (_, sources, _) in found.items()}
    folders = {}
    for name, (folder, sources, _) in found.items():
        for source in sources:
            folders.setdefault(os.path.dirname(source), set()).add(name)
    for folder, names in folders.items():
        for entry in sorted(os.listdir(folder)):
            if entry.endswith(".h"):
                for name in names:
                    files[name].append(os.path.join(folder, entry))
    include_root = os.path.join(root, "include")
    for folder, _, entries in os.walk(include_root):
        for entry in entries:
            if entry.endswith(".h"):
                path = os.path.join(folder, entry)
                owner = public_owner(os.path.relpath(path, include_root))
                if owner in files:
                    files[owner].append(path)

    for name in sorted(found):
        if name not in layer:
            errors.append(f"library {name} is in no layer of "
                          "scripts/check_layering.py")
            continue
        links = found[name][2]
        for link in links:
            if link not in layer or layer[link] >= layer[name]:
                errors.append(f"library {name} links {link}, which is not "
                              "below it")
        reached = closure(name, found)
        if name.startswith("PipeTarget"):
            for other in sorted(reached):
                if other.startswith("PipeImport"):
                    errors.append(f"target {name} reaches the importer "
                                  f"{other}")
        for path in files[name]:
            with open(path) as f:
                text = f.read()
            where = os.path.relpath(path, root)
            for header in INCLUDE.findall(text):
                if not header.startswith("pipe/"):
                    continue
                owner = public_owner(header)
                if owner is None:
                    errors.append(f"{where}: header '{header}' belongs to no "
                                  "library")
                elif owner != name and owner not in reached:
                    errors.append(f"{where} (in {name}) includes '{header}' "
                                  f"of {owner}, which {name} does not link")
    for error in errors:
        print(error)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
