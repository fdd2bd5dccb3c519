//===- ClusterTest.cpp - device catalog and cluster.json ------------------===//

#include "pipe/Plan/Cluster.h"
#include "pipe/Plan/Testing/RandomInstances.h"

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
  // The datasheet's "16 GB" T4 reports 15360 MiB, of which its stages
  // cannot use kGPUReservedGB.
  EXPECT_DOUBLE_EQ(t4->memoryGB, 15);
  EXPECT_DOUBLE_EQ(t4->capacityGB(), 15 - kGPUReservedGB);
  EXPECT_DOUBLE_EQ(lookupDeviceKind("L4")->memoryGB, 23034.0 / 1024);
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

TEST(ClusterFile, PrecisionsWithoutUnitsOfTheirOwnFollowFP32) {
  llvm::Expected<Cluster> cluster = parseCluster(R"json(
{"devices": [{"name": "t", "kind": "T4", "peak_tflops": {"fp32": 20}},
             {"name": "c", "kind": "cpu", "cores": 8, "memory_gb": 16,
              "peak_tflops": {"fp32": 0.1}},
             {"name": "v", "kind": "V100-32GB", "peak_tflops": {"fp16": 100}},
             {"name": "r", "kind": "RTX4090", "peak_tflops": {"fp32": 40}}]}
)json",
                                                 "c.json");
  ASSERT_TRUE(static_cast<bool>(cluster))
      << llvm::toString(cluster.takeError());
  // A T4 runs tf32 and bf16 on its fp32 units; fp16 on tensor cores.
  const PeakTflops &t4 = cluster->devices[0].spec.peak;
  EXPECT_DOUBLE_EQ(t4.tf32, 20);
  EXPECT_DOUBLE_EQ(t4.bf16, 20);
  EXPECT_DOUBLE_EQ(t4.fp16, 65);
  // The catalog's CPU runs bf16 and fp16 at half its fp32 rate.
  const PeakTflops &cpu = cluster->devices[1].spec.peak;
  EXPECT_DOUBLE_EQ(cpu.tf32, 0.1);
  EXPECT_DOUBLE_EQ(cpu.bf16, 0.05);
  EXPECT_DOUBLE_EQ(cpu.fp16, 0.05);
  // Without an fp32 rate, the others stay the catalog's.
  const PeakTflops &v100 = cluster->devices[2].spec.peak;
  EXPECT_DOUBLE_EQ(v100.fp32, 15.7);
  EXPECT_DOUBLE_EQ(v100.tf32, 15.7);
  EXPECT_DOUBLE_EQ(v100.fp16, 100);
  // An RTX 4090's tf32 is a tensor-core rate that equals its fp32 rate.
  EXPECT_DOUBLE_EQ(cluster->devices[3].spec.peak.tf32, 82.6);
}

TEST(ClusterFile, NVLinkJoinsOnlyDevicesOfOneKind) {
  llvm::Expected<Cluster> cluster = parseCluster(R"json(
{"devices": [{"name": "a0", "kind": "A100-80GB", "host": "n"},
             {"name": "a1", "kind": "A100-80GB", "host": "n"},
             {"name": "h", "kind": "H100-SXM", "host": "n"},
             {"name": "v", "kind": "V100-32GB", "host": "n"},
             {"name": "c", "kind": "cpu", "cores": 4, "memory_gb": 8,
              "host": "n"}]}
)json",
                                                 "c.json");
  ASSERT_TRUE(static_cast<bool>(cluster))
      << llvm::toString(cluster.takeError());
  EXPECT_EQ(cluster->link(0, 1).name, "NVLink3");
  // Other kinds on the host: the slower of the two PCIe links.
  EXPECT_EQ(cluster->link(0, 2).name, "PCIe4 x16");
  EXPECT_DOUBLE_EQ(cluster->link(2, 0).bandwidthGBps, 32);
  EXPECT_EQ(cluster->link(2, 3).name, "PCIe3 x16");
  EXPECT_EQ(cluster->link(1, 4).name, "host memory");
}

