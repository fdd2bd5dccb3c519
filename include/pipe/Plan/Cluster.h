//===- Cluster.h - device catalog and cluster description -------*- C++ -*-===//
//
// The devices a pipeline runs on: the catalog of device kinds (peak FLOP/s
// per precision, memory, bandwidth, compute capability, intra-node link,
// each with its source) and the cluster file (`--cluster cluster.json`)
// that names the devices of a run, overrides catalog numbers and lists the
// links between devices. See docs/devices.md for the numbers.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_CLUSTER_H
#define PIPE_PLAN_CLUSTER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace pipe {

/// Peak dense throughput in TFLOP/s per precision.
struct PeakTflops {
  double fp32 = 0, tf32 = 0, bf16 = 0, fp16 = 0;
};

/// A point-to-point link: bandwidth per direction and latency.
struct LinkSpec {
  std::string name;
  double bandwidthGBps = 0;
  double latencyUs = 0;
};

/// What a GPU's stages cannot use by default, in GiB, of the total
/// nvidia-smi reports: the part CUDA never sees (its total is 0.27 GiB
/// less on a T4, 0.47 on an H100, 0.6 on an H200, 0.78 on an A100-80GB),
/// the CUDA context (about 0.3-0.5 GiB with lazy module loading), the
/// cuBLAS(Lt) workspaces (up to 32 MiB per stream on Hopper) and NCCL's
/// buffers for the two neighbours of a stage (4 MiB per channel and
/// direction by default). A cluster file's `reserved_gb` sets another;
/// measure it as the total less what cudaMemGetInfo leaves free once the
/// stage's libraries are loaded.
inline constexpr double kGPUReservedGB = 1.5;

/// One kind of device in the catalog, or a device after cluster overrides.
struct DeviceSpec {
  std::string kind;
  PeakTflops peak;
  /// The device's memory in GiB: for a GPU, the total nvidia-smi reports.
  double memoryGB = 0;
  /// What the stages cannot use of it, in GiB (kGPUReservedGB on a GPU by
  /// default, none on a CPU). The stages get the rest (capacityGB).
  double reservedGB = 0;
  double memoryBandwidthGBps = 0;
  /// "8.0" for GPUs; empty for CPUs.
  std::string computeCapability;
  /// CPU cores; 0 for GPUs.
  int cores = 0;
  /// The usual link between two such devices on one host.
  LinkSpec intraNodeLink;
  /// The device's link to the host, which carries its transfers to devices
  /// of another kind on the host (NVLink joins only devices of one kind).
  LinkSpec pcieLink;
  /// Where the numbers come from.
  std::string source;

  bool isCPU() const { return computeCapability.empty(); }
  /// The memory a stage may use, in GiB.
  double capacityGB() const { return memoryGB - reservedGB; }
  /// "sm_80" for compute capability 8.0; empty for CPUs.
  std::string arch() const;
};

/// Whether two devices have the same numbers (after overrides), and so
/// the same cost for every op, the same memory for the stages, and the same
/// compute capability.
bool sameSpec(const DeviceSpec &a, const DeviceSpec &b);

/// Every kind of the catalog: H200, H100-SXM, H100-PCIe, A100-80GB,
/// A100-40GB, V100-32GB, V100-16GB, L4, T4, RTX4090, A10 and cpu.
llvm::ArrayRef<DeviceSpec> deviceCatalog();

/// Whether the catalog's `kind` runs `precision` ("tf32", "bf16", "fp16")
/// on its fp32 units, for lack of tensor cores of that precision: TF32 and
/// BF16 on V100 and T4, every precision on a CPU.
bool runsOnFP32Units(llvm::StringRef kind, llvm::StringRef precision);

/// The catalog entry of `kind`, or null.
const DeviceSpec *lookupDeviceKind(llvm::StringRef kind);

/// The starting point of a device the cluster file gives without a kind:
/// kind "custom", no numbers yet, and the intra-node link of a CPU (host
/// memory) or a GPU (PCIe 4.0 x16); a GPU's compute capability is "1.0"
/// until the file gives one.
DeviceSpec customDeviceSpec(bool cpu);

/// The link between devices on different hosts when the cluster file lists
/// none: InfiniBand HDR, 25 GB/s per direction, 5 us.
LinkSpec defaultNetworkLink();

/// One device of a cluster.
struct Device {
  std::string name;
  std::string host;
  DeviceSpec spec;
  /// A GPU's index on its host (the cluster file's "gpu"; by default the
  /// GPU devices of a host take 0, 1, 2, ... in order, skipping the
  /// indices that devices of the host name); -1 for a CPU. Two devices
  /// with the same host and gpu share one GPU.
  int gpu = -1;
};

/// The devices of a run and the links between them.
class Cluster {
public:
  std::vector<Device> devices;

  /// The index of the device called `name`, if any.
  std::optional<unsigned> find(llvm::StringRef name) const;

  /// The link between devices `a` and `b`: the cluster file's, else the
  /// catalog's intra-node link of the slower device when they share a host,
  /// else the network.
  LinkSpec link(unsigned a, unsigned b) const;

  /// Whether the cluster file lists a link between `a` and `b`.
  bool hasExplicitLink(unsigned a, unsigned b) const;

  /// The devices in groups of interchangeable ones: the same numbers, the
  /// same host, and no explicit link of their own. Any two devices of one
  /// group have the same links to every other device. Groups come in the
  /// order of their first device.
  std::vector<std::vector<unsigned>> interchangeableDevices() const;

  /// Records an explicit link between devices `a` and `b`.
  void setLink(unsigned a, unsigned b, LinkSpec spec);

  /// One CPU device, this host's, for runs without a cluster file.
  static Cluster hostCPU(int cores, double memoryGB);

private:
  /// The explicit links, by their devices (the lesser first).
  llvm::DenseMap<std::pair<unsigned, unsigned>, LinkSpec> links;
};

/// Parses a cluster file's text. Errors name `fileName` and, for JSON
/// syntax errors, the line and column; for unknown kinds they list the
/// known ones.
llvm::Expected<Cluster> parseCluster(llvm::StringRef text,
                                     llvm::StringRef fileName);

/// Reads and parses the cluster file at `path`.
llvm::Expected<Cluster> readCluster(llvm::StringRef path);

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_CLUSTER_H
