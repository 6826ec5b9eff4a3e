#include "tools/commands/assign.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/assignors/client_assignor.hpp"
#include "models/assignors/server_assignor.hpp"
#include "models/assignors/share_assignor.hpp"
#include "models/protocol/topic_partition.hpp"
#include "models/reconciliation/current_assignment_builder.hpp"
#include "models/scenario/scenario.hpp"
#include "tools/conformance/file_defaults.hpp"

namespace rsim::cli {

namespace {

using json = nlohmann::json;
using assignors::ClientAssignment;
using assignors::ServerAssignment;
using assignors::SubscriptionType;

// A member that revoked something rejoins; Kafka's own test allows at most this many
// follow-up rebalances before calling the assignor broken (CooperativeStickyAssignorTest).
constexpr int kMaxFollowups = 4;

const std::vector<std::string> kClientAssignors = {"range", "roundrobin", "sticky",
                                                   "cooperative-sticky"};
const std::vector<std::string> kServerAssignors = {"uniform", "server-range", "simple"};

// ---- reading the case, every problem with its JSON path ------------------------------------

class Problems {
 public:
  void add(const std::string& path, const std::string& what) {
    list_.push_back(fmt::format("{}: {}", path.empty() ? "/" : path, what));
  }
  bool empty() const { return list_.empty(); }
  const std::vector<std::string>& list() const { return list_; }

 private:
  std::vector<std::string> list_;
};

// RFC 6901: '~' and '/' inside a key are escaped.
std::string child(const std::string& path, const std::string& key) {
  std::string escaped;
  for (const char c : key) {
    if (c == '~')
      escaped += "~0";
    else if (c == '/')
      escaped += "~1";
    else
      escaped += c;
  }
  return path + "/" + escaped;
}
std::string child(const std::string& path, std::size_t index) {
  return path + "/" + std::to_string(index);
}

void check_keys(const json& obj, const std::string& path, const std::vector<std::string>& allowed,
                Problems& problems) {
  for (const auto& [key, _] : obj.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    const std::string near = closest_match(key, allowed);
    problems.add(child(path, key), near.empty()
                                       ? "unknown key"
                                       : fmt::format("unknown key; did you mean \"{}\"?", near));
  }
}

bool is_object_at(const json& v, const std::string& path, Problems& problems) {
  if (v.is_object()) return true;
  problems.add(path, fmt::format("expected an object, got {}", v.dump()));
  return false;
}

bool is_array_at(const json& v, const std::string& path, Problems& problems) {
  if (v.is_array()) return true;
  problems.add(path, fmt::format("expected a list, got {}", v.dump()));
  return false;
}

std::optional<std::string> string_at(const json& v, const std::string& path, Problems& problems) {
  if (v.is_string()) return v.get<std::string>();
  problems.add(path, fmt::format("expected a string, got {}", v.dump()));
  return std::nullopt;
}

std::optional<std::int32_t> int_at(const json& v, const std::string& path, Problems& problems,
                                   std::int64_t min = INT32_MIN) {
  if (v.is_number_integer() && v.get<std::int64_t>() >= min && v.get<std::int64_t>() <= INT32_MAX) {
    return v.get<std::int32_t>();
  }
  problems.add(path, min == 0 ? fmt::format("expected an integer >= 0, got {}", v.dump())
                              : fmt::format("expected an integer, got {}", v.dump()));
  return std::nullopt;
}

std::optional<bool> bool_at(const json& v, const std::string& path, Problems& problems) {
  if (v.is_boolean()) return v.get<bool>();
  problems.add(path, fmt::format("expected true or false, got {}", v.dump()));
  return std::nullopt;
}

// A string field that may be absent or null (then nullopt).
std::optional<std::string> optional_string(const json& obj, const char* key,
                                           const std::string& path, Problems& problems) {
  if (!obj.contains(key) || obj[key].is_null()) return std::nullopt;
  return string_at(obj[key], child(path, key), problems);
}

std::vector<std::string> string_list(const json& v, const std::string& path, Problems& problems) {
  std::vector<std::string> out;
  if (!is_array_at(v, path, problems)) return out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (auto s = string_at(v[i], child(path, i), problems)) out.push_back(*s);
  }
  return out;
}

std::vector<std::int32_t> partition_list(const json& v, const std::string& path,
                                         Problems& problems) {
  std::vector<std::int32_t> out;
  if (!is_array_at(v, path, problems)) return out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (auto p = int_at(v[i], child(path, i), problems, 0)) out.push_back(*p);
  }
  return out;
}

// ---- assignor cases ----------------------------------------------------------------------

enum class Side { Client, Server };

struct CaseMember {
  std::string id;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack;
  std::vector<std::string> subscriptions;
  /// Client `owned` / server `assigned`: what the member holds, in the listed order.
  TopicPartitions owned;
  std::optional<std::size_t> owned_from_step;
  std::optional<std::int32_t> generation;
  bool assigned_ordered = false;
};

struct CaseStep {
  std::string assignor;  // as named: a client name, "uniform", "server-range" or "simple"
  Side side = Side::Client;
  std::map<std::string, std::int32_t> topics;
  std::map<std::string, std::vector<std::vector<std::string>>> partition_racks;
  bool prefer_rack_aware_logic = false;
  std::vector<CaseMember> members;
  bool members_as_listed = false;  // server: member_iteration_order "as_listed"
  std::optional<SubscriptionType> subscription_type;
  std::map<std::string, std::string> topic_ids;  // name -> id (server)
  /// `simple` (share groups): topic name -> the partitions the group may assign (the
  /// initialized share-partitions); absent = every partition.
  std::optional<std::map<std::string, std::vector<std::int32_t>>> assignable_partitions;
  /// The vector format's `followups`: whether a later step's `from_step` means the assignment
  /// after the cooperative follow-up rebalances (true) or the first call's. The follow-ups are
  /// run and shown for cooperative-sticky either way.
  bool followups = false;
};

// Informational or expectation fields of the vector format: accepted, not read.
const std::vector<std::string> kCaseKeys = {"kind",
                                            "name",
                                            "id",
                                            "notes",
                                            "assignor",
                                            "steps",
                                            "topics",
                                            "topic_ids",
                                            "assignable_partitions",
                                            "partition_racks",
                                            "rack_setup",
                                            "rack_config",
                                            "assignor_config",
                                            "members",
                                            "subscription_type",
                                            "member_iteration_order",
                                            "inverted_target_assignment",
                                            "followups",
                                            "expected",
                                            "expected_initial",
                                            "expected_ordered",
                                            "expected_initial_ordered",
                                            "derived_expected",
                                            "member_set_exact",
                                            "checks",
                                            "expected_error",
                                            "timeout_seconds",
                                            "generator"};
