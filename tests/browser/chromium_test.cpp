// report.html in a real browser: Debian's headless Chromium opens the reports of example
// scenarios from disk, runs the page's script, and the test reads back the DOM: no console
// output or script error, one lane per consumer and variant, one shaded window per rebalance.
// A screenshot of each report stays in the build directory (test-artifacts/browser/).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "browser_harness.hpp"

namespace fs = std::filesystem;

namespace {

using namespace browser_harness;

struct Expected {
  std::size_t lanes = 0;
  std::size_t rebalances = 0;
};

// From the run's own files: the consumers of every variant's trace and summary.json's rebalances.
Expected expected_of(const fs::path& out) {
  Expected e;
  for (const auto& d : fs::directory_iterator(out)) {
    if (!d.is_directory()) continue;
    const auto summary = nlohmann::json::parse(slurp(d.path() / "summary.json"));
    e.rebalances += summary["rebalances"].size();
    std::set<std::string> consumers;
    std::istringstream trace(slurp(d.path() / "trace.jsonl"));
    std::string line;
    while (std::getline(trace, line)) {
      const auto j = nlohmann::json::parse(line);
      if (j["type"] == "consumer.start") consumers.insert(j["consumer"].get<std::string>());
    }
    e.lanes += consumers.size();
  }
  return e;
}

/// `share_partitions`: how many share-partition charts the share view must draw (0: none, and no
/// share section at all).
void check_in_browser(const std::string& scenario, const std::string& name, std::size_t variants,
                      std::size_t share_partitions = 0) {
  INFO("scenario " << scenario);
  REQUIRE_MESSAGE(!chromium().empty(), "chromium is missing: `make test` installs it (apt package chromium)");
  const fs::path dir = fs::path(RSIM_BUILD_DIR) / "test-artifacts" / "browser" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "run";
  REQUIRE(sh(std::string("cd ") + RSIM_SOURCE_DIR + " && " + RSIM_BINARY + " run " + scenario + " --out " + out.string() +
             " > " + (dir / "run.log").string() + " 2>&1") == 0);
  const fs::path report = out / "report.html";
  REQUIRE(fs::exists(report));
  const Expected want = expected_of(out);
  CHECK(want.lanes >= variants);

  const fs::path profile = dir / "profile";
  const fs::path dom_file = dir / "dom.html", log_file = dir / "chromium.log";
  const int rc = sh(chromium_command(profile) + " --virtual-time-budget=5000 --dump-dom file://" + report.string() + " > " +
                    dom_file.string() + " 2> " + log_file.string());
  CHECK(rc == 0);
  const std::string dom = slurp(dom_file), log = slurp(log_file);
  // The page logs nothing: any console line is a script error or a stray message.
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line))
    CHECK_MESSAGE(line.find(":CONSOLE") == std::string::npos, line);
  CHECK(log.find("Uncaught") == std::string::npos);
  CHECK(attribute(dom, "data-errors") == "(absent)");
  CHECK(attribute(dom, "data-ready") == "1");
  CHECK(attribute(dom, "data-lanes") == std::to_string(want.lanes));
  CHECK(attribute(dom, "data-rebalances") == std::to_string(want.rebalances));
  std::size_t timelines = 0;
  for (auto p = dom.find("<svg class=\"timeline\""); p != std::string::npos; p = dom.find("<svg class=\"timeline\"", p + 1)) ++timelines;
  CHECK(timelines == variants);
  // The script drew the time axis (its ticks exist only after it ran).
  CHECK(dom.find("<g class=\"axis\" transform=\"translate(150,0)\" data-height=") != std::string::npos);
  CHECK(std::regex_search(dom, std::regex("<text x=\"[0-9.]+\" y=\"13\">[0-9.]+ s</text>")));
  // The share view: one chart per share-partition, counted by its own script once drawn.
  std::size_t charts = 0;
  for (auto p = dom.find("<svg class=\"share-window\""); p != std::string::npos; p = dom.find("<svg class=\"share-window\"", p + 1)) ++charts;
  CHECK(charts == share_partitions);
  CHECK(attribute(dom, "data-share-partitions") == (share_partitions == 0 ? std::string("(absent)") : std::to_string(share_partitions)));
  if (share_partitions > 0) {
    CHECK(dom.find("<h2>Share groups</h2>") != std::string::npos);
    CHECK(dom.find("class=\"sv-spso\"") != std::string::npos);
    CHECK(dom.find("class=\"sv-acquired\"") != std::string::npos);
  }

  fs::remove_all(profile);
  const fs::path shot = dir / "screenshot.png";
  CHECK(sh(chromium_command(profile) + " --virtual-time-budget=5000 --window-size=1400,2200 --screenshot=" + shot.string() +
           " file://" + report.string() + " > /dev/null 2>> " + log_file.string()) == 0);
  REQUIRE(fs::exists(shot));
  CHECK(fs::file_size(shot) > 20'000);  // a drawn page, not a blank one
  fs::remove_all(profile);
}

