//===- ClusterTest.cpp - device catalog and cluster.json ------------------===//

#include "pipe/Plan/Cluster.h"

#include "gtest/gtest.h"

using namespace mlir::pipe;

namespace {

/// The error text of a cluster file that must not parse.
std::string errorOf(llvm::StringRef text) {
  llvm::Expected<Cluster> cluster = parseCluster(text, "cluster.json");
  EXPECT_FALSE(static_cast<bool>(cluster));
  return cluster ? std::string() : llvm::toString(cluster.takeError());
}

TEST(DeviceCatalog, HasEveryKindOfTheArchitectureNotes) {
  for (const char *kind :
       {"H200", "H100-SXM", "H100-PCIe", "A100-80GB", "A100-40GB", "V100-32GB",
        "V100-16GB", "L4", "T4", "RTX4090", "A10", "cpu"}) {
    const DeviceSpec *spec = lookupDeviceKind(kind);
    ASSERT_NE(spec, nullptr) << kind;
    EXPECT_FALSE(spec->source.empty()) << kind;
    EXPECT_GT(spec->peak.fp32, 0) << kind;
    EXPECT_GT(spec->memoryBandwidthGBps, 0) << kind;
    EXPECT_GT(spec->intraNodeLink.bandwidthGBps, 0) << kind;
    // Tensor cores never make a precision slower than fp32.
    EXPECT_GE(spec->peak.fp16, spec->peak.fp32 / 2) << kind;
  }
  EXPECT_EQ(lookupDeviceKind("A100"), nullptr);
  EXPECT_EQ(deviceCatalog().size(), 12u);
}

TEST(DeviceCatalog, NumbersFromTheDatasheets) {
  const DeviceSpec *a100 = lookupDeviceKind("A100-80GB");
  EXPECT_DOUBLE_EQ(a100->peak.bf16, 312);
  EXPECT_DOUBLE_EQ(a100->memoryGB, 80);
  EXPECT_EQ(a100->arch(), "sm_80");
  const DeviceSpec *t4 = lookupDeviceKind("T4");
  EXPECT_DOUBLE_EQ(t4->peak.fp16, 65);
  EXPECT_EQ(t4->arch(), "sm_75");
  EXPECT_EQ(lookupDeviceKind("H200")->arch(), "sm_90");
  EXPECT_TRUE(lookupDeviceKind("cpu")->isCPU());
  EXPECT_EQ(lookupDeviceKind("cpu")->arch(), "");
}

TEST(ClusterFile, ArchitectureNotesExample) {
  llvm::Expected<Cluster> cluster = parseCluster(R"json(
{ "devices": [ {"name": "a0", "kind": "A100-80GB", "host": "n1"},
               {"name": "a1", "kind": "A100-80GB", "host": "n1"},
               {"name": "v0", "kind": "V100-32GB", "host": "n2"},
               {"name": "c0", "kind": "cpu", "cores": 16, "memory_gb": 64} ],
  "links":   [ {"between": ["a0", "v0"], "bandwidth_gbps": 100, "latency_us": 5} ] }
)json",
                                                 "cluster.json");
  ASSERT_TRUE(static_cast<bool>(cluster))
      << llvm::toString(cluster.takeError());
  ASSERT_EQ(cluster->devices.size(), 4u);
  EXPECT_EQ(cluster->devices[2].spec.kind, "V100-32GB");
  // The CPU's peak scales with its cores.
  EXPECT_DOUBLE_EQ(cluster->devices[3].spec.peak.fp32, 16 * 0.096);
  EXPECT_DOUBLE_EQ(cluster->devices[3].spec.memoryGB, 64);
  // Explicit link, both ways.
  EXPECT_DOUBLE_EQ(cluster->link(0, 2).bandwidthGBps, 100);
  EXPECT_DOUBLE_EQ(cluster->link(2, 0).latencyUs, 5);
  // Same host: the catalog's intra-node link (NVLink3, per direction).
  EXPECT_EQ(cluster->link(0, 1).name, "NVLink3");
  EXPECT_DOUBLE_EQ(cluster->link(0, 1).bandwidthGBps, 300);
  // Different hosts, no listed link: the network.
  EXPECT_EQ(cluster->link(1, 2).name, defaultNetworkLink().name);
}

