//===- Timeline.cpp - the measured timeline of a stage --------------------===//

#include "Timeline.h"

#include "StageTable.h"
#include "Transport.h"

#include <cstdio>
#include <vector>

using namespace pipe_rt;

void Timeline::record(const std::string &name, bool transfer,
                      Clock::time_point start) {
  if (!table)
    return;
  double begin = micros(start), end = micros(Clock::now());
  char text[256];
  std::snprintf(text, sizeof(text),
                "{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", "
                "\"pid\": 0, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f},\n",
                name.c_str(), transfer ? "transfer" : "compute",
                transfer ? table->numStages + table->index : table->index,
                begin, end - begin);
  events += text;
}

void Timeline::stash(int64_t bytes) {
  if (!table)
    return;
  char text[256];
  std::snprintf(text, sizeof(text),
                "{\"name\": \"stash of stage %d\", \"ph\": \"C\", "
                "\"pid\": 0, \"ts\": %.3f, \"args\": {\"bytes\": %lld}},\n",
                table->index, micros(Clock::now()),
                static_cast<long long>(bytes));
  events += text;
}

/// `text` with what JSON strings escape escaped.
static std::string jsonEscaped(const std::string &text) {
  std::string escaped;
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      escaped += '\\';
      escaped += c;
    } else if (c < 0x20) {
      char code[8];
      std::snprintf(code, sizeof(code), "\\u%04x", c);
      escaped += code;
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string Timeline::write(Transport &transport, const std::string &path) {
  std::string header;
  for (int track = 0; track < 2; ++track) {
    int tid = track * table->numStages + table->index;
    std::string name = jsonEscaped("stage " + std::to_string(table->index) +
                                   ": " + table->device + " (" + table->kind +
                                   ")" + (track ? " waits" : ""));
    header += "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, "
              "\"tid\": " +
              std::to_string(tid) + ", \"args\": {\"name\": \"" + name +
              "\"}},\n"
              "{\"name\": \"thread_sort_index\", \"ph\": \"M\", "
              "\"pid\": 0, \"tid\": " +
              std::to_string(tid) +
              ", \"args\": {\"sort_index\": " + std::to_string(tid) + "}},\n";
  }
  std::string mine = header + events;
  std::vector<std::vector<char>> gathered;
  if (std::string error = transport.gather(
          std::vector<char>(mine.begin(), mine.end()), 0, gathered);
      !error.empty())
    return error;
  if (table->index != 0)
    return "";
  std::string temporary = path + ".tmp";
  std::FILE *file = std::fopen(temporary.c_str(), "w");
  if (!file)
    return "cannot write the trace '" + path + "'";
  std::fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", file);
  for (const std::vector<char> &part : gathered)
    std::fwrite(part.data(), 1, part.size(), file);
  // A last event without a comma after it: the end of every stage.
  std::fputs("{\"name\": \"end\", \"ph\": \"M\", \"pid\": 0, "
             "\"args\": {}}\n]}\n",
             file);
  if (std::fclose(file) != 0 ||
      std::rename(temporary.c_str(), path.c_str()) != 0)
    return "cannot write the trace '" + path + "'";
  return "";
}
