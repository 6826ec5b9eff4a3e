// Issue 11's findings, each pinned: the loader's limits (nesting, duplicate keys, one message per
// line, size of a run), settings with zero intervals that used to loop at one instant, and the
// one-broker fail-coordinator whose leftover fencing timer took the coordinator away for good.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "trace_helpers.hpp"

namespace {
using json = nlohmann::json;

json two_consumers() {
  return json::parse(R"({
    "name": "robust", "duration_ms": 20000, "protocols": ["classic-eager"],
    "topics": [{"name": "t", "partitions": 4, "produce": 100}],
    "consumers": [
      {"name": "A", "group": "g", "topics": ["t"]},
      {"name": "B", "group": "g", "topics": ["t"]}],
    "events": [
      {"at_ms": 0, "do": "start", "consumer": "A"},
      {"at_ms": 100, "do": "start", "consumer": "B"}]})");
}

std::string load_error(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("rsim-robust-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path, std::ios::binary) << text;
  std::string what;
  try {
    rsim::load_scenario_file(path.string());
  } catch (const rsim::ScenarioError& e) {
    what = e.what();
  }
  std::filesystem::remove(path);
  return what;
}

// A run bounded tightly: a regression that loops at one instant fails fast instead of hanging.
std::vector<json> run_bounded(const json& doc, const std::string& variant) {
  const auto spec = testing::ideal_machine(doc, "robust.json");
  sim::WatchdogLimits limits;
  limits.max_events_per_instant = 100'000;
  limits.max_events = 20'000'000;
  return testing::parse_trace(rsim::run_scenario(spec, variant, spec.seed, limits).trace_lines);
}

std::vector<std::string> final_owned(const std::vector<json>& trace, const std::string& consumer) {
  std::vector<std::string> owned;
  for (const auto& e : trace)
    if (e["type"] == "assignment" && e.value("consumer", "") == consumer && e.contains("owned"))
      owned = e["owned"].get<std::vector<std::string>>();
  return owned;
}
}  // namespace

TEST_CASE(
    "loader: nesting deeper than the limit is refused with its line and column, no stack "
    "overflow") {
  for (const std::size_t levels : {65, 100000}) {
    const std::string text = std::string(levels, '[') + std::string(levels, ']');
    const std::string what = load_error(text);
    CHECK(what.find("line 1, column 65: nested deeper than 64 levels") != std::string::npos);
  }
  // Inside a value of the format, too: a deep "description".
  const std::string deep = R"({"name": "x", "description": )" + std::string(70, '{');
  CHECK(load_error(deep).find("nested deeper than 64 levels") != std::string::npos);
  // Brackets inside strings do not count.
  CHECK(
      load_error(
          R"({"name": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "seed": "x"})")
          .find("/seed: must be an integer") != std::string::npos);
}

TEST_CASE("loader: a key given twice in one object is refused with its JSON pointer") {
  CHECK(load_error(R"({"name": "a", "name": "b"})").find(R"(/name: duplicate key "name")") !=
        std::string::npos);
  const std::string what = load_error(
      R"({"name": "a", "consumers": [{"name": "A"}, {"name": "B", "config": {"x": 1, "x": 2}}]})");
  CHECK(what.find(R"(/consumers/1/config/x: duplicate key "x")") != std::string::npos);
}

TEST_CASE("loader: a newline inside a value or a key cannot forge another error line") {
  json doc = two_consumers();
  doc["consumers"][0]["group"] = 7;
  doc["events"][0]["consumer"] = "Z\nrobust.json: /forged: fake error";
  doc["bogus\nrobust.json: /forged2: fake"] = 1;
  std::string what;
  try {
    rsim::parse_scenario(doc, "robust.json");
  } catch (const rsim::ScenarioError& e) {
    what = e.what();
  }
  std::size_t lines = 1;
  for (const char c : what) lines += c == '\n';
  CHECK(lines == 3);  // group, consumer, unknown key: three problems, three lines
  CHECK(what.find("\\nrobust.json: /forged: fake error") != std::string::npos);
  CHECK(what.find("\nrobust.json: /forged") == std::string::npos);
}

TEST_CASE("loader: a folder and an endless file are refused, the read is bounded") {
  std::string what;
  try {
    rsim::load_scenario_file(std::string(RSIM_SOURCE_DIR) + "/scenarios");
  } catch (const rsim::ScenarioError& e) {
    what = e.what();
  }
  CHECK(what.find("is a directory, not a scenario file") != std::string::npos);
  what.clear();
  try {
    rsim::load_scenario_file("/dev/zero");
  } catch (const rsim::ScenarioError& e) {
    what = e.what();
  }
  CHECK(what == "/dev/zero: larger than 64 MiB, the simulator's limit for a scenario file");
}

