//===- StageDriver.cpp - run one pipeline stage ---------------------------===//

#include "StageDriver.h"

#include "Device.h"
#include "OnnxSave.h"
#include "Timeline.h"
#include "Transport.h"

#include <omp.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>

using namespace pipe_rt;

int64_t Port::bytes() const {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count * static_cast<int64_t>(dtypeSize(dtype));
}

namespace {
/// Whether none of `ports` is called `name`.
bool namedNone(const std::vector<const Port *> &ports, const char *name) {
  for (const Port *port : ports)
    if (std::strcmp(port->name, name) == 0)
      return false;
  return true;
}

/// Whether the folder `path` would be written into exists.
bool parentExists(const std::string &path) {
  size_t slash = path.rfind('/');
  std::string parent = slash == std::string::npos ? "." : path.substr(0, slash);
  struct stat info;
  return parent.empty() ||
         (::stat(parent.c_str(), &info) == 0 && S_ISDIR(info.st_mode));
}

/// The command line.
struct Options {
  std::string inputs, outputs, weights, metrics, savePath, modelPath, trace;
  long steps = 1, bench = 0;
  int threads = 0;
  bool checkInputs = false, checkDevice = false;
};

class StageRunner {
public:
  StageRunner(const StageTable &table, TransportFactory createTransport,
              DeviceFactory createDevice)
      : table(table), createTransport(createTransport),
        createDevice(createDevice) {}

  int run(int argc, char **argv);

private:
  [[noreturn]] void fail(const std::string &message) const {
    // A program of one stage names its kind alone; a pipeline's stage its
    // device too.
    if (*table.device)
      std::fprintf(stderr, "stage %d (%s, %s): error: %s\n", table.index,
                   table.device, table.kind, message.c_str());
    else
      std::fprintf(stderr, "stage %d (%s): error: %s\n", table.index,
                   table.kind, message.c_str());
    std::fflush(stderr);
    std::exit(1);
  }

  void parseOptions(int argc, char **argv);
  /// Waits for the device's work, or fails with what failed there.
  void waitForDevice();
  /// Makes `buffer` `bytes` bytes on the stage's device, or fails.
  void hold(DeviceBuffer &buffer, int64_t bytes);
  void readWeights();
  /// Reads the graph inputs the stage's functions take; returns how many
  /// microbatches they hold (0 for none).
  int64_t readInputs();
  const FunctionTable &functionOf(StepPhase phase) const;
  /// Runs step (`phase`, `microbatch`) of the program: posts `pending` with
  /// the step's receives, waits, and computes. `inputRow` is the
  /// microbatch of the input files it reads.
  void runStep(StepPhase phase, int64_t microbatch, int64_t inputRow);
  /// Adds send `send` of step (`phase`, `microbatch`) to the next group.
  void postSend(StepPhase phase, int64_t microbatch, int send);
  /// Posts the pending sends and `receives` as one group, and waits for
  /// its receives and the last group's sends (Transport::exchange).
  void exchangePending(const std::vector<Message> &receives);
  /// Posts the sends left after the last step and waits for every send.
  void flushSends();
  /// Keeps the buffers of the sends in flight for reuse: they completed.
  void releaseSends();
  void trainStep(long step);
  void saveTrained();
  void writeOutputs();
  /// With --trace: gathers every stage's timeline at stage 0, which writes
  /// the trace.
  void writeTrace();

