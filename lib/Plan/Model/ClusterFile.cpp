//===- ClusterFile.cpp - read cluster.json --------------------------------===//
//
// {"devices": [{"name": "a0", "kind": "A100-80GB", "host": "n1"},
//              {"name": "c0", "kind": "cpu", "cores": 16, "memory_gb": 64}],
//  "links":   [{"between": ["a0", "c0"], "bandwidth_gbps": 100,
//               "latency_us": 5}]}
//
// Any catalog field may be given on a device to override the catalog:
// peak_tflops (an object keyed by fp32, tf32, bf16, fp16), memory_gb,
// memory_bandwidth_gbps, compute_capability, cores. A device without a kind
// gives them all itself (docs/planner.md, "The cluster file").
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/Cluster.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

using namespace mlir;
using namespace mlir::pipe;

static llvm::Error error(llvm::StringRef fileName, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 fileName + ": " + message);
}

/// The line and column of byte `offset` in `text`.
static std::pair<unsigned, unsigned> lineColumn(llvm::StringRef text,
                                                size_t offset) {
  offset = std::min(offset, text.size());
  llvm::StringRef before = text.take_front(offset);
  unsigned line = before.count('\n') + 1;
  size_t lastNewline = before.rfind('\n');
  unsigned column =
      offset - (lastNewline == llvm::StringRef::npos ? 0 : lastNewline + 1) + 1;
  return {line, column};
}

/// Containers may nest this deep; a cluster file needs four levels.
static constexpr unsigned kMaxDepth = 64;

namespace {
/// What llvm::json does not report: nesting deep enough to overflow its
/// recursive parser's stack, and keys an object repeats (it keeps the
/// last). Byte offsets into the text, of the first of each.
struct JsonShape {
  std::optional<size_t> tooDeep, repeatedKey;
  std::string key;
};
} // namespace

/// Scans the strings and brackets of `text` for its JsonShape. Only the
/// depth means anything in text that does not parse.
static JsonShape scanJson(llvm::StringRef text) {
  JsonShape shape;
  struct Container {
    bool object, expectKey;
    llvm::StringSet<> keys;
  };
  llvm::SmallVector<Container> open;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      size_t start = i + 1;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      Container *top = open.empty() ? nullptr : &open.back();
      if (top && top->object && top->expectKey) {
        top->expectKey = false;
        // Keys are compared as JSON reads them: "n\u0061me" is "name".
        std::string key = text.slice(start, i).str();
        if (llvm::StringRef(key).contains('\\')) {
          if (llvm::Expected<llvm::json::Value> decoded =
                  llvm::json::parse(text.slice(start - 1, i + 1)))
            key = decoded->getAsString().value_or(key).str();
          else
            llvm::consumeError(decoded.takeError());
        }
        if (!top->keys.insert(key).second && !shape.repeatedKey) {
          shape.repeatedKey = start - 1;
          shape.key = key;
        }
      }
    } else if (c == '{' || c == '[') {
      if (open.size() == kMaxDepth) {
        shape.tooDeep = i;
        return shape;
      }
      open.push_back({c == '{', c == '{', {}});
    } else if (c == '}' || c == ']') {
      if (!open.empty())
        open.pop_back();
    } else if (c == ',' && !open.empty() && open.back().object) {
      open.back().expectKey = true;
    }
  }
  return shape;
}

std::optional<unsigned> Cluster::find(llvm::StringRef name) const {
  for (unsigned i = 0; i < devices.size(); ++i)
    if (devices[i].name == name)
      return i;
  return std::nullopt;
}

void Cluster::setLink(unsigned a, unsigned b, LinkSpec spec) {
  links[{std::min(a, b), std::max(a, b)}] = std::move(spec);
}

bool Cluster::hasExplicitLink(unsigned a, unsigned b) const {
  return links.count({std::min(a, b), std::max(a, b)});
}