// compare --out: the side-by-side page of the simulator against both recorded real runs of a
// scenario. Its lanes are the scenario's consumers times (1 + runs) per variant, and it draws one
// red link per deviation that compare counts beyond the tolerance.
void check_compare_in_browser(const std::string& real, const std::string& name) {
  INFO("fidelity run " << real);
  REQUIRE_MESSAGE(!chromium().empty(), "chromium is missing: `make test` installs it (apt package chromium)");
  const fs::path dir = fs::path(RSIM_BUILD_DIR) / "test-artifacts" / "browser" / ("compare-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string scenario = slurp(fs::path(RSIM_SOURCE_DIR) / real / "scenario.path");
  while (!scenario.empty() && std::isspace(static_cast<unsigned char>(scenario.back()))) scenario.pop_back();
  const fs::path out = dir / "out";
  const int code = sh(std::string("cd ") + RSIM_SOURCE_DIR + " && " + RSIM_BINARY + " compare " + scenario + " --real " + real +
                      " --real " + real + "/run-2 --out " + out.string() + " > " + (dir / "compare.log").string() + " 2>&1");
  REQUIRE((code == 0 || code == 1));  // agrees or differs: the page is written either way
  const fs::path report = out / "report.html";
  REQUIRE(fs::exists(report));
  const auto verdicts = nlohmann::json::parse(slurp(out / "compare.json"));
  const auto spec = nlohmann::json::parse(slurp(fs::path(RSIM_SOURCE_DIR) / scenario));
  std::size_t lanes = 0, beyond = 0;
  for (const auto& v : verdicts) {
    lanes += spec["consumers"].size() * (1 + v["real"].size());
    beyond += v["deviations_beyond_tolerance"].get<std::size_t>();
  }
  CHECK(lanes >= 2 * 3);

  const fs::path profile = dir / "profile";
  const fs::path dom_file = dir / "dom.html", log_file = dir / "chromium.log";
  const int rc = sh(chromium_command(profile) + " --virtual-time-budget=5000 --dump-dom file://" + report.string() + " > " +
                    dom_file.string() + " 2> " + log_file.string());
  CHECK(rc == 0);
  const std::string dom = slurp(dom_file), log = slurp(log_file);
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line))
    CHECK_MESSAGE(line.find(":CONSOLE") == std::string::npos, line);
  CHECK(log.find("Uncaught") == std::string::npos);
  CHECK(attribute(dom, "data-errors") == "(absent)");
  CHECK(attribute(dom, "data-ready") == "1");
  CHECK(attribute(dom, "data-pair-ready") == "1");
  CHECK(attribute(dom, "data-lanes") == std::to_string(lanes));
  CHECK(attribute(dom, "data-deviations-out") == std::to_string(beyond));
  std::size_t timelines = 0;
  for (auto p = dom.find("<svg class=\"timeline pair\""); p != std::string::npos; p = dom.find("<svg class=\"timeline pair\"", p + 1))
    ++timelines;
  CHECK(timelines == verdicts.size());
  CHECK(std::regex_search(dom, std::regex("<text x=\"[0-9.]+\" y=\"13\">[0-9.]+ s</text>")));  // the axis, drawn by the script

  fs::remove_all(profile);
  const fs::path shot = dir / "screenshot.png";
  CHECK(sh(chromium_command(profile) + " --virtual-time-budget=5000 --window-size=1400,2200 --screenshot=" + shot.string() +
           " file://" + report.string() + " > /dev/null 2>> " + log_file.string()) == 0);
  REQUIRE(fs::exists(shot));
  CHECK(fs::file_size(shot) > 20'000);
  fs::remove_all(profile);
}

}  // namespace

