// libFuzzer target: what `report DIR` and `explain DIR` do with a run folder's files. The input is
// one variant's summary.json and trace.jsonl, separated by the first NUL byte (no NUL: all of it
// is the trace, with an empty summary object). Everything goes through the same function the
// commands call (render_outputs: the summary's shape check, the timeline, report.html, perfetto,
// mermaid and both CSV files). Bad input must end in a ScenarioError (exit 2); another exception
// (exit 3), a crash, a sanitizer report or a hang is a finding.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "models/scenario/scenario.hpp"
#include "tools/commands/report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data);
  const void* nul = std::memchr(bytes, 0, size);
  std::string summary = "{}", trace;
  if (nul != nullptr) {
    const auto at = static_cast<std::size_t>(static_cast<const char*>(nul) - bytes);
    summary.assign(bytes, at);
    trace.assign(bytes + at + 1, size - at - 1);
  } else {
    trace.assign(bytes, size);
  }
  rsim::cli::FormatArgs formats;
  formats.formats = {"perfetto", "mermaid", "csv"};
  try {
    rsim::cli::render_outputs({rsim::cli::VariantText{"classic-eager", trace, summary, {}, {}}},
                              formats);
  } catch (const rsim::ScenarioError&) {
  }
  return 0;
}
