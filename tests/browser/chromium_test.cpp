// report.html in a real browser: Debian's headless Chromium opens the reports of example
// scenarios from disk, runs the page's script, and the test reads back the DOM: no console
// output or script error, one lane per consumer and variant, one shaded window per rebalance.
// A screenshot of each report stays in the build directory (test-artifacts/browser/).
#include <doctest/doctest.h>
#include <cmath>

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "browser_harness.hpp"

namespace fs = std::filesystem;

namespace {

using namespace browser_harness;

using Expected = RunShape;

// From the run's own files: the consumers of every variant's trace and summary.json's rebalances.
Expected expected_of(const fs::path& out) {
  return run_shape(out);
}

/// `share_partitions`: how many share-partition charts the share view must draw (0: none, and no
/// share section at all).
void check_in_browser(const std::string& scenario, const std::string& name, std::size_t variants,
                      std::size_t share_partitions = 0) {
  INFO("scenario " << scenario);
  REQUIRE_MESSAGE(!chromium().empty(),
                  "chromium is missing: `make test` installs it (apt package chromium)");
  const fs::path dir = fs::path(RSIM_BUILD_DIR) / "test-artifacts" / "browser" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "run";
  REQUIRE(sh(std::string("cd ") + RSIM_SOURCE_DIR + " && " + RSIM_BINARY + " run " + scenario +
             " --out " + out.string() + " > " + (dir / "run.log").string() + " 2>&1") == 0);
  const fs::path report = out / "report.html";
  REQUIRE(fs::exists(report));
  const Expected want = expected_of(out);
  CHECK(want.lanes >= variants);

  const fs::path profile = dir / "profile";
  const fs::path dom_file = dir / "dom.html", log_file = dir / "chromium.log";
  const int rc = sh(chromium_command(profile) + " --virtual-time-budget=5000 --dump-dom file://" +
                    report.string() + " > " + dom_file.string() + " 2> " + log_file.string());
  CHECK(rc == 0);
  const std::string dom = slurp(dom_file), log = slurp(log_file);
  // The page logs nothing: any console line is a script error or a stray message.
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) CHECK_MESSAGE(line.find(":CONSOLE") == std::string::npos, line);
  CHECK(log.find("Uncaught") == std::string::npos);
  CHECK(attribute(dom, "data-errors") == "(absent)");
  CHECK(attribute(dom, "data-ready") == "1");
  CHECK(attribute(dom, "data-lanes") == std::to_string(want.lanes));
  CHECK(attribute(dom, "data-rebalances") == std::to_string(want.rebalances));
  std::size_t timelines = 0;
  for (auto p = dom.find("<svg class=\"timeline\""); p != std::string::npos;
       p = dom.find("<svg class=\"timeline\"", p + 1))
    ++timelines;
  CHECK(timelines == variants);
  // The script drew the time axis (its ticks exist only after it ran).
  CHECK(dom.find("<g class=\"axis\" transform=\"translate(150,0)\" data-height=") !=
        std::string::npos);
  CHECK(std::regex_search(dom, std::regex("<text x=\"[0-9.]+\" y=\"13\">[0-9.]+ s</text>")));
  // The share view: one chart per share-partition, counted by its own script once drawn.
  std::size_t charts = 0;
  for (auto p = dom.find("<svg class=\"share-window\""); p != std::string::npos;
       p = dom.find("<svg class=\"share-window\"", p + 1))
    ++charts;
  CHECK(charts == share_partitions);
  CHECK(attribute(dom, "data-share-partitions") ==
        (share_partitions == 0 ? std::string("(absent)") : std::to_string(share_partitions)));
  if (share_partitions > 0) {
    CHECK(dom.find("<h2>Share groups</h2>") != std::string::npos);
    CHECK(dom.find("class=\"sv-spso\"") != std::string::npos);
    CHECK(dom.find("class=\"sv-acquired\"") != std::string::npos);
  }