/// Interchangeable devices have the same links to every other device: a
/// device whose spec carries another intra-node or PCIe link (which
/// sameSpec does not compare) is a class of its own, as is one with an
/// explicit link. (A reviewer's fuzzing found a plan claimed the least
/// that was not when two such devices shared a class.)
TEST(Cluster, InterchangeableDevicesShareTheirLinks) {
  Cluster cluster;
  for (unsigned d = 0; d < 4; ++d)
    cluster.devices.push_back(
        {"g" + std::to_string(d), "n", *lookupDeviceKind("A100-80GB")});
  cluster.devices[1].spec.intraNodeLink = {"bridge", 50, 2};
  cluster.devices[2].spec.pcieLink = {"slow", 8, 5};
  std::vector<std::vector<unsigned>> classes = cluster.interchangeableDevices();
  ASSERT_EQ(classes.size(), 3u);
  EXPECT_EQ(classes[0], (std::vector<unsigned>{0, 3}));
  for (const std::vector<unsigned> &cls : classes)
    for (unsigned a : cls)
      for (unsigned b : cls)
        for (unsigned other = 0; other < 4; ++other)
          if (other != a && other != b) {
            EXPECT_EQ(cluster.link(a, other).bandwidthGBps,
                      cluster.link(b, other).bandwidthGBps);
            EXPECT_EQ(cluster.link(a, other).latencyUs,
                      cluster.link(b, other).latencyUs);
          }
  cluster.setLink(0, 1, {"cable", 10, 1});
  EXPECT_EQ(cluster.interchangeableDevices().size(), 4u);
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

TEST(ClusterFile, DeepNestingIsAnErrorNotACrash) {
  // llvm::json parses recursively: 100,000 levels overflow its stack.
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  EXPECT_NE(errorOf(deep).find(
                "cluster.json: JSON nested more than 64 levels deep at line "
                "1, column 65"),
            std::string::npos);
  std::string inDevice = R"({"devices": [{"name": "a", "kind": "T4", "x": )" +
                         std::string(70, '[') + std::string(70, ']') + "}]}";
  EXPECT_NE(errorOf(inDevice).find("nested more than 64 levels"),
            std::string::npos);
}

TEST(ClusterFile, RepeatedKeysAreErrors) {
  EXPECT_NE(errorOf("{\"devices\": [{\"name\": \"a0\", \"kind\": \"T4\",\n"
                    "  \"name\": \"a1\"}]}")
                .find("key 'name' appears twice in one object, at line 2, "
                      "column 3"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4"}],
                        "devices": [{"name": "b", "kind": "T4"}]})")
                .find("key 'devices' appears twice"),
            std::string::npos);
  // Keys compare as JSON reads them.
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a0", "kind": "T4",
                                     "n\u0061me": "zz"}]})")
                .find("key 'name' appears twice"),
            std::string::npos);
  // The same key in different objects, or as a value, is fine.
  llvm::Expected<Cluster> cluster = parseCluster(
      R"({"devices": [{"name": "name", "kind": "T4", "host": "kind"},
                      {"name": "b", "kind": "T4", "host": "kind"}]})",
      "cluster.json");
  ASSERT_TRUE(static_cast<bool>(cluster))
      << llvm::toString(cluster.takeError());
  EXPECT_EQ(cluster->devices.size(), 2u);
}

