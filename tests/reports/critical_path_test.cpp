// Critical paths on runs whose path is known by construction (reports/critical_path.hpp): a
// heartbeat wait, a slow member's callback holding an eager join, the initial rebalance delay,
// KIP-848's assignment interval and reconciliation. Every run is on the idealized machine
// (no request handling, no write latency, heartbeats on time) with a constant 1 ms network, so
// each number below follows from Kafka's timers by hand. For each: the causes add up to the
// rebalance's duration, the dominant cause has the hand-derived number, and the path is a chain
// of happens-before edges of the graph.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <optional>

#include "reports/critical_path.hpp"
#include "reports/html_report.hpp"
#include "reports/narrative.hpp"
#include "reports/timeline.hpp"
#include "trace_helpers.hpp"

namespace {

using nlohmann::json;

json consumer(const std::string& name, json extra = json::object()) {
  json c = {{"name", name}, {"group", "g"}, {"topics", {"t"}}, {"config", {{"client.id", name}}}};
  c.update(extra);
  return c;
}

json scenario(const std::string& protocol, json consumers, json events, json cluster_config,
              std::int64_t duration_ms = 30000) {
  // A one-element braced list ({consumer("A")}) is the element itself under Clang's overload
  // choice and an array of it under GCC's: both mean a list here.
  if (!consumers.is_array()) consumers = json::array({consumers});
  if (!events.is_array()) events = json::array({events});
  return {{"name", "critical-path"},
          {"seed", 1},
          {"duration_ms", duration_ms},
          {"protocols", {protocol}},
          {"cluster", {{"brokers", 1}, {"config", cluster_config}}},
          {"network", {{"latency_ms", 1}}},
          {"topics", {{{"name", "t"}, {"partitions", 4}}}},
          {"consumers", consumers},
          {"events", events}};
}

json start(std::int64_t at_ms, const std::string& who) {
  return {{"at_ms", at_ms}, {"do", "start"}, {"consumer", who}};
}

struct Feed final : rsim::TraceSink {
  explicit Feed(reports::CriticalPaths& p) : paths(p) {}
  void on_event(sim::SimTime t, const rsim::trace::Event& e) override {
    paths.on_event(t.count(), e);
  }
  reports::CriticalPaths& paths;
};

struct Run {
  std::vector<std::string> lines;
  json summary;
  reports::CriticalPaths paths;
};

/// `assignment_interval_ms`: the broker's group.consumer.assignment.interval.ms as summary.json's
/// `config` gives it (SummarySink and the graph then split a deferred target assignment).
std::unique_ptr<Run> run(const json& doc, const std::string& variant,
                         std::optional<std::int64_t> assignment_interval_ms = std::nullopt) {
  auto r = std::make_unique<Run>();
  const auto spec = testing::ideal_machine(json::parse(doc.dump()));  // numbers typed as a file's
  r->lines = rsim::run_scenario(spec, variant, spec.seed).trace_lines;
  if (assignment_interval_ms) {
    reports::SummaryInputs in;
    in.config = {{"cluster", {{"group.consumer.assignment.interval.ms", *assignment_interval_ms}}}};
    r->summary = json::parse(reports::summarize(r->lines, in).dump());
    r->paths.set_assignment_interval_ms(assignment_interval_ms);
  } else {
    r->summary = testing::summary_of(r->lines);
  }
  Feed feed(r->paths);
  rsim::trace::read_jsonl(r->lines, feed);
  return r;
}

std::int64_t us_of(const json& ms) {
  return std::llround(ms.get<double>() * 1000.0);
}

/// The rebalance's causes in µs; checks that they add up to its duration and that the path is a
/// chain of the graph's edges, each step at or after the one before.
std::map<std::string, std::int64_t> check_path(const Run& r, std::size_t index) {
  REQUIRE(r.summary["rebalances"].size() > index);
  const json& rb = r.summary["rebalances"][index];
  const json& cp = rb["critical_path"];
  std::map<std::string, std::int64_t> causes;
  std::int64_t sum = 0;
  REQUIRE(cp["causes"].size() == reports::kCauseCount);
  for (const auto& name : reports::cause_names()) {
    const std::int64_t us = us_of(cp["causes"][std::string(name)]);
    CHECK(us >= 0);
    causes[std::string(name)] = us;
    sum += us;
  }
  const std::int64_t duration =
      rb["end_us"].get<std::int64_t>() - rb["start_us"].get<std::int64_t>();
  CHECK(sum == duration);
  CHECK(us_of(rb["duration_ms"]) == duration);

  const reports::CriticalPath p =
      r.paths.find(rb["group"].get<std::string>(), rb["start_us"].get<std::int64_t>(),
                   rb["end_us"].get<std::int64_t>());
  REQUIRE(p.steps.size() >= 2);
  REQUIRE(p.steps.size() == cp["steps"].size());
  // From the trigger (or the path's last event before it), or from a heartbeat request whose
  // timer ran since before the start.
  CHECK((p.steps.front().t_us <= rb["start_us"].get<std::int64_t>() ||
         p.steps.front().what.find("Heartbeat request") != std::string::npos));
  for (std::size_t i = 1; i < p.steps.size(); ++i) {
    CHECK_MESSAGE(r.paths.has_edge(p.steps[i - 1].node, p.steps[i].node),
                  "no edge " << p.steps[i - 1].what << " -> " << p.steps[i].what);
    CHECK(p.steps[i - 1].t_us <= p.steps[i].t_us);
    CHECK(cp["steps"][i]["t_us"] == p.steps[i].t_us);
  }
  for (std::size_t c = 0; c < reports::kCauseCount; ++c)
    CHECK(p.causes_us[c] == causes[std::string(reports::cause_names()[c])]);
  return causes;
}

/// The trace without the heartbeats that carry and cause no change (what the standard trace
/// level leaves out): a Heartbeat / ConsumerGroupHeartbeat answered NONE during which the
/// coordinator wrote nothing for the member.
std::vector<std::string> without_idle_heartbeats(const std::vector<std::string>& lines) {
  const auto events = testing::parse_trace(lines);
  std::vector<bool> keep(lines.size(), true);
  std::map<std::pair<std::string, std::int64_t>, std::size_t> sent;  // (consumer, id) -> line
  std::map<std::string, bool> touched;  // consumer -> coordinator wrote for it
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (e["type"] == "record" && e.contains("consumer") &&
        e["record"] != "ConsumerGroupTargetAssignmentMember")
      touched[e["consumer"].get<std::string>()] = true;
    if (e["type"] != "rpc" || (e["api"] != "Heartbeat" && e["api"] != "ConsumerGroupHeartbeat"))
      continue;
    if (e["dir"] == "send") {
      sent[{e["from"].get<std::string>(), e["id"].get<std::int64_t>()}] = i;
      touched[e["from"].get<std::string>()] = false;
      continue;
    }
    const auto it = sent.find({e["to"].get<std::string>(), e["id"].get<std::int64_t>()});
    if (it == sent.end() || e.value("error", "") != "NONE" || touched[e["to"].get<std::string>()])
      continue;
    keep[it->second] = false;
    keep[i] = false;
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (keep[i]) out.push_back(lines[i]);
  return out;
}

}  // namespace

