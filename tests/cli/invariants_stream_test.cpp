// `run --check-invariants` streams (issue 33): the invariant checker is a sink on the trace bus,
// so a run ten times longer holds no more memory. Before, every event's line was kept for the
// checker (at `--trace standard`, 72 MiB peak for 30 s of this scenario and 437 MiB for 300 s).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "process_measure.hpp"

namespace fs = std::filesystem;
using testing::Measured;
using testing::own_peak_rss_kib;
using testing::peak_rss_unmeasured;
using testing::run_measured;

namespace {

// Two cooperative members sharing six partitions while 500 records a second are produced: every
// record is fetched and processed (records.fetched / records.processed events that only the
// `full` trace writes, but that the checker reads), for `duration_ms`.
std::string scenario(const fs::path& dir, std::int64_t duration_ms) {
  const nlohmann::json doc = {
      {"name", "long-check"},
      {"seed", 1},
      {"duration_ms", duration_ms},
      {"protocols", {"classic-cooperative"}},
      {"cluster", {{"config", {{"group.initial.rebalance.delay.ms", 0}}}}},
      {"topics", {{{"name", "t"}, {"partitions", 6}}}},
      {"consumers",
       {{{"name", "A"}, {"group", "g"}, {"topics", {"t"}}},
        {{"name", "B"}, {"group", "g"}, {"topics", {"t"}}}}},
      {"events",
       {{{"at_ms", 0}, {"do", "start"}, {"consumer", "A"}},
        {{"at_ms", 1000}, {"do", "start"}, {"consumer", "B"}},
        {{"at_ms", 2000}, {"do", "produce"}, {"topic", "t"}, {"records_per_sec", 500}}}}};
  const fs::path p = dir / fmt::format("long-{}.json", duration_ms);
  std::ofstream(p) << doc.dump();
  return p.string();
}

}  // namespace

TEST_CASE("run --check-invariants streams: ten times the run, not more memory") {
  const fs::path dir =
      fs::temp_directory_path() / ("rsim-invariants-stream-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto run = [&](std::int64_t duration_ms) {
    return run_measured({"run", scenario(dir, duration_ms), "--check-invariants", "--trace",
                         "standard", "--out", (dir / fmt::format("out-{}", duration_ms)).string()},
                        dir / fmt::format("out-{}.txt", duration_ms));
  };
  const Measured x1 = run(20'000), x10 = run(200'000);
  INFO(x10.out);
  CHECK(x1.code == 0);
  CHECK(x10.code == 0);
  CHECK(x10.out.find("long-check [classic-cooperative]: invariants hold") != std::string::npos);
  MESSAGE(fmt::format("max RSS: 20 s {} KiB, 200 s {} KiB; this test process {} KiB",
                      x1.max_rss_kib, x10.max_rss_kib, own_peak_rss_kib()));
  if (const std::string why = peak_rss_unmeasured(x1.max_rss_kib, "the run it measures");
      !why.empty()) {
    MESSAGE(why);
  } else {
    // Held whole, the 180 s more of events (about 90,000 records fetched and processed, each a
    // line) took some 250 MiB more; streamed, the world's and the summary's state grow by a few.
    CHECK(x10.max_rss_kib - x1.max_rss_kib < 8 * 1024);
  }
  fs::remove_all(dir);
}