  fs::remove_all(profile);
  const fs::path shot = dir / "screenshot.png";
  CHECK(sh(chromium_command(profile) +
           " --virtual-time-budget=5000 --window-size=1400,2200 --screenshot=" + shot.string() +
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
  REQUIRE_MESSAGE(!chromium().empty(),
                  "chromium is missing: `make test` installs it (apt package chromium)");
  const fs::path dir =
      fs::path(RSIM_BUILD_DIR) / "test-artifacts" / "browser" / ("compare-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string scenario = slurp(fs::path(RSIM_SOURCE_DIR) / real / "scenario.path");
  while (!scenario.empty() && std::isspace(static_cast<unsigned char>(scenario.back())))
    scenario.pop_back();
  const fs::path out = dir / "out";
  const int code = sh(std::string("cd ") + RSIM_SOURCE_DIR + " && " + RSIM_BINARY + " compare " +
                      scenario + " --real " + real + " --real " + real + "/run-2 --out " +
                      out.string() + " > " + (dir / "compare.log").string() + " 2>&1");
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
  const int rc = sh(chromium_command(profile) + " --virtual-time-budget=5000 --dump-dom file://" +
                    report.string() + " > " + dom_file.string() + " 2> " + log_file.string());
  CHECK(rc == 0);
  const std::string dom = slurp(dom_file), log = slurp(log_file);
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) CHECK_MESSAGE(line.find(":CONSOLE") == std::string::npos, line);
  CHECK(log.find("Uncaught") == std::string::npos);
  CHECK(attribute(dom, "data-errors") == "(absent)");
  CHECK(attribute(dom, "data-ready") == "1");
  CHECK(attribute(dom, "data-pair-ready") == "1");
  CHECK(attribute(dom, "data-lanes") == std::to_string(lanes));
  CHECK(attribute(dom, "data-deviations-out") == std::to_string(beyond));
  std::size_t timelines = 0;
  for (auto p = dom.find("<svg class=\"timeline pair\""); p != std::string::npos;
       p = dom.find("<svg class=\"timeline pair\"", p + 1))
    ++timelines;
  CHECK(timelines == verdicts.size());
  CHECK(std::regex_search(
      dom, std::regex(
               "<text x=\"[0-9.]+\" y=\"13\">[0-9.]+ s</text>")));  // the axis, drawn by the script

  fs::remove_all(profile);
  const fs::path shot = dir / "screenshot.png";
  CHECK(sh(chromium_command(profile) +
           " --virtual-time-budget=5000 --window-size=1400,2200 --screenshot=" + shot.string() +
           " file://" + report.string() + " > /dev/null 2>> " + log_file.string()) == 0);
  REQUIRE(fs::exists(shot));
  CHECK(fs::file_size(shot) > 20'000);
  fs::remove_all(profile);
}

}  // namespace

TEST_CASE("chromium: compare --out, two-consumers against both real runs side by side") {
  check_compare_in_browser("fidelity/real/two-consumers", "two-consumers");
}

TEST_CASE(
    "chromium: compare --out, three variants of cooperative-revocation-duplicates against real "
    "Kafka") {
  check_compare_in_browser("fidelity/real/cooperative-revocation-duplicates",
                           "cooperative-revocation-duplicates");
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
    markers += nlohmann::json::parse(slurp(run / "summary.json"))["metrics"]["scaling_actions"]
                   .get<std::size_t>();
    // Steps with at least one ready pod, from the pod lines of the trace.
    std::set<std::string> ready;
    std::map<long long, std::size_t> at;
    std::istringstream trace(slurp(run / "trace.jsonl"));
    std::string line;
    while (std::getline(trace, line)) {
      if (line.find("\"type\":\"pod.") == std::string::npos) continue;
      const auto j = nlohmann::json::parse(line);
      if (j["type"] == "pod.ready")
        ready.insert(j["pod"].get<std::string>());
      else if (j["type"] == "pod.terminating" || j["type"] == "pod.killed")
        ready.erase(j["pod"].get<std::string>());
      else
        continue;
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
  REQUIRE_MESSAGE(!chromium().empty(),
                  "chromium is missing: `make test` installs it (apt package chromium)");
  const fs::path dir = fs::path(RSIM_BUILD_DIR) / "test-artifacts" / "browser" / "zoom";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "run";
  REQUIRE(sh(std::string("cd ") + RSIM_SOURCE_DIR + " && " + RSIM_BINARY +
             " run scenarios/examples/two-consumers.json --out " + out.string() + " > " +
             (dir / "run.log").string() + " 2>&1") == 0);
  // A's onPartitionsRevoked when B joins: a 0 ms callback.
  std::int64_t at = -1, duration_us = 0;
  std::istringstream trace(slurp(out / "classic-eager" / "trace.jsonl"));
  std::string line;
  while (std::getline(trace, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j["type"] == "run.start") duration_us = j["duration_ms"].get<std::int64_t>() * 1000;
    if (at < 0 && j["type"] == "callback" && j["callback"] == "onPartitionsRevoked" &&
        j["phase"] == "start")
      at = j["t_us"].get<std::int64_t>();
  }
  REQUIRE(at > 0);
  const std::int64_t from = at - 500, to = at + 500;
  const fs::path profile = dir / "profile";
  const fs::path dom_file = dir / "dom.html", log_file = dir / "chromium.log";
  CHECK(sh(chromium_command(profile) + " --virtual-time-budget=5000 --dump-dom 'file://" +
           (out / "report.html").string() + "#zoom=" + std::to_string(from) + "," +
           std::to_string(to) + "' > " + dom_file.string() + " 2> " + log_file.string()) == 0);
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
  for (auto it = std::sregex_iterator(axis.begin(), axis.end(), tick); it != std::sregex_iterator();
       ++it)
    labels.push_back((*it)[1].str());
  CHECK(labels.size() >= 5);
  CHECK(std::set<std::string>(labels.begin(), labels.end()).size() == labels.size());
  // Every shape raised to a minimum width: at zoom factor k (1100 plot px showing 1 ms of the
  // run), its width is max(true width, minimum / k), in plot units.
  const double k = static_cast<double>(duration_us) / static_cast<double>(to - from);
  const std::regex shape(
      "<rect[^>]* width=\"([0-9.e-]+)\"[^>]* data-w=\"([0-9.e-]+)\" data-minw=\"([0-9.]+)\"");
  std::size_t shapes = 0;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), shape); it != std::sregex_iterator();
       ++it) {
    const double width = std::stod((*it)[1].str()), real = std::stod((*it)[2].str()),
                 min = std::stod((*it)[3].str());
    CHECK(width == doctest::Approx(std::max(real, min / k)).epsilon(1e-3));
    ++shapes;
  }
  CHECK(shapes > 0);
  fs::remove_all(profile);
}