TEST_CASE("critical path: A learns of B's join at its next heartbeat (classic, eager)") {
  // A starts at 0: FindCoordinator 0 -> 2 ms, JoinGroup 2 -> 4 (MEMBER_ID_REQUIRED), JoinGroup
  // 4 -> 6; its heartbeats then run every heartbeat.interval.ms=3000 from 6 ms: 3006, 6006,
  // 9006, 12006. B's second JoinGroup reaches the coordinator at 10005 ms: the rebalance starts.
  // A's heartbeat at 12006 returns REBALANCE_IN_PROGRESS at 12008; A commits (12008 -> 12010),
  // revokes (0 ms) and rejoins: JoinGroup 12010 -> 12011 completes the join phase, responses at
  // 12012, SyncGroup 12012 -> 12013 (written at once) -> 12014, the last assignment.
  const auto r =
      run(scenario("classic-eager", {consumer("A"), consumer("B")},
                   {start(0, "A"), start(10000, "B")}, {{"group.initial.rebalance.delay.ms", 0}}),
          "classic-eager");
  REQUIRE(r->summary["rebalances"].size() == 2);
  const auto c = check_path(*r, 1);
  CHECK(r->summary["rebalances"][1]["start_us"] == 10005000);
  CHECK(c.at("heartbeat_wait_ms") == 12006000 - 10005000);  // 2001 ms
  // Heartbeat 2, OffsetCommit 2, JoinGroup 1 + 1, SyncGroup 1 + 1.
  CHECK(c.at("network_ms") == 8000);
  CHECK(c.at("broker_ms") == 0);
  CHECK(c.at("poll_wait_ms") == 0);
  CHECK(c.at("other_ms") == 0);
  const json& steps = r->summary["rebalances"][1]["critical_path"]["steps"];
  bool hb = false;
  for (const auto& s : steps)
    if (s["actor"] == "A" && s["what"] == "Heartbeat request" && s.contains("causes"))
      hb = s["causes"].value("heartbeat_wait_ms", 0.0) == 2001.0;
  CHECK(hb);
  // What `explain` and report.html say of it: the dominant cause first, with its config.
  CHECK(reports::critical_path_sentence(
            nlohmann::ordered_json::parse(r->summary["rebalances"][1].dump()), 2) ==
        "R2 took 2,009 ms: 2,001 ms A waiting for its next heartbeat (heartbeat.interval.ms), 8 ms "
        "network.");
  // With the scenario's effective configs (what `explain` passes), the governing value: A's own.
  const reports::ConfigValues config{{"A", {{"heartbeat.interval.ms", "3000"}}},
                                     {"B", {{"heartbeat.interval.ms", "2000"}}},
                                     {"", {{"group.initial.rebalance.delay.ms", "0"}}}};
  CHECK(reports::critical_path_sentence(
            nlohmann::ordered_json::parse(r->summary["rebalances"][1].dump()), 2, &config) ==
        "R2 took 2,009 ms: 2,001 ms A waiting for its next heartbeat (heartbeat.interval.ms=3000), "
        "8 ms network.");
}

