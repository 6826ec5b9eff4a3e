// A recording's member ids replayed (ConsumerSpec::member_ids,
// models/protocol/member_id_replay.hpp; docs/fidelity.md, finding 21): which member gets which
// partitions follows the order of the members' ids, and given the ids Kafka drew in a recording the
// simulator takes the recording's outcome. The ids below are the recordings' own
// (fidelity/real/*/trace.jsonl, `member.id` lines). Idealized machine (tests/trace_helpers.hpp).
#include <doctest/doctest.h>

#include "trace_helpers.hpp"

namespace {
using json = nlohmann::json;

rsim::ScenarioSpec with_ids(rsim::ScenarioSpec spec,
                            const std::map<std::string, std::vector<std::string>>& ids) {
  for (auto& c : spec.consumers)
    if (const auto it = ids.find(c.name); it != ids.end()) c.member_ids = it->second;
  return spec;
}

json final_assignment(const rsim::ScenarioSpec& spec, const std::string& variant) {
  return testing::summary_of(
      rsim::run_scenario(spec, variant, spec.seed).trace_lines)["metrics"]["final_assignment"];
}

/// The member ids of `consumer` in order: each member.join's (classic: the coordinator's id), or
/// each member record's (KIP-848: the client's own id).
std::vector<std::string> joined_ids(const rsim::ScenarioSpec& spec, const std::string& variant,
                                    const std::string& consumer) {
  std::vector<std::string> out;
  const auto trace = testing::parse_trace(rsim::run_scenario(spec, variant, spec.seed).trace_lines);
  for (const auto& e : testing::events(trace, variant == "consumer" ? "record" : "member.join")) {
    const std::string id = e.value("member_id", "");
    if (e.value("consumer", "") == consumer && !id.empty() && (out.empty() || out.back() != id))
      out.push_back(id);
  }
  return out;
}

const char* kClassic = "scenarios/workload/cooperative-revocation-duplicates.json";
const char* kUniform = "scenarios/consumer/partition-increase.json";

}  // namespace

TEST_CASE(
    "member ids replayed, classic range: the recorded ids give each recording's assignment "
    "(cooperative-revocation-duplicates, classic-eager)") {
  const auto spec = testing::load_ideal(kClassic);
  // RangeAssignor orders the members by member id (both JVMs' client.id is consumer-g-1, so the
  // coordinator's UUID decides). The recordings of 2026-12-07 (finding 29): run 1, B
  // "...-2f2bec58-..." < A "...-e8eb114d-...": B first, B orders-0,1 and A orders-2,3, as Kafka
  // wrote it. Run 2: A "...-4d51a625-..." < B "...-7c8a31a1-...": A first, the reverse.
  const auto run1 = with_ids(spec, {{"A", {"consumer-g-1-e8eb114d-3319-49e3-9881-5e0670ec3f49"}},
                                    {"B", {"consumer-g-1-2f2bec58-e3af-4232-a2d5-bcb49c3156b5"}}});
  const auto run2 = with_ids(spec, {{"A", {"consumer-g-1-4d51a625-0ecf-47d3-86b5-01d0235d22e6"}},
                                    {"B", {"consumer-g-1-7c8a31a1-d4b6-4de3-b700-c1107303d783"}}});
  CHECK(final_assignment(run1, "classic-eager") ==
        json::parse(R"({"A":["orders-2","orders-3"],"B":["orders-0","orders-1"]})"));
  CHECK(final_assignment(run2, "classic-eager") ==
        json::parse(R"({"A":["orders-0","orders-1"],"B":["orders-2","orders-3"]})"));
  CHECK(joined_ids(run1, "classic-eager", "A") ==
        std::vector<std::string>{"consumer-g-1-e8eb114d-3319-49e3-9881-5e0670ec3f49"});
  // A member with no recorded id falls back to the seeded draw, the same one as without any
  // replay: the coordinator still draws for A, so B's draw is where it was.
  const auto only_a =
      with_ids(spec, {{"A", {"consumer-g-1-e8eb114d-3319-49e3-9881-5e0670ec3f49"}}});
  const auto seeded_b = joined_ids(spec, "classic-eager", "B");
  REQUIRE(seeded_b.size() == 1);
  CHECK(joined_ids(only_a, "classic-eager", "B") == seeded_b);
  CHECK(seeded_b.front() != "consumer-g-1-2f2bec58-e3af-4232-a2d5-bcb49c3156b5");
}