const std::vector<std::string> kMemberKeys = {"id",
                                              "subscriptions",
                                              "rack",
                                              "instance_id",
                                              "owned",
                                              "assigned",
                                              "assigned_ordered",
                                              "generation",
                                              "subscription_version",
                                              "subscription_generation",
                                              "owned_in_subscription_field_only"};

// Does the case use fields only server-assignor vectors have? Then a bare "range" is the
// coordinator's range assignor.
bool looks_server_side(const json& c) {
  const auto server_fields = [](const json& s) {
    if (s.contains("topic_ids") || s.contains("subscription_type") ||
        s.contains("member_iteration_order")) {
      return true;
    }
    if (s.contains("members") && s["members"].is_array()) {
      for (const json& m : s["members"]) {
        if (m.is_object() && m.contains("assigned")) return true;
      }
    }
    return false;
  };
  if (server_fields(c)) return true;
  if (c.contains("steps") && c["steps"].is_array()) {
    for (const json& s : c["steps"]) {
      if (s.is_object() && server_fields(s)) return true;
    }
  }
  return false;
}

std::optional<std::pair<std::string, Side>> resolve_assignor(const std::string& name,
                                                             bool server_case,
                                                             const std::string& path,
                                                             Problems& problems) {
  if (name == "range" && server_case)
    return std::make_pair(std::string("server-range"), Side::Server);
  if (assignors::is_client_assignor(name)) return std::make_pair(name, Side::Client);
  if (name == "uniform" || name == "server-range") return std::make_pair(name, Side::Server);
  if (name == "simple") {
    // The share-group assignor runs on the coordinator: it needs a server-side case.
    if (!server_case) {
      problems.add(path,
                   "\"simple\" is the share-group assignor of the coordinator; give a "
                   "server-side case (members with `assigned` targets, `topic_ids`, "
                   "`subscription_type`, or \"kind\": \"share-assignor\")");
      return std::nullopt;
    }
    return std::make_pair(name, Side::Server);
  }
  std::vector<std::string> all = kClientAssignors;
  all.insert(all.end(), kServerAssignors.begin(), kServerAssignors.end());
  const std::string near = closest_match(name, all);
  problems.add(
      path,
      fmt::format("unknown assignor \"{}\"{}; expected one of range, roundrobin, sticky, "
                  "cooperative-sticky (client side), uniform, server-range, simple (server side)",
                  name, near.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", near)));
  return std::nullopt;
}

// The field of a step, or of the case when the step does not set it (the vector format lets
// coordinator cases hold `topic_ids` and the like once for all steps).
const json* field(const json& step, const json& the_case, const char* key) {
  if (step.contains(key)) return &step[key];
  if (the_case.contains(key)) return &the_case[key];
  return nullptr;
}

CaseMember read_member(const json& m, const std::string& path, std::size_t step_index,
                       Problems& problems) {
  CaseMember member;
  if (!is_object_at(m, path, problems)) return member;
  check_keys(m, path, kMemberKeys, problems);
  if (!m.contains("id")) {
    problems.add(child(path, "id"), "missing");
  } else if (auto id = string_at(m["id"], child(path, "id"), problems)) {
    member.id = *id;
  }
  member.instance_id = optional_string(m, "instance_id", path, problems);
  member.rack = optional_string(m, "rack", path, problems);
  if (m.contains("subscriptions")) {
    member.subscriptions = string_list(m["subscriptions"], child(path, "subscriptions"), problems);
  }
  if (m.contains("generation") && !m["generation"].is_null()) {
    member.generation = int_at(m["generation"], child(path, "generation"), problems);
  }
  if (m.contains("assigned_ordered")) {
    member.assigned_ordered =
        bool_at(m["assigned_ordered"], child(path, "assigned_ordered"), problems).value_or(false);
  }
  if (m.contains("owned") && m.contains("assigned")) {
    problems.add(child(path, "assigned"),
                 "give either `owned` (client side) or `assigned` (server side), not both");
  }
  for (const char* key : {"owned", "assigned"}) {
    if (!m.contains(key)) continue;
    const json& v = m[key];
    const std::string at = child(path, key);
    if (v.is_object()) {
      check_keys(v, at, {"from_step"}, problems);
      if (!v.contains("from_step")) {
        problems.add(child(at, "from_step"), "missing");
      } else if (auto k = int_at(v["from_step"], child(at, "from_step"), problems, 0)) {
        if (static_cast<std::size_t>(*k) >= step_index) {
          problems.add(child(at, "from_step"),
                       fmt::format("refers to step {}; only an earlier step of `steps` "
                                   "can be named (this is step {})",
                                   *k, step_index));
        } else {
          member.owned_from_step = static_cast<std::size_t>(*k);
        }
      }
      continue;
    }
    if (!is_array_at(v, at, problems)) continue;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const json& pair = v[i];
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string()) {
        problems.add(child(at, i),
                     fmt::format("expected a [topic, partition] pair, got {}", pair.dump()));
        continue;
      }
      if (auto p = int_at(pair[1], child(child(at, i), 1), problems, 0)) {
        member.owned.push_back({pair[0].get<std::string>(), *p});
      }
    }
  }
  return member;
}