namespace {

// The values of attribute `name` on every element of the DOM text that carries `marker`
// (e.g. `<g class="row`), in document order, within [from, to).
std::vector<std::string> attributes_of(const std::string& dom, const std::string& marker,
                                       const std::string& name, std::size_t from = 0,
                                       std::size_t to = std::string::npos) {
  std::vector<std::string> out;
  for (auto p = dom.find(marker, from); p != std::string::npos && p < to;
       p = dom.find(marker, p + 1)) {
    const auto end = dom.find('>', p);
    const std::string tag = dom.substr(p, end - p);
    const auto at = tag.find(" " + name + "=\"");
    if (at == std::string::npos) continue;
    const auto v0 = at + name.size() + 3;
    out.push_back(tag.substr(v0, tag.find('"', v0) - v0));
  }
  return out;
}

std::string fmt_width(int width) {
  return "lesson-mid-step-" + std::to_string(width) + "px.png";
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

}  // namespace

// The report as a lesson (issue 35): opened with #step=N the page presses "step" N times. Walked
// to the end, the cursor visited the shown rebalance's sequence rows one by one in time order;
// the cursor line on the timeline sits at the last row's time; the partition view has one row per
// partition of the topic and its owners at the end are summary.json's final_assignment.
// Screenshots mid-step at 1,000 and 1,600 px wide stay as artifacts.
TEST_CASE("chromium: the lesson report's step control and partition view") {
  REQUIRE_MESSAGE(!chromium().empty(),
                  "chromium is missing: `make test` installs it (apt package chromium)");
  const fs::path dir = fs::path(RSIM_BUILD_DIR) / "test-artifacts" / "browser" / "lesson";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "run";
  REQUIRE(sh(std::string("cd ") + RSIM_SOURCE_DIR + " && " + RSIM_BINARY +
             " run scenarios/examples/two-consumers.json --out " + out.string() + " > " +
             (dir / "run.log").string() + " 2>&1") == 0);
  const fs::path report = out / "report.html";
  const auto summary = nlohmann::json::parse(slurp(out / "classic-eager" / "summary.json"));
  const fs::path profile = dir / "profile";
  const fs::path dom_file = dir / "dom.html", log_file = dir / "chromium.log";
  CHECK(sh(chromium_command(profile) +
           " --virtual-time-budget=5000 --window-size=1000,1500 --dump-dom 'file://" +
           report.string() + "#step=9999' > " + dom_file.string() + " 2> " + log_file.string()) ==
        0);
  const std::string dom = slurp(dom_file), log = slurp(log_file);
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) CHECK_MESSAGE(line.find(":CONSOLE") == std::string::npos, line);
  CHECK(attribute(dom, "data-errors") == "(absent)");
  CHECK(attribute(dom, "data-ready") == "1");
  // The description, the lesson, at the top.
  CHECK(dom.find("<p class=\"lesson\" id=\"description\">") != std::string::npos);

