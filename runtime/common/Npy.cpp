//===- Npy.cpp - NumPy .npy files for stage inputs and outputs ------------===//
//
// The format: magic "\x93NUMPY", a version (1.0: 2-byte header length; 2.0
// and 3.0: 4-byte), then a Python dict literal with 'descr', 'fortran_order'
// and 'shape', padded with spaces and a newline so the data is aligned to 64
// bytes. See numpy.lib.format.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <unistd.h>

using namespace pipe_rt;

const char *pipe_rt::dtypeName(DType type) {
  switch (type) {
  case DType::F32:
    return "float32";
  case DType::F64:
    return "float64";
  case DType::I64:
    return "int64";
  case DType::I32:
    return "int32";
  case DType::Bool:
    return "bool";
  case DType::I16:
    return "int16";
  case DType::I8:
    return "int8";
  case DType::U64:
    return "uint64";
  case DType::U32:
    return "uint32";
  case DType::U16:
    return "uint16";
  case DType::U8:
    return "uint8";
  }
  return "?";
}

size_t pipe_rt::dtypeSize(DType type) {
  switch (type) {
  case DType::F32:
  case DType::I32:
  case DType::U32:
    return 4;
  case DType::F64:
  case DType::I64:
  case DType::U64:
    return 8;
  case DType::I16:
  case DType::U16:
    return 2;
  case DType::Bool:
  case DType::I8:
  case DType::U8:
    return 1;
  }
  return 0;
}