TEST_CASE("chromium: compare --out, two-consumers against both real runs side by side") {
  check_compare_in_browser("fidelity/real/two-consumers", "two-consumers");
}

TEST_CASE("chromium: compare --out, three variants of cooperative-revocation-duplicates against real Kafka") {
  check_compare_in_browser("fidelity/real/cooperative-revocation-duplicates", "cooperative-revocation-duplicates");
}

TEST_CASE("chromium: the two-consumers example report") {
  check_in_browser("scenarios/examples/two-consumers.json", "two-consumers", 1);
}

TEST_CASE("chromium: the KIP-848 two-consumers example report") {
  check_in_browser("scenarios/examples/two-consumers-kip848.json", "two-consumers-kip848", 1);
}

TEST_CASE("chromium: three variants side by side") {
  check_in_browser("scenarios/consumer/side-by-side-join.json", "side-by-side-join", 3);
}

// A fleet (issue 38): every variant's deployment band is laid out, one area per step with ready
// pods and one marker per autoscaler decision (summary.json's scaling_actions), no script error.
TEST_CASE("chromium: a fleet's ready-pods band and scaling markers") {
  check_in_browser("scenarios/library/fleet-burst-scale-out-in.json", "fleet-burst", 3);
  const fs::path dir = fs::path(RSIM_BUILD_DIR) / "test-artifacts" / "browser" / "fleet-burst";
  std::size_t steps = 0, markers = 0;
  for (const char* variant : {"classic-eager", "classic-cooperative", "consumer"}) {
    const fs::path run = dir / "run" / variant;
    markers += nlohmann::json::parse(slurp(run / "summary.json"))["metrics"]["scaling_actions"].get<std::size_t>();
    // Steps with at least one ready pod, from the pod lines of the trace.
    std::set<std::string> ready;
    std::map<long long, std::size_t> at;
    std::istringstream trace(slurp(run / "trace.jsonl"));
    std::string line;
    while (std::getline(trace, line)) {
      if (line.find("\"type\":\"pod.") == std::string::npos) continue;
      const auto j = nlohmann::json::parse(line);
      if (j["type"] == "pod.ready") ready.insert(j["pod"].get<std::string>());
      else if (j["type"] == "pod.terminating" || j["type"] == "pod.killed") ready.erase(j["pod"].get<std::string>());
      else continue;
      at[j["t_us"].get<long long>()] = ready.size();
    }
    std::size_t last = 0;
    for (const auto& [t, n] : at) {
      if (n != last && n > 0) ++steps;
      last = n;
    }
  }
  CHECK(markers >= 6);
  const std::string dom = slurp(dir / "dom.html");
  CHECK(attribute(dom, "data-replica-steps") == std::to_string(steps));
  CHECK(attribute(dom, "data-scaling-markers") == std::to_string(markers));
}

TEST_CASE("chromium: a share-group run's report with its share view") {
  // Eight share consumers on four partitions: four share-partition charts (in-flight window and
  // records by state), no script error.
  check_in_browser("scenarios/share/eight-consumers-one-crash.json", "share-eight-consumers", 1, 4);
}