  const StageTable &table;
  TransportFactory createTransport;
  DeviceFactory createDevice;
  Options options;
  std::unique_ptr<Device> device;
  std::unique_ptr<Transport> transport;
  DeviceBuffer weights, arena;
  /// On a device that is not the host: the current microbatch of each
  /// input, and the outputs of the current step.
  std::map<std::string, DeviceBuffer> deviceInputs, deviceOutputs;
  std::map<std::string, NpyArray> inputs;
  /// The graph inputs the functions take, in the order they take them.
  std::vector<const Port *> inputPorts;
  int64_t available = 1;
  /// The stash of each microbatch whose forward pass ran and backward pass
  /// did not, by stash index; stashes whose backward pass ran, for reuse.
  /// A stage holds a stash only while its microbatch is in flight.
  std::map<int64_t, std::vector<DeviceBuffer>> stash;
  std::vector<std::vector<DeviceBuffer>> spareStashes;
  /// The bytes of each stash index (the forward pass's stash results), and
  /// of one microbatch's stash.
  std::vector<int64_t> stashSizes;
  int64_t stashBytes = 0;
  /// The stash of `microbatch`, taken from the spares or made.
  std::vector<DeviceBuffer> &holdStash(int64_t microbatch);
  /// Gives back the stash of `microbatch` after its backward pass.
  void releaseStash(int64_t microbatch);
  /// The sends not yet posted, by (phase, microbatch, send); the receive
  /// buffers of the current step.
  std::map<std::tuple<int, int64_t, int>, std::pair<const Port *, DeviceBuffer>>
      sends;
  /// Send buffers whose transfer completed, for reuse.
  std::vector<DeviceBuffer> spareSends;
  std::vector<Message> pending;
  std::vector<std::tuple<int, int64_t, int>> pendingKeys;
  /// The sends of the last group posted, which may still be in flight.
  std::vector<std::tuple<int, int64_t, int>> sendsInFlight;
  std::vector<DeviceBuffer> received;
  /// Gradients summed over the step's microbatches, by name, and the
  /// gradients of one microbatch, added into them.
  std::map<std::string, DeviceBuffer> gradients, partialGradients;
  std::map<std::string, const Port *> gradientPorts;
  DeviceBuffer lossBuffer;
  double lossSum = 0;
  bool hasLoss = false;
  int64_t stepNumber = 0;
  /// Inference outputs, by name.
  std::map<std::string, NpyArray> outputs;
  /// With --trace: the measured timeline.
  Timeline timeline;
};
} // namespace

void StageRunner::parseOptions(int argc, char **argv) {
  auto value = [&](int &i) -> std::string {
    if (i + 1 >= argc)
      fail(std::string("missing value after ") + argv[i]);
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i];
    if (name == "--inputs")
      options.inputs = value(i);
    else if (name == "--outputs")
      options.outputs = value(i);
    else if (name == "--weights")
      options.weights = value(i);
    else if (name == "--metrics")
      options.metrics = value(i);
    else if (name == "--save-onnx")
      options.savePath = value(i);
    else if (name == "--model")
      options.modelPath = value(i);
    else if (name == "--trace")
      options.trace = value(i);
    else if (name == "--check-inputs")
      options.checkInputs = true;
    else if (name == "--check-device")
      options.checkDevice = true;
    else if (name == "--steps" || name == "--threads" || name == "--bench") {
      std::string text = value(i);
      long number =
          text.size() <= 10 &&
                  text.find_first_not_of("0123456789") == std::string::npos &&
                  !text.empty()
              ? std::atol(text.c_str())
              : 0;
      if (number < 1 || number > 1000000000L)
        fail(name + " must be a whole number from 1 to 1000000000, not '" +
             text + "'");
      if (name == "--steps")
        options.steps = number;
      else if (name == "--bench")
        options.bench = number;
      else
        options.threads = static_cast<int>(number);
    } else
      fail("unknown argument '" + name + "'");
  }
}

void StageRunner::hold(DeviceBuffer &buffer, int64_t bytes) {
  if (!buffer.resize(*device, bytes))
    fail("cannot allocate " + std::to_string(bytes) +
         " bytes: " + device->lastError());
}

void StageRunner::readWeights() {
  std::vector<char> bytes(table.weightBytes);
  std::FILE *file = std::fopen(options.weights.c_str(), "rb");
  if (!file)
    fail("cannot open weights '" + options.weights + "'");
  std::fseek(file, 0, SEEK_END);
  long size = std::ftell(file);
  std::fseek(file, 0, SEEK_SET);
  bool ok = size == table.weightBytes &&
            std::fread(bytes.data(), 1, size, file) == size_t(size);
  std::fclose(file);
  if (!ok)
    fail("weights '" + options.weights + "' do not match this program");
  hold(weights, table.weightBytes);
  device->copyIn(weights.data(), bytes.data(), table.weightBytes);
}