TEST_CASE(
    "member ids replayed, KIP-848 uniform: the recorded ids give each recording's assignment of "
    "the new partitions (partition-increase)") {
  const auto spec = testing::load_ideal(kUniform);
  // The uniform assignor hands the new partitions t-4..7 to the members in the iteration order of
  // a HashMap of member ids (finding 3): String.hashCode spread (h ^ h >>> 16), bucket & 15.
  // Run 1: B "0TlssJhuQWespuJsGv2oiA" bucket 7, A "FWRlRXz8R0iGYbIco5539Q" bucket 9: B first, B
  // t-4,t-5 and A t-6,t-7, as Kafka wrote it. Run 2: A "wUv6fkZlSCO0CME1i0zKTw" bucket 1, B
  // "bM8jza9nQPqzTsyEXI33Qw" bucket 8: A first, A t-4,t-5.
  const auto run1 =
      with_ids(spec, {{"A", {"FWRlRXz8R0iGYbIco5539Q"}}, {"B", {"0TlssJhuQWespuJsGv2oiA"}}});
  const auto run2 =
      with_ids(spec, {{"A", {"wUv6fkZlSCO0CME1i0zKTw"}}, {"B", {"bM8jza9nQPqzTsyEXI33Qw"}}});
  CHECK(final_assignment(run1, "consumer") ==
        json::parse(R"({"A":["t-0","t-1","t-6","t-7"],"B":["t-2","t-3","t-4","t-5"]})"));
  CHECK(final_assignment(run2, "consumer") ==
        json::parse(R"({"A":["t-0","t-1","t-4","t-5"],"B":["t-2","t-3","t-6","t-7"]})"));
  CHECK(joined_ids(run1, "consumer", "B") == std::vector<std::string>{"0TlssJhuQWespuJsGv2oiA"});
}

TEST_CASE(
    "member ids replayed, KIP-848: a target's members are put in Kafka's HashMap in the order of "
    "the group's timeline table, then the joining member (scale-out-10, run 2's ids)") {
  // TargetAssignmentBuilder.build() puts the group's members (a TimelineHashMap: slots by
  // Fibonacci hashing, each slot last-put first) and then the heartbeat's new member into a
  // HashMap<String, ...>; its iteration order is the uniform assignor's member order and the
  // order of the target records. Run 2's c1 "6Q_MzuxzSQWiXXbu5L5KZQ" and c2
  // "nnGhP2AhReetVWoG6mCtiA" share HashMap bucket 11 of 16 and timeline slot 1, where c2 (put
  // last) comes first: so c2 goes into the HashMap before c1, and Kafka wrote epoch 4's target
  // records for c3 (bucket 6), c2, c1 (records 15-17 of the recording). Put in id order, c1 came
  // before c2.
  const auto spec = with_ids(testing::load_ideal("scenarios/consumer/scale-out-10.json"),
                             {{"c1", {"6Q_MzuxzSQWiXXbu5L5KZQ"}},
                              {"c2", {"nnGhP2AhReetVWoG6mCtiA"}},
                              {"c3", {"gJQMy1MzQ8ehrP5Y0HJA_A"}},
                              {"c4", {"TQThBXHYRFmMxYJXa1T4Ig"}}});
  const auto trace =
      testing::parse_trace(rsim::run_scenario(spec, "consumer", spec.seed).trace_lines);
  std::vector<std::vector<std::string>> targets;  // the members of each target, in record order
  bool in_target = false;
  for (const auto& e : testing::events(trace, "record")) {
    const std::string name = e.value("record", "");
    if (name == "ConsumerGroupTargetAssignmentMember" && !e.value("tombstone", false)) {
      if (!in_target) targets.emplace_back();
      in_target = true;
      targets.back().push_back(e.value("consumer", ""));
    } else {
      in_target = false;
    }
  }
  REQUIRE(targets.size() >= 3);
  CHECK(targets[0] == std::vector<std::string>{"c1"});
  CHECK(targets[1] == std::vector<std::string>{"c1", "c2"});
  CHECK(targets[2] == std::vector<std::string>{"c3", "c2", "c1"});
}