CaseStep read_step(const json& step, const json& the_case, const std::string& path,
                   std::size_t index, const std::optional<std::string>& assignor_override,
                   bool server_case, Problems& problems) {
  CaseStep s;
  if (assignor_override) {
    if (auto r = resolve_assignor(*assignor_override, server_case, "--assignor", problems)) {
      std::tie(s.assignor, s.side) = *r;
    }
  } else if (const json* a = field(step, the_case, "assignor")) {
    const std::string at = step.contains("assignor") ? child(path, "assignor") : "/assignor";
    if (auto name = string_at(*a, at, problems)) {
      if (auto r = resolve_assignor(*name, server_case, at, problems))
        std::tie(s.assignor, s.side) = *r;
    }
  } else if (server_case) {
    // Kafka's default: the first entry of group.consumer.assignors (uniform, range).
    std::tie(s.assignor, s.side) = std::make_pair(std::string("uniform"), Side::Server);
  } else {
    // Kafka's default: partition.assignment.strategy [range, cooperative-sticky]; the leader
    // runs the first one every member supports.
    std::tie(s.assignor, s.side) = std::make_pair(std::string("range"), Side::Client);
  }
  const auto at_of = [&](const char* key) {
    return step.contains(key) ? child(path, key) : child("", key);
  };

  if (const json* topics = field(step, the_case, "topics");
      topics && is_object_at(*topics, at_of("topics"), problems)) {
    for (const auto& [name, count] : topics->items()) {
      if (auto n = int_at(count, child(at_of("topics"), name), problems, 0)) s.topics[name] = *n;
    }
  }
  if (const json* racks = field(step, the_case, "partition_racks");
      racks && is_object_at(*racks, at_of("partition_racks"), problems)) {
    for (const auto& [topic, per_partition] : racks->items()) {
      const std::string at = child(at_of("partition_racks"), topic);
      if (!is_array_at(per_partition, at, problems)) continue;
      auto& list = s.partition_racks[topic];
      for (std::size_t i = 0; i < per_partition.size(); ++i) {
        list.push_back(string_list(per_partition[i], child(at, i), problems));
      }
    }
  }
  if (const json* config = field(step, the_case, "assignor_config");
      config && is_object_at(*config, at_of("assignor_config"), problems)) {
    check_keys(*config, at_of("assignor_config"), {"prefer_rack_aware_logic"}, problems);
    if (config->contains("prefer_rack_aware_logic")) {
      s.prefer_rack_aware_logic =
          bool_at((*config)["prefer_rack_aware_logic"],
                  child(at_of("assignor_config"), "prefer_rack_aware_logic"), problems)
              .value_or(false);
    }
  }
  if (const json* followups = field(step, the_case, "followups")) {
    s.followups = bool_at(*followups, at_of("followups"), problems).value_or(false);
  }
  if (const json* order = field(step, the_case, "member_iteration_order")) {
    const auto text = string_at(*order, at_of("member_iteration_order"), problems);
    if (text && *text != "sorted" && *text != "as_listed") {
      problems.add(at_of("member_iteration_order"),
                   fmt::format("expected \"sorted\" or \"as_listed\", got \"{}\"", *text));
    }
    s.members_as_listed = text && *text == "as_listed";
  }
  if (const json* type = field(step, the_case, "subscription_type")) {
    const auto text = string_at(*type, at_of("subscription_type"), problems);
    if (text && *text == "HOMOGENEOUS")
      s.subscription_type = SubscriptionType::Homogeneous;
    else if (text && *text == "HETEROGENEOUS")
      s.subscription_type = SubscriptionType::Heterogeneous;
    else if (text)
      problems.add(at_of("subscription_type"),
                   fmt::format("expected \"HOMOGENEOUS\" or \"HETEROGENEOUS\", got \"{}\"", *text));
  }
  if (const json* ids = field(step, the_case, "topic_ids")) {
    // "random": the test drew random ids, so any distinct ids will do; the names serve.
    if (ids->is_object()) {
      for (const auto& [name, id] : ids->items()) {
        if (auto text = string_at(id, child(at_of("topic_ids"), name), problems))
          s.topic_ids[name] = *text;
      }
    } else if (!(ids->is_string() && ids->get<std::string>() == "random")) {
      problems.add(
          at_of("topic_ids"),
          fmt::format("expected \"random\" or an object of topic name -> id, got {}", ids->dump()));
    }
  }
  if (const json* a = field(step, the_case, "assignable_partitions")) {
    const std::string at = at_of("assignable_partitions");
    if (s.assignor != "simple") {
      problems.add(at, "only the share-group assignor \"simple\" reads assignable partitions");
    } else if (is_object_at(*a, at, problems)) {
      s.assignable_partitions.emplace();
      for (const auto& [name, partitions] : a->items()) {
        const std::string pat = child(at, name);
        if (!is_array_at(partitions, pat, problems)) continue;
        auto& list = (*s.assignable_partitions)[name];
        for (std::size_t i = 0; i < partitions.size(); ++i) {
          if (auto p = int_at(partitions[i], child(pat, i), problems, 0)) list.push_back(*p);
        }
      }
    }
  }
  const json* members = field(step, the_case, "members");
  if (members == nullptr) {
    problems.add(child(path, "members"), "missing");
  } else if (is_array_at(*members, at_of("members"), problems)) {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < members->size(); ++i) {
      CaseMember m = read_member((*members)[i], child(at_of("members"), i), index, problems);
      if (!m.id.empty() && !seen.insert(m.id).second) {
        problems.add(child(child(at_of("members"), i), "id"),
                     fmt::format("member \"{}\" is listed twice", m.id));
      }
      s.members.push_back(std::move(m));
    }
  }
  return s;
}

// ---- running the assignors ---------------------------------------------------------------

/// member -> partitions, in the assignor's order. Only members the assignor returned.
using Result = std::map<std::string, TopicPartitions>;

struct Call {
  Result result;
  std::vector<CaseMember> members;  // the input members, `owned` resolved
};

struct StepRun {
  const CaseStep* step = nullptr;
  Call first;
  std::vector<Call> followups;  // cooperative-sticky: the rebalances that follow revocation
  bool unsettled = false;       // still revoking after kMaxFollowups
  std::optional<SubscriptionType> subscription_type;  // server side: what the assignor was told
  const Result& settled_result() const {
    return followups.empty() ? first.result : followups.back().result;
  }
  /// What a later step's `from_step` refers to (see CaseStep::followups).
  const Result& step_result() const { return step->followups ? settled_result() : first.result; }
};

Result run_client(const CaseStep& s, const std::vector<CaseMember>& members) {
  assignors::ClientAssignorInput in;
  in.partitions_per_topic = s.topics;
  in.partition_racks = s.partition_racks;
  in.prefer_rack_aware_logic = s.prefer_rack_aware_logic;
  for (const CaseMember& m : members) {
    in.members.push_back({.member_id = m.id,
                          .group_instance_id = m.instance_id,
                          .topics = m.subscriptions,
                          .owned_partitions = m.owned,
                          .generation = m.generation,
                          .rack = m.rack});
  }
  const ClientAssignment out = assignors::assign_client(s.assignor, in);
  return {out.begin(), out.end()};
}