TEST_CASE("critical path: a slow onPartitionsRevoked holds an eager join (classic)") {
  // A at 0 and B at 1000 (generation 2, ending at 3014 ms with both JoinGroup responses at
  // 3012: both heartbeat every 3000 ms from 3012). C joins at 10005 ms; A and B heartbeat at
  // 12012 and learn at 12014; B commits (-> 12016) and spends revoke_ms=5000 in
  // onPartitionsRevoked (12016 -> 17016), then rejoins last: 17016 -> 17017 -> 17018, SyncGroup
  // -> 17019 -> 17020.
  const auto r = run(scenario("classic-eager",
                              {consumer("A"), consumer("B", {{"callbacks", {{"revoke_ms", 5000}}}}),
                               consumer("C")},
                              {start(0, "A"), start(1000, "B"), start(10000, "C")},
                              {{"group.initial.rebalance.delay.ms", 0}}),
                     "classic-eager");
  REQUIRE(r->summary["rebalances"].size() == 3);
  const auto c = check_path(*r, 2);
  CHECK(r->summary["rebalances"][2]["duration_ms"] == 7015.0);
  CHECK(c.at("callback_ms") == 5000000);
  CHECK(c.at("heartbeat_wait_ms") == 12012000 - 10005000);
  CHECK(c.at("network_ms") == 8000);
  // The path runs through B, the member the group waited for.
  bool through_b = false;
  for (const auto& s : r->summary["rebalances"][2]["critical_path"]["steps"])
    through_b = through_b || (s["actor"] == "B" && s["what"] == "onPartitionsRevoked end");
  CHECK(through_b);
}