TEST(ClusterFile, FieldsOfTheWrongTypeAreErrors) {
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4", "host": 1}]})")
                .find("device 0 (a): 'host' must be a non-empty string"),
            std::string::npos);
  EXPECT_NE(
      errorOf(R"({"devices": [{"name": "a", "kind": "T4", "host": null}]})")
          .find("'host' must be a non-empty string"),
      std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4", "host": ""}]})")
                .find("'host' must be a non-empty string"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": 4}]})")
                .find("'kind' must be a string"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a,b", "kind": "T4"}]})")
                .find("device 0 (a,b): a name must not contain ','"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4", "cores": 8}]})")
                .find("'cores' is a CPU's; 'T4' is a GPU"),
            std::string::npos);
  for (const char *capability : {"8.05", "8.0junk", "8", "0.9", "8.0A"})
    EXPECT_NE(errorOf(std::string(R"({"devices": [{"name": "a", "kind": "T4",
                                       "compute_capability": ")") +
                      capability + "\"}]}")
                  .find("'compute_capability' must be a string like \"8.0\" "
                        "or \"9.0a\", and only on a GPU"),
              std::string::npos)
        << capability;
  llvm::Expected<Cluster> hopper = parseCluster(
      R"({"devices": [{"name": "h", "kind": "H100-SXM",
                       "compute_capability": "9.0a"}]})",
      "cluster.json");
  ASSERT_TRUE(static_cast<bool>(hopper)) << llvm::toString(hopper.takeError());
  EXPECT_EQ(hopper->devices[0].spec.arch(), "sm_90a");
  EXPECT_NE(errorOf(R"({"devices": [{"name": "c", "kind": "cpu", "cores": 2.5,
                               "memory_gb": 8}]})")
                .find("'cores' must be a whole number from 1 to 1000000"),
            std::string::npos);
}

TEST(ClusterFile, LinkErrorsNameTheLink) {
  const char *devices = R"({"devices": [{"name": "a", "kind": "T4"},
                                       {"name": "b", "kind": "T4"}],
                           "links": [)";
  auto withLinks = [&](const char *links) {
    return errorOf(std::string(devices) + links + "]}");
  };
  EXPECT_NE(withLinks(R"({"between": ["a", "b"], "bandwidth_gbps": 10,
                          "latency_us": "100"})")
                .find("link 0: \"latency_us\" must be a number from 0 to 1e6"),
            std::string::npos);
  EXPECT_NE(withLinks(R"({"between": ["a", "b"], "bandwidth_gbps": 10,
                          "foo": 1})")
                .find("link 0: unknown field 'foo' (known: between, "
                      "bandwidth_gbps, latency_us)"),
            std::string::npos);
  EXPECT_NE(withLinks(R"({"between": ["a", "b"], "bandwidth_gbps": 10},
                         {"between": ["b", "a"], "bandwidth_gbps": 20})")
                .find("link 1: links 'b' and 'a' again"),
            std::string::npos);
  EXPECT_NE(withLinks(R"({"between": ["a", 2], "bandwidth_gbps": 10})")
                .find("link 0: needs \"between\": [device, device], two device "
                      "names"),
            std::string::npos);
  EXPECT_NE(withLinks("7").find("link 0: must be an object"),
            std::string::npos);
}

TEST(ClusterFile, LinkWithoutLatencyKeepsTheDefaultLatency) {
  llvm::Expected<Cluster> cluster = parseCluster(
      R"({"devices": [{"name": "a", "kind": "A100-80GB", "host": "n1"},
                      {"name": "b", "kind": "A100-80GB", "host": "n2"},
                      {"name": "c", "kind": "A100-80GB", "host": "n2"}],
          "links": [{"between": ["a", "b"], "bandwidth_gbps": 100},
                    {"between": ["b", "c"], "bandwidth_gbps": 100}]})",
      "cluster.json");
  ASSERT_TRUE(static_cast<bool>(cluster))
      << llvm::toString(cluster.takeError());
  EXPECT_EQ(cluster->link(0, 1).bandwidthGBps, 100);
  EXPECT_EQ(cluster->link(0, 1).latencyUs, defaultNetworkLink().latencyUs);
  EXPECT_EQ(cluster->link(1, 2).latencyUs,
            lookupDeviceKind("A100-80GB")->intraNodeLink.latencyUs);
}

