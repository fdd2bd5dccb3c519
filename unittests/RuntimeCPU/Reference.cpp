//===- Reference.cpp - running reference scripts, reading their arrays ----===//

#include "Reference.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace fs = std::filesystem;

namespace reference {

static const char *const prelude = R"(
import sys
import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
d = sys.argv[1]
rng = np.random.default_rng(20240607)
_cases = {}


def rand(*shape, lo=-1.0, hi=1.0):
    """float64 values that float32 holds exactly."""
    return rng.uniform(lo, hi, shape).astype(np.float32).astype(np.float64)


def I(values):
    return np.array(values, dtype=np.int64)


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def save(_kernel, _name, **arrays):
    kernel, name = _kernel, _name
    assert name not in _cases.setdefault(kernel, []), name
    _cases[kernel].append(name)
    for key, value in arrays.items():
        if value is None:
            continue
        if isinstance(value, torch.Tensor):
            value = value.detach().numpy()
        # np.array, unlike np.ascontiguousarray, keeps 0-d arrays 0-d.
        np.save(f'{d}/{kernel}.{name}.{key}.npy', np.array(value, order='C'))
)";

static const char *const epilogue = R"(
for _kernel, _names in _cases.items():
    with open(f'{d}/{_kernel}.cases', 'w') as _f:
        _f.write(''.join(n + '\n' for n in _names))
)";

Reference::Reference(const std::string &suite, const std::string &code) {
  dir = fs::temp_directory_path() /
        ("pipe-cpu-kernels-" + std::to_string(::getpid()) + "-" + suite);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string script = path("script.py");
  std::ofstream(script) << prelude << "\n" << code << "\n" << epilogue;
  std::string command = "/usr/bin/python3 '" + script + "' '" + dir.string() +
                        "' > '" + path("log.txt") + "' 2>&1";
  if (std::system(command.c_str()) != 0) {
    std::ifstream log(path("log.txt"));
    std::stringstream text;
    text << log.rdbuf();
    failure = "reference script failed:\n" + text.str();
  }
}

Reference::~Reference() {
  if (failure.empty())
    fs::remove_all(dir);
}

std::string Reference::path(const std::string &file) const {
  return (dir / file).string();
}

std::vector<Reference::Case> Reference::cases(const std::string &kernel) const {
  std::vector<Case> result;
  std::ifstream list(path(kernel + ".cases"));
  std::string name;
  while (std::getline(list, name))
    if (!name.empty())
      result.push_back(Case{this, kernel, name});
  return result;
}

bool Reference::Case::has(const std::string &array) const {
  return fs::exists(ref->path(kernel + "." + name + "." + array + ".npy"));
}

Array Reference::Case::operator[](const std::string &array) const {
  Array result;
  std::string error = pipe_rt::readNpy(
      ref->path(kernel + "." + name + "." + array + ".npy"), result.npy);
  EXPECT_EQ(error, "") << "case " << kernel << "." << name;
  return result;
}

::testing::AssertionResult sameBytes(const std::vector<char> &got,
                                     const Array &want) {
  if (got.size() != want.npy.data.size())
    return ::testing::AssertionFailure()
           << got.size() << " bytes, expected " << want.npy.data.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want.npy.data[i])
      return ::testing::AssertionFailure()
             << "bytes differ first at " << i << " (element "
             << i / want.elementSize() << ")";
  return ::testing::AssertionSuccess();
}

} // namespace reference