std::vector<std::vector<unsigned>> Cluster::interchangeableDevices() const {
  std::vector<bool> linked(devices.size(), false);
  for (const auto &link : links)
    if (link.first.first != link.first.second)
      linked[link.first.first] = linked[link.first.second] = true;
  // The default links come from the devices' own specs (link()), which
  // sameSpec does not compare.
  auto sameLink = [](const LinkSpec &a, const LinkSpec &b) {
    return a.name == b.name && a.bandwidthGBps == b.bandwidthGBps &&
           a.latencyUs == b.latencyUs;
  };
  std::vector<std::vector<unsigned>> groups;
  for (unsigned d = 0; d < devices.size(); ++d) {
    auto it = llvm::find_if(groups, [&](const std::vector<unsigned> &group) {
      const DeviceSpec &x = devices[group.front()].spec, &y = devices[d].spec;
      return !linked[d] && !linked[group.front()] &&
             devices[group.front()].host == devices[d].host && sameSpec(x, y) &&
             sameLink(x.intraNodeLink, y.intraNodeLink) &&
             sameLink(x.pcieLink, y.pcieLink);
    });
    if (it == groups.end())
      groups.push_back({d});
    else
      it->push_back(d);
  }
  return groups;
}

LinkSpec Cluster::link(unsigned a, unsigned b) const {
  auto it = links.find({std::min(a, b), std::max(a, b)});
  if (it != links.end())
    return it->second;
  const Device &x = devices[a], &y = devices[b];
  if (x.host != y.host)
    return defaultNetworkLink();
  // NVLink joins devices of one kind (one baseboard); others on a host
  // talk over the slower of their PCIe links.
  bool oneKind = x.spec.kind == y.spec.kind &&
                 x.spec.intraNodeLink.name == y.spec.intraNodeLink.name;
  const LinkSpec &p = oneKind ? x.spec.intraNodeLink : x.spec.pcieLink;
  const LinkSpec &q = oneKind ? y.spec.intraNodeLink : y.spec.pcieLink;
  return p.bandwidthGBps <= q.bandwidthGBps ? p : q;
}

Cluster Cluster::hostCPU(int cores, double memoryGB) {
  Cluster cluster;
  DeviceSpec spec = *lookupDeviceKind("cpu");
  spec.peak = {spec.peak.fp32 * cores, spec.peak.tf32 * cores,
               spec.peak.bf16 * cores, spec.peak.fp16 * cores};
  spec.cores = cores;
  spec.memoryGB = memoryGB;
  cluster.devices.push_back({"cpu0", "localhost", spec});
  return cluster;
}

namespace {
/// Reads one device entry, with catalog overrides.
class DeviceReader {
public:
  DeviceReader(llvm::StringRef fileName, const llvm::json::Object &object,
               size_t index)
      : fileName(fileName), object(object), index(index) {}

  llvm::Expected<Device> read();

private:
  llvm::Error fail(const llvm::Twine &message) {
    return error(fileName, "device " + llvm::Twine(index) + " (" + label +
                               "): " + message);
  }
  /// A positive number field, if present.
  llvm::Expected<std::optional<double>> number(llvm::StringRef key);

  llvm::StringRef fileName;
  const llvm::json::Object &object;
  size_t index;
  std::string label = "unnamed";
};
} // namespace

/// Device and link numbers must be finite, in [1e-6, 1e6]: anything else is
/// a typo, and would overflow the byte and time arithmetic.
static bool plausible(double value) {
  return std::isfinite(value) && value >= 1e-6 && value <= 1e6;
}
static const char *kPlausible = "a number from 1e-6 to 1e6";

