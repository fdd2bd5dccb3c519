# -*- Python -*-
# lit configuration that runs the GoogleTest unit tests, one lit test per
# GoogleTest case.

import os

import lit.formats

config.name = "PIPE-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.pipe_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
