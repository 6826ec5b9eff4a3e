// `run --trace full|standard|none` and `--quiet`, as a separate process: each level is
// deterministic, the summary is the same at every level, `standard` is `full` without the Fetch
// rpc lines, `none` writes only summary.json, and --quiet prints nothing on success.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("rebalance-sim-trace-levels-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string without_fetch_rpcs(const std::string& trace) {
  std::istringstream in(trace);
  std::string out, line;
  while (std::getline(in, line))
    if (line.find("\"type\":\"rpc\"") == std::string::npos || line.find("\"api\":\"Fetch\"") == std::string::npos)
      out += line + '\n';
  return out;
}

// The summary without produced_by (the same) and expectations: every metric and rebalance.
std::string summary_body(const std::string& text) {
  const auto from = text.find("\"rebalances\"");
  return from == std::string::npos ? text : text.substr(from);
}

}  // namespace

TEST_CASE("every trace level is deterministic and gives the same summary; standard drops only Fetch rpcs") {
  const auto d = temp_dir("levels");
  const std::string scenario = "scenarios/examples/two-consumers-kip848.json";
  std::map<std::string, std::string> trace, summary;
  for (const std::string level : {"full", "standard", "none"}) {
    for (const std::string copy : {"a", "b"}) {
      const auto out = d / (level + "-" + copy);
      const auto r = testing::run_cli("run " + scenario + " --trace " + level + " --out " + out.string(), "levels");
      REQUIRE(r.code == 0);
      const auto dir = out / "consumer";
      CHECK(fs::exists(dir / "summary.json"));
      CHECK(fs::exists(dir / "trace.jsonl") == (level != "none"));
      const std::string t = level == "none" ? "" : testing::read_file(dir / "trace.jsonl");
      const std::string s = testing::read_file(dir / "summary.json");
      if (copy == "a") {
        trace[level] = t;
        summary[level] = s;
      } else {
        CHECK(t == trace[level]);  // byte-identical run to run
        CHECK(s == summary[level]);
      }
    }
  }
  CHECK(summary["full"] == summary["standard"]);
  CHECK(summary_body(summary["none"]) == summary_body(summary["full"]));
  CHECK(trace["full"].find("\"api\":\"Fetch\"") != std::string::npos);
  CHECK(trace["standard"].find("\"api\":\"Fetch\"") == std::string::npos);
  CHECK(trace["standard"] == without_fetch_rpcs(trace["full"]));
  fs::remove_all(d);
}

TEST_CASE("a bad --trace level is a usage error (exit 2) and writes nothing") {
  const auto d = temp_dir("bad");
  const auto r = testing::run_cli("run scenarios/examples/two-consumers.json --trace verbose --out " + (d / "out").string(),
                                  "levels-bad", true);
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(d / "out"));
  fs::remove_all(d);
}

TEST_CASE("--quiet prints nothing on success and still exits 1 on a failed expectation") {
  const auto d = temp_dir("quiet");
  const auto r = testing::run_cli("run scenarios/examples/two-consumers.json --quiet --out " + (d / "out").string(),
                                  "levels-quiet");
  CHECK(r.code == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());  // stderr is not a terminal here: no progress line either
  CHECK(fs::exists(d / "out" / "classic-eager" / "summary.json"));
  fs::remove_all(d);
}

TEST_CASE("bench scale --trace: none writes no trace, standard does; a bad level is a usage error") {
  // 20 consumers x 200 partitions for 10 virtual s: the same events at both levels (the trace
  // level changes what is written, never what happens), trace bytes only at standard.
  const auto row = [](const std::string& out) {
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line))
      if (line.find("20 x 200") != std::string::npos) return line;
    return std::string();
  };
  const auto none = testing::run_cli("bench scale --sizes 20x200 --virtual-ms 10000 --trace none", "bench-none");
  const auto standard = testing::run_cli("bench scale --sizes 20x200 --virtual-ms 10000", "bench-standard");
  REQUIRE(none.code == 0);
  REQUIRE(standard.code == 0);
  CHECK(none.out.find("trace none (summary only)") != std::string::npos);
  CHECK(standard.out.find("trace at standard detail") != std::string::npos);
  std::istringstream a(row(none.out)), b(row(standard.out));
  std::string a_label, x, b_label, y, a_events, b_events;
  a >> a_label >> x >> y >> a_events;
  b >> b_label >> x >> y >> b_events;
  CHECK(!a_events.empty());
  CHECK(a_events == b_events);
  // The trace column: "-" without a trace, a size with one.
  CHECK(row(none.out).find(" - ") != std::string::npos);
  CHECK((row(standard.out).find("KiB") != std::string::npos || row(standard.out).find("MiB") != std::string::npos));
  const auto bad = testing::run_cli("bench scale --sizes 20x200 --trace verbose", "bench-bad", true);
  CHECK(bad.code == 2);
}
