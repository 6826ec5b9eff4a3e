#include "tools/conformance/server_conformance.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/assignors/server_assignor.hpp"
#include "models/assignors/share_assignor.hpp"
#include "models/reconciliation/current_assignment_builder.hpp"

namespace rsim::assignors {
namespace {

using json = nlohmann::json;

/// member -> topic name -> partitions; topics without partitions are left out.
using Named = std::map<std::string, std::map<std::string, std::set<std::int32_t>>>;
using NamedMember = Named::mapped_type;

const json* field(const json& step, const json& the_case, const char* key) {
  if (step.contains(key)) return &step[key];
  if (the_case.contains(key)) return &the_case[key];
  return nullptr;
}

bool has_generator(const json& the_case) {
  if (the_case.contains("generator")) return true;
  if (!the_case.contains("steps")) return false;
  return std::any_of(the_case["steps"].begin(), the_case["steps"].end(),
                     [](const json& s) { return s.contains("generator"); });
}

std::size_t size_of(const NamedMember& m) {
  std::size_t n = 0;
  for (const auto& [topic, partitions] : m) n += partitions.size();
  return n;
}

std::string show(const NamedMember& m) {
  std::vector<std::string> parts;
  for (const auto& [topic, partitions] : m) {
    parts.push_back(fmt::format("{}:{}", topic, fmt::join(partitions, ",")));
  }
  return "{" + fmt::format("{}", fmt::join(parts, " ")) + "}";
}

NamedMember parse_named_member(const json& topics) {
  NamedMember out;
  for (const auto& [topic, partitions] : topics.items()) {
    std::set<std::int32_t> set;
    for (const auto& p : partitions) set.insert(p.get<std::int32_t>());
    if (!set.empty()) out.emplace(topic, std::move(set));
  }
  return out;
}

// --- server assignors -----------------------------------------------------------------------

struct Step {
  std::map<std::string, std::int32_t> topics;                  // name -> partition count
  std::map<std::string, std::string> name_of_id;               // topic id -> name
  std::map<std::string, std::set<std::string>> subscriptions;  // member -> names
  std::map<std::string, NamedMember> inputs;                   // member -> its current target
  Named result;
  ServerAssignment raw;
  bool ran = false;
};

class ServerCaseRunner {
 public:
  explicit ServerCaseRunner(const json& the_case) : case_(the_case) {}

  ConformanceCaseResult run() {
    ConformanceCaseResult result{case_.value("id", case_.value("name", "?")), false, ""};
    if (has_generator(case_)) {
      result.passed = true;
      result.detail = "skipped: generator case (inputs not listed; covered by property tests)";
      return result;
    }
    const json steps = case_.contains("steps") ? case_["steps"] : json::array({case_});
    for (std::size_t k = 0; k < steps.size(); ++k) {
      try {
        run_step(k, steps[k]);
      } catch (const std::exception& e) {
        fail(k, steps.size(), fmt::format("error: {}", e.what()));
      }
    }
    result.passed = failures_.empty();
    result.detail = fmt::format("{}", fmt::join(failures_, "; "));
    return result;
  }

 private:
  void fail(std::size_t k, std::size_t step_count, const std::string& what) {
    failures_.push_back(step_count > 1 ? fmt::format("step {}: {}", k, what) : what);
  }