Result run_server(const CaseStep& s, const std::vector<CaseMember>& members,
                  SubscriptionType& type) {
  std::map<std::string, std::string> name_of_id;
  std::map<std::string, std::string> id_of;
  const auto id_for = [&](const std::string& name) {
    if (const auto it = id_of.find(name); it != id_of.end()) return it->second;
    const auto fixed = s.topic_ids.find(name);
    const std::string id = fixed == s.topic_ids.end() ? name : fixed->second;
    id_of.emplace(name, id);
    name_of_id.emplace(id, name);
    return id;
  };
  assignors::ServerAssignorInput in;
  for (const auto& [name, count] : s.topics) in.topics.push_back({id_for(name), name, count});
  for (const CaseMember& m : members) {
    assignors::ServerMember member{.member_id = m.id,
                                   .instance_id = m.instance_id,
                                   .rack = m.rack,
                                   .subscribed_topics = m.subscriptions};
    for (const auto& tp : m.owned) {
      const std::string id = id_for(tp.topic);
      auto [it, fresh] = member.target.try_emplace(id);
      if (fresh && m.assigned_ordered) member.target_topic_order.push_back(id);
      it->second.push_back(tp.partition);
    }
    if (!m.assigned_ordered) {
      for (auto& [id, partitions] : member.target) std::sort(partitions.begin(), partitions.end());
    }
    in.members.push_back(std::move(member));
  }
  if (!s.members_as_listed) {
    std::sort(in.members.begin(), in.members.end(),
              [](const auto& a, const auto& b) { return a.member_id < b.member_id; });
  }
  type = s.subscription_type.value_or(assignors::subscription_type_by_names(in.members));
  in.subscription_type = type;
  ServerAssignment out;
  if (s.assignor == "simple") {
    assignors::AssignablePartitions assignable;
    if (s.assignable_partitions) {
      assignable.emplace();
      for (const auto& [name, partitions] : *s.assignable_partitions)
        (*assignable)[id_for(name)] = partitions;
    }
    out = assignors::assign_share_simple(in, assignable);
  } else {
    out = assignors::assign_server(s.assignor == "server-range" ? "range" : s.assignor, in);
  }
  Result result;
  for (const auto& [member, by_id] : out) {
    TopicPartitions& tps = result[member];
    for (const auto& [id, partitions] : by_id) {
      const auto it = name_of_id.find(id);
      for (const std::int32_t p : partitions)
        tps.push_back({it == name_of_id.end() ? id : it->second, p});
    }
  }
  return result;
}

const TopicPartitions& held(const Result& r, const std::string& member) {
  static const TopicPartitions kNone;
  const auto it = r.find(member);
  return it == r.end() ? kNone : it->second;
}

TopicPartitions revoked(const CaseMember& m, const Result& r) {
  const std::set<TopicPartition> now(held(r, m.id).begin(), held(r, m.id).end());
  TopicPartitions out;
  for (const auto& tp : std::set<TopicPartition>(m.owned.begin(), m.owned.end())) {
    if (now.count(tp) == 0) out.push_back(tp);
  }
  return out;
}

StepRun run_step(const CaseStep& s, const std::vector<StepRun>& done, const std::string& file) {
  StepRun run;
  run.step = &s;
  run.first.members = s.members;
  for (CaseMember& m : run.first.members) {
    if (m.owned_from_step) m.owned = held(done[*m.owned_from_step].step_result(), m.id);
  }
  const auto call = [&](const std::vector<CaseMember>& members) {
    if (s.side == Side::Client) return run_client(s, members);
    SubscriptionType type{};
    Result r = run_server(s, members, type);
    run.subscription_type = type;
    return r;
  };
  try {
    run.first.result = call(run.first.members);
  } catch (const assignors::PartitionAssignorError& e) {
    throw ScenarioError(file, {fmt::format("the {} assignor refuses this input, as Kafka's does "
                                           "(PartitionAssignorException): {}",
                                           s.assignor, e.what())});
  } catch (const assignors::ShareAssignorCrash& e) {
    throw ScenarioError(
        file, {fmt::format("Kafka's {} assignor fails on this input: {}", s.assignor, e.what())});
  }
  if (s.assignor != "cooperative-sticky") return run;
  // KIP-429: members that revoked something rejoin at once, owning what they kept; the group's
  // generation has moved on by one.
  std::int32_t generation = 0;
  for (const CaseMember& m : s.members) generation = std::max(generation, m.generation.value_or(0));
  const Call* last = &run.first;
  const auto revoking = [](const Call& c) {
    return std::any_of(c.members.begin(), c.members.end(),
                       [&](const CaseMember& m) { return !revoked(m, c.result).empty(); });
  };
  while (revoking(*last)) {
    if (static_cast<int>(run.followups.size()) == kMaxFollowups) {
      run.unsettled = true;
      break;
    }
    Call next;
    next.members = last->members;
    ++generation;
    for (CaseMember& m : next.members) {
      m.owned = held(last->result, m.id);
      m.generation = generation;
    }
    next.result = call(next.members);
    run.followups.push_back(std::move(next));
    last = &run.followups.back();
  }
  return run;
}

// ---- output --------------------------------------------------------------------------------

using ByTopic = std::map<std::string, std::set<std::int32_t>>;

ByTopic by_topic(const TopicPartitions& tps) {
  ByTopic out;
  for (const auto& tp : tps) out[tp.topic].insert(tp.partition);
  return out;
}

// "t1: 0-3,7; t2: 1": sorted, runs of three or more shortened.
std::string show(const TopicPartitions& tps) {
  if (tps.empty()) return "-";
  std::string out;
  for (const auto& [topic, ps] : by_topic(tps)) {
    if (!out.empty()) out += "; ";
    out += topic + ": ";
    std::vector<std::int32_t> v(ps.begin(), ps.end());
    for (std::size_t i = 0; i < v.size();) {
      std::size_t j = i;
      while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
      if (i > 0) out += ",";
      out += j >= i + 2 ? fmt::format("{}-{}", v[i], v[j]) : std::to_string(v[i]);
      if (j == i + 1) {
        out += ',';
        out += std::to_string(v[j]);
      }
      i = j + 1;
    }
  }
  return out;
}

json by_topic_json(const TopicPartitions& tps) {
  json out = json::object();
  for (const auto& [topic, ps] : by_topic(tps))
    out[topic] = std::vector<std::int32_t>(ps.begin(), ps.end());
  return out;
}

// Partitions of topics some member subscribes to that nobody got.
TopicPartitions unassigned(const CaseStep& s, const Call& c) {
  std::set<std::string> wanted;
  for (const CaseMember& m : c.members)
    wanted.insert(m.subscriptions.begin(), m.subscriptions.end());
  std::set<TopicPartition> given;
  for (const auto& [member, tps] : c.result) given.insert(tps.begin(), tps.end());
  TopicPartitions out;
  for (const auto& [topic, count] : s.topics) {
    if (wanted.count(topic) == 0) continue;
    for (std::int32_t p = 0; p < count; ++p) {
      if (given.count({topic, p}) == 0) out.push_back({topic, p});
    }
  }
  return out;
}