  // The rows of the sequence view the cursor walked (the longest rebalance, shown first).
  const std::string seq = attribute(dom, "data-cursor-seq");
  REQUIRE(seq != "(absent)");
  const auto seq_at =
      dom.find("<svg class=\"seq\" data-variant=\"classic-eager\" data-seq=\"" + seq + "\"");
  REQUIRE(seq_at != std::string::npos);
  const auto rows =
      attributes_of(dom, "<g class=\"row", "data-t-us", seq_at, dom.find("</svg>", seq_at));
  REQUIRE(rows.size() >= 6);
  CHECK(attribute(dom, "data-cursor-rows") == std::to_string(rows.size()));
  CHECK(attribute(dom, "data-cursor-step") == std::to_string(rows.size() - 1));
  const auto log_times = split(attribute(dom, "data-step-log"), ',');
  CHECK(log_times == rows);  // every event once, in the order of the sequence view
  for (std::size_t i = 1; i < rows.size(); ++i)
    CHECK(std::stoll(rows[i - 1]) <= std::stoll(rows[i]));
  // The cursor on the timeline: at the last event's time on the shared axis.
  std::smatch m;
  REQUIRE(std::regex_search(
      dom, m, std::regex("<body data-duration-us=\"([0-9]+)\" data-plot-width=\"([0-9.]+)\"")));
  const double dur = std::stod(m[1].str()), plot = std::stod(m[2].str());
  // The page writes the cursor's x with toFixed(3): equal within half its last digit.
  const double cursor_x = std::stod(rows.back()) / dur * plot;
  CHECK(std::abs(std::stod(attribute(dom, "data-cursor-x")) - cursor_x) <= 0.0005);
  const auto cursors = attributes_of(dom, "<line class=\"cursor\"", "x1");
  REQUIRE(cursors.size() == 2);  // the timeline's and the partition view's
  for (const auto& x : cursors) CHECK(std::abs(std::stod(x) - cursor_x) <= 0.0005);
  // The walk (step control, notes, sequence view) lifted right under the variant's timeline and
  // partition view, which stay docked at the top of the window: all in view together.
  CHECK(attribute(dom, "data-lifted") == "classic-eager");
  CHECK(attribute(dom, "data-docked") == "classic-eager");
  const auto variant_div = dom.find("<div class=\"variant docked\">");
  REQUIRE(variant_div != std::string::npos);
  const auto walk_div = dom.find("<div class=\"walk\" data-variant=\"classic-eager\">");
  REQUIRE(walk_div != std::string::npos);
  CHECK(walk_div > variant_div);
  CHECK(walk_div < dom.find("<h2>Summary</h2>"));
  // The walked rebalance's narrative is marked, and its critical path is highlighted in the view.
  CHECK(dom.find("<li data-rb=\"" + seq + "\" class=\"cur\">") != std::string::npos);
  CHECK(dom.find("class=\"msg req crit\"") != std::string::npos);
  // The scenario names no lesson rebalance: the step control opened the longest rebalance that
  // is not the start-up (R1, the group's first): two-consumers' R2, B's join (2,938.382 ms; R3,
  // B's leave, 2,571.334 ms; R4, A's leave, 0 ms).
  REQUIRE(summary["rebalances"].size() == 4);
  CHECK(summary["rebalances"][1]["trigger"] == "member B joined");
  CHECK(summary["rebalances"][1]["duration_ms"] == 2938.382);
  CHECK(summary["rebalances"][2]["duration_ms"] == 2571.334);
  CHECK(seq == "2");
  CHECK(attribute(dom, "data-opened") == "classic-eager:2");
  // A link's #rebalance=1 opens the start-up instead; #step then walks that one.
  {
    fs::remove_all(profile);
    const fs::path other = dir / "dom-rebalance-1.html";
    CHECK(sh(chromium_command(profile) +
             " --virtual-time-budget=5000 --window-size=1000,1500 --dump-dom 'file://" +
             report.string() + "#rebalance=1&step=2' > " + other.string() + " 2>> " +
             log_file.string()) == 0);
    const std::string dom1 = slurp(other);
    CHECK(attribute(dom1, "data-opened") == "classic-eager:1");
    CHECK(attribute(dom1, "data-cursor-seq") == "1");
    CHECK(attribute(dom1, "data-cursor-step") == "1");
  }