/// A number as the file would write it: 0.5, 15, 1e-05.
static std::string shortest(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

llvm::Expected<std::optional<double>>
DeviceReader::number(llvm::StringRef key) {
  const llvm::json::Value *value = object.get(key);
  if (!value)
    return std::nullopt;
  std::optional<double> number = value->getAsNumber();
  if (!number || !plausible(*number))
    return fail("'" + key + "' must be " + kPlausible);
  return number;
}

llvm::Expected<Device> DeviceReader::read() {
  static const char *const known[] = {"name",        "kind",
                                      "host",        "cores",
                                      "memory_gb",   "memory_bandwidth_gbps",
                                      "peak_tflops", "compute_capability",
                                      "reserved_gb", "gpu"};
  Device device;
  std::optional<llvm::StringRef> name = object.getString("name");
  if (!name || name->empty())
    return fail("needs a \"name\"");
  device.name = name->str();
  label = device.name;
  // --device-order separates names by commas.
  if (name->contains(','))
    return fail("a name must not contain ','");
  for (const auto &entry : object)
    if (!llvm::is_contained(known, entry.first.str()))
      return fail("unknown field '" + entry.first.str() + "'");

  if (const llvm::json::Value *host = object.get("host")) {
    std::optional<llvm::StringRef> text = host->getAsString();
    if (!text || text->empty())
      return fail("'host' must be a non-empty string");
    device.host = text->str();
  } else {
    device.host = "localhost";
  }

  // A device without a kind gives every number itself: a GPU has a compute
  // capability, a CPU cores.
  const llvm::json::Value *kindValue = object.get("kind");
  bool custom = !kindValue;
  if (custom) {
    if (!object.get("memory_gb") || !object.get("memory_bandwidth_gbps") ||
        !object.get("peak_tflops") ||
        !object.get("compute_capability") == !object.get("cores"))
      return fail("without a \"kind\", a device needs \"memory_gb\", "
                  "\"memory_bandwidth_gbps\", \"peak_tflops\", and "
                  "either \"compute_capability\" (a GPU) or \"cores\" (a "
                  "CPU)");
    device.spec = customDeviceSpec(/*cpu=*/object.get("cores") != nullptr);
  } else {
    std::optional<llvm::StringRef> kind = kindValue->getAsString();
    if (!kind)
      return fail("'kind' must be a string");
    const DeviceSpec *spec = lookupDeviceKind(*kind);
    if (!spec) {
      std::vector<std::string> kinds;
      for (const DeviceSpec &known : deviceCatalog())
        kinds.push_back(known.kind);
      return fail("unknown kind '" + *kind +
                  "'; known kinds: " + llvm::join(kinds, ", "));
    }
    device.spec = *spec;
  }

  // CPUs of a kind scale the per-core catalog numbers by their cores.
  if (const llvm::json::Value *value = object.get("cores")) {
    std::optional<double> cores = value->getAsNumber();
    if (!cores || *cores < 1 || *cores > 1e6 ||
        *cores != static_cast<int>(*cores))
      return fail("'cores' must be a whole number from 1 to 1000000");
    if (!device.spec.isCPU())
      return fail("'cores' is a CPU's; '" + device.spec.kind + "' is a GPU");
    device.spec.cores = static_cast<int>(*cores);
  }
  if (device.spec.isCPU()) {
    if (!object.get("cores"))
      return fail("a cpu device needs \"cores\"");
    if (!custom) {
      PeakTflops &peak = device.spec.peak;
      peak = {peak.fp32 * device.spec.cores, peak.tf32 * device.spec.cores,
              peak.bf16 * device.spec.cores, peak.fp16 * device.spec.cores};
    }
  }
  for (auto [key, field] :
       {std::pair<llvm::StringRef, double *>{"memory_gb",
                                             &device.spec.memoryGB},
        {"memory_bandwidth_gbps", &device.spec.memoryBandwidthGBps}}) {
    llvm::Expected<std::optional<double>> value = number(key);
    if (!value)
      return value.takeError();
    if (*value)
      *field = **value;
  }
  if (device.spec.isCPU() && device.spec.memoryGB <= 0)
    return fail("a cpu device needs \"memory_gb\"");
  const llvm::json::Value *reservedValue = object.get("reserved_gb");
  if (reservedValue) {
    std::optional<double> reserved = reservedValue->getAsNumber();
    if (!reserved || !(*reserved == 0 || plausible(*reserved)))
      return fail("'reserved_gb' must be 0 or " + llvm::Twine(kPlausible));
    device.spec.reservedGB = *reserved;
  }
  if (device.spec.reservedGB >= device.spec.memoryGB)
    return fail((reservedValue ? "'reserved_gb' (" +
                                     shortest(device.spec.reservedGB) + " GiB)"
                               : "the " + shortest(device.spec.reservedGB) +
                                     " GiB a GPU keeps by default "
                                     "('reserved_gb')") +
                " leaves none of its " + shortest(device.spec.memoryGB) +
                " GiB of memory ('memory_gb') to the stages");

  if (const llvm::json::Value *value = object.get("compute_capability")) {
    // Major and minor version, and a feature suffix: "8.0", "9.0a".
    static const llvm::Regex capability("^[1-9][0-9]?\\.[0-9][a-z]?$");
    std::optional<llvm::StringRef> text = value->getAsString();
    if (!text || !capability.match(*text) || device.spec.isCPU())
      return fail("'compute_capability' must be a string like \"8.0\" or "
                  "\"9.0a\", and only on a GPU");
    device.spec.computeCapability = text->str();
  }
  if (const llvm::json::Value *value = object.get("gpu")) {
    std::optional<int64_t> index = value->getAsInteger();
    if (!index || *index < 0 || *index > 1023)
      return fail("'gpu' must be a whole number from 0 to 1023");
    if (device.spec.isCPU())
      return fail("'gpu' is a GPU's index on its host; '" + device.spec.kind +
                  "' is a CPU");
    device.gpu = static_cast<int>(*index);
  }
  if (const llvm::json::Value *value = object.get("peak_tflops")) {
    const llvm::json::Object *peaks = value->getAsObject();
    if (!peaks)
      return fail("'peak_tflops' must be an object keyed by fp32, tf32, bf16, "
                  "fp16");
    const PeakTflops catalog = device.spec.peak;
    for (const auto &entry : *peaks) {
      double *field = llvm::StringSwitch<double *>(entry.first.str())
                          .Case("fp32", &device.spec.peak.fp32)
                          .Case("tf32", &device.spec.peak.tf32)
                          .Case("bf16", &device.spec.peak.bf16)
                          .Case("fp16", &device.spec.peak.fp16)
                          .Default(nullptr);
      std::optional<double> number = entry.second.getAsNumber();
      if (!field)
        return fail("unknown precision '" + entry.first.str() +
                    "' in peak_tflops (known: fp32, tf32, bf16, fp16)");
      if (!number || !plausible(*number))
        return fail("peak_tflops." + entry.first.str() + " must be " +
                    kPlausible);
      *field = *number;
    }
    PeakTflops &peak = device.spec.peak;
    if (custom) {
      // Without a kind, no faster unit is assumed: precisions not given
      // run at the fp32 rate.
      if (!peak.fp32)
        return fail("without a \"kind\", peak_tflops needs \"fp32\"");
      for (double *rate : {&peak.tf32, &peak.bf16, &peak.fp16})
        if (!*rate)
          *rate = peak.fp32;
    } else if (peaks->get("fp32")) {
      // A precision the kind runs on its fp32 units (a V100's tf32, a
      // CPU's bf16) keeps its ratio to the fp32 rate given; tensor-core
      // rates stay the catalog's (an RTX 4090's tf32, though it equals
      // its fp32 rate).
      for (auto [key, rate, before] :
           {std::tuple("tf32", &peak.tf32, catalog.tf32),
            std::tuple("bf16", &peak.bf16, catalog.bf16),
            std::tuple("fp16", &peak.fp16, catalog.fp16)})
        if (!peaks->get(key) && runsOnFP32Units(device.spec.kind, key))
          *rate = before / catalog.fp32 * peak.fp32;
    }
  }
  return device;
}

llvm::Expected<Cluster> mlir::pipe::parseCluster(llvm::StringRef text,
                                                 llvm::StringRef fileName) {
  auto at = [&](size_t offset) -> std::string {
    auto [line, column] = lineColumn(text, offset);
    return llvm::formatv("line {0}, column {1}", line, column);
  };
  JsonShape shape = scanJson(text);
  if (shape.tooDeep)
    return error(fileName, "JSON nested more than " + llvm::Twine(kMaxDepth) +
                               " levels deep at " + at(*shape.tooDeep));
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json) {
    // llvm::json reports "[line:col, byte=N]: message"; keep line and
    // column, and say them our way.
    std::string message = llvm::toString(json.takeError());
    size_t byte = message.find("byte=");
    size_t close = message.find("]: ");
    if (byte != std::string::npos && close != std::string::npos) {
      size_t offset = std::stoul(message.substr(byte + 5));
      auto [line, column] = lineColumn(text, offset);
      return error(fileName, "malformed JSON at line " + llvm::Twine(line) +
                                 ", column " + llvm::Twine(column) + ": " +
                                 message.substr(close + 3));
    }
    return error(fileName, "malformed JSON: " + message);
  }
  if (shape.repeatedKey)
    return error(fileName, "key '" + shape.key +
                               "' appears twice in one "
                               "object, at " +
                               at(*shape.repeatedKey));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return error(fileName, "the top level must be an object with \"devices\"");
  for (const auto &entry : *root)
    if (entry.first != "devices" && entry.first != "links")
      return error(fileName, "unknown field '" + entry.first.str() +
                                 "' (known: devices, links)");
  const llvm::json::Array *devices = root->getArray("devices");
  if (!devices || devices->empty())
    return error(fileName, "needs a non-empty \"devices\" array");

  Cluster cluster;
  for (auto [index, value] : llvm::enumerate(*devices)) {
    const llvm::json::Object *object = value.getAsObject();
    if (!object)
      return error(fileName,
                   "device " + llvm::Twine(index) + " must be an object");
    llvm::Expected<Device> device =
        DeviceReader(fileName, *object, index).read();
    if (!device)
      return device.takeError();
    if (cluster.find(device->name))
      return error(fileName, "two devices are called '" + device->name + "'");
    cluster.devices.push_back(std::move(*device));
  }
  // A GPU without "gpu" takes its host's next index that no device of the
  // host names: the GPU devices of a host take 0, 1, 2, ... in order, and
  // two share a GPU only where both name it.
  llvm::StringMap<std::set<int>> named;
  for (const Device &device : cluster.devices)
    if (device.gpu >= 0)
      named[device.host].insert(device.gpu);
  llvm::StringMap<int> next;
  for (Device &device : cluster.devices) {
    if (device.spec.isCPU() || device.gpu >= 0)
      continue;
    int &index = next[device.host];
    while (named[device.host].count(index))
      ++index;
    device.gpu = index++;
  }

  if (const llvm::json::Value *value = root->get("links")) {
    const llvm::json::Array *links = value->getAsArray();
    if (!links)
      return error(fileName, "\"links\" must be an array");
    for (auto [index, value] : llvm::enumerate(*links)) {
      auto fail = [&](const llvm::Twine &message) {
        return error(fileName, "link " + llvm::Twine(index) + ": " + message);
      };
      const llvm::json::Object *object = value.getAsObject();
      if (!object)
        return fail("must be an object");
      for (const auto &entry : *object)
        if (entry.first != "between" && entry.first != "bandwidth_gbps" &&
            entry.first != "latency_us")
          return fail("unknown field '" + entry.first.str() +
                      "' (known: between, bandwidth_gbps, latency_us)");
      const llvm::json::Array *between = object->getArray("between");
      if (!between || between->size() != 2 || !(*between)[0].getAsString() ||
          !(*between)[1].getAsString())
        return fail("needs \"between\": [device, device], two device names");
      unsigned ends[2];
      for (unsigned i = 0; i < 2; ++i) {
        llvm::StringRef name = *(*between)[i].getAsString();
        std::optional<unsigned> found = cluster.find(name);
        if (!found)
          return fail("names unknown device '" + name + "'");
        ends[i] = *found;
      }
      if (ends[0] == ends[1])
        return fail("links device '" + cluster.devices[ends[0]].name +
                    "' to itself");
      if (cluster.hasExplicitLink(ends[0], ends[1]))
        return fail("links '" + cluster.devices[ends[0]].name + "' and '" +
                    cluster.devices[ends[1]].name + "' again");
      std::optional<double> bandwidth = object->getNumber("bandwidth_gbps");
      if (!bandwidth || !plausible(*bandwidth))
        return fail(std::string("\"bandwidth_gbps\" must be ") + kPlausible);
      // Without a latency, the link's latency is that of the link it
      // replaces.
      double latency = cluster.link(ends[0], ends[1]).latencyUs;
      if (const llvm::json::Value *given = object->get("latency_us")) {
        std::optional<double> number = given->getAsNumber();
        if (!number ||
            !(std::isfinite(*number) && *number >= 0 && *number <= 1e6))
          return fail("\"latency_us\" must be a number from 0 to 1e6");
        latency = *number;
      }
      cluster.setLink(ends[0], ends[1], {"explicit", *bandwidth, latency});
    }
  }
  return cluster;
}

llvm::Expected<Cluster> mlir::pipe::readCluster(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (std::error_code code = buffer.getError())
    return error(path, "cannot open: " + code.message());
  return parseCluster((*buffer)->getBuffer(), path);
}