TEST(ClusterFile, DevicesWithoutAKindGiveEveryNumber) {
  llvm::Expected<Cluster> cluster = parseCluster(
      R"({"devices": [
            {"name": "g", "memory_gb": 48, "memory_bandwidth_gbps": 960,
             "peak_tflops": {"fp32": 40, "fp16": 160},
             "compute_capability": "8.6"},
            {"name": "c", "cores": 32, "memory_gb": 256,
             "memory_bandwidth_gbps": 200, "peak_tflops": {"fp32": 3}}]})",
      "cluster.json");
  ASSERT_TRUE(static_cast<bool>(cluster))
      << llvm::toString(cluster.takeError());
  const DeviceSpec &gpu = cluster->devices[0].spec;
  EXPECT_EQ(gpu.kind, "custom");
  EXPECT_FALSE(gpu.isCPU());
  EXPECT_EQ(gpu.arch(), "sm_86");
  EXPECT_EQ(gpu.memoryGB, 48);
  EXPECT_EQ(gpu.memoryBandwidthGBps, 960);
  EXPECT_EQ(gpu.peak.fp16, 160);
  // Precisions not given run at the fp32 rate.
  EXPECT_EQ(gpu.peak.tf32, 40);
  EXPECT_EQ(gpu.peak.bf16, 40);
  EXPECT_GT(gpu.intraNodeLink.bandwidthGBps, 0);
  const DeviceSpec &cpu = cluster->devices[1].spec;
  EXPECT_TRUE(cpu.isCPU());
  EXPECT_EQ(cpu.cores, 32);
  // The peak given is the whole CPU's, not scaled by its cores.
  EXPECT_EQ(cpu.peak.fp32, 3);

  EXPECT_NE(errorOf(R"({"devices": [{"name": "g", "memory_gb": 48,
                                     "peak_tflops": {"fp32": 40},
                                     "compute_capability": "8.6"}]})")
                .find("device 0 (g): without a \"kind\", a device needs "
                      "\"memory_gb\", \"memory_bandwidth_gbps\", "
                      "\"peak_tflops\", and either \"compute_capability\" (a "
                      "GPU) or \"cores\" (a CPU)"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "g", "memory_gb": 48,
                                     "memory_bandwidth_gbps": 900,
                                     "peak_tflops": {"fp32": 40}, "cores": 4,
                                     "compute_capability": "8.6"}]})")
                .find("either \"compute_capability\" (a GPU) or \"cores\""),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "g", "memory_gb": 48,
                                     "memory_bandwidth_gbps": 900,
                                     "peak_tflops": {"fp16": 40},
                                     "compute_capability": "8.6"}]})")
                .find("without a \"kind\", peak_tflops needs \"fp32\""),
            std::string::npos);
}