  // The partition view: one row per partition of the topic, owners at the end as summary.json says.
  std::set<std::string> partitions;
  std::map<std::string, std::string> owner_at_end;
  for (const auto& [consumer, parts] : summary["metrics"]["final_assignment"].items())
    for (const auto& p : parts) owner_at_end[p.get<std::string>()] = consumer;
  std::istringstream trace(slurp(out / "classic-eager" / "trace.jsonl"));
  while (std::getline(trace, line)) {
    if (line.find("\"type\":\"topic.partitions\"") == std::string::npos) continue;
    const auto j = nlohmann::json::parse(line);
    for (int p = 0; p < j["partitions"].get<int>(); ++p)
      partitions.insert(j["topic"].get<std::string>() + "-" + std::to_string(p));
  }
  const auto prow = attributes_of(dom, "<g class=\"prow\"", "data-partition");
  const auto owner = attributes_of(dom, "<g class=\"prow\"", "data-final-owner");
  REQUIRE(prow.size() == owner.size());
  CHECK(std::set<std::string>(prow.begin(), prow.end()) == partitions);
  CHECK(prow.size() == partitions.size());
  for (std::size_t i = 0; i < prow.size(); ++i) {
    INFO("partition " << prow[i]);
    CHECK(owner[i] == (owner_at_end.count(prow[i]) ? owner_at_end[prow[i]] : std::string()));
  }