  void run_step(std::size_t k, const json& step) {
    const std::size_t step_count = case_.contains("steps") ? case_["steps"].size() : 1;
    const auto problem = [&](const std::string& what) { fail(k, step_count, what); };
    steps_.emplace_back();
    Step& s = steps_.back();

    const json* assignor_field = field(step, case_, "assignor");
    std::string assignor = assignor_field ? assignor_field->get<std::string>() : "uniform";
    if (assignor == "server-range") assignor = "range";

    const json* topics = field(step, case_, "topics");
    const json* topic_ids = field(step, case_, "topic_ids");
    std::map<std::string, std::string> id_of;
    const auto id_for = [&](const std::string& name) {
      if (const auto it = id_of.find(name); it != id_of.end()) return it->second;
      std::string id = name;  // "random" ids: any distinct string will do
      if (topic_ids && topic_ids->is_object() && topic_ids->contains(name)) {
        id = (*topic_ids)[name].get<std::string>();
      }
      id_of.emplace(name, id);
      s.name_of_id.emplace(id, name);
      return id;
    };

    ServerAssignorInput input;
    if (topics) {
      for (const auto& [name, count] : topics->items()) {
        s.topics.emplace(name, count.get<std::int32_t>());
        input.topics.push_back({id_for(name), name, count.get<std::int32_t>()});
      }
    }
    const json* members = field(step, case_, "members");
    if (members) {
      for (const json& m : *members) {
        ServerMember member;
        member.member_id = m.at("id").get<std::string>();
        if (m.contains("instance_id") && !m["instance_id"].is_null()) {
          member.instance_id = m["instance_id"].get<std::string>();
        }
        if (m.contains("rack") && !m["rack"].is_null()) member.rack = m["rack"].get<std::string>();
        for (const json& t : m.value("subscriptions", json::array())) {
          member.subscribed_topics.push_back(t.get<std::string>());
          s.subscriptions[member.member_id].insert(t.get<std::string>());
        }
        s.subscriptions[member.member_id];  // present even when subscribing to nothing
        if (m.contains("assigned") && m["assigned"].is_object()) {
          const auto from = m["assigned"].at("from_step").get<std::size_t>();
          if (from >= k) throw std::invalid_argument("from_step must point to an earlier step");
          const auto it = steps_[from].raw.find(member.member_id);
          if (it != steps_[from].raw.end()) member.target = it->second;
        } else if (m.contains("assigned")) {
          const bool ordered = m.value("assigned_ordered", false);
          for (const json& pair : m["assigned"]) {
            const std::string id = id_for(pair.at(0).get<std::string>());
            auto [it, inserted] = member.target.try_emplace(id);
            if (inserted && ordered) member.target_topic_order.push_back(id);
            it->second.push_back(pair.at(1).get<std::int32_t>());
          }
          if (!ordered) {
            for (auto& [id, partitions] : member.target)
              std::sort(partitions.begin(), partitions.end());
          }
        }
        NamedMember named;
        for (const auto& [id, partitions] : member.target) {
          if (!partitions.empty())
            named[s.name_of_id.at(id)].insert(partitions.begin(), partitions.end());
        }
        s.inputs[member.member_id] = std::move(named);
        input.members.push_back(std::move(member));
      }
    }
    const json* order = field(step, case_, "member_iteration_order");
    if (order == nullptr || order->get<std::string>() == "sorted") {
      std::sort(
          input.members.begin(), input.members.end(),
          [](const ServerMember& a, const ServerMember& b) { return a.member_id < b.member_id; });
    }
    const json* type = field(step, case_, "subscription_type");
    input.subscription_type =
        type ? (type->get<std::string>() == "HETEROGENEOUS" ? SubscriptionType::Heterogeneous
                                                            : SubscriptionType::Homogeneous)
             : subscription_type_by_names(input.members);

    const json* expected_error = field(step, case_, "expected_error");
    AssignablePartitions assignable;
    if (const json* allowed = field(step, case_, "assignable_partitions")) {
      assignable.emplace();
      for (const auto& [name, partitions] : allowed->items()) {
        (*assignable)[id_for(name)] = partitions.get<std::vector<std::int32_t>>();
      }
    }
    try {
      s.raw = assignor == "simple" ? assign_share_simple(input, assignable)
                                   : assign_server(assignor, input);
    } catch (const PartitionAssignorError& e) {
      if (expected_error == nullptr) problem(fmt::format("assignor threw: {}", e.what()));
      return;
    }
    if (expected_error != nullptr) {
      problem(fmt::format("expected error {}, got an assignment", expected_error->dump()));
    }
    s.ran = true;
    for (const auto& [member, assignment] : s.raw) {
      NamedMember& named = s.result[member];
      for (const auto& [id, partitions] : assignment) {
        const auto it = s.name_of_id.find(id);
        if (!partitions.empty()) {
          named[it == s.name_of_id.end() ? id : it->second].insert(partitions.begin(),
                                                                   partitions.end());
        }
      }
    }

    for (const char* key : {"expected", "derived_expected"}) {
      if (!step.contains(key)) continue;
      const bool exact = step.value("member_set_exact", true) || std::string(key) != "expected";
      const std::string diff = compare(step[key], s.result, exact);
      if (!diff.empty()) problem(fmt::format("{}: {}", key, diff));
    }
    for (const json& check : step.value("checks", json::array())) {
      const std::string why = evaluate(check, s);
      if (!why.empty()) {
        problem(fmt::format("check {}{}: {}", check.value("check", "?"),
                            check.value("derived", false) ? " (derived)" : "", why));
      }
    }
  }

  static std::string compare(const json& expected, const Named& result, bool member_set_exact) {
    std::vector<std::string> diffs;
    for (const auto& [member, topics] : expected.items()) {
      const NamedMember want = parse_named_member(topics);
      const auto it = result.find(member);
      if (it == result.end()) {
        diffs.push_back(fmt::format("{} missing (want {})", member, show(want)));
      } else if (it->second != want) {
        diffs.push_back(fmt::format("{} got {} want {}", member, show(it->second), show(want)));
      }
    }
    if (member_set_exact) {
      for (const auto& [member, assignment] : result) {
        if (!expected.contains(member)) {
          diffs.push_back(fmt::format("unexpected member {} {}", member, show(assignment)));
        }
      }
    }
    return fmt::format("{}", fmt::join(diffs, ", "));
  }