TEST_CASE(
    "loader: runs larger than the simulator's limits are refused, and the scale goal is accepted") {
  const auto problems = [](const json& doc) {
    try {
      rsim::parse_scenario(doc, "big.json");
    } catch (const rsim::ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  json consumers = json::array();
  for (int i = 0; i < 1000; ++i)
    consumers.push_back({{"name", fmt::format("c{}", i)}, {"group", "g"}, {"topics", {"t"}}});
  json week = {{"name", "week"},
               {"duration_ms", 7LL * 24 * 3600 * 1000},
               {"topics", {{{"name", "t"}, {"partitions", 10}}}},
               {"consumers", consumers}};
  CHECK(problems(week).find("/duration_ms: 1000 consumers for 168 h is 168000 consumer-hours; the "
                            "simulator's limit is 20000") != std::string::npos);
  json topics = json::array();
  for (int i = 0; i < 100; ++i)
    topics.push_back({{"name", fmt::format("t{}", i)}, {"partitions", 100000}});
  json wide = {{"name", "wide"}, {"duration_ms", 60000}, {"topics", topics}};
  CHECK(problems(wide).find(
            "/topics: 10000000 partitions in all; the simulator's limit is 1000000") !=
        std::string::npos);
  // Issue 10's scale goal: 10,000 consumers x 100,000 partitions x 1 h.
  json many = json::array();
  for (int i = 0; i < 10000; ++i)
    many.push_back({{"name", fmt::format("c{}", i)}, {"group", "g"}, {"topics", {"t"}}});
  json goal = {{"name", "goal"},
               {"duration_ms", 3600 * 1000},
               {"topics", {{{"name", "t"}, {"partitions", 100000}}}},
               {"consumers", many}};
  CHECK(problems(goal).empty());
}

TEST_CASE("distributions: a huge lognormal is bounded by the 7-day cap, never a negative time") {
  json doc = two_consumers();
  doc["network"] = {
      {"latency_ms", {{"dist", "lognormal"}, {"median", 604800000}, {"sigma", 604800000}}}};
  doc["duration_ms"] = 5000;
  const auto trace = run_bounded(doc, "classic-eager");
  CHECK(trace.back()["type"] == "run.end");
  for (const auto& e : trace) CHECK(e["t_us"].get<std::int64_t>() >= 0);
}

TEST_CASE("zero intervals: each setting runs to its end with time advancing, in every variant") {
  const std::vector<std::pair<std::string, json>> settings{
      {"retry.backoff.ms", 0}, {"auto.commit.interval.ms", 0}, {"metadata.max.age.ms", 0}};
  for (const auto& variant : {"classic-eager", "classic-cooperative", "consumer"}) {
    for (const auto& row : settings) {
      const auto& key = std::get<0>(row);
      const auto& value = std::get<1>(row);
      CAPTURE(variant);
      CAPTURE(key);
      json doc = two_consumers();
      for (auto& c : doc["consumers"]) c["config"] = {{key, value}};
      const auto trace = run_bounded(doc, variant);
      CHECK(trace.back()["type"] == "run.end");
      CHECK(final_owned(trace, "A").size() + final_owned(trace, "B").size() == 4);
    }
    CAPTURE(variant);
    json doc = two_consumers();
    for (auto& c : doc["consumers"]) c["poll_timeout_ms"] = 0;
    const auto trace = run_bounded(doc, variant);
    CHECK(trace.back()["type"] == "run.end");
    CHECK(final_owned(trace, "A").size() + final_owned(trace, "B").size() == 4);
  }
}

TEST_CASE(
    "zero intervals: auto.commit.interval.ms=0 commits once per spin turn (1 ms), not once per "
    "instant") {
  json doc = two_consumers();
  doc["duration_ms"] = 10000;
  for (auto& c : doc["consumers"]) c["config"] = {{"auto.commit.interval.ms", 0}};
  const auto trace = run_bounded(doc, "classic-eager");
  std::size_t commits = 0;
  for (const auto& e : trace)
    if (e["type"] == "commit" && e["phase"] == "completed" && e["purpose"] == "auto-commit")
      ++commits;
  // Two members, stable from about 3.1 s to 10 s: at most one auto-commit per ms each.
  CHECK(commits > 100);
  CHECK(commits <= 2 * 10000);
}

TEST_CASE(
    "fail-coordinator on one broker, back before broker.session.timeout.ms: the coordinator "
    "stays") {
  // Down 3 s (< 9 s): the leftover fencing timer used to elect "no leader" at 29 s for good, so a
  // crashed member's partitions were never reassigned.
  json doc = json::parse(R"({
    "name": "one-broker-short-failure", "duration_ms": 120000, "protocols": ["classic-eager"],
    "cluster": {"brokers": 1, "config": {"group.initial.rebalance.delay.ms": 0}},
    "topics": [{"name": "t", "partitions": 4}],
    "consumers": [
      {"name": "A", "group": "g", "topics": ["t"]},
      {"name": "B", "group": "g", "topics": ["t"]}],
    "events": [
      {"at_ms": 1000, "do": "start", "consumer": "A"},
      {"at_ms": 1100, "do": "start", "consumer": "B"},
      {"at_ms": 20000, "do": "fail-coordinator", "group": "g", "down_ms": 3000},
      {"at_ms": 40000, "do": "crash", "consumer": "B"}]})");
  const auto trace = run_bounded(doc, "classic-eager");
  // At 23 s the broker registers again: leadership moves away (no other replica: none) and comes
  // back to it at once; the fence the controller had due for the failure does nothing.
  std::vector<json> elected;
  for (const auto& e : trace)
    if (e["type"] == "coordinator.elected") elected.push_back(e);
  REQUIRE(!elected.empty());
  CHECK(elected.back()["broker"] == 0);
  for (const auto& e : elected) CHECK(e["t_us"].get<std::int64_t>() < 29'000'000);
  // B's session (45 s) expires at about 85 s: A takes all four partitions.
  CHECK(final_owned(trace, "A") == std::vector<std::string>{"t-0", "t-1", "t-2", "t-3"});
}

TEST_CASE(
    "loader: a deep `expect` value (it passed validate, then crashed run printing it) is refused "
    "at load") {
  json doc = two_consumers();
  const std::string deep = std::string(30000, '[') + "1" + std::string(30000, ']');
  std::string text = doc.dump();
  text.insert(text.size() - 1,
              R"(, "expect": [{"metric": "rebalance_count", "op": "==", "value": )" + deep + "}]");
  CHECK(load_error(text).find("nested deeper than 64 levels") != std::string::npos);
}

TEST_CASE(
    "network: overlapping changes of one link restore only their own fields (found by explore)") {
  // A loss window (5 s..7 s) inside a latency spike (6 s..11 s): the spike's end used to restore
  // the loss it had saved at 6 s, so the link dropped 100% for good after 11 s.
  json doc = two_consumers();
  doc["events"].push_back({{"at_ms", 5000},
                           {"do", "network"},
                           {"between", {"A", "*"}},
                           {"drop_rate", 1.0},
                           {"for_ms", 2000}});
  doc["events"].push_back({{"at_ms", 6000},
                           {"do", "network"},
                           {"between", {"A", "*"}},
                           {"latency_ms", 100},
                           {"for_ms", 5000}});
  const auto trace = run_bounded(doc, "classic-eager");
  std::size_t drops_after = 0, drops_during = 0;
  for (const auto& e : trace) {
    if (e["type"] != "net.drop") continue;
    const auto t = e["t_us"].get<std::int64_t>();
    if (t >= 7'000'000)
      ++drops_after;
    else if (t >= 5'000'000)
      ++drops_during;
  }
  CHECK(drops_during > 0);
  CHECK(drops_after == 0);
}

TEST_CASE(
    "zero intervals: classic retry.backoff.ms=0 spins one turn (1 ms) per poll while positions are "
    "missing") {
  // Kafka's pollForFetches caps the wait at retry.backoff.ms while a position is missing; with 0
  // its client.poll(0) returns from the network at once and poll() loops again. Time advances
  // meanwhile: the OffsetFetch (sent at SyncGroup's answer, 6.008 s) and the ListOffsets answer
  // 2 ms apart each, as with the default backoff, and the first records come at 6.021 s.
  json doc = two_consumers();
  doc["duration_ms"] = 7000;
  for (auto& c : doc["consumers"]) c["config"] = {{"retry.backoff.ms", 0}};
  const auto trace = run_bounded(doc, "classic-eager");
  REQUIRE(trace.back()["type"] == "run.end");
  std::int64_t position_us = -1, fetched_us = -1;
  for (const auto& e : trace) {
    if (e["type"] == "position" && e["consumer"] == "B" && position_us < 0) position_us = e["t_us"];
    if (e["type"] == "records.fetched" && e["consumer"] == "B" && fetched_us < 0)
      fetched_us = e["t_us"];
  }
  CHECK(position_us == 6'012'000);
  CHECK(fetched_us == 6'021'000);
}
