// A sweep's phase diagram (issue 36) in Debian's headless Chromium: one cell per grid point in
// each facet, one facet per value of the third varied key, every cell linked to its worst seed's
// report, which renders too. A screenshot stays in test-artifacts/browser/phase-diagram/.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "browser_harness.hpp"

namespace fs = std::filesystem;

namespace {

using namespace browser_harness;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE(
    "chromium: a sweep's phase diagram has one cell per grid point and links to the worst seeds' "
    "reports") {
  REQUIRE_MESSAGE(!chromium().empty(),
                  "chromium is missing: `make test` installs it (apt package chromium)");
  const fs::path dir = fs::path(RSIM_BUILD_DIR) / "test-artifacts" / "browser" / "phase-diagram";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "sweep";
  // 3 x 2 grid points in each of 2 facets (the third key): 12 cells.
  REQUIRE(sh(std::string("cd ") + RSIM_SOURCE_DIR + " && " + RSIM_BINARY +
             " sweep scenarios/examples/two-consumers.json --vary "
             "'/consumers/*/config/session.timeout.ms=10000,20000,30000'"
             " --vary /cluster/config/group.initial.rebalance.delay.ms=0,3000"
             " --vary '/consumers/*/config/heartbeat.interval.ms=1000,3000' --seeds 1..2 --metric "
             "rebalance_count"
             " --out " +
             out.string() + " > " + (dir / "sweep.log").string() + " 2>&1") == 0);
  const auto cells = nlohmann::json::parse(slurp(out / "cells.json"));
  REQUIRE(cells["cells"].size() == 12);

  const fs::path profile = dir / "profile";
  const fs::path dom_file = dir / "dom.html", log_file = dir / "chromium.log";
  CHECK(sh(chromium_command(profile) + " --virtual-time-budget=3000 --dump-dom file://" +
           (out / "phase.html").string() + " > " + dom_file.string() + " 2> " +
           log_file.string()) == 0);
  const std::string dom = slurp(dom_file), log = slurp(log_file);
  CHECK(log.find("Uncaught") == std::string::npos);
  CHECK(log.find(":CONSOLE") == std::string::npos);
  CHECK(attribute(dom, "data-ready") == "1");
  CHECK(attribute(dom, "data-grid-points") == "12");
  CHECK(attribute(dom, "data-cells") == "12");
  CHECK(attribute(dom, "data-facets") == "2");
  CHECK(attribute(dom, "data-links") == "12");
  // Each facet: 3 columns (session timeouts) x 2 rows (initial delays).
  CHECK(count(dom, "<section class=\"facet\"") == 2);
  for (const auto& c : cells["cells"]) {
    const std::string cell = c["cell"];
    CAPTURE(cell);
    CHECK(count(dom, "data-cell=\"" + cell + "\"") == 1);
    const fs::path report = out / c["report"].get<std::string>();
    CHECK(fs::exists(report));
    CHECK(dom.find("href=\"" + c["report"].get<std::string>() + "\"") != std::string::npos);
  }
  // A click opens the worst seed's report: it renders (its own script marks it ready).
  fs::remove_all(profile);
  const fs::path worst = out / cells["cells"][0]["report"].get<std::string>();
  CHECK(sh(chromium_command(profile) + " --virtual-time-budget=5000 --dump-dom file://" +
           worst.string() + " > " + (dir / "worst-dom.html").string() + " 2>> " +
           log_file.string()) == 0);
  CHECK(attribute(slurp(dir / "worst-dom.html"), "data-ready") == "1");

  fs::remove_all(profile);
  const fs::path shot = dir / "screenshot.png";
  CHECK(sh(chromium_command(profile) +
           " --virtual-time-budget=3000 --window-size=1200,1000 --screenshot=" + shot.string() +
           " file://" + (out / "phase.html").string() + " > /dev/null 2>> " + log_file.string()) ==
        0);
  REQUIRE(fs::exists(shot));
  CHECK(fs::file_size(shot) > 10'000);
  fs::remove_all(profile);
}