TEST_CASE("critical path: group.initial.rebalance.delay.ms holds the first rebalance") {
  // A's JoinGroup with its member id reaches the empty group at 5 ms: PreparingRebalance, and
  // the join phase ends group.initial.rebalance.delay.ms=3000 later (3005 ms); JoinGroup response
  // 3006, SyncGroup 3006 -> 3007 -> 3008.
  const auto r = run(scenario("classic-eager", {consumer("A")}, {start(0, "A")},
                              {{"group.initial.rebalance.delay.ms", 3000}}, 10000),
                     "classic-eager");
  REQUIRE(r->summary["rebalances"].size() == 1);
  const auto c = check_path(*r, 0);
  CHECK(c.at("initial_delay_ms") == 3000000);
  CHECK(c.at("network_ms") == 3000);
  CHECK(c.at("other_ms") == 0);
}

TEST_CASE("critical path: KIP-848's assignment interval, then reconciliation") {
  // A joins at 2 -> 3 ms (target computed at once, epoch 2) and acknowledges at 100 ms: its
  // heartbeats run every group.consumer.heartbeat.interval.ms=5000 from there (5100, ...). B
  // joins at 1003 ms (epoch 3, the rebalance's start) and acknowledges its empty assignment at
  // 1100 (heartbeats 6100, ...). group.consumer.assignment.interval.ms=5000 after the target at
  // 3 ms, the first heartbeat at or after 5003 computes the next one: A's at 5100, arriving at
  // 5101 -> assignment_interval_ms = 5101 - 1003. A revokes t-2, t-3 and acknowledges at 5300
  // (written 5301); B learns at its heartbeat at 6100: it waits 6100 - 5301 = 799 ms after the
  // partitions were released. Reconciliation waits for the 100 ms poll grid (poll_wait_ms).
  const auto r =
      run(scenario("consumer", {consumer("A"), consumer("B")}, {start(0, "A"), start(1000, "B")},
                   {{"group.consumer.assignment.interval.ms", 5000}}),
          "consumer");
  REQUIRE(r->summary["rebalances"].size() >= 2);
  const json& rb = r->summary["rebalances"][1];
  CHECK(rb["start_us"] == 1003000);
  CHECK(rb["end_us"] == 6300000);
  const auto c = check_path(*r, 1);
  CHECK(c.at("assignment_interval_ms") == 5101000 - 1003000);  // 4098 ms, the dominant cause
  CHECK(c.at("heartbeat_wait_ms") == 6100000 - 5301000);
  // A: RECONCILING at 5102 -> reconcile at 5200, commit back at 5202 -> revoke at 5224,
  // assignment at 5300; B: RECONCILING at 6102 -> reconcile at 6200 -> assignment at 6300.
  CHECK(c.at("poll_wait_ms") == (5200000 - 5102000) + (5224000 - 5202000) + (5300000 - 5224000) +
                                    (6200000 - 6102000) + (6300000 - 6200000));
  // 5101 -> 5102, OffsetCommit 2, A's ack 1, B's heartbeat 1 + 1.
  CHECK(c.at("network_ms") == 6000);
  CHECK(reports::critical_path_sentence(nlohmann::ordered_json::parse(rb.dump()), 2) ==
        "R2 took 5,297 ms: 4,098 ms the coordinator holding back the target assignment "
        "(group.consumer.assignment.interval.ms), 799 ms B waiting for its next heartbeat "
        "(group.consumer.heartbeat.interval.ms), 394 ms B waiting for its next poll() (processing "
        "between polls; "
        "max.poll.interval.ms bounds it), 6 ms network.");
  // The cluster's values for the coordinator's causes, B's own max.poll.interval.ms.
  const reports::ConfigValues config{{"A", {{"max.poll.interval.ms", "300000"}}},
                                     {"B", {{"max.poll.interval.ms", "60000"}}},
                                     {"",
                                      {{"group.consumer.assignment.interval.ms", "5000"},
                                       {"group.consumer.heartbeat.interval.ms", "5000"}}}};
  CHECK(reports::critical_path_sentence(nlohmann::ordered_json::parse(rb.dump()), 2, &config) ==
        "R2 took 5,297 ms: 4,098 ms the coordinator holding back the target assignment "
        "(group.consumer.assignment.interval.ms=5000), 799 ms B waiting for its next heartbeat "
        "(group.consumer.heartbeat.interval.ms=5000), 394 ms B waiting for its next poll() "
        "(processing between polls; "
        "max.poll.interval.ms=60000 bounds it), 6 ms network.");
  bool waited = false;
  for (const auto& s : rb["critical_path"]["steps"])
    if (s.contains("waited_for")) waited = s["waited_for"].value("actor", "") == "B";
  CHECK(waited);
}