std::string table(const CaseStep& s, const Call& c, bool followup_pending) {
  std::vector<CaseMember> members = c.members;
  std::sort(members.begin(), members.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  const bool instances = std::any_of(members.begin(), members.end(),
                                     [](const auto& m) { return m.instance_id.has_value(); });
  const bool racks =
      std::any_of(members.begin(), members.end(), [](const auto& m) { return m.rack.has_value(); });
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"member"};
  if (instances) header.push_back("group.instance.id");
  if (racks) header.push_back("rack");
  for (const char* h :
       {s.side == Side::Client ? "owned" : "current", "gets", "partitions", "gives up"})
    header.push_back(h);
  rows.push_back(header);
  for (const CaseMember& m : members) {
    std::vector<std::string> row = {m.id};
    if (instances) row.push_back(m.instance_id.value_or("-"));
    if (racks) row.push_back(m.rack.value_or("-"));
    row.push_back(std::to_string(m.owned.size()));
    if (c.result.count(m.id) == 0) {
      row.push_back("-");
      row.push_back("(not in the result)");
    } else {
      row.push_back(std::to_string(held(c.result, m.id).size()));
      row.push_back(show(held(c.result, m.id)));
    }
    row.push_back(show(revoked(m, c.result)));
    rows.push_back(row);
  }
  std::vector<std::size_t> width(header.size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], width[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  const TopicPartitions left = unassigned(s, c);
  out += fmt::format("unassigned: {}{}\n", show(left),
                     followup_pending && !left.empty()
                         ? " (being revoked; assigned in the follow-up rebalance)"
                         : "");
  return out;
}

std::string side_text(const CaseStep& s, const StepRun& run) {
  if (s.side == Side::Client) return "client side, classic protocol";
  return fmt::format(
      "server side, consumer protocol, {} subscriptions",
      run.subscription_type == SubscriptionType::Heterogeneous ? "heterogeneous" : "homogeneous");
}

std::string step_text(const StepRun& run) {
  const CaseStep& s = *run.step;
  std::int64_t partitions = 0;
  for (const auto& [topic, count] : s.topics) partitions += count;
  const auto count = [](std::size_t n, const char* noun) {
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
  };
  std::string out = fmt::format("{} ({}): {}, {}, {}\n", s.assignor, side_text(s, run),
                                count(s.members.size(), "member"), count(s.topics.size(), "topic"),
                                count(static_cast<std::size_t>(partitions), "partition"));
  out += table(s, run.first, !run.followups.empty());
  for (std::size_t i = 0; i < run.followups.size(); ++i) {
    out += fmt::format(
        "follow-up rebalance {} (members rejoin owning what they kept, generation {}):\n", i + 1,
        run.followups[i].members.empty() ? 0
                                         : run.followups[i].members.front().generation.value_or(0));
    out += table(s, run.followups[i], i + 1 < run.followups.size());
  }
  if (run.unsettled)
    out += fmt::format("still revoking after {} follow-up rebalances\n", kMaxFollowups);
  return out;
}

json call_json(const CaseStep& s, const Call& c) {
  json out;
  json assignment = json::object();
  json ordered = json::object();
  json given_up = json::object();
  for (const auto& [member, tps] : c.result) {
    assignment[member] = by_topic_json(tps);
    json pairs = json::array();
    for (const auto& tp : tps) pairs.push_back(json::array({tp.topic, tp.partition}));
    ordered[member] = std::move(pairs);
  }
  for (const CaseMember& m : c.members) {
    const TopicPartitions r = revoked(m, c.result);
    if (!r.empty()) given_up[m.id] = by_topic_json(r);
  }
  out["assignment"] = std::move(assignment);
  if (s.side == Side::Client) out["assignment_ordered"] = std::move(ordered);
  out["revoked"] = std::move(given_up);
  out["unassigned"] = by_topic_json(unassigned(s, c));
  return out;
}

json step_json(const StepRun& run) {
  const CaseStep& s = *run.step;
  json result =
      json{{"assignor", s.assignor}, {"side", s.side == Side::Client ? "client" : "server"}};
  if (run.subscription_type) {
    result["subscription_type"] =
        *run.subscription_type == SubscriptionType::Heterogeneous ? "HETEROGENEOUS" : "HOMOGENEOUS";
  }
  result.update(call_json(s, run.first));
  if (s.assignor == "cooperative-sticky") {
    json followups = json::array();
    for (const Call& c : run.followups) followups.push_back(call_json(s, c));
    result["followups"] = std::move(followups);
    json final_assignment = json::object();
    for (const auto& [member, tps] : run.settled_result())
      final_assignment[member] = by_topic_json(tps);
    result["final"] = std::move(final_assignment);
    result["settled"] = !run.unsettled;
  }
  return result;
}

// ---- reconciliation cases ----------------------------------------------------------------

namespace rec = reconciliation;

const std::vector<std::string> kReconciliationCaseKeys = {
    "kind", "name", "id", "notes", "input", "expected", "expected_error"};
const std::vector<std::string> kReconciliationInputKeys = {"member",
                                                           "metadata_topics",
                                                           "has_subscription_changed",
                                                           "resolved_regular_expressions",
                                                           "target_assignment_epoch",
                                                           "target_assignment",
                                                           "partition_epochs",
                                                           "owned_topic_partitions"};
const std::vector<std::string> kReconciliationMemberKeys = {"member_id",
                                                            "state",
                                                            "member_epoch",
                                                            "previous_member_epoch",
                                                            "subscribed_topic_names",
                                                            "subscribed_topic_regex",
                                                            "assigned",
                                                            "assigned_epochs",
                                                            "pending_revocation",
                                                            "pending_revocation_epochs"};

rec::PartitionsWithEpochs read_with_epochs(const json& m, const char* sets_key,
                                           const char* epochs_key, std::int32_t default_epoch,
                                           const std::string& path, Problems& problems) {
  rec::PartitionsWithEpochs out;
  if (m.contains(sets_key) && is_object_at(m[sets_key], child(path, sets_key), problems)) {
    for (const auto& [topic, partitions] : m[sets_key].items()) {
      for (const std::int32_t p :
           partition_list(partitions, child(child(path, sets_key), topic), problems)) {
        out[topic].push_back({p, default_epoch});
      }
    }
  }
  if (m.contains(epochs_key) && is_object_at(m[epochs_key], child(path, epochs_key), problems)) {
    for (const auto& [topic, epochs] : m[epochs_key].items()) {
      const std::string at = child(child(path, epochs_key), topic);
      if (!is_object_at(epochs, at, problems)) continue;
      auto& list = out[topic];
      for (const auto& [key, epoch] : epochs.items()) {
        std::int32_t partition = -1;
        try {
          std::size_t used = 0;
          partition = std::stoi(key, &used);
          if (used != key.size() || partition < 0) partition = -1;
        } catch (const std::exception&) {
          partition = -1;
        }
        if (partition < 0) {
          problems.add(child(at, key), "expected a partition number as the key");
          continue;
        }
        const auto e = int_at(epoch, child(at, key), problems);
        if (!e) continue;
        const auto it = std::find_if(list.begin(), list.end(),
                                     [&](const auto& pe) { return pe.partition == partition; });
        if (it == list.end())
          list.push_back({partition, *e});
        else
          it->assignment_epoch = *e;
      }
    }
  }
  for (auto it = out.begin(); it != out.end();) {
    std::sort(it->second.begin(), it->second.end());
    it = it->second.empty() ? out.erase(it) : std::next(it);
  }
  return out;
}

rec::ConsumerGroupMember read_reconciliation_member(const json& m, const std::string& path,
                                                    Problems& problems) {
  rec::ConsumerGroupMember member;
  if (!is_object_at(m, path, problems)) return member;
  check_keys(m, path, kReconciliationMemberKeys, problems);
  member.member_id = optional_string(m, "member_id", path, problems).value_or("member");
  if (!m.contains("state")) {
    problems.add(child(path, "state"), "missing");
  } else if (auto text = string_at(m["state"], child(path, "state"), problems)) {
    if (auto state = rec::member_state_from_string(*text)) {
      member.state = *state;
    } else {
      problems.add(child(path, "state"),
                   fmt::format("unknown state \"{}\"; expected STABLE, UNREVOKED_PARTITIONS, "
                               "UNRELEASED_PARTITIONS or UNKNOWN",
                               *text));
    }
  }
  if (!m.contains("member_epoch")) {
    problems.add(child(path, "member_epoch"), "missing");
  } else {
    member.member_epoch =
        int_at(m["member_epoch"], child(path, "member_epoch"), problems).value_or(0);
  }
  member.previous_member_epoch = member.member_epoch;
  if (m.contains("previous_member_epoch")) {
    member.previous_member_epoch =
        int_at(m["previous_member_epoch"], child(path, "previous_member_epoch"), problems)
            .value_or(member.member_epoch);
  }
  if (m.contains("subscribed_topic_names")) {
    member.subscribed_topic_names =
        string_list(m["subscribed_topic_names"], child(path, "subscribed_topic_names"), problems);
  }
  member.subscribed_topic_regex = optional_string(m, "subscribed_topic_regex", path, problems);
  // Partitions listed without an epoch map were assigned at the member's epoch.
  member.assigned_partitions =
      read_with_epochs(m, "assigned", "assigned_epochs", member.member_epoch, path, problems);
  member.partitions_pending_revocation = read_with_epochs(
      m, "pending_revocation", "pending_revocation_epochs", member.member_epoch, path, problems);
  return member;
}

struct ReconciliationCase {
  rec::ConsumerGroupMember member;
  std::map<std::string, std::string> topic_ids_by_name;
  std::map<std::string, std::vector<std::string>> resolved;
  rec::TopicIdPartitions target;
  std::int32_t target_epoch = 0;
  std::map<std::string, std::int32_t> epoch_by_topic;
  std::map<std::string, std::map<std::int32_t, std::int32_t>> epoch_by_partition;
  std::int32_t default_epoch = -1;
  std::optional<std::vector<rec::OwnedTopicPartitions>> owned;
  bool subscription_changed = false;
};

ReconciliationCase read_reconciliation(const json& c, const std::string& base, Problems& problems) {
  ReconciliationCase rc;
  check_keys(c, base, kReconciliationCaseKeys, problems);
  const std::string path = child(base, "input");
  if (!c.contains("input")) {
    problems.add(path, "missing");
    return rc;
  }
  const json& in = c["input"];
  if (!is_object_at(in, path, problems)) return rc;
  check_keys(in, path, kReconciliationInputKeys, problems);
  if (!in.contains("member"))
    problems.add(child(path, "member"), "missing");
  else
    rc.member = read_reconciliation_member(in["member"], child(path, "member"), problems);
  if (in.contains("metadata_topics") &&
      is_object_at(in["metadata_topics"], child(path, "metadata_topics"), problems)) {
    for (const auto& [name, topic] : in["metadata_topics"].items()) {
      const std::string at = child(child(path, "metadata_topics"), name);
      if (!is_object_at(topic, at, problems)) continue;
      check_keys(topic, at, {"topic_id", "partitions"}, problems);
      if (!topic.contains("topic_id"))
        problems.add(child(at, "topic_id"), "missing");
      else if (auto id = string_at(topic["topic_id"], child(at, "topic_id"), problems))
        rc.topic_ids_by_name[name] = *id;
    }
  }
  if (in.contains("resolved_regular_expressions") &&
      is_object_at(in["resolved_regular_expressions"], child(path, "resolved_regular_expressions"),
                   problems)) {
    for (const auto& [regex, names] : in["resolved_regular_expressions"].items()) {
      rc.resolved[regex] =
          string_list(names, child(child(path, "resolved_regular_expressions"), regex), problems);
    }
  }
  if (!in.contains("target_assignment_epoch"))
    problems.add(child(path, "target_assignment_epoch"), "missing");
  else
    rc.target_epoch =
        int_at(in["target_assignment_epoch"], child(path, "target_assignment_epoch"), problems)
            .value_or(0);
  if (in.contains("target_assignment") &&
      is_object_at(in["target_assignment"], child(path, "target_assignment"), problems)) {
    for (const auto& [topic, partitions] : in["target_assignment"].items()) {
      rc.target[topic] =
          partition_list(partitions, child(child(path, "target_assignment"), topic), problems);
    }
  }
  if (in.contains("has_subscription_changed")) {
    rc.subscription_changed =
        bool_at(in["has_subscription_changed"], child(path, "has_subscription_changed"), problems)
            .value_or(false);
  }
  if (in.contains("partition_epochs") &&
      is_object_at(in["partition_epochs"], child(path, "partition_epochs"), problems)) {
    const json& pe = in["partition_epochs"];
    const std::string at = child(path, "partition_epochs");
    check_keys(pe, at, {"default", "by_topic", "by_partition"}, problems);
    if (pe.contains("default"))
      rc.default_epoch = int_at(pe["default"], child(at, "default"), problems).value_or(-1);
    if (pe.contains("by_topic") && is_object_at(pe["by_topic"], child(at, "by_topic"), problems)) {
      for (const auto& [topic, e] : pe["by_topic"].items()) {
        if (auto v = int_at(e, child(child(at, "by_topic"), topic), problems))
          rc.epoch_by_topic[topic] = *v;
      }
    }
    if (pe.contains("by_partition") &&
        is_object_at(pe["by_partition"], child(at, "by_partition"), problems)) {
      for (const auto& [topic, per] : pe["by_partition"].items()) {
        const std::string t_at = child(child(at, "by_partition"), topic);
        if (!is_object_at(per, t_at, problems)) continue;
        for (const auto& [key, e] : per.items()) {
          std::int32_t p = -1;
          try {
            p = std::stoi(key);
          } catch (const std::exception&) {
          }
          if (p < 0)
            problems.add(child(t_at, key), "expected a partition number as the key");
          else if (auto v = int_at(e, child(t_at, key), problems))
            rc.epoch_by_partition[topic][p] = *v;
        }
      }
    }
  }
  const std::string owned_at = child(path, "owned_topic_partitions");
  if (!in.contains("owned_topic_partitions")) {
    problems.add(owned_at,
                 "missing; \"absent\" when the heartbeat did not send the field, else a list");
  } else if (const json& owned = in["owned_topic_partitions"];
             owned.is_string() && owned.get<std::string>() == "absent") {
    rc.owned.reset();
  } else if (owned.is_array()) {
    rc.owned.emplace();
    for (std::size_t i = 0; i < owned.size(); ++i) {
      const std::string at = child(owned_at, i);
      if (!is_object_at(owned[i], at, problems)) continue;
      check_keys(owned[i], at, {"topic", "partitions"}, problems);
      rec::OwnedTopicPartitions tp;
      if (!owned[i].contains("topic"))
        problems.add(child(at, "topic"), "missing");
      else
        tp.topic_id = string_at(owned[i]["topic"], child(at, "topic"), problems).value_or("");
      if (owned[i].contains("partitions"))
        tp.partitions = partition_list(owned[i]["partitions"], child(at, "partitions"), problems);
      rc.owned->push_back(std::move(tp));
    }
  } else {
    problems.add(
        owned_at,
        fmt::format("expected \"absent\" or a list of {{\"topic\", \"partitions\"}}, got {}",
                    owned.dump()));
  }
  return rc;
}

json member_json(const rec::ConsumerGroupMember& m) {
  const auto sets = [](const rec::PartitionsWithEpochs& p) {
    json out = json::object();
    for (const auto& [topic, list] : p) {
      std::vector<std::int32_t> ps;
      for (const auto& pe : list) ps.push_back(pe.partition);
      out[topic] = ps;
    }
    return out;
  };
  const auto epochs = [](const rec::PartitionsWithEpochs& p) {
    json out = json::object();
    for (const auto& [topic, list] : p) {
      json per = json::object();
      for (const auto& pe : list) per[std::to_string(pe.partition)] = pe.assignment_epoch;
      out[topic] = std::move(per);
    }
    return out;
  };
  std::vector<std::string> names = m.subscribed_topic_names;
  std::sort(names.begin(), names.end());
  json out{{"state", std::string(rec::to_string(m.state))},
           {"member_epoch", m.member_epoch},
           {"previous_member_epoch", m.previous_member_epoch},
           {"subscribed_topic_names", names}};
  if (m.subscribed_topic_regex) out["subscribed_topic_regex"] = *m.subscribed_topic_regex;
  out["assigned"] = sets(m.assigned_partitions);
  out["assigned_epochs"] = epochs(m.assigned_partitions);
  out["pending_revocation"] = sets(m.partitions_pending_revocation);
  out["pending_revocation_epochs"] = epochs(m.partitions_pending_revocation);
  return out;
}

std::string show_with_epochs(const rec::PartitionsWithEpochs& p,
                             const std::map<std::string, std::string>& name_of_id) {
  if (p.empty()) return "-";
  std::string out;
  for (const auto& [id, list] : p) {
    if (!out.empty()) out += "; ";
    const auto it = name_of_id.find(id);
    out += it == name_of_id.end() || it->second == id ? id : fmt::format("{} ({})", it->second, id);
    out += ":";
    for (const auto& pe : list) out += fmt::format(" {}@{}", pe.partition, pe.assignment_epoch);
  }
  return out;
}

void print_reconciliation(const ReconciliationCase& rc, const json& case_id, bool as_json,
                          std::ostream& out) {
  const rec::PartitionEpochLookup lookup = [&rc](const std::string& topic,
                                                 std::int32_t p) -> std::int32_t {
    if (const auto t = rc.epoch_by_partition.find(topic); t != rc.epoch_by_partition.end()) {
      if (const auto e = t->second.find(p); e != t->second.end()) return e->second;
    }
    if (const auto t = rc.epoch_by_topic.find(topic); t != rc.epoch_by_topic.end())
      return t->second;
    return rc.default_epoch;
  };
  const rec::ReconciliationResult next =
      rec::next_member_state(rc.member, {.target_assignment_epoch = rc.target_epoch,
                                         .target_assignment = rc.target,
                                         .current_partition_epoch = lookup,
                                         .owned_topic_partitions = rc.owned,
                                         .has_subscription_changed = rc.subscription_changed,
                                         .topic_ids_by_name = rc.topic_ids_by_name,
                                         .resolved_regular_expressions = rc.resolved});
  const bool fenced = next.error == rec::ReconciliationError::FencedMemberEpoch;
  if (as_json) {
    json doc{{"kind", "current-assignment-builder"}, {"case", case_id}};
    if (fenced) {
      doc["error"] = "FENCED_MEMBER_EPOCH";
    } else {
      doc["changed"] = next.next.has_value();
      doc["member"] = member_json(next.member_or(rc.member));
    }
    out << doc.dump(2) << "\n";
    return;
  }
  std::map<std::string, std::string> name_of_id;
  for (const auto& [name, id] : rc.topic_ids_by_name) name_of_id[id] = name;
  out << fmt::format(
      "reconciliation (the coordinator's CurrentAssignmentBuilder): member \"{}\", target "
      "assignment epoch {}\n",
      rc.member.member_id, rc.target_epoch);
  std::string owned = "absent (the heartbeat did not send the field)";
  if (rc.owned) {
    TopicPartitions tps;
    for (const auto& t : *rc.owned) {
      const auto it = name_of_id.find(t.topic_id);
      for (const auto p : t.partitions)
        tps.push_back({it == name_of_id.end() ? t.topic_id : it->second, p});
    }
    owned = show(tps);
  }
  out << fmt::format("heartbeat owned partitions: {}\n", owned);
  if (fenced) {
    out << "result: FENCED_MEMBER_EPOCH (the member is in state UNKNOWN and did not report an "
           "empty owned set)\n";
    return;
  }
  const rec::ConsumerGroupMember& after = next.member_or(rc.member);
  const auto block = [&](const char* when, const rec::ConsumerGroupMember& m, const char* note) {
    out << fmt::format("{}: {}, member epoch {} (previous {}){}\n", when, rec::to_string(m.state),
                       m.member_epoch, m.previous_member_epoch, note);
    out << fmt::format("  assigned:            {}\n",
                       show_with_epochs(m.assigned_partitions, name_of_id));
    out << fmt::format("  pending revocation:  {}\n",
                       show_with_epochs(m.partitions_pending_revocation, name_of_id));
  };
  block("before", rc.member, "");
  block("after", after, next.next ? "" : " (unchanged: the coordinator writes no record)");
  out << "(partition@assignment epoch)\n";
}

// ---- the command ---------------------------------------------------------------------------

json load(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw ScenarioError(file, {"cannot read the file"});
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw ScenarioError(file, {std::string("not JSON: ") + e.what()});
  }
}

}  // namespace

