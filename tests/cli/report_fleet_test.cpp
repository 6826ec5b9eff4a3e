// report.html of a fleet (issue 38), through the binary on the library's burst scenario: per
// variant, one decision marker per scaling action of summary.json and a ready-pods band whose
// steps are those the trace's pod lines give, counted here on their own.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;

namespace {

using Steps = std::vector<std::pair<long long, int>>;  // (t_us, ready pods from then on)

// Ready pods of deployment "workers" from the trace: a pod counts from pod.ready until its
// pod.terminating or pod.killed; changes at one time are one step; no step repeats a count.
Steps steps_from_trace(const std::string& trace) {
  Steps steps;
  std::set<std::string> ready;
  std::istringstream in(trace);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("\"type\":\"pod.") == std::string::npos) continue;
    const auto j = nlohmann::json::parse(line);
    const std::string type = j["type"];
    if (j["deployment"] != "workers") continue;
    const std::string pod = j["pod"];
    if (type == "pod.ready")
      ready.insert(pod);
    else if (type == "pod.terminating" || type == "pod.killed")
      ready.erase(pod);
    else
      continue;
    const long long t = j["t_us"];
    const int n = static_cast<int>(ready.size());
    if (!steps.empty() && steps.back().first == t)
      steps.back().second = n;
    else
      steps.emplace_back(t, n);
    if ((steps.size() >= 2 ? steps[steps.size() - 2].second : 0) == n) steps.pop_back();
  }
  return steps;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE(
    "report.html of a fleet: ready-pod steps from the trace and a marker per scaling action") {
  const fs::path d =
      fs::temp_directory_path() / ("rebalance-sim-report-fleet-" + std::to_string(getpid()));
  fs::remove_all(d);
  testing::remove_at_exit(d);
  REQUIRE(
      testing::run_cli("run scenarios/library/fleet-burst-scale-out-in.json --out " + d.string(),
                       "report-fleet", true)
          .code == 0);
  const std::string html = testing::read_file(d / "report.html");
  std::size_t variants = 0;
  for (const char* variant : {"classic-eager", "classic-cooperative", "consumer"}) {
    INFO(variant);
    const auto summary = nlohmann::json::parse(testing::read_file(d / variant / "summary.json"));
    const int actions = summary["metrics"]["scaling_actions"];
    CHECK(actions >= 2);  // the burst scales out and back in
    REQUIRE(summary["scaling"].size() == static_cast<std::size_t>(actions));
    const Steps expected = steps_from_trace(testing::read_file(d / variant / "trace.jsonl"));
    REQUIRE(expected.size() >= 3);

    const auto from =
        html.find(std::string("<svg class=\"timeline\" data-variant=\"") + variant + "\"");
    REQUIRE(from != std::string::npos);
    const std::string svg = html.substr(from, html.find("</svg>", from) - from);
    CHECK(count(svg, "<g class=\"fleet\" data-deployment=\"workers\"") == 1);
    CHECK(count(svg, "class=\"inst scaling\"") == static_cast<std::size_t>(actions));
    for (int k = 1; k <= actions; ++k) {
      const auto& a = summary["scaling"][static_cast<std::size_t>(k - 1)];
      const std::string marker = "data-scaling=\"" + std::to_string(k) + "\" data-from=\"" +
                                 std::to_string(a["from"].get<int>()) + "\" data-to=\"" +
                                 std::to_string(a["to"].get<int>()) + "\"";
      CHECK_MESSAGE(svg.find(marker) != std::string::npos, marker);
    }
    Steps drawn;
    const std::string key = "class=\"replicas\" data-ready=\"";
    for (auto at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
      const auto n0 = at + key.size(), n1 = svg.find('"', n0);
      const auto t0 = svg.find("data-start-us=\"", n1) + 15, t1 = svg.find('"', t0);
      drawn.emplace_back(std::stoll(svg.substr(t0, t1 - t0)), std::stoi(svg.substr(n0, n1 - n0)));
    }
    CHECK(drawn == expected);
    int max_ready = 0;
    for (const auto& s : expected) max_ready = std::max(max_ready, s.second);
    CHECK(svg.find("data-steps=\"" + std::to_string(expected.size()) + "\" data-decisions=\"" +
                   std::to_string(actions) + "\" data-max-ready=\"" + std::to_string(max_ready) +
                   "\"") != std::string::npos);
    ++variants;
  }
  CHECK(variants == 3);
  fs::remove_all(d);
}

TEST_CASE("report.html without a fleet has no deployment band") {
  const fs::path d =
      fs::temp_directory_path() / ("rebalance-sim-report-nofleet-" + std::to_string(getpid()));
  fs::remove_all(d);
  testing::remove_at_exit(d);
  REQUIRE(testing::run_cli("run scenarios/examples/two-consumers.json --out " + d.string(),
                           "report-nofleet", true)
              .code == 0);
  const std::string html = testing::read_file(d / "report.html");
  CHECK(count(html, "class=\"fleet\"") == 0);
  CHECK(count(html, "ready pods") == 0);
  fs::remove_all(d);
}