  const Step& step_at(const json& check) const {
    const auto k = check.at("step").get<std::size_t>();
    if (k >= steps_.size() - 1) throw std::invalid_argument("check points to a later step");
    return steps_[k];
  }

  static const NamedMember& member_of(const Named& result, const std::string& member) {
    static const NamedMember kNothing;
    const auto it = result.find(member);
    return it == result.end() ? kNothing : it->second;
  }

  static std::vector<std::pair<std::string, std::int32_t>> flat(const NamedMember& m) {
    std::vector<std::pair<std::string, std::int32_t>> out;
    for (const auto& [topic, partitions] : m) {
      for (const std::int32_t p : partitions) out.emplace_back(topic, p);
    }
    return out;
  }

  static bool contains(const NamedMember& m, const std::string& topic, std::int32_t p) {
    const auto it = m.find(topic);
    return it != m.end() && it->second.count(p) > 0;
  }

  std::string validity(const Step& s, bool balanced) const {
    std::map<std::pair<std::string, std::int32_t>, std::string> owner;
    for (const auto& [member, assignment] : s.result) {
      const auto& subs =
          s.subscriptions.count(member) ? s.subscriptions.at(member) : std::set<std::string>{};
      for (const auto& [topic, p] : flat(assignment)) {
        const auto t = s.topics.find(topic);
        if (t == s.topics.end() || p < 0 || p >= t->second) {
          return fmt::format("{} holds {}-{}, which does not exist", member, topic, p);
        }
        if (subs.count(topic) == 0)
          return fmt::format("{} holds {}-{} unsubscribed", member, topic, p);
        const auto [it, fresh] = owner.emplace(std::make_pair(topic, p), member);
        if (!fresh) return fmt::format("{}-{} held by {} and {}", topic, p, it->second, member);
      }
    }
    if (!balanced) return "";
    for (auto a = s.result.begin(); a != s.result.end(); ++a) {
      for (auto b = std::next(a); b != s.result.end(); ++b) {
        const auto sa = static_cast<std::int64_t>(size_of(a->second));
        const auto sb = static_cast<std::int64_t>(size_of(b->second));
        if (sa - sb <= 1 && sb - sa <= 1) continue;
        for (const auto& [topic, partitions] : a->second) {
          if (b->second.count(topic) > 0) {
            return fmt::format("{} ({}) and {} ({}) differ by more than one and share {}", a->first,
                               sa, b->first, sb, topic);
          }
        }
      }
    }
    return "";
  }

  // partition_member_counts, each_partition_member_count_between: how many members hold each
  // partition.
  std::string partition_holders(const std::string& kind, const json& check, const Step& s) const {
    const Named& r = s.result;
    std::map<std::pair<std::string, std::int32_t>, std::size_t> holders;
    for (const auto& [member, a] : r) {
      for (const auto& tp : flat(a)) ++holders[tp];
    }
    if (kind == "partition_member_counts") {
      for (const auto& [topic, counts] : check.at("equals").items()) {
        for (std::size_t p = 0; p < counts.size(); ++p) {
          const std::size_t n = holders[{topic, static_cast<std::int32_t>(p)}];
          if (n != counts[p].get<std::size_t>())
            return fmt::format("{}-{} held by {}", topic, p, n);
        }
      }
      return "";
    }
    for (const auto& [topic, count] : s.topics) {
      for (std::int32_t p = 0; p < count; ++p) {
        const std::size_t n = holders[{topic, p}];
        if (n < check.at("min").get<std::size_t>() || n > check.at("max").get<std::size_t>()) {
          return fmt::format("{}-{} held by {}", topic, p, n);
        }
      }
    }
    return "";
  }

  // same_as_step, contains_step_assignment, contained_in_step_assignment,
  // intersects_step_assignment: a member's assignment against an earlier step's.
  std::string step_relation(const std::string& kind, const json& check, const Step& s) const {
    const Named& r = s.result;
    const Step& then = step_at(check);
    const std::string member = check.at("member");
    const std::string of = check.value("of_member", member);
    const auto& now_a = member_of(r, member);
    const auto& then_a = member_of(then.result, of);
    const auto subset = [](const NamedMember& x, const NamedMember& y) {
      for (const auto& [topic, p] : flat(x)) {
        if (!contains(y, topic, p)) return false;
      }
      return true;
    };
    bool ok = false;
    if (kind == "same_as_step") ok = now_a == then_a;
    if (kind == "contains_step_assignment") ok = subset(then_a, now_a);
    if (kind == "contained_in_step_assignment") ok = subset(now_a, then_a);
    if (kind == "intersects_step_assignment") {
      for (const auto& [topic, p] : flat(now_a)) ok = ok || contains(then_a, topic, p);
    }
    return ok ? ""
              : fmt::format("{} got {}, step {} {} had {}", member, show(now_a),
                            check.at("step").get<int>(), of, show(then_a));
  }