TEST(ClusterFile, TheStagesGetAGPUsMemoryLessAReserve) {
  llvm::Expected<Cluster> cluster = parseCluster(
      R"({"devices": [
            {"name": "t", "kind": "T4"},
            {"name": "u", "kind": "T4", "memory_gb": 12},
            {"name": "v", "kind": "T4", "reserved_gb": 0.25},
            {"name": "w", "kind": "T4", "reserved_gb": 0},
            {"name": "g", "memory_gb": 48, "memory_bandwidth_gbps": 960,
             "peak_tflops": {"fp32": 40}, "compute_capability": "8.6"},
            {"name": "c", "kind": "cpu", "cores": 4, "memory_gb": 8},
            {"name": "x", "kind": "T4", "memory_gb": 14, "reserved_gb": 0.5}]})",
      "cluster.json");
  ASSERT_TRUE(static_cast<bool>(cluster))
      << llvm::toString(cluster.takeError());
  auto capacity = [&](unsigned d) {
    return cluster->devices[d].spec.capacityGB();
  };
  EXPECT_DOUBLE_EQ(capacity(0), 15 - kGPUReservedGB);
  // memory_gb is the device's total; the reserve stays.
  EXPECT_DOUBLE_EQ(capacity(1), 12 - kGPUReservedGB);
  EXPECT_DOUBLE_EQ(capacity(2), 14.75);
  EXPECT_DOUBLE_EQ(capacity(3), 15);
  // A GPU without a kind keeps the same reserve, a CPU none.
  EXPECT_DOUBLE_EQ(capacity(4), 48 - kGPUReservedGB);
  EXPECT_DOUBLE_EQ(capacity(5), 8);
  // Devices that differ only in their reserve are not interchangeable;
  // those that leave their stages the same memory are.
  EXPECT_FALSE(sameSpec(cluster->devices[0].spec, cluster->devices[2].spec));
  EXPECT_TRUE(sameSpec(cluster->devices[0].spec, cluster->devices[6].spec));

  // The planner's capacity in bytes.
  std::mt19937 rng(1);
  LayerGraph graph = randomLayerGraph(rng, 2, 1 << 20);
  PlanOptions options;
  PlanProblem problem(graph, *cluster, options);
  EXPECT_EQ(problem.capacityBytes(0), int64_t(27) << 29);
  EXPECT_EQ(problem.capacityBytes(2), int64_t(59) << 28);

  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4",
                                     "reserved_gb": -1}]})")
                .find("device 0 (a): 'reserved_gb' must be 0 or a number "
                      "from 1e-6 to 1e6"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4",
                                     "reserved_gb": "1"}]})")
                .find("'reserved_gb' must be 0 or"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4",
                                     "memory_gb": 0.5}]})")
                .find("device 0 (a): the 1.5 GiB a GPU keeps by default "
                      "('reserved_gb') leaves none of its 0.5 GiB of memory "
                      "('memory_gb') to the stages"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "cpu", "cores": 1,
                                     "memory_gb": 2, "reserved_gb": 2}]})")
                .find("'reserved_gb' (2 GiB) leaves none of its 2 GiB of "
                      "memory ('memory_gb') to the stages"),
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

/// A GPU's index on its host: the cluster file's "gpu", or by default the
/// host's GPU devices numbered in order, past the indices others name;
/// CPUs have none.
TEST(ClusterFile, GPUsOfAHostAreNumberedInOrder) {
  llvm::Expected<Cluster> cluster = parseCluster(R"({"devices": [
      {"name": "a", "kind": "A100-80GB", "host": "n0"},
      {"name": "c", "kind": "cpu", "host": "n0", "cores": 4, "memory_gb": 8},
      {"name": "b", "kind": "T4", "host": "n0"},
      {"name": "d", "kind": "T4", "host": "n1"},
      {"name": "e", "kind": "H100-SXM", "host": "n0", "gpu": 0}]})",
                                                 "cluster.json");
  ASSERT_TRUE(static_cast<bool>(cluster))
      << llvm::toString(cluster.takeError());
  std::vector<int> gpus;
  for (const Device &device : cluster->devices)
    gpus.push_back(device.gpu);
  // e names GPU 0 of n0, so a and b, without "gpu", take 1 and 2: a
  // device shares a GPU only with one that names the same.
  EXPECT_EQ(gpus, (std::vector<int>{1, -1, 2, 0, 0}));
  // Devices without "gpu" skip the indices others name.
  llvm::Expected<Cluster> named = parseCluster(R"({"devices": [
      {"name": "a", "kind": "T4", "gpu": 1},
      {"name": "b", "kind": "T4"},
      {"name": "c", "kind": "T4"}]})",
                                               "cluster.json");
  ASSERT_TRUE(static_cast<bool>(named)) << llvm::toString(named.takeError());
  EXPECT_EQ(named->devices[1].gpu, 0);
  EXPECT_EQ(named->devices[2].gpu, 2);

  EXPECT_NE(errorOf(R"({"devices": [{"name": "c", "kind": "cpu", "cores": 2,
                                     "memory_gb": 8, "gpu": 0}]})")
                .find("device 0 (c): 'gpu' is a GPU's index on its host; "
                      "'cpu' is a CPU"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4", "gpu": -1}]})")
                .find("'gpu' must be a whole number from 0 to 1023"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"devices": [{"name": "a", "kind": "T4", "gpu": 1.5}]})")
                .find("'gpu' must be a whole number from 0 to 1023"),
            std::string::npos);
}