TEST(ClusterFile, ExplicitFieldsOverrideTheCatalog) {
  llvm::Expected<Cluster> cluster = parseCluster(R"json(
{"devices": [{"name": "g", "kind": "L4", "memory_gb": 20,
              "memory_bandwidth_gbps": 250, "compute_capability": "8.6",
              "peak_tflops": {"bf16": 100, "fp32": 25}}]}
)json",
                                                 "c.json");
  ASSERT_TRUE(static_cast<bool>(cluster))
      << llvm::toString(cluster.takeError());
  const DeviceSpec &spec = cluster->devices[0].spec;
  EXPECT_DOUBLE_EQ(spec.memoryGB, 20);
  EXPECT_DOUBLE_EQ(spec.memoryBandwidthGBps, 250);
  EXPECT_DOUBLE_EQ(spec.peak.bf16, 100);
  EXPECT_DOUBLE_EQ(spec.peak.fp32, 25);
  EXPECT_DOUBLE_EQ(spec.peak.tf32, 60); // untouched
  EXPECT_EQ(spec.arch(), "sm_86");
}

TEST(ClusterFile, MalformedJSONGivesLineAndColumn) {
  std::string message =
      errorOf("{\n  \"devices\": [\n    {\"name\": \"a\",,}\n  ]\n}\n");
  EXPECT_NE(message.find("cluster.json: malformed JSON at line 3, column"),
            std::string::npos)
      << message;
}

TEST(ClusterFile, UnknownKindListsTheKnownOnes) {
  std::string message =
      errorOf(R"({"devices": [{"name": "x", "kind": "A100"}]})");
  EXPECT_NE(message.find("device 0 (x): unknown kind 'A100'; known kinds: "
                         "H200, H100-SXM, H100-PCIe, A100-80GB"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("A10, cpu"), std::string::npos) << message;
}

TEST(ClusterFile, LinkNamingAnUnknownDevice) {
  std::string message = errorOf(R"({"devices": [{"name": "a", "kind": "T4"}],
    "links": [{"between": ["a", "b"], "bandwidth_gbps": 10}]})");
  EXPECT_NE(message.find("link 0: names unknown device 'b'"), std::string::npos)
      << message;
}

TEST(ClusterFile, OtherErrorsNameTheField) {
  EXPECT_NE(errorOf(R"({"devices": []})").find("non-empty \"devices\""),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "c", "kind": "cpu"}]})")
                .find("a cpu device needs \"cores\""),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4"},
                                    {"name": "a", "kind": "T4"}]})")
                .find("two devices are called 'a'"),
            std::string::npos);
  EXPECT_NE(
      errorOf(R"({"devices": [{"name": "a", "kind": "T4", "memory_gb": -1}]})")
          .find("'memory_gb' must be a number from 1e-6 to 1e6"),
      std::string::npos);
  // Absurd numbers would overflow the byte and time arithmetic.
  EXPECT_NE(
      errorOf(
          R"({"devices": [{"name": "a", "kind": "T4", "memory_gb": 1e10}]})")
          .find("'memory_gb' must be a number from 1e-6 to 1e6"),
      std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4"},
                                    {"name": "b", "kind": "T4"}],
                        "links": [{"between": ["a", "b"],
                                   "bandwidth_gbps": 1e-320}]})")
                .find("\"bandwidth_gbps\" must be a number from 1e-6 to 1e6"),
            std::string::npos);
  EXPECT_NE(
      errorOf(R"({"devices": [{"name": "a", "kind": "T4", "colour": 1}]})")
          .find("unknown field 'colour'"),
      std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4",
                                     "peak_tflops": {"fp8": 1}}]})")
                .find("unknown precision 'fp8'"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4"}],
                        "links": [{"between": ["a", "a"], "bandwidth_gbps": 1}]})")
                .find("links device 'a' to itself"),
            std::string::npos);
}

TEST(ClusterFile, MissingFile) {
  llvm::Expected<Cluster> cluster = readCluster("/nonexistent/cluster.json");
  ASSERT_FALSE(static_cast<bool>(cluster));
  EXPECT_NE(llvm::toString(cluster.takeError())
                .find("/nonexistent/cluster.json: cannot open"),
            std::string::npos);
}

TEST(ClusterFile, HostCPUDefault) {
  Cluster cluster = Cluster::hostCPU(8, 32);
  ASSERT_EQ(cluster.devices.size(), 1u);
  EXPECT_TRUE(cluster.devices[0].spec.isCPU());
  EXPECT_EQ(cluster.devices[0].spec.cores, 8);
}

} // namespace