  std::string evaluate(const json& check, const Step& s) const {
    const std::string kind = check.value("check", "");
    const Named& r = s.result;
    if (kind == "valid") return validity(s, false);
    if (kind == "valid_and_balanced") return validity(s, true);
    if (kind == "fully_balanced") {
      if (r.empty()) return "";
      std::size_t lo = SIZE_MAX;
      std::size_t hi = 0;
      for (const auto& [member, a] : r) {
        lo = std::min(lo, size_of(a));
        hi = std::max(hi, size_of(a));
      }
      return hi - lo <= 1 ? "" : fmt::format("sizes range from {} to {}", lo, hi);
    }
    if (kind == "size") {
      const std::string member = check.at("member");
      const auto n = size_of(member_of(r, member));
      return n == check.at("equals").get<std::size_t>() ? ""
                                                        : fmt::format("{} holds {}", member, n);
    }
    if (kind == "sizes") {
      for (const auto& [member, want] : check.at("equals").items()) {
        const auto n = size_of(member_of(r, member));
        if (n != want.get<std::size_t>())
          return fmt::format("{} holds {}, want {}", member, n, want.dump());
      }
      return "";
    }
    if (kind == "sizes_one_of") {
      std::vector<std::size_t> sizes;
      for (const json& m : check.at("members"))
        sizes.push_back(size_of(member_of(r, m.get<std::string>())));
      for (const json& option : check.at("options")) {
        if (option.get<std::vector<std::size_t>>() == sizes) return "";
      }
      return fmt::format("sizes {}", fmt::join(sizes, ","));
    }
    if (kind == "each_member_size_between") {
      for (const auto& [member, a] : r) {
        const auto n = size_of(a);
        if (n < check.at("min").get<std::size_t>() || n > check.at("max").get<std::size_t>()) {
          return fmt::format("{} holds {}", member, n);
        }
      }
      return "";
    }
    if (kind == "topic_count_each") {
      const std::string topic = check.at("topic");
      for (const auto& [member, a] : r) {
        const auto it = a.find(topic);
        const std::size_t n = it == a.end() ? 0 : it->second.size();
        if (n != check.at("equals").get<std::size_t>())
          return fmt::format("{} holds {} of {}", member, n, topic);
      }
      return "";
    }
    if (kind == "total_assigned" || kind == "distinct_partitions_assigned" ||
        kind == "no_partition_assigned_twice") {
      std::size_t total = 0;
      std::set<std::pair<std::string, std::int32_t>> distinct;
      for (const auto& [member, a] : r) {
        for (const auto& tp : flat(a)) {
          ++total;
          distinct.insert(tp);
        }
      }
      if (kind == "no_partition_assigned_twice") {
        return total == distinct.size() ? "" : "a partition is assigned twice";
      }
      const std::size_t n = kind == "total_assigned" ? total : distinct.size();
      return n == check.at("equals").get<std::size_t>() ? "" : fmt::format("got {}", n);
    }
    if (kind == "partition_member_counts" || kind == "each_partition_member_count_between")
      return partition_holders(kind, check, s);
    if (kind == "no_member_missing") {
      for (const json& m : check.at("members")) {
        if (r.count(m.get<std::string>()) == 0)
          return fmt::format("{} missing", m.get<std::string>());
      }
      return "";
    }
    if (kind == "disjoint") {
      const auto& a = member_of(r, check.at("members").at(0).get<std::string>());
      const auto& b = member_of(r, check.at("members").at(1).get<std::string>());
      for (const auto& [topic, p] : flat(a)) {
        if (contains(b, topic, p)) return fmt::format("both hold {}-{}", topic, p);
      }
      return "";
    }
    if (kind == "same_as_input") {
      const std::string member = check.at("member");
      static const NamedMember kNothing;
      const auto it = s.inputs.find(member);
      const NamedMember& input = it == s.inputs.end() ? kNothing : it->second;
      const auto& got = member_of(r, member);
      return got == input ? "" : fmt::format("{} got {} had {}", member, show(got), show(input));
    }
    if (kind == "same_as_step" || kind == "contains_step_assignment" ||
        kind == "contained_in_step_assignment" || kind == "intersects_step_assignment")
      return step_relation(kind, check, s);
    if (kind == "keeps_step_partition") {
      const Step& then = step_at(check);
      for (const auto& [member, a] : then.result) {
        for (const auto& [topic, p] : flat(a)) {
          if (check.contains("topic") && check["topic"].get<std::string>() != topic) continue;
          if (check.contains("partition") && check["partition"].is_number() &&
              check["partition"].get<std::int32_t>() != p) {
            continue;
          }
          if (!contains(member_of(r, member), topic, p))
            return fmt::format("{} lost {}-{}", member, topic, p);
        }
      }
      return "";
    }
    return fmt::format("unsupported check '{}'", kind);
  }