int64_t StageRunner::readInputs() {
  for (const FunctionTable *function :
       {&table.forward, &table.backward, &table.update})
    for (const Port &port : function->args)
      if (port.kind == PortKind::Input && namedNone(inputPorts, port.name))
        inputPorts.push_back(&port);
  int64_t count = 0;
  for (const Port *port : inputPorts) {
    std::string name = port->name;
    std::string path = options.inputs + "/" + name + ".npy";
    NpyArray &array = inputs[name];
    if (std::string error = readNpy(path, array); !error.empty())
      fail("input '" + name + "': " + error);
    std::string error;
    int64_t held =
        countMicrobatches(name, array, port->dtype, port->shape, error);
    if (!held)
      fail(error);
    if (count && held != count)
      fail("input '" + name + "' holds " + std::to_string(held) +
           " microbatches, the inputs before it " + std::to_string(count));
    count = held;
  }
  return count;
}

const FunctionTable &StageRunner::functionOf(StepPhase phase) const {
  return phase == StepPhase::Forward    ? table.forward
         : phase == StepPhase::Backward ? table.backward
                                        : table.update;
}

void StageRunner::runStep(StepPhase phase, int64_t microbatch,
                          int64_t inputRow) {
  const FunctionTable &function = functionOf(phase);
  if (!function.run)
    fail("its program runs a step its code has no function for");
  // The receives of the step go out with the pending sends, as one group.
  std::vector<Message> receives;
  received.resize(function.args.size());
  for (size_t i = 0; i < function.args.size(); ++i) {
    const Port &port = function.args[i];
    if (port.kind != PortKind::Recv)
      continue;
    hold(received[i], port.bytes());
    receives.push_back({false, port.peer, received[i].data(),
                        static_cast<size_t>(port.bytes())});
  }
  exchangePending(receives);

  std::vector<const void *> in(function.args.size() + 1);
  for (size_t i = 0; i < function.args.size(); ++i) {
    const Port &port = function.args[i];
    switch (port.kind) {
    case PortKind::Input: {
      const char *row = inputs[port.name].data.data() + inputRow * port.bytes();
      if (device->isHost()) {
        in[i] = row;
        break;
      }
      DeviceBuffer &staged = deviceInputs[port.name];
      hold(staged, port.bytes());
      device->copyIn(staged.data(), row, port.bytes());
      in[i] = staged.data();
      break;
    }
    case PortKind::Stash: {
      auto it = stash.find(microbatch);
      if (it == stash.end())
        fail("the backward pass of microbatch " + std::to_string(microbatch) +
             " runs before its forward pass");
      in[i] = it->second[port.index].data();
      break;
    }
    case PortKind::Recv:
      in[i] = received[i].data();
      break;
    case PortKind::Gradient: {
      auto it = gradients.find(port.name);
      if (it == gradients.end() || it->second.size() != port.bytes())
        fail(std::string("its update takes the gradient '") + port.name +
             "', which its backward pass does not compute");
      in[i] = it->second.data();
      break;
    }
    case PortKind::Step:
      // In host memory on every device: the update's kernels take it by
      // value.
      in[i] = &stepNumber;
      break;
    default:
      fail("a function takes a result as an argument");
    }
  }
  std::vector<void *> out(function.results.size() + 1);
  // Each gradient result gets its own buffer, added into the sum after.
  std::vector<const Port *> summed;
  for (size_t i = 0; i < function.results.size(); ++i) {
    const Port &port = function.results[i];
    switch (port.kind) {
    case PortKind::Loss:
      hold(lossBuffer, port.bytes());
      out[i] = lossBuffer.data();
      break;
    case PortKind::Output: {
      if (device->isHost()) {
        NpyArray &array = outputs[port.name];
        out[i] = array.data.data() + microbatch * port.bytes();
        break;
      }
      DeviceBuffer &staged = deviceOutputs[port.name];
      hold(staged, port.bytes());
      out[i] = staged.data();
      break;
    }
    case PortKind::Stash:
      out[i] = holdStash(microbatch)[port.index].data();
      break;
    case PortKind::Send: {
      auto &entry = sends[{int(phase), microbatch, port.index}];
      entry.first = &port;
      if (!entry.second.data() && !spareSends.empty()) {
        entry.second = std::move(spareSends.back());
        spareSends.pop_back();
      }
      hold(entry.second, port.bytes());
      out[i] = entry.second.data();
      break;
    }
    case PortKind::Gradient: {
      gradientPorts[port.name] = &port;
      hold(gradients[port.name], port.bytes());
      DeviceBuffer &partial = partialGradients[port.name];
      hold(partial, port.bytes());
      summed.push_back(&port);
      out[i] = partial.data();
      break;
    }
    default:
      fail("a function returns an argument");
    }
  }
  std::string error;
  // With --trace, on a device whose work runs asynchronously, the step's
  // span is its kernels': the inputs' copies finish before it starts, and
  // it ends when its work has. Without, the step's end waits once.
  bool timed = timeline.enabled() && !device->isHost();
  if (timed)
    waitForDevice();
  auto start = std::chrono::steady_clock::now();
  bool ran = function.run(arena.data(), weights.data(), in.data(), out.data(),
                          inputRow, error);
  if (timed)
    waitForDevice();
  timeline.record(phase == StepPhase::Update ? std::string("update")
                  : phase == StepPhase::Forward
                      ? "F" + std::to_string(microbatch)
                      : "B" + std::to_string(microbatch),
                  /*transfer=*/false, start);
  if (!ran)
    fail((table.training ? "step " + std::to_string(stepNumber) + ", " : "") +
         "microbatch " + std::to_string(inputRow) + ": " + error);
  if (phase == StepPhase::Backward)
    releaseStash(microbatch);
  for (const Port *port : summed)
    device->accumulate(port->dtype, gradients[port->name].data(),
                       partialGradients[port->name].data(),
                       port->bytes() / int64_t(dtypeSize(port->dtype)));
  for (size_t i = 0; i < function.results.size(); ++i) {
    const Port &port = function.results[i];
    if (port.kind == PortKind::Output && !device->isHost())
      device->copyOut(outputs[port.name].data.data() +
                          microbatch * port.bytes(),
                      out[i], port.bytes());
    if (port.kind != PortKind::Loss)
      continue;
    double wide = 0;
    float single = 0;
    if (port.dtype == DType::F64)
      device->copyOut(&wide, lossBuffer.data(), sizeof(wide));
    else
      device->copyOut(&single, lossBuffer.data(), sizeof(single));
    hasLoss = true;
    lossSum += port.dtype == DType::F64 ? wide : single;
  }
  if (!device->isHost())
    waitForDevice();
}