  // Mid-step screenshots, 1,000 and 1,600 px wide.
  for (const int width : {1000, 1600}) {
    fs::remove_all(profile);
    const fs::path shot = dir / fmt_width(width);
    CHECK(sh(chromium_command(profile) + " --virtual-time-budget=5000 --window-size=" +
             std::to_string(width) + ",1500 --screenshot=" + shot.string() + " 'file://" +
             report.string() + "#step=" + std::to_string(rows.size() / 2) + "' > /dev/null 2>> " +
             log_file.string()) == 0);
    REQUIRE(fs::exists(shot));
    CHECK(fs::file_size(shot) > 20'000);
  }
  fs::remove_all(profile);
}

// 1,000 consumers on 2,000 partitions, 8 s of virtual time: the page stays under 5 MB, opens with
// no script error, keeps one lane per consumer and adds the aggregated views (members per state,
// partitions not processed over time); a screenshot stays as an artifact.
TEST_CASE("chromium: a 1,000-consumer report stays under 5 MB and readable") {
  REQUIRE_MESSAGE(!chromium().empty(),
                  "chromium is missing: `make test` installs it (apt package chromium)");
  const fs::path dir = fs::path(RSIM_BUILD_DIR) / "test-artifacts" / "browser" / "consumers-1000";
  fs::remove_all(dir);
  fs::create_directories(dir);
  nlohmann::ordered_json doc;
  doc["name"] = "consumers-1000";
  doc["description"] =
      "1,000 consumers join a 2,000-partition topic within a second; one crashes at 4 s.";
  doc["seed"] = 1;
  doc["duration_ms"] = 8000;
  doc["protocols"] = {"consumer"};
  doc["cluster"] = {{"brokers", 1}};
  doc["topics"] = nlohmann::ordered_json::array(
      {{{"name", "t"}, {"partitions", 2000}, {"produce", {{"records_per_sec", 1}}}}});
  doc["consumers"] = nlohmann::ordered_json::array();
  doc["events"] = nlohmann::ordered_json::array();
  for (int i = 0; i < 1000; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "c%04d", i);
    doc["consumers"].push_back({{"name", name}, {"group", "g"}, {"topics", {"t"}}});
    doc["events"].push_back({{"at_ms", 100 + i * 900 / 1000}, {"do", "start"}, {"consumer", name}});
  }
  doc["events"].push_back({{"at_ms", 4000}, {"do", "crash"}, {"consumer", "c0007"}});
  {
    std::ofstream f(dir / "scenario.json");
    f << doc.dump(1);
  }
  const fs::path out = dir / "run";
  REQUIRE(sh(std::string(RSIM_BINARY) + " run " + (dir / "scenario.json").string() + " --out " +
             out.string() + " > " + (dir / "run.log").string() + " 2>&1") == 0);
  const fs::path report = out / "report.html";
  REQUIRE(fs::exists(report));
  CHECK(fs::file_size(report) < 5'000'000);
  const std::string html = slurp(report);
  CHECK(html.find("<svg class=\"pview agg\" data-variant=\"consumer\" data-consumers=\"1000\"") !=
        std::string::npos);
  // The final assignment collapsed: its size first (c0007 crashed: 999 owners at the end).
  const auto final_assignment = nlohmann::json::parse(
      slurp(out / "consumer" / "summary.json"))["metrics"]["final_assignment"];
  std::size_t owned = 0;
  for (const auto& [c, parts] : final_assignment.items()) owned += parts.size();
  CHECK(html.find("<details class=\"final\"><summary>" + std::to_string(final_assignment.size()) +
                  " consumers own " + std::to_string(owned) + " partitions") != std::string::npos);

