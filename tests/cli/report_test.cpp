// `run --format`, `report DIR` and `explain` through the binary: the files each writes, byte
// for byte the same on every run and between `run` and `report`, and exit code 2 on bad input.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fresh(const std::string& name) {
  const fs::path d = fs::temp_directory_path() /
                     ("rebalance-sim-report-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  return testing::remove_at_exit(d);
}

const char* kAll = " --format perfetto --format mermaid --format csv";

}  // namespace

TEST_CASE("run --format writes every output, and the same bytes twice") {
  const fs::path a = fresh("a"), b = fresh("b");
  const auto ra = testing::run_cli(
      "run scenarios/examples/two-consumers.json --out " + a.string() + kAll, "report-a", true);
  const auto rb = testing::run_cli(
      "run scenarios/examples/two-consumers.json --out " + b.string() + kAll, "report-b", true);
  REQUIRE(ra.code == 0);
  REQUIRE(rb.code == 0);
  CHECK(ra.out.find("report: " + (a / "report.html").string() + "\n") != std::string::npos);
  for (const char* f :
       {"report.html", "classic-eager/perfetto.json", "classic-eager/sequence.mmd",
        "classic-eager/timeline.csv", "classic-eager/lag.csv", "classic-eager/trace.jsonl"}) {
    INFO(f);
    REQUIRE(fs::exists(a / f));
    CHECK(fs::file_size(a / f) > 0);
    CHECK(testing::read_file(a / f) == testing::read_file(b / f));
  }
  // No staging leftovers next to the output.
  CHECK(!fs::exists(a.string() + ".tmp-rebalance-sim"));
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST_CASE("report DIR renders the same bytes as run, from the files alone") {
  const fs::path d = fresh("re");
  REQUIRE(testing::run_cli(
              "run scenarios/examples/two-consumers-kip848.json --out " + d.string() + kAll,
              "report-re1", true)
              .code == 0);
  const std::string html = testing::read_file(d / "report.html");
  const std::string perfetto = testing::read_file(d / "consumer/perfetto.json");
  const std::string mmd = testing::read_file(d / "consumer/sequence.mmd");
  fs::remove(d / "report.html");
  fs::remove(d / "consumer/perfetto.json");
  const auto r = testing::run_cli("report " + d.string() + kAll, "report-re2", true);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("wrote " + (d / "report.html").string()) != std::string::npos);
  CHECK(testing::read_file(d / "report.html") == html);
  CHECK(testing::read_file(d / "consumer/perfetto.json") == perfetto);
  CHECK(testing::read_file(d / "consumer/sequence.mmd") == mmd);
  // Another rebalance for the Mermaid view.
  REQUIRE(testing::run_cli("report " + d.string() + " --format mermaid --rebalance 1", "report-re3",
                           true)
              .code == 0);
  const std::string first = testing::read_file(d / "consumer/sequence.mmd");
  CHECK(first.find("rebalance R1 of group g-consumer (epoch 2), trigger \"member A joined\"") !=
        std::string::npos);
  const auto bad = testing::run_cli("report " + d.string() + " --format mermaid --rebalance 9",
                                    "report-re4", true);
  CHECK(bad.code == 2);
  CHECK(bad.out.find("--rebalance 9: the consumer run has 4 rebalances") != std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("report and explain refuse what is not a run directory (exit 2)") {
  const auto r = testing::run_cli("report /nonexistent-dir-of-rebalance-sim", "report-bad1", true);
  CHECK(r.code == 2);
  CHECK(r.out.find("/nonexistent-dir-of-rebalance-sim: not a directory") != std::string::npos);
  const fs::path empty = fresh("empty");
  fs::create_directories(empty);
  const auto e = testing::run_cli("explain " + empty.string(), "report-bad2", true);
  CHECK(e.code == 2);
  CHECK(e.out.find("no variant directories with trace.jsonl and summary.json") !=
        std::string::npos);
  const auto f =
      testing::run_cli("report " + empty.string() + " --format svg", "report-bad3", true);
  CHECK(f.code == 2);
  fs::remove_all(empty);
}

TEST_CASE("explain tells the two-consumers rebalances from the trace") {
  const auto r = testing::run_cli("explain scenarios/examples/two-consumers.json", "explain", true);
  REQUIRE(r.code == 0);
  INFO(r.out);
  CHECK(r.out.rfind("two-consumers [classic-eager]: 4 rebalances\n", 0) == 0);
  // The measured run: B starts at 3.121 s; A hears of it from its heartbeat at 6.067533 s (its
  // 1st heartbeat of generation 1, 3000 ms and the heartbeat lateness after its join; the request
  // handling, write latency and connection set-up of the timing texture put the times off the
  // millisecond grid), revokes everything and gets orders-0..2 back at 6.082765 s, B orders-3..5.
  CHECK(r.out.find("Rebalance 2 of group g-classic (generation 2): from 3.144383 s to 6.082765 s "
                   "(2938.382 ms), trigger \"member B joined\".") != std::string::npos);
  CHECK(r.out.find("B started at 3.121 s") != std::string::npos);
  CHECK(r.out.find(
            "A learned of it from its Heartbeat response (REBALANCE_IN_PROGRESS) at 6.067533 s") !=
        std::string::npos);
  CHECK(r.out.find("went from orders-0..5 to orders-0..2 (last change at 6.082765 s)") !=
        std::string::npos);
  CHECK(r.out.find("went from none to orders-3..5 (last change at 6.082765 s)") !=
        std::string::npos);
}