// Zoomed in on a 0 ms callback (report.html#zoom=FROM_US,TO_US: a 1 ms window): the axis
// labels differ from each other (the old fmtT printed "6.0 s" for every tick with toFixed(1)),
// and a shape whose width was raised to its minimum keeps that minimum in screen pixels (the old
// page scaled it with the zoom: a 0 ms callback drew 1.2 px x the zoom factor wide).
TEST_CASE("chromium: zoomed in, axis labels differ and minimum widths stay in screen pixels") {
  REQUIRE_MESSAGE(!chromium().empty(), "chromium is missing: `make test` installs it (apt package chromium)");
  const fs::path dir = fs::path(RSIM_BUILD_DIR) / "test-artifacts" / "browser" / "zoom";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "run";
  REQUIRE(sh(std::string("cd ") + RSIM_SOURCE_DIR + " && " + RSIM_BINARY +
             " run scenarios/examples/two-consumers.json --out " + out.string() + " > " + (dir / "run.log").string() +
             " 2>&1") == 0);
  // A's onPartitionsRevoked when B joins: a 0 ms callback.
  std::int64_t at = -1, duration_us = 0;
  std::istringstream trace(slurp(out / "classic-eager" / "trace.jsonl"));
  std::string line;
  while (std::getline(trace, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j["type"] == "run.start") duration_us = j["duration_ms"].get<std::int64_t>() * 1000;
    if (at < 0 && j["type"] == "callback" && j["callback"] == "onPartitionsRevoked" && j["phase"] == "start")
      at = j["t_us"].get<std::int64_t>();
  }
  REQUIRE(at > 0);
  const std::int64_t from = at - 500, to = at + 500;
  const fs::path profile = dir / "profile";
  const fs::path dom_file = dir / "dom.html", log_file = dir / "chromium.log";
  CHECK(sh(chromium_command(profile) + " --virtual-time-budget=5000 --dump-dom 'file://" + (out / "report.html").string() +
           "#zoom=" + std::to_string(from) + "," + std::to_string(to) + "' > " + dom_file.string() + " 2> " +
           log_file.string()) == 0);
  const std::string dom = slurp(dom_file);
  CHECK(attribute(dom, "data-ready") == "1");
  CHECK(attribute(dom, "data-errors") == "(absent)");
  // The ticks of the first timeline's axis: a 1 ms window has ticks 0.1 ms apart, each label
  // its own ("6.1165 s", "6.1166 s", ...).
  const auto axis_at = dom.find("<g class=\"axis\"");
  REQUIRE(axis_at != std::string::npos);
  const std::string axis = dom.substr(axis_at, dom.find("</g>", axis_at) - axis_at);
  std::vector<std::string> labels;
  const std::regex tick("<text x=\"[-0-9.]+\" y=\"13\">([0-9.]+ s)</text>");
  for (auto it = std::sregex_iterator(axis.begin(), axis.end(), tick); it != std::sregex_iterator(); ++it)
    labels.push_back((*it)[1].str());
  CHECK(labels.size() >= 5);
  CHECK(std::set<std::string>(labels.begin(), labels.end()).size() == labels.size());
  // Every shape raised to a minimum width: at zoom factor k (1100 plot px showing 1 ms of the
  // run), its width is max(true width, minimum / k), in plot units.
  const double k = static_cast<double>(duration_us) / static_cast<double>(to - from);
  const std::regex shape("<rect[^>]* width=\"([0-9.e-]+)\"[^>]* data-w=\"([0-9.e-]+)\" data-minw=\"([0-9.]+)\"");
  std::size_t shapes = 0;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), shape); it != std::sregex_iterator(); ++it) {
    const double width = std::stod((*it)[1].str()), real = std::stod((*it)[2].str()), min = std::stod((*it)[3].str());
    CHECK(width == doctest::Approx(std::max(real, min / k)).epsilon(1e-3));
    ++shapes;
  }
  CHECK(shapes > 0);
  fs::remove_all(profile);
}