// Issue 34's flaw: Kafka computes a deferred target assignment on the first heartbeat at or after
// the previous one's assignment_timestamp + group.consumer.assignment.interval.ms
// (canComputeNextTargetAssignment); the member's wait after the interval is a heartbeat wait.
TEST_CASE(
    "critical path: a deferred target assignment splits into the interval and the heartbeat after "
    "it") {
  // The run above with the interval known (summary.json's config): the previous target at 3 ms
  // (assignment_timestamp 3), so the interval ends at 5003 ms. B's join opened the rebalance at
  // 1003: 5003 - 1003 = 4000 ms of assignment interval; then the wait for A's heartbeat, sent at
  // 5100 (97 ms), and its way to the coordinator, 5100 -> 5101 (1 ms). The rest as above.
  const auto r =
      run(scenario("consumer", {consumer("A"), consumer("B")}, {start(0, "A"), start(1000, "B")},
                   {{"group.consumer.assignment.interval.ms", 5000}}),
          "consumer", 5000);
  REQUIRE(r->summary["rebalances"].size() >= 2);
  const json& rb = r->summary["rebalances"][1];
  CHECK(rb["start_us"] == 1003000);
  CHECK(rb["end_us"] == 6300000);
  const auto c = check_path(*r, 1);
  CHECK(c.at("assignment_interval_ms") == 5003000 - 1003000);
  CHECK(c.at("heartbeat_wait_ms") == (5100000 - 5003000) + (6100000 - 5301000));
  CHECK(c.at("poll_wait_ms") == (5200000 - 5102000) + (5224000 - 5202000) + (5300000 - 5224000) +
                                    (6200000 - 6102000) + (6300000 - 6200000));
  CHECK(c.at("network_ms") == 6000 + 1000);
  // The interval's end is a step of its own; the target's step waited for A's heartbeat.
  const json& steps = rb["critical_path"]["steps"];
  std::size_t at = steps.size();
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i]["what"] == "group.consumer.assignment.interval.ms elapsed") at = i;
  REQUIRE(at + 1 < steps.size());
  CHECK(steps[at]["t_us"] == 5003000);
  CHECK(steps[at]["event"] == "timer");
  CHECK(steps[at]["causes"] == json{{"assignment_interval_ms", 4000.0}});
  CHECK(steps[at + 1]["what"] == "target assignment computed");
  CHECK(steps[at + 1]["t_us"] == 5101000);
  CHECK(steps[at + 1]["causes"] == json{{"heartbeat_wait_ms", 97.0}, {"network_ms", 1.0}});
  CHECK(steps[at + 1]["waited_for"] ==
        json{{"t_us", 5100000}, {"actor", "A"}, {"what", "ConsumerGroupHeartbeat request"}});
  CHECK(reports::critical_path_sentence(nlohmann::ordered_json::parse(rb.dump()), 2) ==
        "R2 took 5,297 ms: 4,000 ms the coordinator holding back the target assignment "
        "(group.consumer.assignment.interval.ms), 896 ms B waiting for its next heartbeat "
        "(group.consumer.heartbeat.interval.ms), 394 ms B waiting for its next poll() (processing "
        "between polls; "
        "max.poll.interval.ms bounds it), 7 ms network.");
}

