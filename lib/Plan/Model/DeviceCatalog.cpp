//===- DeviceCatalog.cpp - the kinds of devices pipe plans for ------------===//
//
// Dense (non-sparse) peak throughput from each vendor datasheet, per
// precision; "tf32"/"bf16"/"fp16" are tensor-core rates where the device has
// them, else the rate the device reaches without (V100 and T4 emulate bf16
// at about their fp32 rate). A GPU's memory is the total nvidia-smi reports,
// of which the stages cannot use kGPUReservedGB. docs/planner.md ("The device
// catalog") and
// ../shared/docs/devices.md have the table and its sources.
//
//===----------------------------------------------------------------------===//

#include "pipe/Plan/Cluster.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::pipe;

static const LinkSpec kNVLink4{"NVLink4", 450, 2}; // 900 GB/s both ways
static const LinkSpec kNVLink3{"NVLink3", 300, 2}; // 600 GB/s both ways
static const LinkSpec kNVLink2{"NVLink2", 150, 2}; // 300 GB/s both ways
static const LinkSpec kPCIe5{"PCIe5 x16", 64, 5};
static const LinkSpec kPCIe4{"PCIe4 x16", 32, 5};
static const LinkSpec kPCIe3{"PCIe3 x16", 16, 5};
static const LinkSpec kHostMemory{"host memory", 20, 1};

/// A GPU's memory is the total nvidia-smi reports (MiB; the datasheets'
/// "16 GB" T4 reports 15360 MiB with ECC on). Where drivers differ (an
/// A100-40GB reports 40536 or 40960 MiB, a V100-32GB 32510 or 32768), the
/// lesser.
static constexpr double gibFromMiB(double mib) { return mib / 1024; }

llvm::ArrayRef<DeviceSpec> mlir::pipe::deviceCatalog() {
  static const DeviceSpec catalog[] = {
      {"H200",
       {67, 494.7, 989.4, 989.4},
       gibFromMiB(143771),
       kGPUReservedGB,
       4800,
       "9.0",
       0,
       kNVLink4,
       kPCIe5,
       "NVIDIA H200 Tensor Core GPU datasheet (SXM, dense)"
       "; memory: the total nvidia-smi reports"},
      {"H100-SXM",
       {67, 494.7, 989.4, 989.4},
       gibFromMiB(81559),
       kGPUReservedGB,
       3350,
       "9.0",
       0,
       kNVLink4,
       kPCIe5,
       "NVIDIA H100 Tensor Core GPU datasheet (SXM5, dense)"
       "; memory: the total nvidia-smi reports"},
      {"H100-PCIe",
       {51, 378, 756, 756},
       gibFromMiB(81559),
       kGPUReservedGB,
       2000,
       "9.0",
       0,
       kPCIe5,
       kPCIe5,
       "NVIDIA H100 Tensor Core GPU datasheet (PCIe, dense)"
       "; memory: the total nvidia-smi reports"},
      {"A100-80GB",
       {19.5, 156, 312, 312},
       gibFromMiB(81920),
       kGPUReservedGB,
       2039,
       "8.0",
       0,
       kNVLink3,
       kPCIe4,
       "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB, dense)"
       "; memory: the total nvidia-smi reports"},
      {"A100-40GB",
       {19.5, 156, 312, 312},
       gibFromMiB(40536),
       kGPUReservedGB,
       1555,
       "8.0",
       0,
       kNVLink3,
       kPCIe4,
       "NVIDIA A100 Tensor Core GPU datasheet (SXM4 40GB, dense)"
       "; memory: the total nvidia-smi reports"},
      {"V100-32GB",
       {15.7, 15.7, 15.7, 125},
       gibFromMiB(32510),
       kGPUReservedGB,
       900,
       "7.0",
       0,
       kNVLink2,
       kPCIe3,
       "NVIDIA V100 Tensor Core GPU datasheet (SXM2); no TF32 or BF16 "
       "tensor cores, so those run at the FP32 rate"
       "; memory: the total nvidia-smi reports"},
      {"V100-16GB",
       {15.7, 15.7, 15.7, 125},
       gibFromMiB(16160),
       kGPUReservedGB,
       900,
       "7.0",
       0,
       kNVLink2,
       kPCIe3,
       "NVIDIA V100 Tensor Core GPU datasheet (SXM2); no TF32 or BF16 "
       "tensor cores, so those run at the FP32 rate"
       "; memory: the total nvidia-smi reports"},
      {"L4",
       {30.3, 60, 121, 121},
       gibFromMiB(23034),
       kGPUReservedGB,
       300,
       "8.9",
       0,
       kPCIe4,
       kPCIe4,
       "NVIDIA L4 Tensor Core GPU datasheet (dense)"
       "; memory: the total nvidia-smi reports"},
      {"T4",
       {8.1, 8.1, 8.1, 65},
       gibFromMiB(15360),
       kGPUReservedGB,
       320,
       "7.5",
       0,
       kPCIe3,
       kPCIe3,
       "NVIDIA T4 Tensor Core GPU datasheet; FP16 tensor cores only"
       "; memory: the total nvidia-smi reports"},
      {"RTX4090",
       {82.6, 82.6, 165, 165},
       gibFromMiB(24564),
       kGPUReservedGB,
       1008,
       "8.9",
       0,
       kPCIe4,
       kPCIe4,
       "NVIDIA Ada GPU architecture whitepaper (RTX 4090, dense, FP32 "
       "accumulate); no peer-to-peer, NCCL needs NCCL_P2P_DISABLE=1"
       "; memory: the total nvidia-smi reports"},
      {"A10",
       {31.2, 62.5, 125, 125},
       gibFromMiB(23028),
       kGPUReservedGB,
       600,
       "8.6",
       0,
       kPCIe4,
       kPCIe4,
       "NVIDIA A10 Tensor Core GPU datasheet (dense)"
       "; memory: the total nvidia-smi reports"},
      // A CPU's cores and memory come from the cluster file. The FLOP/s are
      // per core, scaled by the cores given: an AVX2 core with two FMA units
      // at about 3 GHz peaks at 2 * 8 * 2 * 3 = 96 GFLOP/s in fp32; without
      // native bf16/fp16 arithmetic, those are assumed at half that rate.
      // The memory bandwidth (20 GB/s) is for the whole socket, a
      // conservative DDR4 figure, to be overridden per cluster.
      {"cpu",
       {0.096, 0.096, 0.048, 0.048},
       0,
       0,
       20,
       "",
       1,
       kHostMemory,
       kHostMemory,
       "per core: AVX2, 2 FMA units, ~3 GHz (assumption; override with "
       "peak_tflops)"},
  };
  return catalog;
}

