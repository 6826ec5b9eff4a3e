// libFuzzer target: what `compare` does with a recorded real run's trace.jsonl
// (reports/analyses/compare.cpp and the side-by-side timeline). The input is the trace text. The
// facts are read streaming (facts_of_stream) and must either be read or refused with a
// std::runtime_error naming the line (exit 2 in the command); the timeline's reader may refuse with
// a runtime_error or a nlohmann::json::exception (both exit 2 in the command). Facts that were read
// are compared with themselves, which must agree. A crash, another exception, a sanitizer report, a
// hang or a disagreement is a finding.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "reports/analyses/compare.hpp"
#include "reports/timeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  rsim::compare::TraceFacts facts;
  bool read = true;
  try {
    std::istringstream in(text);
    facts = rsim::compare::facts_of_stream(in, "fuzz/trace.jsonl");
  } catch (const std::runtime_error&) {
    read = false;
  }
  if (read) {
    const auto c = rsim::compare::compare_variant("classic-eager", facts, {facts}, {"fuzz"}, {});
    if (!c.records_equal || c.final_sim != c.final_real || c.rebalances_sim != c.rebalances_real)
      __builtin_trap();
    (void)rsim::compare::render_table("fuzz", c);
  }
  try {
    std::istringstream in(text);
    (void)reports::build_timeline(
        in, nlohmann::ordered_json{{"scenario", "fuzz"}, {"protocol", "classic-eager"}});
  } catch (const std::runtime_error&) {
  } catch (const nlohmann::json::exception&) {
  }
  return 0;
}
