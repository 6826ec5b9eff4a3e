#include "tools/conformance/client_conformance.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "models/assignors/client_assignor.hpp"
#include "models/assignors/client_sticky.hpp"

namespace rsim::assignors {

namespace {

using nlohmann::json;
using PartitionSet = std::set<TopicPartition>;
using Transfers = std::optional<std::map<TopicPartition, std::string>>;

// Kafka's test fixture re-subscribes members with this generation in the follow-up loop.
constexpr std::int32_t kFollowupGeneration = 1;
// CooperativeStickyAssignorTest allows at most this many follow-up rebalances.
constexpr int kMaxFollowups = 4;

// A failed expectation; caught per case and reported as its `detail`.
struct Mismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string show(const PartitionSet& s) {
  std::vector<std::string> parts;
  for (const auto& tp : s) parts.push_back(tp.str());
  return "[" + join(parts) + "]";
}

PartitionSet as_set(const TopicPartitions& tps) {
  return {tps.begin(), tps.end()};
}

// One call of an assignor: what went in and what came out.
struct Call {
  ClientAssignorInput input;
  ClientAssignment output;
  Transfers transfers;
  bool has_transfers = false;  // only the sticky assignors report the map
};

// A step's calls: the first one, and the last one of the cooperative follow-up loop.
struct StepRun {
  Call initial;
  Call final;
};

Call run_call(const std::string& assignor, const ClientAssignorInput& input) {
  Call call;
  call.input = input;
  if (assignor == "sticky" || assignor == "cooperative-sticky") {
    auto outcome = assign_sticky(
        input, assignor == "sticky" ? StickyFlavor::Eager : StickyFlavor::Cooperative);
    call.output = std::move(outcome.assignment);
    call.transfers = std::move(outcome.transferring_ownership);
    call.has_transfers = true;
  } else {
    call.output = assign_client(assignor, input);
  }
  return call;
}

const ClientMember* find_member(const ClientAssignorInput& input, const std::string& id) {
  for (const auto& m : input.members) {
    if (m.member_id == id) return &m;
  }
  return nullptr;
}

const TopicPartitions& held(const ClientAssignment& a, const std::string& member) {
  static const TopicPartitions kNone;
  const auto it = a.find(member);
  return it == a.end() ? kNone : it->second;
}

// ---- building inputs -----------------------------------------------------------------------

TopicPartitions parse_pairs(const json& pairs) {
  TopicPartitions out;
  for (const auto& p : pairs)
    out.push_back(TopicPartition{p.at(0).get<std::string>(), p.at(1).get<std::int32_t>()});
  return out;
}

ClientAssignorInput build_input(const json& step, const std::vector<StepRun>& done) {
  ClientAssignorInput input;
  const json topics = step.value("topics", json::object());
  for (const auto& [topic, count] : topics.items()) {
    input.partitions_per_topic[topic] = count.get<std::int32_t>();
  }
  const json partition_racks = step.value("partition_racks", json::object());
  for (const auto& [topic, racks] : partition_racks.items()) {
    auto& per_partition = input.partition_racks[topic];
    for (const auto& r : racks) per_partition.push_back(r.get<std::vector<std::string>>());
  }
  const json config = step.value("assignor_config", json::object());
  input.prefer_rack_aware_logic = config.value("prefer_rack_aware_logic", false);
  for (const auto& m : step.at("members")) {
    ClientMember member;
    member.member_id = m.at("id").get<std::string>();
    member.topics = m.value("subscriptions", std::vector<std::string>{});
    if (m.contains("rack") && !m.at("rack").is_null())
      member.rack = m.at("rack").get<std::string>();
    if (m.contains("instance_id") && !m.at("instance_id").is_null()) {
      member.group_instance_id = m.at("instance_id").get<std::string>();
    }
    if (m.contains("generation") && !m.at("generation").is_null()) {
      member.generation = m.at("generation").get<std::int32_t>();
    }
    if (m.contains("owned")) {
      const json& owned = m.at("owned");
      if (owned.is_object() && owned.contains("from_step")) {
        const auto k = owned.at("from_step").get<std::size_t>();
        if (k >= done.size())
          throw Mismatch("owned refers to step " + std::to_string(k) + " not run yet");
        member.owned_partitions = held(done[k].final.output, member.member_id);
      } else {
        member.owned_partitions = parse_pairs(owned);
      }
    }
    input.members.push_back(std::move(member));
  }
  return input;
}

// ---- the cooperative follow-up loop ------------------------------------------------------------

// Partitions that some member owned but no longer gets; throws if one of them is also handed
// to a new member in the same round (KIP-429 forbids that).
PartitionSet revoked_in(const Call& call) {
  PartitionSet added;
  PartitionSet revoked;
  for (const auto& m : call.input.members) {
    const PartitionSet owned = as_set(m.owned_partitions);
    const PartitionSet got = as_set(held(call.output, m.member_id));
    for (const auto& tp : got) {
      if (owned.count(tp) == 0) added.insert(tp);
    }
    for (const auto& tp : owned) {
      if (got.count(tp) == 0) revoked.insert(tp);
    }
  }
  PartitionSet both;
  std::set_intersection(added.begin(), added.end(), revoked.begin(), revoked.end(),
                        std::inserter(both, both.end()));
  if (!both.empty()) throw Mismatch("partitions assigned while being revoked: " + show(both));
  return revoked;
}

StepRun run_step(const std::string& assignor, const json& step, const std::vector<StepRun>& done) {
  StepRun run;
  run.initial = run_call(assignor, build_input(step, done));
  run.final = run.initial;
  if (!step.value("followups", false)) return run;
  int rounds = 0;
  while (!revoked_in(run.final).empty()) {
    ClientAssignorInput next = run.final.input;
    for (auto& m : next.members) {
      m.owned_partitions = held(run.final.output, m.member_id);
      m.generation = kFollowupGeneration;
    }
    run.final = run_call(assignor, next);
    if (++rounds > kMaxFollowups) throw Mismatch("still revoking after 4 follow-up rebalances");
  }
  return run;
}

// ---- expectations --------------------------------------------------------------------------

std::map<std::string, std::set<std::int32_t>> by_topic(const TopicPartitions& tps) {
  std::map<std::string, std::set<std::int32_t>> out;
  for (const auto& tp : tps) out[tp.topic].insert(tp.partition);
  return out;
}

std::string show_by_topic(const std::map<std::string, std::set<std::int32_t>>& m) {
  std::vector<std::string> parts;
  for (const auto& [topic, ps] : m) {
    std::vector<std::string> nums;
    for (const auto p : ps) nums.push_back(std::to_string(p));
    parts.push_back(topic + ":[" + join(nums) + "]");
  }
  return "{" + join(parts) + "}";
}

void compare_expected(const json& expected, const ClientAssignment& actual, bool member_set_exact,
                      const std::string& what) {
  for (const auto& [member, topics] : expected.items()) {
    std::map<std::string, std::set<std::int32_t>> want;
    for (const auto& [topic, ps] : topics.items()) {
      if (!ps.empty()) want[topic] = ps.get<std::set<std::int32_t>>();
    }
    const auto it = actual.find(member);
    if (it == actual.end())
      throw Mismatch(what + ": member " + member + " missing from the result");
    const auto got = by_topic(it->second);
    if (got != want) {
      throw Mismatch(what + ": " + member + " got " + show_by_topic(got) + ", expected " +
                     show_by_topic(want));
    }
    if (it->second.size() != as_set(it->second).size()) {
      throw Mismatch(what + ": " + member + " holds a partition twice");
    }
  }
  if (member_set_exact) {
    std::set<std::string> want;
    for (const auto& [member, _] : expected.items()) want.insert(member);
    std::set<std::string> got;
    for (const auto& [member, _] : actual) got.insert(member);
    if (want != got) {
      throw Mismatch(what + ": result members {" + join({got.begin(), got.end()}) +
                     "}, expected {" + join({want.begin(), want.end()}) + "}");
    }
  }
}

// The test compared Kafka's lists in order; so do we (the order feeds later steps' `owned`).
void compare_ordered(const json& expected, const ClientAssignment& actual,
                     const std::string& what) {
  for (const auto& [member, pairs] : expected.items()) {
    const TopicPartitions want = parse_pairs(pairs);
    const TopicPartitions& got = held(actual, member);
    if (got != want) {
      throw Mismatch(what + ": " + member + " got [" + join(to_strings(got)) + "], expected [" +
                     join(to_strings(want)) + "]");
    }
  }
}

// ---- checks ------------------------------------------------------------------------------

void check_valid(const Call& call, bool balanced) {
  std::map<TopicPartition, std::string> owner;
  for (const auto& [member, tps] : call.output) {
    const ClientMember* m = find_member(call.input, member);
    if (m == nullptr) throw Mismatch("result names unknown member " + member);
    for (const auto& tp : tps) {
      const auto topic = call.input.partitions_per_topic.find(tp.topic);
      if (topic == call.input.partitions_per_topic.end() || tp.partition < 0 ||
          tp.partition >= topic->second) {
        throw Mismatch(member + " got " + tp.str() + ", which does not exist");
      }
      if (std::find(m->topics.begin(), m->topics.end(), tp.topic) == m->topics.end()) {
        throw Mismatch(member + " got " + tp.str() + " without subscribing to " + tp.topic);
      }
      const auto [it, fresh] = owner.emplace(tp, member);
      if (!fresh) throw Mismatch(tp.str() + " assigned to both " + it->second + " and " + member);
    }
  }
  if (!balanced) return;
  for (auto a = call.output.begin(); a != call.output.end(); ++a) {
    for (auto b = std::next(a); b != call.output.end(); ++b) {
      const auto na = static_cast<long>(a->second.size());
      const auto nb = static_cast<long>(b->second.size());
      if (std::labs(na - nb) <= 1) continue;
      const auto ta = by_topic(a->second);
      for (const auto& [topic, _] : by_topic(b->second)) {
        if (ta.count(topic) > 0) {
          throw Mismatch("unbalanced: " + a->first + " has " + std::to_string(na) + ", " +
                         b->first + " has " + std::to_string(nb) + ", both hold topic " + topic);
        }
      }
    }
  }
}

std::size_t member_size(const ClientAssignment& a, const std::string& member) {
  return held(a, member).size();
}

const TopicPartitions& step_holding(const std::vector<StepRun>& done, const json& check,
                                    const std::string& member) {
  const auto k = check.at("step").get<std::size_t>();
  if (k >= done.size())
    throw Mismatch("check refers to step " + std::to_string(k) + " not run yet");
  return held(done[k].final.output, member);
}

bool subset(const PartitionSet& a, const PartitionSet& b) {
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

// Kafka's isSticky(): within one topic, no two members may hand partitions to each other.
void check_no_movement_cycles(const Call& call) {
  std::map<TopicPartition, std::string> before;
  for (const auto& m : call.input.members) {
    for (const auto& tp : m.owned_partitions) before.emplace(tp, m.member_id);
  }
  std::map<std::string, std::set<std::pair<std::string, std::string>>>
      moves;  // topic -> (from, to)
  for (const auto& [member, tps] : call.output) {
    for (const auto& tp : tps) {
      const auto it = before.find(tp);
      if (it != before.end() && it->second != member) moves[tp.topic].emplace(it->second, member);
    }
  }
  for (const auto& [topic, pairs] : moves) {
    for (const auto& [from, to] : pairs) {
      if (pairs.count({to, from}) > 0) {
        throw Mismatch("movement cycle in topic " + topic + " between " + from + " and " + to);
      }
    }
  }
}

std::set<std::string> racks_of(const ClientAssignorInput& input, const TopicPartition& tp) {
  const auto it = input.partition_racks.find(tp.topic);
  if (it == input.partition_racks.end() ||
      static_cast<std::size_t>(tp.partition) >= it->second.size()) {
    return {};
  }
  const auto& racks = it->second[static_cast<std::size_t>(tp.partition)];
  return {racks.begin(), racks.end()};
}

/// `transferring_ownership` / `transferring_ownership_size`: the cooperative sticky assignor's
/// partitions moving between members.
void check_transfers(const std::string& name, const json& check, const Call& call) {
  if (!call.has_transfers) throw Mismatch("assignor does not report transferring ownership");
  const json& want = check.at("equals");
  if (name == "transferring_ownership_size") {
    if (!call.transfers) throw Mismatch("transferring ownership is null (general path)");
    const auto size = static_cast<long>(call.transfers->size());
    if (size != want.get<long>()) {
      throw Mismatch("transferring ownership size is " + std::to_string(size) + ", expected " +
                     std::to_string(want.get<long>()));
    }
    return;
  }
  if (want.is_null()) {
    if (call.transfers)
      throw Mismatch("transferring ownership computed, expected null (general path)");
    return;
  }
  if (!call.transfers)
    throw Mismatch("transferring ownership is null (general path), expected a map");
  std::map<std::string, std::string> got;
  for (const auto& [tp, member] : *call.transfers) got[tp.str()] = member;
  const auto expected = want.get<std::map<std::string, std::string>>();
  if (got != expected) {
    std::vector<std::string> g;
    for (const auto& [k, v] : got) g.push_back(k + "->" + v);
    std::vector<std::string> e;
    for (const auto& [k, v] : expected) e.push_back(k + "->" + v);
    throw Mismatch("transferring ownership {" + join(g) + "}, expected {" + join(e) + "}");
  }
}

/// The checks of one member's partitions against a member, an earlier step or its owned
/// partitions. Returns false for a check it does not know.
bool run_member_check(const std::string& name, const json& check, const Call& call,
                      const std::vector<StepRun>& done) {
  const ClientAssignment& out = call.output;
  if (name == "contains_step_assignment" || name == "contained_in_step_assignment") {
    const auto member = check.at("member").get<std::string>();
    const PartitionSet then = as_set(step_holding(done, check, member));
    const PartitionSet now = as_set(held(out, member));
    const bool ok = name == "contains_step_assignment" ? subset(then, now) : subset(now, then);
    if (!ok)
      throw Mismatch(name + ": " + member + " has " + show(now) + ", at step had " + show(then));
  } else if (name == "intersects_step_assignment") {
    const auto member = check.at("member").get<std::string>();
    const PartitionSet then =
        as_set(step_holding(done, check, check.at("of_member").get<std::string>()));
    const PartitionSet now = as_set(held(out, member));
    PartitionSet both;
    std::set_intersection(now.begin(), now.end(), then.begin(), then.end(),
                          std::inserter(both, both.end()));
    if (both.empty()) throw Mismatch(member + " shares nothing with the step's " + show(then));
  } else if (name == "disjoint") {
    const auto members = check.at("members").get<std::vector<std::string>>();
    const PartitionSet a = as_set(held(out, members.at(0)));
    const PartitionSet b = as_set(held(out, members.at(1)));
    PartitionSet both;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(both, both.end()));
    if (!both.empty()) throw Mismatch(members[0] + " and " + members[1] + " share " + show(both));
  } else if (name == "subset_of_owned") {
    const auto member = check.at("member").get<std::string>();
    const ClientMember* m = find_member(call.input, member);
    if (m == nullptr) throw Mismatch("unknown member " + member);
    const PartitionSet now = as_set(held(out, member));
    if (!subset(now, as_set(m->owned_partitions))) {
      throw Mismatch(member + " got " + show(now) + ", not within owned " +
                     show(as_set(m->owned_partitions)));
    }
  } else if (name == "keeps_step_partition") {
    const auto k = check.at("step").get<std::size_t>();
    if (k >= done.size()) throw Mismatch("check refers to a step not run yet");
    for (const auto& [member, tps] : done[k].final.output) {
      if (out.count(member) == 0) continue;
      const PartitionSet now = as_set(held(out, member));
      for (const auto& tp : tps) {
        if (now.count(tp) == 0) throw Mismatch(member + " lost " + tp.str());
      }
    }
  } else if (name == "same_as_step") {
    const auto member = check.at("member").get<std::string>();
    const PartitionSet then =
        as_set(step_holding(done, check, check.at("of_member").get<std::string>()));
    if (as_set(held(out, member)) != then)
      throw Mismatch(member + " differs from the step's " + show(then));
  } else if (name == "no_member_missing") {
    for (const auto& member : check.at("members")) {
      if (out.count(member.get<std::string>()) == 0)
        throw Mismatch(member.get<std::string>() + " missing");
    }
  } else {
    return false;
  }
  return true;
}

void run_check(const json& check, const StepRun& run, const std::vector<StepRun>& done) {
  const std::string name = check.at("check").get<std::string>();
  const Call& call = check.value("phase", std::string()) == "initial" ? run.initial : run.final;
  const ClientAssignment& out = call.output;
  const auto expect_eq = [&](long got, long want, const std::string& what) {
    if (got != want) {
      throw Mismatch(what + " is " + std::to_string(got) + ", expected " + std::to_string(want));
    }
  };

  if (name == "valid_and_balanced" || name == "valid") {
    check_valid(call, name == "valid_and_balanced");
  } else if (name == "fully_balanced") {
    if (out.empty()) return;
    std::size_t lo = SIZE_MAX;
    std::size_t hi = 0;
    for (const auto& [_, tps] : out) {
      lo = std::min(lo, tps.size());
      hi = std::max(hi, tps.size());
    }
    if (hi > lo + 1) {
      throw Mismatch("not fully balanced: sizes from " + std::to_string(lo) + " to " +
                     std::to_string(hi));
    }
  } else if (name == "rack_mismatch_count") {
    long mismatched = 0;
    for (const auto& m : call.input.members) {
      if (!m.rack) continue;
      for (const auto& tp : held(out, m.member_id))
        mismatched += racks_of(call.input, tp).count(*m.rack) == 0;
    }
    expect_eq(mismatched, check.at("equals").get<long>(), "rack mismatch count");
  } else if (name == "transferring_ownership" || name == "transferring_ownership_size") {
    check_transfers(name, check, call);
  } else if (name == "sticky_no_movement_cycles") {
    check_no_movement_cycles(call);
  } else if (name == "topic_count_each") {
    const auto topic = check.at("topic").get<std::string>();
    for (const auto& [member, tps] : out) {
      const auto n =
          std::count_if(tps.begin(), tps.end(), [&](const auto& tp) { return tp.topic == topic; });
      expect_eq(static_cast<long>(n), check.at("equals").get<long>(),
                member + "'s count of " + topic);
    }
  } else if (name == "size") {
    const auto member = check.at("member").get<std::string>();
    expect_eq(static_cast<long>(member_size(out, member)), check.at("equals").get<long>(),
              member + "'s size");
  } else if (name == "sizes") {
    for (const auto& [member, n] : check.at("equals").items()) {
      expect_eq(static_cast<long>(member_size(out, member)), n.get<long>(), member + "'s size");
    }
  } else if (name == "sizes_one_of") {
    std::vector<long> sizes;
    for (const auto& member : check.at("members")) {
      sizes.push_back(static_cast<long>(member_size(out, member.get<std::string>())));
    }
    for (const auto& option : check.at("options")) {
      if (option.get<std::vector<long>>() == sizes) return;
    }
    std::vector<std::string> s;
    for (const long n : sizes) s.push_back(std::to_string(n));
    throw Mismatch("sizes [" + join(s) + "] are none of " + check.at("options").dump());
  } else if (name == "each_member_size_between") {
    for (const auto& [member, tps] : out) {
      const auto n = static_cast<long>(tps.size());
      if (n < check.at("min").get<long>() || n > check.at("max").get<long>()) {
        throw Mismatch(member + "'s size " + std::to_string(n) + " is outside " + check.dump());
      }
    }
  } else if (name == "total_assigned") {
    long total = 0;
    for (const auto& [_, tps] : out) total += static_cast<long>(tps.size());
    expect_eq(total, check.at("equals").get<long>(), "total assigned");
  } else if (name == "no_partition_assigned_twice") {
    std::map<TopicPartition, std::string> owner;
    for (const auto& [member, tps] : out) {
      for (const auto& tp : tps) {
        const auto [it, fresh] = owner.emplace(tp, member);
        if (!fresh) throw Mismatch(tp.str() + " assigned to both " + it->second + " and " + member);
      }
    }
  } else if (!run_member_check(name, check, call, done)) {
    throw Mismatch("unsupported check " + name);
  }
}

void verify_step(const json& step, const StepRun& run, const std::vector<StepRun>& done) {
  const bool exact = step.value("member_set_exact", false);
  if (step.contains("expected"))
    compare_expected(step.at("expected"), run.final.output, exact, "expected");
  if (step.contains("expected_initial")) {
    compare_expected(step.at("expected_initial"), run.initial.output, exact, "expected_initial");
  }
  if (step.contains("expected_ordered"))
    compare_ordered(step.at("expected_ordered"), run.final.output, "expected_ordered");
  if (step.contains("expected_initial_ordered")) {
    compare_ordered(step.at("expected_initial_ordered"), run.initial.output,
                    "expected_initial_ordered");
  }
  const json checks = step.value("checks", json::array());
  for (const auto& check : checks) {
    try {
      run_check(check, run, done);
    } catch (const Mismatch& e) {
      throw Mismatch(check.dump() + ": " + e.what());
    }
  }
}

ConformanceCaseResult run_case(const json& c) {
  ConformanceCaseResult result;
  result.id = c.value("id", c.value("name", std::string("?")));
  const bool generated =
      c.contains("generator") ||
      (c.contains("steps") && std::any_of(c.at("steps").begin(), c.at("steps").end(),
                                          [](const json& s) { return s.contains("generator"); }));
  if (generated) {
    result.passed = true;
    result.detail = "skipped: generator case (randomized or performance input; see property tests)";
    return result;
  }
  std::vector<StepRun> done;
  try {
    std::vector<json> steps;
    if (c.contains("steps")) {
      for (const auto& s : c.at("steps")) steps.push_back(s);
    } else {
      steps.push_back(c);
    }
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const json& step = steps[i];
      const std::string assignor = step.value("assignor", c.value("assignor", std::string()));
      if (!is_client_assignor(assignor))
        throw Mismatch("unknown client assignor '" + assignor + "'");
      StepRun run = run_step(assignor, step, done);
      try {
        verify_step(step, run, done);
      } catch (const Mismatch& e) {
        throw Mismatch(steps.size() > 1 ? "step " + std::to_string(i) + ": " + e.what() : e.what());
      }
      done.push_back(std::move(run));
    }
    result.passed = true;
  } catch (const std::exception& e) {
    result.passed = false;
    result.detail = e.what();
  }
  return result;
}

}  // namespace

std::vector<ConformanceCaseResult> run_client_assignor_vectors(const nlohmann::json& file_doc) {
  if (file_doc.value("kind", std::string()) != "client-assignor") {
    return {ConformanceCaseResult{file_doc.value("source", std::string("?")), false,
                                  "not a client-assignor vector file (kind '" +
                                      file_doc.value("kind", std::string()) + "')"}};
  }
  std::vector<ConformanceCaseResult> results;
  const json cases = file_doc.value("cases", json::array());
  for (const auto& c : cases) results.push_back(run_case(c));
  return results;
}

}  // namespace rsim::assignors
