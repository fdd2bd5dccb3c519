#!/usr/bin/env python3
"""Checks that the libraries under lib/ depend on each other in one direction.

The layers below are the intended shape of the compiler, lowest first. A
library may link, and include the headers of, only libraries of lower
layers (or its own). So the graph has no cycle, the dialect depends on no
pass, no target links an importer, and weights are read through
PipeWeights. A library that is not in the table is an error: adding one
means placing it here.

Usage: check_layering.py [SOURCE_ROOT]   (exit 1 and one line per violation)
"""

import os
import re
import sys

LAYERS = [
    ["MLIRPipe", "PipeWeights"],
    ["PipeTransforms", "PipeImportONNX", "PipeTargetCommon"],
    ["PipePlan"],
    ["PipePlanDriver", "PipePlanTesting"],
    ["PipeStageTransforms"],
    ["PipePipelines", "PipeTargetCPU"],
]

# Which library owns a header, by its path under include/ (first match).
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
    ("pipe/Pipelines/", "PipePipelines"),
]

LIBRARY = re.compile(r"add_mlir(?:_dialect)?_library\(\s*(\w+)(.*?)\)", re.S)
INCLUDE = re.compile(r'^#include "(pipe/[^"]+)"', re.M)


def libraries(root):
    """{name: (sources with paths, linked pipe libraries)} from lib/."""
    found = {}
    for folder, _, files in os.walk(os.path.join(root, "lib")):
        if "CMakeLists.txt" not in files:
            continue
        with open(os.path.join(folder, "CMakeLists.txt")) as f:
            text = re.sub(r"#.*", "", f.read())
        for name, body in LIBRARY.findall(text):
            words = body.split()
            links = words[words.index("LINK_LIBS") + 1:] if "LINK_LIBS" in words else []
            sources = []
            for word in words:
                if word in ("ADDITIONAL_HEADER_DIRS", "DEPENDS", "LINK_LIBS"):
                    break
                if word.endswith(".cpp"):
                    sources.append(os.path.join(folder, word))
            found[name] = (sources, [l for l in links
                                     if l.startswith("Pipe") or l == "MLIRPipe"])
    return found


def owner(header):
    for prefix, name in HEADER_OWNERS:
        if header.startswith(prefix):
            return name
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    layer = {name: i for i, names in enumerate(LAYERS) for name in names}
    found = libraries(root)
    errors = []
    for name in sorted(found):
        if name not in layer:
            errors.append(f"library {name} is in no layer of "
                          "scripts/check_layering.py")
    for name, (sources, links) in sorted(found.items()):
        if name not in layer:
            continue

        def allowed(other):
            return other == name or (other in layer and
                                     layer[other] < layer[name])

        for link in links:
            if not allowed(link):
                errors.append(f"library {name} links {link}, which is not "
                              "below it")
            if name.startswith("PipeTarget") and link.startswith("PipeImport"):
                errors.append(f"target {name} links the importer {link}")
        for source in sources:
            with open(source) as f:
                text = f.read()
            for header in INCLUDE.findall(text):
                other = owner(header)
                if other is None:
                    errors.append(f"{os.path.relpath(source, root)}: header "
                                  f"'{header}' belongs to no library")
                elif not allowed(other):
                    errors.append(f"{os.path.relpath(source, root)} (in "
                                  f"{name}) includes '{header}' of {other}, "
                                  "which is not below it")
    for error in errors:
        print(error)
    if not found:
        print(f"no library found under {root}/lib")
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