  const fs::path profile = dir / "profile";
  const fs::path dom_file = dir / "dom.html", log_file = dir / "chromium.log";
  CHECK(sh(chromium_command(profile) + " --virtual-time-budget=8000 --dump-dom file://" +
           report.string() + " > " + dom_file.string() + " 2> " + log_file.string()) == 0);
  const std::string dom = slurp(dom_file);
  CHECK(attribute(dom, "data-errors") == "(absent)");
  CHECK(attribute(dom, "data-ready") == "1");
  CHECK(attribute(dom, "data-lanes") == "1000");
  fs::remove_all(profile);
  const fs::path shot = dir / "screenshot-1000-consumers.png";
  CHECK(sh(chromium_command(profile) +
           " --virtual-time-budget=8000 --window-size=1400,1400 --screenshot=" + shot.string() +
           " file://" + report.string() + " > /dev/null 2>> " + log_file.string()) == 0);
  REQUIRE(fs::exists(shot));
  CHECK(fs::file_size(shot) > 20'000);
  fs::remove_all(profile);
}

// Issue 34: the critical path the page draws over the timeline and highlights in the sequence
// view is summary.json's `critical_path` of that rebalance: two-consumers' R2 (classic-eager, A
// waiting for its next heartbeat), read back from the DOM after the page's script ran.
TEST_CASE(
    "chromium: the critical path on the timeline and in the sequence view is summary.json's") {
  REQUIRE_MESSAGE(!chromium().empty(),
                  "chromium is missing: `make test` installs it (apt package chromium)");
  const fs::path dir = fs::path(RSIM_BUILD_DIR) / "test-artifacts" / "browser" / "critical-path";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "run";
  REQUIRE(sh(std::string("cd ") + RSIM_SOURCE_DIR + " && " + RSIM_BINARY +
             " run scenarios/examples/two-consumers.json --out " + out.string() + " > " +
             (dir / "run.log").string() + " 2>&1") == 0);
  const auto summary = nlohmann::json::parse(slurp(out / "classic-eager" / "summary.json"));
  const auto& rebalance = summary["rebalances"][1];
  const auto& steps = rebalance["critical_path"]["steps"];
  // Heartbeat request and response, OffsetCommit, the revocation, A's rejoin, the coordinator's
  // generation 2, B's JoinGroup response and SyncGroup, the assignment (18 steps, measured).
  REQUIRE(steps.size() == 18);
  const fs::path profile = dir / "profile";
  const fs::path dom_file = dir / "dom.html", log_file = dir / "chromium.log";
  CHECK(sh(chromium_command(profile) + " --virtual-time-budget=5000 --dump-dom file://" +
           (out / "report.html").string() + " > " + dom_file.string() + " 2> " +
           log_file.string()) == 0);
  const std::string dom = slurp(dom_file);
  CHECK(attribute(dom, "data-errors") == "(absent)");
  CHECK(attribute(dom, "data-ready") == "1");
  const double duration = std::stod(attributes_of(dom, "<body", "data-duration-us").at(0));
  const double plot = std::stod(attributes_of(dom, "<body", "data-plot-width").at(0));

  // The timeline: one dot per step, in order, at the step's time on the shared axis (a step
  // before the rebalance's start drawn at its start), its title the step's actor and what.
  const auto at =
      dom.find("<g class=\"critical-path\" data-path=\"2\" data-variant=\"classic-eager\">");
  REQUIRE(at != std::string::npos);
  const auto end = dom.find("</g>", at);
  const auto indices = attributes_of(dom, "<circle", "data-step", at, end);
  const auto times = attributes_of(dom, "<circle", "data-t-us", at, end);
  const auto xs = attributes_of(dom, "<circle", "cx", at, end);
  REQUIRE(indices.size() == steps.size());
  REQUIRE(times.size() == steps.size());
  REQUIRE(xs.size() == steps.size());
  const std::int64_t start = rebalance["start_us"].get<std::int64_t>();
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::int64_t t = steps[k]["t_us"].get<std::int64_t>();
    CHECK(indices[k] == std::to_string(k));
    CHECK(times[k] == std::to_string(t));
    CHECK(std::stod(xs[k]) ==
          doctest::Approx(static_cast<double>(std::max(t, start)) / duration * plot).epsilon(1e-4));
  }
  const std::string path_text = dom.substr(at, end - at);
  for (const auto& s : steps)
    CHECK(path_text.find(" " + s["actor"].get<std::string>() + ": " + s["what"].get<std::string>() +
                         " (" + s["event"].get<std::string>() + ")</title>") != std::string::npos);

  // The sequence view: the highlighted rows name the steps they show, at the steps' times; every
  // step with a row of its own (an rpc other than a heartbeat, a group state, a callback) is on
  // a highlighted row; a row not highlighted names no step.
  const auto seq = dom.find("<svg class=\"seq\" data-variant=\"classic-eager\" data-seq=\"2\"");
  REQUIRE(seq != std::string::npos);
  const auto seq_end = dom.find("</svg>", seq);
  const auto crit_steps = attributes_of(dom, "<g class=\"row crit\"", "data-step", seq, seq_end);
  const auto crit_times = attributes_of(dom, "<g class=\"row crit\"", "data-t-us", seq, seq_end);
  REQUIRE(crit_steps.size() == crit_times.size());
  CHECK(attributes_of(dom, "<g class=\"row\"", "data-step", seq, seq_end).empty());
  std::set<std::size_t> shown;
  for (std::size_t r = 0; r < crit_steps.size(); ++r)
    for (const auto& k : split(crit_steps[r], ' ')) {
      const std::size_t i = std::stoul(k);
      REQUIRE(i < steps.size());
      CHECK(std::to_string(steps[i]["t_us"].get<std::int64_t>()) == crit_times[r]);
      shown.insert(i);
    }
  std::set<std::size_t> want;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::string event = steps[k]["event"], what = steps[k]["what"];
    if ((event == "rpc" && what.rfind("Heartbeat", 0) != 0) || event == "group.state" ||
        event == "callback")
      want.insert(k);
  }
  for (const auto k : want)
    CHECK_MESSAGE(shown.count(k) == 1, "step " << k << " " << steps[k].dump());
  // 6 rpc steps (OffsetCommit request and response, A's JoinGroup request, B's JoinGroup
  // response, SyncGroup request and response), 2 group states, 4 callback steps.
  CHECK(want.size() == 12);
  fs::remove_all(profile);
}