int64_t NpyArray::numElements() const {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

std::string pipe_rt::formatShape(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  if (shape.size() == 1)
    os << ",";
  os << ")";
  return os.str();
}

namespace {
/// The fields of a .npy header dict.
struct Header {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Returns the value text of `key` in the dict literal, or empty.
std::string dictValue(const std::string &dict, const std::string &key) {
  for (char quote : {'\'', '"'}) {
    std::string needle = quote + key + quote;
    size_t at = dict.find(needle);
    if (at == std::string::npos)
      continue;
    at = dict.find(':', at + needle.size());
    if (at == std::string::npos)
      return "";
    ++at;
    while (at < dict.size() && dict[at] == ' ')
      ++at;
    size_t end = at;
    if (at < dict.size() && (dict[at] == '\'' || dict[at] == '"')) {
      end = dict.find(dict[at], at + 1);
      return end == std::string::npos ? "" : dict.substr(at, end - at + 1);
    }
    if (at < dict.size() && dict[at] == '(') {
      end = dict.find(')', at);
      return end == std::string::npos ? "" : dict.substr(at, end - at + 1);
    }
    while (end < dict.size() && dict[end] != ',' && dict[end] != '}')
      ++end;
    return dict.substr(at, end - at);
  }
  return "";
}

std::string parseHeader(const std::string &dict, Header &header) {
  std::string descr = dictValue(dict, "descr");
  std::string fortran = dictValue(dict, "fortran_order");
  std::string shape = dictValue(dict, "shape");
  if (descr.size() < 2 || fortran.empty() || shape.empty())
    return "malformed header " + dict;
  header.descr = descr.substr(1, descr.size() - 2);
  if (fortran.rfind("True", 0) == 0)
    header.fortranOrder = true;
  else if (fortran.rfind("False", 0) != 0)
    return "malformed fortran_order " + fortran;
  std::string inner = shape.substr(1, shape.size() - 2);
  std::stringstream stream(inner);
  std::string item;
  while (std::getline(stream, item, ',')) {
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (item.empty())
      continue;
    char *end = nullptr;
    errno = 0;
    long long extent = std::strtoll(item.c_str(), &end, 10);
    if (errno || *end != '\0' || extent < 0)
      return "malformed shape " + shape;
    header.shape.push_back(extent);
  }
  return "";
}

/// Maps a descr like '<f4' to a DType and whether bytes must be swapped.
std::string parseDescr(const std::string &descr, DType &type, bool &swap) {
  if (descr.size() != 3)
    return "unsupported dtype '" + descr + "'";
  char order = descr[0];
  std::string kind = descr.substr(1);
  bool little = order == '<' || order == '|' || order == '=';
  if (!little && order != '>')
    return "unsupported dtype '" + descr + "'";
  static const std::pair<const char *, DType> kinds[] = {
      {"f4", DType::F32}, {"f8", DType::F64}, {"i8", DType::I64},
      {"i4", DType::I32}, {"i2", DType::I16}, {"i1", DType::I8},
      {"u8", DType::U64}, {"u4", DType::U32}, {"u2", DType::U16},
      {"u1", DType::U8},  {"b1", DType::Bool}};
  for (const auto &[name, dtype] : kinds) {
    if (kind != name)
      continue;
    type = dtype;
    swap = order == '>' && dtypeSize(dtype) > 1;
    return "";
  }
  return "unsupported dtype '" + descr +
         "' (supported: float32, float64, bool, int8-64, uint8-64)";
}

std::string descrOf(DType type) {
  switch (type) {
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I64:
    return "<i8";
  case DType::I32:
    return "<i4";
  case DType::I16:
    return "<i2";
  case DType::I8:
    return "|i1";
  case DType::U64:
    return "<u8";
  case DType::U32:
    return "<u4";
  case DType::U16:
    return "<u2";
  case DType::U8:
    return "|u1";
  case DType::Bool:
    return "|b1";
  }
  return "";
}

/// Reorders Fortran-order (column-major) data into C order.
std::vector<char> fortranToC(const std::vector<char> &data,
                             const std::vector<int64_t> &shape, size_t size) {
  std::vector<char> result(data.size());
  size_t rank = shape.size();
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  std::vector<int64_t> index(rank, 0);
  for (int64_t c = 0; c < count; ++c) {
    // index is the C-order multi-index of element c; its Fortran offset:
    int64_t offset = 0, stride = 1;
    for (size_t d = 0; d < rank; ++d) {
      offset += index[d] * stride;
      stride *= shape[d];
    }
    std::memcpy(&result[c * size], &data[offset * size], size);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return result;
}
} // namespace

std::string pipe_rt::readNpy(const std::string &path, NpyArray &array) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return "cannot open '" + path + "': " + std::strerror(errno);
  auto fail = [&](const std::string &what) {
    return "'" + path + "' is not a valid .npy file: " + what;
  };
  char magic[8];
  if (!file.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return fail("bad magic");
  uint32_t headerLength = 0;
  if (magic[6] == 1) {
    unsigned char bytes[2];
    if (!file.read(reinterpret_cast<char *>(bytes), 2))
      return fail("truncated header");
    headerLength = bytes[0] | (bytes[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    unsigned char bytes[4];
    if (!file.read(reinterpret_cast<char *>(bytes), 4))
      return fail("truncated header");
    headerLength = bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) |
                   (static_cast<uint32_t>(bytes[3]) << 24);
  } else {
    return fail("unsupported format version " +
                std::to_string(static_cast<int>(magic[6])));
  }
  std::string dict(headerLength, '\0');
  if (!file.read(&dict[0], headerLength))
    return fail("truncated header");

  Header header;
  if (std::string error = parseHeader(dict, header); !error.empty())
    return fail(error);
  bool swap = false;
  if (std::string error = parseDescr(header.descr, array.dtype, swap);
      !error.empty())
    return fail(error);
  array.shape = header.shape;
  size_t size = dtypeSize(array.dtype);
  size_t bytes = static_cast<size_t>(array.numElements()) * size;
  array.data.assign(bytes, 0);
  if (bytes && !file.read(array.data.data(), bytes))
    return fail("the data is shorter than shape " + formatShape(array.shape) +
                " needs");
  if (file.peek() != std::ifstream::traits_type::eof())
    return fail("trailing bytes after the data");
  if (swap)
    for (size_t at = 0; at < bytes; at += size)
      std::reverse(array.data.begin() + at, array.data.begin() + at + size);
  if (header.fortranOrder && array.shape.size() > 1)
    array.data = fortranToC(array.data, array.shape, size);
  return "";
}

std::string pipe_rt::writeNpy(const std::string &path, const NpyArray &array) {
  std::string dict =
      "{'descr': '" + descrOf(array.dtype) +
      "', 'fortran_order': False, 'shape': " + formatShape(array.shape) + ", }";
  // Pad so that magic + version + length + dict + '\n' is a multiple of 64.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict.push_back('\n');
  size_t expected =
      static_cast<size_t>(array.numElements()) * dtypeSize(array.dtype);
  if (array.data.size() != expected)
    return "cannot write '" + path + "': " + std::to_string(array.data.size()) +
           " bytes of data for shape " + formatShape(array.shape) + ", " +
           std::to_string(expected) + " expected";

  std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file)
      return "cannot write '" + temporary + "': " + std::strerror(errno);
    unsigned char length[2] = {static_cast<unsigned char>(dict.size() & 0xff),
                               static_cast<unsigned char>(dict.size() >> 8)};
    file.write("\x93NUMPY\x01\x00", 8);
    file.write(reinterpret_cast<const char *>(length), 2);
    file << dict;
    file.write(array.data.data(), array.data.size());
    file.flush();
    if (!file) {
      std::remove(temporary.c_str());
      return "cannot write '" + temporary + "': " + std::strerror(errno);
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string error = std::strerror(errno);
    std::remove(temporary.c_str());
    return "cannot write '" + path + "': " + error;
  }
  return "";
}

int64_t pipe_rt::countMicrobatches(const std::string &name,
                                   const NpyArray &array, DType dtype,
                                   const std::vector<int64_t> &shape,
                                   std::string &error) {
  if (array.dtype != dtype) {
    error = "input '" + name + "' must be " + dtypeName(dtype) + ", got " +
            dtypeName(array.dtype);
    return 0;
  }
  if (array.shape == shape)
    return 1;
  bool stacked =
      !shape.empty() && shape[0] > 0 && array.shape.size() == shape.size() &&
      std::equal(shape.begin() + 1, shape.end(), array.shape.begin() + 1) &&
      array.shape[0] > 0 && array.shape[0] % shape[0] == 0;
  if (!stacked) {
    error = "input '" + name + "' has shape " + formatShape(array.shape) +
            "; expected " + formatShape(shape) + " or k*" +
            (shape.empty() ? std::string("?") : std::to_string(shape[0])) +
            " rows of it along axis 0";
    return 0;
  }
  return array.shape[0] / shape[0];
}