bool mlir::pipe::runsOnFP32Units(llvm::StringRef kind,
                                 llvm::StringRef precision) {
  if (kind == "cpu")
    return true;
  bool noTensorCores =
      kind == "V100-32GB" || kind == "V100-16GB" || kind == "T4";
  return noTensorCores && (precision == "tf32" || precision == "bf16");
}

const DeviceSpec *mlir::pipe::lookupDeviceKind(llvm::StringRef kind) {
  for (const DeviceSpec &spec : deviceCatalog())
    if (spec.kind == kind)
      return &spec;
  return nullptr;
}

DeviceSpec mlir::pipe::customDeviceSpec(bool cpu) {
  DeviceSpec spec;
  spec.kind = "custom";
  // A GPU's link to its neighbours on a host, when the file names no
  // kind: PCIe 4.0, which every GPU of the catalog but the T4 reaches.
  spec.intraNodeLink = spec.pcieLink = cpu ? kHostMemory : kPCIe4;
  spec.computeCapability = cpu ? "" : "1.0";
  spec.reservedGB = cpu ? 0 : kGPUReservedGB;
  spec.source = "the cluster file";
  return spec;
}

LinkSpec mlir::pipe::defaultNetworkLink() { return {"InfiniBand HDR", 25, 5}; }

std::string DeviceSpec::arch() const {
  if (isCPU())
    return "";
  std::string digits = computeCapability;
  llvm::erase(digits, '.');
  return "sm_" + digits;
}

bool mlir::pipe::sameSpec(const DeviceSpec &a, const DeviceSpec &b) {
  return a.kind == b.kind && a.computeCapability == b.computeCapability &&
         a.peak.fp32 == b.peak.fp32 && a.peak.tf32 == b.peak.tf32 &&
         a.peak.bf16 == b.peak.bf16 && a.peak.fp16 == b.peak.fp16 &&
         a.capacityGB() == b.capacityGB() &&
         a.memoryBandwidthGBps == b.memoryBandwidthGBps && a.cores == b.cores;
}