void run_assign(const AssignRequest& request, std::ostream& out) {
  json doc = load(request.file);
  assignors::apply_file_defaults(doc);  // a vector file's "defaults" hold for each case
  Problems problems;
  if (!doc.is_object()) {
    problems.add("", "expected one case object (or a vector file with --case ID)");
    throw ScenarioError(request.file, problems.list());
  }
  // One case, or a vector file (then --case picks one; its `kind` applies).
  std::string base;
  const json* the_case = &doc;
  std::string kind = doc.value("kind", std::string());
  if (doc.contains("cases")) {
    if (!request.case_id) {
      throw ScenarioError(request.file,
                          {fmt::format("/cases: this is a vector file with {} cases; pass one case "
                                       "object, or pick one with --case ID",
                                       doc["cases"].is_array() ? doc["cases"].size() : 0)});
    }
    the_case = nullptr;
    if (doc["cases"].is_array()) {
      for (std::size_t i = 0; i < doc["cases"].size(); ++i) {
        const json& c = doc["cases"][i];
        if (c.is_object() && c.value("id", std::string()) == *request.case_id) {
          the_case = &c;
          base = child("/cases", i);
          break;
        }
      }
    }
    if (the_case == nullptr) {
      throw ScenarioError(request.file,
                          {fmt::format("/cases: no case with id \"{}\"", *request.case_id)});
    }
  } else if (request.case_id) {
    throw ScenarioError(request.file,
                        {"--case: the file is one case, not a vector file with `cases`"});
  }
  const json& c = *the_case;
  if (!c.is_object()) {
    problems.add(base, "expected a case object");
    throw ScenarioError(request.file, problems.list());
  }
  if (c.contains("kind") && c["kind"].is_string()) kind = c["kind"].get<std::string>();
  if (kind.empty()) {
    if (c.contains("input"))
      kind = "current-assignment-builder";
    else
      kind = looks_server_side(c) ? "server-assignor" : "client-assignor";
  }
  const std::vector<std::string> kinds = {"client-assignor", "server-assignor",
                                          "current-assignment-builder"};
  const bool share_case = kind == "share-assignor";
  if (share_case) kind = "server-assignor";  // the coordinator's side, the `simple` assignor
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    throw ScenarioError(
        request.file, {fmt::format("/kind: unknown kind \"{}\"; expected client-assignor, "
                                   "server-assignor, share-assignor or current-assignment-builder",
                                   kind)});
  }
  const json case_id = c.contains("id") ? c["id"] : json(nullptr);

  if (kind == "current-assignment-builder") {
    if (request.assignor)
      problems.add("--assignor", "a current-assignment-builder case runs no assignor");
    const ReconciliationCase rc = read_reconciliation(c, base, problems);
    if (!problems.empty()) throw ScenarioError(request.file, problems.list());
    print_reconciliation(rc, case_id, request.json, out);
    return;
  }

  check_keys(c, base, kCaseKeys, problems);
  const bool server_case = kind == "server-assignor";
  // A share-assignor case runs `simple` unless it names its assignor.
  std::optional<std::string> assignor = request.assignor;
  if (share_case && !assignor && !c.contains("assignor")) assignor = "simple";
  std::vector<CaseStep> steps;
  if (c.contains("steps")) {
    const std::string at = child(base, "steps");
    if (is_array_at(c["steps"], at, problems)) {
      if (c["steps"].empty()) problems.add(at, "empty; give at least one step");
      for (std::size_t i = 0; i < c["steps"].size(); ++i) {
        const json& step = c["steps"][i];
        if (!is_object_at(step, child(at, i), problems)) continue;
        check_keys(step, child(at, i), kCaseKeys, problems);
        steps.push_back(read_step(step, c, child(at, i), i, assignor, server_case, problems));
      }
    }
  } else {
    steps.push_back(read_step(c, c, base, 0, assignor, server_case, problems));
  }
  const bool generated = c.contains("generator") ||
                         (c.contains("steps") && c["steps"].is_array() &&
                          std::any_of(c["steps"].begin(), c["steps"].end(), [](const json& s) {
                            return s.is_object() && s.contains("generator");
                          }));
  if (generated) {
    problems.add(child(base, "generator"),
                 "a generated case lists no members; `assign` needs them written out");
  }
  if (!problems.empty()) throw ScenarioError(request.file, problems.list());

  std::vector<StepRun> runs;
  for (const CaseStep& s : steps) runs.push_back(run_step(s, runs, request.file));

  if (request.json) {
    json doc_out{
        {"kind", runs.front().step->side == Side::Client ? "client-assignor" : "server-assignor"},
        {"case", case_id}};
    if (c.contains("steps")) {
      json list = json::array();
      for (const StepRun& r : runs) list.push_back(step_json(r));
      doc_out["steps"] = std::move(list);
    } else {
      doc_out.update(step_json(runs.front()));
    }
    out << doc_out.dump(2) << "\n";
    return;
  }
  if (case_id.is_string()) out << "case: " << case_id.get<std::string>() << "\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs.size() > 1) out << fmt::format("{}step {}: ", i > 0 ? "\n" : "", i);
    out << step_text(runs[i]);
  }
}

}  // namespace rsim::cli
