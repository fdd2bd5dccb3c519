#!/usr/bin/env python3
"""The full cross product of integration_test/Pipeline/train-pipelined.test.

For the MLP, the CNN and the GPT of python/train_reference.py: every S in
{2, 3, 4}, M in {1, 4, 8}, schedule in {gpipe, 1f1b}, recompute in {none,
selective, full} and optimizer in {momentum, adamw} (108 pipelines per
model), each trained 5 steps and compared with the single stage by
python/check_pipeline.py. Prints one line per model and the worst
differences. Takes about half an hour on 2 cores.

    /usr/bin/python3 bench/pipeline_matrix.py [--pipe-opt build/bin/pipe-opt]
        [--models mlp,cnn,gpt]
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipe-opt",
                        default=os.path.join(ROOT, "build", "bin", "pipe-opt"))
    parser.add_argument("--models", default="mlp,cnn,gpt")
    args = parser.parse_args()
    cluster = os.path.join(ROOT, "integration_test", "Pipeline", "Inputs",
                           "four-cpus.json")
    configs = [f"S={s},M={m},schedule={sch},recompute={r},optimizer={o}"
               for s, m, sch, r, o in itertools.product(
                   (2, 3, 4), (1, 4, 8), ("gpipe", "1f1b"),
                   ("none", "selective", "full"), ("momentum", "adamw"))]
    status = 0
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([sys.executable,
                        os.path.join(ROOT, "python", "train_reference.py"),
                        "--out", os.path.join(work, "ref"), "--models",
                        args.models, "--optimizers", "sgd", "--steps", "1"],
                       check=True, stdout=subprocess.DEVNULL)
        for model in args.models.split(","):
            result = subprocess.run(
                [sys.executable,
                 os.path.join(ROOT, "python", "check_pipeline.py"),
                 args.pipe_opt, os.path.join(work, "ref", model, "model.onnx"),
                 os.path.join(work, "ref", model, "inputs"), cluster,
                 os.path.join(work, model), *configs],
                capture_output=True, text=True)
            print(result.stdout.strip() or result.stderr.strip())
            status |= result.returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