void StageRunner::waitForDevice() {
  if (std::string failure = device->synchronize(); !failure.empty())
    fail(failure);
}

std::vector<DeviceBuffer> &StageRunner::holdStash(int64_t microbatch) {
  auto [it, inserted] = stash.try_emplace(microbatch);
  if (!inserted)
    return it->second;
  if (!spareStashes.empty()) {
    it->second = std::move(spareStashes.back());
    spareStashes.pop_back();
  } else {
    it->second.resize(stashSizes.size());
    for (size_t i = 0; i < stashSizes.size(); ++i)
      hold(it->second[i], stashSizes[i]);
  }
  timeline.stash(stashBytes * int64_t(stash.size()));
  return it->second;
}

void StageRunner::releaseStash(int64_t microbatch) {
  auto it = stash.find(microbatch);
  if (it == stash.end())
    return;
  spareStashes.push_back(std::move(it->second));
  stash.erase(it);
  timeline.stash(stashBytes * int64_t(stash.size()));
}

void StageRunner::postSend(StepPhase phase, int64_t microbatch, int send) {
  auto key = std::make_tuple(int(phase), microbatch, send);
  auto it = sends.find(key);
  if (it == sends.end())
    fail("its program posts a send its steps have not computed");
  pending.push_back({true, it->second.first->peer, it->second.second.data(),
                     static_cast<size_t>(it->second.first->bytes())});
  pendingKeys.push_back(key);
}

void StageRunner::exchangePending(const std::vector<Message> &receives) {
  std::vector<Message> group = pending;
  group.insert(group.end(), receives.begin(), receives.end());
  if (group.empty())
    return;
  auto start = std::chrono::steady_clock::now();
  if (std::string error = transport->exchange(group); !error.empty())
    fail(error);
  timeline.record("wait", /*transfer=*/true, start);
  // The last group's sends have completed: their buffers can go. This
  // group's travel while the stage computes.
  releaseSends();
  sendsInFlight = std::move(pendingKeys);
  pending.clear();
  pendingKeys.clear();
}