TEST_CASE("critical path: the same causes without the heartbeats that change nothing") {
  // The standard trace level leaves out heartbeats that carry and cause no change: the causes
  // and steps must not move.
  for (const auto& [doc, variant] : std::vector<std::pair<json, std::string>>{
           {scenario("classic-eager", {consumer("A"), consumer("B")},
                     {start(0, "A"), start(10000, "B")}, {{"group.initial.rebalance.delay.ms", 0}}),
            "classic-eager"},
           {scenario("consumer", {consumer("A"), consumer("B")}, {start(0, "A"), start(1000, "B")},
                     {{"group.consumer.assignment.interval.ms", 5000}}),
            "consumer"}}) {
    const auto r = run(doc, variant);
    const auto fewer = without_idle_heartbeats(r->lines);
    REQUIRE(fewer.size() < r->lines.size());
    const json s = testing::summary_of(fewer);
    REQUIRE(s["rebalances"].size() == r->summary["rebalances"].size());
    for (std::size_t i = 0; i < s["rebalances"].size(); ++i)
      CHECK(s["rebalances"][i]["critical_path"] == r->summary["rebalances"][i]["critical_path"]);
  }
}

TEST_CASE("critical path: report.html draws each rebalance's path and lists its steps") {
  const auto r =
      run(scenario("classic-eager", {consumer("A"), consumer("B")},
                   {start(0, "A"), start(10000, "B")}, {{"group.initial.rebalance.delay.ms", 0}}),
          "classic-eager");
  std::string text;
  for (const auto& l : r->lines) text += l + "\n";
  auto summary = nlohmann::ordered_json::parse(r->summary.dump());
  summary["produced_by"] = {
      {"simulator", "rebalance-sim"}, {"version", "test"}, {"scenario_file", "critical-path.json"}};
  const std::string html = reports::render_html_report({reports::build_timeline(text, summary)});
  // Over the timeline: a line through the path's steps, one dot per step.
  const auto at = html.find("<g class=\"critical-path\" data-path=\"2\"");
  REQUIRE(at != std::string::npos);
  const auto end = html.find("</g>", at);
  std::size_t dots = 0;
  for (auto p = html.find("<circle", at); p != std::string::npos && p < end;
       p = html.find("<circle", p + 1))
    ++dots;
  CHECK(dots == r->summary["rebalances"][1]["critical_path"]["steps"].size());
  // Beside the sequence view: the steps with their causes, under the explain sentence.
  CHECK(html.find("<table class=\"critical-path\" data-variant=\"classic-eager\" "
                  "data-seq=\"2\"><caption>R2 took 2,009 ms: "
                  "2,001 ms A waiting for its next heartbeat (heartbeat.interval.ms), 8 ms "
                  "network.</caption>") != std::string::npos);
}

TEST_CASE(
    "critical path: summary.json keeps at most kMaxPathSteps steps, those that carry the time, and "
    "counts the others") {
  using reports::Cause;
  using reports::PathStep;
  // 1,000 steps: step i carries i % 250 µs of network. Between the first and the last (999, 249
  // µs), 201..248 µs stand on 4 steps each (192), 249 µs on 3 (249, 499, 749): 195 steps over
  // 200 µs; steps 250, 500 and 750 carry none. Kept: the first, the last and the 198 longest: the
  // 195 and the first three of the four 200 µs steps.
  std::vector<PathStep> steps(1000);
  for (std::size_t i = 1; i < steps.size(); ++i) {
    steps[i].t_us = static_cast<std::int64_t>(i);
    steps[i].causes.emplace_back(Cause::Network, static_cast<std::int64_t>(i % 250));
  }
  const auto keep = reports::kept_steps(steps);
  REQUIRE(keep.size() == 1000);
  std::size_t kept = 0;
  for (const bool k : keep) kept += k ? 1 : 0;
  CHECK(kept == reports::kMaxPathSteps);
  CHECK(keep.front());
  CHECK(keep.back());
  for (std::size_t i = 1; i + 1 < steps.size(); ++i) {
    const std::size_t v = i % 250;
    if (v > 200) CHECK_MESSAGE(keep[i], i);
    if (v < 200) CHECK_MESSAGE(!keep[i], i);
  }
  // Of the four 200 µs steps, the earlier three (200, 450, 700; not 950).
  CHECK(keep[200]);
  CHECK(keep[450]);
  CHECK(keep[700]);
  CHECK(!keep[950]);
  // A short path keeps every step, those without time too.
  std::vector<PathStep> few(5);
  for (const bool k : reports::kept_steps(few)) CHECK(k);
}
