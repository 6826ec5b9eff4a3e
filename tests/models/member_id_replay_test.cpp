// A recording's member ids replayed (ConsumerSpec::member_ids,
// models/protocol/member_id_replay.hpp; docs/fidelity.md, finding 21): which member gets which
// partitions follows the order of the members' ids, and given the ids Kafka drew in a recording the
// simulator takes the recording's outcome. The ids below are the recordings' own
// (fidelity/real/*/trace.jsonl, `member.id` lines). Idealized machine (tests/trace_helpers.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>

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
    "member ids replayed, KIP-848: every target of scale-out-10's three recordings, its members in "
    "Kafka's HashMap order and each member's partitions in its HashSet's order") {
  // The joins are 1,500 ms apart (docs/fidelity.md, finding 31): each join's own heartbeat
  // computes its target in every run, so given a run's member ids the simulator must write that
  // run's target records exactly, ten computations (epochs 2 to 11; 49, 50 and 50 member records),
  // in the record's order of members and of partitions. The member order is
  // TargetAssignmentBuilder's HashMap<String, ...> filled from the group's timeline table (finding
  // 28): run 1's c5 and c6 share bucket 11 and a slot, and epoch 8 has c6 before c5, epoch 7 (c6
  // the joiner, put last) c5 before c6. The partition order is
  // UniformHomogeneousAssignmentBuilder's sets (finding 31): at epoch 4 c3 receives c2's
  // released 50..59 and then c1's 20..29 (runs 1 and 3; run 2 walks c1 first) into a HashSet grown
  // to 32 buckets, and at epoch 5 keeps the first 15 it walks, t-20..25 and t-50..58 (runs 1 and 3)
  // or t-20..26 and t-50..57 (run 2). One line per target computation: "c3 t-50 t-51 ...; c2 t-30
  // ...", records and partitions in their order.
  const auto targets_of = [](const std::vector<json>& trace) {
    std::vector<std::string> out;
    bool in_target = false;
    for (const auto& e : trace) {
      if (e.value("type", "") != "record") continue;
      if (e.value("record", "") == "ConsumerGroupTargetAssignmentMember" &&
          !e.value("tombstone", false)) {
        if (!in_target) out.emplace_back();
        in_target = true;
        std::string& line = out.back();
        line += (line.empty() ? "" : "; ") + e.value("consumer", "");
        for (const auto& p : e.value("partitions", std::vector<std::string>{})) line += " " + p;
      } else {
        in_target = false;
      }
    }
    return out;
  };
  const auto spec = testing::load_ideal("scenarios/consumer/scale-out-10.json");
  for (const char* run : {"consumer", "run-2/consumer", "run-3/consumer"}) {
    INFO(run);
    std::ifstream in(std::string(RSIM_SOURCE_DIR) + "/fidelity/real/scale-out-10/" + run +
                     "/trace.jsonl");
    REQUIRE(in.good());
    std::vector<json> recorded;
    std::map<std::string, std::vector<std::string>> ids;
    for (std::string line; std::getline(in, line);) {
      recorded.push_back(json::parse(line));
      const auto& e = recorded.back();
      if (e.value("record", "") == "ConsumerGroupMemberMetadata" && !e.value("tombstone", false))
        ids.try_emplace(e.value("consumer", ""),
                        std::vector<std::string>{e.value("member_id", "")});
    }
    REQUIRE(ids.size() == 10);
    const auto real = targets_of(recorded);
    REQUIRE(real.size() == 10);
    const auto sim = targets_of(testing::parse_trace(
        rsim::run_scenario(with_ids(spec, ids), "consumer", spec.seed).trace_lines));
    CHECK(sim.size() == real.size());
    for (std::size_t i = 0; i < std::min(sim.size(), real.size()); ++i) {
      INFO("target " << i << " (epoch " << i + 2 << ")");
      CHECK(sim[i] == real[i]);
    }
  }
}

TEST_CASE(
    "member ids replayed, online upgrade: the conversion writes the classic members in the "
    "order of Kafka's maps (rolling-upgrade-to-consumer, runs 1 and 2's ids)") {
  // A's first ConsumerGroupHeartbeat converts the classic group of B and C:
  // ConsumerGroup.fromClassicGroup puts them into the consumer group's TimelineHashMap in the
  // order of the classic group's HashMap (allMembers()), and createConsumerGroupRecords walks the
  // TimelineHashMap. Run 1's ids (B 2bd25fd8..., C ec77474c...) share HashMap bucket 0 (so B,
  // which joined first, comes first) and timeline slot 0, where C, put last, comes first: run 1
  // wrote C's records before B's. Run 2's ids (B 176c834b..., C 6ab150e8...) are in buckets 4
  // and 2, so C is put first, and again share slot 0: run 2 wrote B's first. Put in the classic
  // image's order, B came first with both.
  const auto conversion_order = [](const std::map<std::string, std::vector<std::string>>& ids) {
    const auto spec =
        with_ids(testing::load_ideal("scenarios/migration/rolling-upgrade-to-consumer.json"), ids);
    const auto trace = testing::parse_trace(
        rsim::run_scenario(spec, "classic-cooperative", spec.seed).trace_lines);
    std::vector<std::string> out;  // the first ConsumerGroupMemberMetadata records, in order
    for (const auto& e : testing::events(trace, "record")) {
      if (e.value("record", "") == "ConsumerGroupMemberMetadata" && !e.value("tombstone", false))
        out.push_back(e.value("consumer", ""));
      if (out.size() == 2) break;
    }
    return out;
  };
  CHECK(conversion_order(
            {{"A", {"consumer-g-1-e965344b-67f4-4822-aafe-336535b67591", "rDXFmc3IQC6V5OQOYkvMQw"}},
             {"B", {"consumer-g-1-2bd25fd8-9b11-49e8-b96e-31ed12289d84", "z_hlmSeFSam9D0d1KlWaew"}},
             {"C",
              {"consumer-g-1-ec77474c-640f-4ba4-8da6-b123bca8dce4", "TRXs_N4nSMGGxFwvuM78zQ"}}}) ==
        std::vector<std::string>{"C", "B"});
  CHECK(conversion_order(
            {{"A", {"consumer-g-1-a5bb19ba-d2b8-4350-8dbc-f8f7fc70e647", "ok4VtFAcQu6SKndQsnzOyw"}},
             {"B", {"consumer-g-1-176c834b-4f64-4df5-8bf4-34c827aec0e5", "rFUEwObTQ8WRMT4YKLyH8g"}},
             {"C",
              {"consumer-g-1-6ab150e8-72e8-4a69-b956-3f6d87500de7", "8F67cjalQkiZkzCA8bOfVw"}}}) ==
        std::vector<std::string>{"B", "C"});
}