  const json& case_;
  std::vector<Step> steps_;
  std::vector<std::string> failures_;
};

// --- reconciliation -------------------------------------------------------------------------

using reconciliation::ConsumerGroupMember;
using reconciliation::PartitionEpoch;
using reconciliation::PartitionsWithEpochs;

PartitionsWithEpochs parse_with_epochs(const json& m, const char* sets_key, const char* epochs_key,
                                       std::int32_t default_epoch) {
  PartitionsWithEpochs out;
  if (m.contains(sets_key)) {
    for (const auto& [topic, partitions] : m[sets_key].items()) {
      auto& list = out[topic];
      for (const json& p : partitions) list.push_back({p.get<std::int32_t>(), default_epoch});
    }
  }
  if (m.contains(epochs_key)) {
    for (const auto& [topic, epochs] : m[epochs_key].items()) {
      auto& list = out[topic];
      for (const auto& [p, epoch] : epochs.items()) {
        const std::int32_t partition = std::stoi(p);
        const auto it = std::find_if(list.begin(), list.end(), [&](const PartitionEpoch& pe) {
          return pe.partition == partition;
        });
        if (it == list.end()) {
          list.push_back({partition, epoch.get<std::int32_t>()});
        } else {
          it->assignment_epoch = epoch.get<std::int32_t>();
        }
      }
    }
  }
  for (auto it = out.begin(); it != out.end();) {
    std::sort(it->second.begin(), it->second.end());
    it = it->second.empty() ? out.erase(it) : std::next(it);
  }
  return out;
}

ConsumerGroupMember parse_member(const json& m, std::int32_t fallback_epoch) {
  ConsumerGroupMember member;
  member.member_id = m.value("member_id", "member");
  const auto state = reconciliation::member_state_from_string(m.at("state").get<std::string>());
  if (!state) throw std::invalid_argument("unknown state " + m.at("state").dump());
  member.state = *state;
  member.member_epoch = m.at("member_epoch").get<std::int32_t>();
  member.previous_member_epoch = m.value("previous_member_epoch", member.member_epoch);
  for (const json& t : m.value("subscribed_topic_names", json::array())) {
    member.subscribed_topic_names.push_back(t.get<std::string>());
  }
  if (m.contains("subscribed_topic_regex") && !m["subscribed_topic_regex"].is_null()) {
    member.subscribed_topic_regex = m["subscribed_topic_regex"].get<std::string>();
  }
  const std::int32_t epoch = fallback_epoch;
  member.assigned_partitions = parse_with_epochs(m, "assigned", "assigned_epochs", epoch);
  member.partitions_pending_revocation =
      parse_with_epochs(m, "pending_revocation", "pending_revocation_epochs", epoch);
  return member;
}

std::string show(const PartitionsWithEpochs& partitions) {
  std::vector<std::string> parts;
  for (const auto& [topic, list] : partitions) {
    std::vector<std::string> ps;
    for (const PartitionEpoch& pe : list)
      ps.push_back(fmt::format("{}@{}", pe.partition, pe.assignment_epoch));
    parts.push_back(fmt::format("{}:{}", topic, fmt::join(ps, ",")));
  }
  return "{" + fmt::format("{}", fmt::join(parts, " ")) + "}";
}

std::string compare_members(const ConsumerGroupMember& got, const json& want_json) {
  // Without epoch maps in the vector, the partitions are compared without their epochs.
  const bool with_epochs = want_json.contains("assigned_epochs");
  const ConsumerGroupMember want = parse_member(want_json, 0);
  std::vector<std::string> diffs;
  if (got.state != want.state) {
    diffs.push_back(fmt::format("state {} want {}", reconciliation::to_string(got.state),
                                reconciliation::to_string(want.state)));
  }
  if (got.member_epoch != want.member_epoch) {
    diffs.push_back(fmt::format("member_epoch {} want {}", got.member_epoch, want.member_epoch));
  }
  if (got.previous_member_epoch != want.previous_member_epoch) {
    diffs.push_back(fmt::format("previous_member_epoch {} want {}", got.previous_member_epoch,
                                want.previous_member_epoch));
  }
  auto got_names = got.subscribed_topic_names;
  auto want_names = want.subscribed_topic_names;
  std::sort(got_names.begin(), got_names.end());
  std::sort(want_names.begin(), want_names.end());
  if (got_names != want_names) diffs.push_back("subscribed_topic_names differ");
  if (got.subscribed_topic_regex != want.subscribed_topic_regex)
    diffs.push_back("subscribed_topic_regex differs");
  const auto strip = [with_epochs](PartitionsWithEpochs p) {
    if (!with_epochs) {
      for (auto& [topic, list] : p) {
        for (auto& pe : list) pe.assignment_epoch = 0;
      }
    }
    return p;
  };
  if (strip(got.assigned_partitions) != strip(want.assigned_partitions)) {
    diffs.push_back(fmt::format("assigned {} want {}", show(got.assigned_partitions),
                                show(want.assigned_partitions)));
  }
  if (strip(got.partitions_pending_revocation) != strip(want.partitions_pending_revocation)) {
    diffs.push_back(fmt::format("pending_revocation {} want {}",
                                show(got.partitions_pending_revocation),
                                show(want.partitions_pending_revocation)));
  }
  return fmt::format("{}", fmt::join(diffs, ", "));
}

ConformanceCaseResult run_reconciliation_case(const json& the_case) {
  ConformanceCaseResult result{the_case.value("id", the_case.value("name", "?")), false, ""};
  if (the_case.contains("generator")) {
    result.passed = true;
    result.detail = "skipped: generator case";
    return result;
  }
  try {
    const json& in = the_case.at("input");
    const ConsumerGroupMember member =
        parse_member(in.at("member"), in.at("member").at("member_epoch"));

    std::map<std::string, std::string> topic_ids_by_name;
    const json metadata = in.value("metadata_topics", json::object());
    for (const auto& [name, topic] : metadata.items()) {
      topic_ids_by_name.emplace(name, topic.at("topic_id").get<std::string>());
    }
    std::map<std::string, std::vector<std::string>> resolved;
    const json regexes = in.value("resolved_regular_expressions", json::object());
    for (const auto& [regex, names] : regexes.items()) {
      resolved.emplace(regex, names.get<std::vector<std::string>>());
    }
    reconciliation::TopicIdPartitions target;
    const json target_json = in.value("target_assignment", json::object());
    for (const auto& [topic, partitions] : target_json.items()) {
      target.emplace(topic, partitions.get<std::vector<std::int32_t>>());
    }
    const json epochs = in.value("partition_epochs", json::object());
    const reconciliation::PartitionEpochLookup lookup = [&epochs](const std::string& topic,
                                                                  std::int32_t p) -> std::int32_t {
      const std::string key = std::to_string(p);
      if (epochs.contains("by_partition") && epochs["by_partition"].contains(topic) &&
          epochs["by_partition"][topic].contains(key)) {
        return epochs["by_partition"][topic][key].get<std::int32_t>();
      }
      if (epochs.contains("by_topic") && epochs["by_topic"].contains(topic)) {
        return epochs["by_topic"][topic].get<std::int32_t>();
      }
      return epochs.value("default", -1);
    };
    std::optional<std::vector<reconciliation::OwnedTopicPartitions>> owned;
    const json& owned_json = in.at("owned_topic_partitions");
    if (owned_json.is_array()) {
      owned.emplace();
      for (const json& tp : owned_json) {
        owned->push_back({tp.at("topic").get<std::string>(),
                          tp.at("partitions").get<std::vector<std::int32_t>>()});
      }
    }
    const reconciliation::ReconciliationInput input{
        .target_assignment_epoch = in.at("target_assignment_epoch").get<std::int32_t>(),
        .target_assignment = target,
        .current_partition_epoch = lookup,
        .owned_topic_partitions = owned,
        .has_subscription_changed = in.value("has_subscription_changed", false),
        .topic_ids_by_name = topic_ids_by_name,
        .resolved_regular_expressions = resolved,
    };
    const reconciliation::ReconciliationResult next =
        reconciliation::next_member_state(member, input);

    if (the_case.contains("expected_error")) {
      const std::string want = the_case["expected_error"].get<std::string>();
      const bool fenced = next.error == reconciliation::ReconciliationError::FencedMemberEpoch;
      const bool want_fenced =
          want.find("Fenced") != std::string::npos || want == "FENCED_MEMBER_EPOCH";
      result.passed = fenced && want_fenced;
      if (!result.passed)
        result.detail =
            fmt::format("expected error {}, got {}", want, fenced ? "fenced" : "a member");
      return result;
    }
    if (next.error != reconciliation::ReconciliationError::None) {
      result.detail = "unexpected FencedMemberEpochException";
      return result;
    }
    result.detail = compare_members(next.member_or(member), the_case.at("expected"));
    result.passed = result.detail.empty();
  } catch (const std::exception& e) {
    result.detail = fmt::format("error: {}", e.what());
  }
  return result;
}

// --- vector validation -------------------------------------------------------------------

/// Partition counts and numbers a vector may use: enough for every real group, small enough
/// that no assignor allocates without bound.
constexpr std::int64_t kMaxVectorPartitions = 100000;

class VectorChecker {
 public:
  std::vector<std::string> problems;