void StageRunner::flushSends() {
  exchangePending({});
  if (sendsInFlight.empty())
    return;
  auto start = std::chrono::steady_clock::now();
  if (std::string error = transport->finishSends(); !error.empty())
    fail(error);
  timeline.record("wait", /*transfer=*/true, start);
  releaseSends();
}

void StageRunner::releaseSends() {
  for (const auto &key : sendsInFlight) {
    auto it = sends.find(key);
    spareSends.push_back(std::move(it->second.second));
    sends.erase(it);
  }
  sendsInFlight.clear();
}

void StageRunner::trainStep(long step) {
  for (auto &[name, sum] : gradients)
    device->zero(sum.data(), sum.size());
  lossSum = 0;
  stepNumber = step;
  for (const ProgramEntry &entry : table.program) {
    if (entry.post) {
      postSend(entry.phase, entry.microbatch, entry.send);
      continue;
    }
    if (entry.phase == StepPhase::Update) {
      // The gradient of the step is the mean of the microbatches'.
      for (auto &[name, sum] : gradients) {
        const Port *port = gradientPorts[name];
        device->scale(port->dtype, sum.data(),
                      port->bytes() / int64_t(dtypeSize(port->dtype)),
                      1.0 / double(table.microbatches));
      }
    }
    int64_t row =
        ((step - 1) * table.microbatches + entry.microbatch) % available;
    runStep(entry.phase, entry.microbatch, row);
  }
  flushSends();
}

void StageRunner::saveTrained() {
  // Each stage sends name, size and bytes of what it owns to the stage that
  // computes the loss, which writes the model.
  std::vector<char> packed;
  for (const SavedParameter &parameter : table.saved) {
    size_t length = std::strlen(parameter.name);
    uint64_t bytes = parameter.bytes;
    packed.insert(packed.end(), parameter.name, parameter.name + length + 1);
    packed.insert(packed.end(), reinterpret_cast<char *>(&bytes),
                  reinterpret_cast<char *>(&bytes) + sizeof(bytes));
    packed.resize(packed.size() + parameter.bytes);
    device->copyOut(packed.data() + packed.size() - parameter.bytes,
                    weights.data() + parameter.offset, parameter.bytes);
  }
  int root =
      static_cast<int>(transport->maxOverStages(hasLoss ? table.index : -1));
  std::vector<std::vector<char>> gathered;
  if (std::string error = transport->gather(packed, root, gathered);
      !error.empty())
    fail("--save-onnx: " + error);
  if (table.index != root)
    return;
  std::vector<InitializerData> trained;
  for (const std::vector<char> &blob : gathered)
    for (size_t at = 0; at < blob.size();) {
      std::string name(blob.data() + at);
      at += name.size() + 1;
      uint64_t bytes;
      std::memcpy(&bytes, blob.data() + at, sizeof(bytes));
      at += sizeof(bytes);
      trained.push_back({name, blob.data() + at, bytes});
      at += bytes;
    }
  if (std::string error =
          saveTrainedOnnx(options.modelPath, options.savePath, trained);
      !error.empty())
    fail("--save-onnx: " + error);
}

void StageRunner::writeTrace() {
  if (!timeline.enabled())
    return;
  if (std::string error = timeline.write(*transport, options.trace);
      !error.empty())
    fail("--trace: " + error);
}

void StageRunner::writeOutputs() {
  for (auto &[name, array] : outputs)
    if (std::string error =
            writeNpy(options.outputs + "/" + name + ".npy", array);
        !error.empty())
      fail(error);
}