  void check_file(const json& doc) {
    if (!doc.is_object()) return add("", "must be an object with \"cases\"");
    const auto cases = doc.find("cases");
    if (cases == doc.end() || !cases->is_array()) return add("/cases", "must be an array of cases");
    for (std::size_t i = 0; i < cases->size(); ++i)
      check_case((*cases)[i], fmt::format("/cases/{}", i));
  }

 private:
  void add(const std::string& path, const std::string& what) {
    if (problems.size() < 20)
      problems.push_back(fmt::format("{}: {}", path.empty() ? "/" : path, what));
  }

  void check_case(const json& c, const std::string& at) {
    if (!c.is_object()) return add(at, "must be an object");
    if (c.contains("generator") ||
        (c.contains("steps") && c["steps"].is_array() &&
         std::any_of(c["steps"].begin(), c["steps"].end(),
                     [](const json& s) { return s.is_object() && s.contains("generator"); }))) {
      return;  // not run (skipped with a reason)
    }
    if (c.contains("steps")) {
      if (!c["steps"].is_array() || c["steps"].empty())
        return add(at + "/steps", "must be a non-empty array");
      for (std::size_t k = 0; k < c["steps"].size(); ++k) {
        check_step(c["steps"][k], c, fmt::format("{}/steps/{}", at, k), at, k);
      }
    } else {
      check_step(c, c, at, at, 0);
    }
  }