int StageRunner::run(int argc, char **argv) {
  parseOptions(argc, argv);
  if (!options.savePath.empty() && options.modelPath.empty())
    fail("--save-onnx needs the model this program was compiled from; it "
         "was compiled from IR without an ONNX file");
  if (!options.savePath.empty() && !parentExists(options.savePath))
    fail("cannot write '" + options.savePath + "': its folder does not exist");
  int64_t held = readInputs();
  if (options.checkInputs && !options.checkDevice)
    return 0;
  // With --check-device, a stage whose device is missing fails with the
  // inputs' check, before the launcher starts any process.
  std::string error;
  device = createDevice ? createDevice(table, error) : createHostDevice();
  if (!device)
    fail(error);
  if (options.checkInputs)
    return 0;
  if (options.threads > 0)
    omp_set_num_threads(options.threads);
  if (table.prepare && !table.prepare(error))
    fail(error);
  if (table.numStages == 1)
    transport = createLocalTransport();
  else if (!createTransport)
    fail("a stage of a pipeline needs a transport");
  else if (!(transport = createTransport(argc, argv, table, *device, error)))
    fail(error);
  if (transport->rank() != table.index || transport->size() != table.numStages)
    fail("runs as MPI rank " + std::to_string(transport->rank()) + " of " +
         std::to_string(transport->size()) + "; launch it with OUT/run");
  readWeights();
  hold(arena, table.arenaBytes);
  for (const Port &port : table.forward.results)
    if (port.kind == PortKind::Stash) {
      if (size_t(port.index) >= stashSizes.size())
        stashSizes.resize(port.index + 1, 0);
      stashSizes[port.index] = port.bytes();
      stashBytes += port.bytes();
    }
  // The reduction makes every stage wait for the last to get here: the
  // timelines start together.
  available = std::max<int64_t>(1, transport->maxOverStages(held));
  if (held && held != available)
    fail("its inputs hold " + std::to_string(held) +
         " microbatches, another stage's " + std::to_string(available) +
         "; every input must hold as many");
  if (!options.trace.empty())
    timeline.enable(table);

  if (!table.training) {
    for (const Port &port : table.forward.results)
      if (port.kind == PortKind::Output) {
        NpyArray &array = outputs[port.name];
        array.dtype = port.dtype;
        array.shape = port.shape;
        if (available > 1) {
          if (array.shape.empty())
            array.shape = {available};
          else
            array.shape[0] *= available;
        }
        array.data.assign(port.bytes() * available, 0);
      }
    auto inferAll = [&] {
      for (int64_t m = 0; m < available; ++m)
        for (const ProgramEntry &entry : table.program) {
          // The program is that of one microbatch, repeated.
          if (entry.microbatch != 0)
            fail("its inference program runs more than one microbatch");
          if (entry.post) {
            postSend(entry.phase, m, entry.send);
            continue;
          }
          runStep(entry.phase, m, m);
        }
      flushSends();
    };
    inferAll();
    if (!options.outputs.empty())
      writeOutputs();
    // --bench N: N more runs over all microbatches, each from every stage
    // starting together to the last stage finishing; stage 0 prints the
    // median in milliseconds.
    if (options.bench > 0) {
      std::vector<double> times;
      for (long r = 0; r < options.bench; ++r) {
        transport->maxOverStages(0);
        auto start = std::chrono::steady_clock::now();
        inferAll();
        transport->maxOverStages(0);
        times.push_back(std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count());
      }
      std::sort(times.begin(), times.end());
      if (table.index == 0) {
        std::printf("median_ms %.4f\n", times[times.size() / 2]);
        std::fflush(stdout);
      }
    }
    writeTrace();
    return 0;
  }

  std::FILE *metrics = nullptr;
  bool computesLoss = false;
  for (const Port &port : table.forward.results)
    computesLoss |= port.kind == PortKind::Loss;
  if (computesLoss && !options.metrics.empty() &&
      !(metrics = std::fopen(options.metrics.c_str(), "w")))
    fail("cannot write the metrics file '" + options.metrics + "'");
  for (long step = 1; step <= options.steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    trainStep(step);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!hasLoss)
      continue;
    double loss = lossSum / double(table.microbatches);
    std::printf("step %ld loss %.9g\n", step, loss);
    std::fflush(stdout);
    if (metrics) {
      std::fprintf(metrics,
                   "{\"step\": %ld, \"loss\": %.9g, \"seconds\": %.6f}\n", step,
                   loss, seconds);
      std::fflush(metrics);
    }
  }
  if (metrics && std::fclose(metrics) != 0)
    fail("cannot write the metrics file '" + options.metrics + "'");
  if (!options.savePath.empty())
    saveTrained();
  writeTrace();
  return 0;
}

int pipe_rt::runStage(const StageTable &table, int argc, char **argv,
                      TransportFactory createTransport,
                      DeviceFactory createDevice) {
  StageRunner runner(table, createTransport, createDevice);
  return runner.run(argc, argv);
}