  /// `key` from the step, else from the case (as the runner reads it).
  static const json* value(const json& step, const json& c, const char* key) {
    if (step.contains(key)) return &step[key];
    if (c.contains(key)) return &c[key];
    return nullptr;
  }

  bool partition_number(const json& v, const std::string& at) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
        v.get<std::int64_t>() >= kMaxVectorPartitions) {
      add(at, fmt::format("must be a partition number 0..{}, got {}", kMaxVectorPartitions - 1,
                          v.dump()));
      return false;
    }
    return true;
  }

  /// A step's `members`: ids unique, each member's fields of the right types.
  void check_members(const json& members_json, const std::string& mat, std::size_t k) {
    const json* members = &members_json;
    std::set<std::string> ids;
    for (std::size_t i = 0; i < members->size(); ++i) {
      const json& m = (*members)[i];
      const std::string p = fmt::format("{}/{}", mat, i);
      if (!m.is_object()) {
        add(p, "must be an object");
        continue;
      }
      if (!m.contains("id") || !m["id"].is_string()) {
        add(p + "/id", "must be a string (the member id)");
      } else if (!ids.insert(m["id"].get<std::string>()).second) {
        add(p + "/id", fmt::format("member \"{}\" is listed twice", m["id"].get<std::string>()));
      }
      for (const char* key : {"instance_id", "rack"}) {
        if (m.contains(key) && !m[key].is_null() && !m[key].is_string())
          add(p + "/" + key, "must be a string or null");
      }
      if (m.contains("subscriptions")) {
        if (!m["subscriptions"].is_array()) {
          add(p + "/subscriptions", "must be an array of topic names");
        } else {
          for (std::size_t j = 0; j < m["subscriptions"].size(); ++j) {
            if (!m["subscriptions"][j].is_string())
              add(fmt::format("{}/subscriptions/{}", p, j), "must be a topic name");
          }
        }
      }
      if (m.contains("assigned")) {
        const json& a = m["assigned"];
        if (a.is_object()) {
          const auto from = a.find("from_step");
          if (from == a.end() || !from->is_number_unsigned() || from->get<std::size_t>() >= k) {
            add(p + "/assigned/from_step",
                k == 0 ? std::string("the first step has no earlier step to take it from")
                       : fmt::format("must be the number of an earlier step (0..{})", k - 1));
          }
        } else if (!a.is_array()) {
          add(p + "/assigned",
              "must be an array of [topic, partition] pairs or {\"from_step\": n}");
        } else {
          for (std::size_t j = 0; j < a.size(); ++j) {
            const std::string q = fmt::format("{}/assigned/{}", p, j);
            if (!a[j].is_array() || a[j].size() != 2 || !a[j][0].is_string()) {
              add(q, "must be a [topic name, partition] pair");
              continue;
            }
            partition_number(a[j][1], q + "/1");
          }
        }
      }
    }
  }

  /// A step's `expected` / `derived_expected`: member -> topic -> partition numbers.
  void check_expected(const json& step, const std::string& at) {
    for (const char* key : {"expected", "derived_expected"}) {
      if (!step.contains(key)) continue;
      const json& e = step[key];
      const std::string p = at + "/" + key;
      if (!e.is_object()) {
        add(p, "must be an object: member -> topic -> partitions");
        continue;
      }
      for (const auto& [member, topics] : e.items()) {
        if (!topics.is_object()) {
          add(p + "/" + member, "must be an object: topic -> partitions");
          continue;
        }
        for (const auto& [topic, ps] : topics.items()) {
          if (!ps.is_array()) {
            add(p + "/" + member + "/" + topic, "must be an array of partition numbers");
            continue;
          }
          for (std::size_t j = 0; j < ps.size(); ++j)
            partition_number(ps[j], fmt::format("{}/{}/{}/{}", p, member, topic, j));
        }
      }
    }
  }

  void check_step(const json& step, const json& c, const std::string& at,
                  const std::string& case_at, std::size_t k) {
    if (!step.is_object()) return add(at, "must be an object");
    // Where a key was read from: the step, else the case it inherits from.
    const auto where = [&](const json& /*c*/, const char* key) {
      return (step.contains(key) ? at : case_at) + "/" + key;
    };
    if (const json* a = value(step, c, "assignor"); a && !a->is_string())
      add(where(c, "assignor"), "must be a string");
    if (const json* t = value(step, c, "subscription_type")) {
      if (!t->is_string() || (*t != "HOMOGENEOUS" && *t != "HETEROGENEOUS")) {
        add(where(c, "subscription_type"),
            fmt::format("must be \"HOMOGENEOUS\" or \"HETEROGENEOUS\", got {}", t->dump()));
      }
    }
    if (const json* o = value(step, c, "member_iteration_order")) {
      if (!o->is_string() || (*o != "sorted" && *o != "as_listed")) {
        add(where(c, "member_iteration_order"),
            fmt::format("must be \"sorted\" or \"as_listed\", got {}", o->dump()));
      }
    }
    if (const json* t = value(step, c, "topics")) {
      if (!t->is_object()) {
        add(where(c, "topics"), "must be an object: topic name -> partition count");
      } else {
        for (const auto& [name, n] : t->items()) {
          if (!n.is_number_integer() || n.get<std::int64_t>() < 0 ||
              n.get<std::int64_t>() > kMaxVectorPartitions) {
            add(where(c, "topics") + "/" + name,
                fmt::format("must be a partition count 0..{}, got {}", kMaxVectorPartitions,
                            n.dump()));
          }
        }
      }
    }
    if (const json* ids = value(step, c, "topic_ids")) {
      if (ids->is_string() && ids->get<std::string>() == "random") {
        // The test drew random ids: any distinct ids will do.
      } else if (!ids->is_object()) {
        add(where(c, "topic_ids"), "must be \"random\" or an object: topic name -> topic id");
      } else {
        std::map<std::string, std::string> seen;
        for (const auto& [name, id] : ids->items()) {
          if (!id.is_string() || id.get<std::string>().empty()) {
            add(where(c, "topic_ids") + "/" + name,
                fmt::format("must be a non-empty string, got {}", id.dump()));
            continue;
          }
          const auto [it, fresh] = seen.emplace(id.get<std::string>(), name);
          if (!fresh)
            add(where(c, "topic_ids") + "/" + name,
                fmt::format("repeats the id of topic \"{}\"", it->second));
        }
      }
    }
    if (const json* a = value(step, c, "assignable_partitions")) {
      if (!a->is_object()) {
        add(where(c, "assignable_partitions"),
            "must be an object: topic name -> partition numbers");
      } else {
        for (const auto& [name, ps] : a->items()) {
          const std::string p = where(c, "assignable_partitions") + "/" + name;
          if (!ps.is_array()) {
            add(p, "must be an array of partition numbers");
            continue;
          }
          for (std::size_t i = 0; i < ps.size(); ++i)
            partition_number(ps[i], fmt::format("{}/{}", p, i));
        }
      }
    }
    const json* members = value(step, c, "members");
    if (members == nullptr) return;
    const std::string mat = where(c, "members");
    if (!members->is_array()) return add(mat, "must be an array of members");
    check_members(*members, mat, k);
    check_expected(step, at);
    if (step.contains("checks") && !step["checks"].is_array())
      add(at + "/checks", "must be an array");
  }
};

}  // namespace

std::vector<std::string> server_vector_problems(const nlohmann::json& file_doc) {
  VectorChecker checker;
  checker.check_file(file_doc);
  return checker.problems;
}

std::vector<ConformanceCaseResult> run_server_assignor_vectors(const nlohmann::json& file_doc) {
  std::vector<ConformanceCaseResult> results;
  for (const json& the_case : file_doc.value("cases", json::array())) {
    results.push_back(ServerCaseRunner(the_case).run());
  }
  return results;
}

std::vector<ConformanceCaseResult> run_share_assignor_vectors(const nlohmann::json& file_doc) {
  // The same cases and checks as the server assignors; `assignor` is "simple".
  return run_server_assignor_vectors(file_doc);
}

std::vector<ConformanceCaseResult> run_current_assignment_builder_vectors(
    const nlohmann::json& file_doc) {
  std::vector<ConformanceCaseResult> results;
  for (const json& the_case : file_doc.value("cases", json::array())) {
    results.push_back(run_reconciliation_case(the_case));
  }
  return results;
}

}  // namespace rsim::assignors
