#include "models/scenario/fleet_parse.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/protocol/config.hpp"
#include "models/scenario/spec_json.hpp"

namespace rsim {

namespace {

using json = nlohmann::json;

std::string child(const std::string& ptr, const std::string& key) {
  return ptr + "/" + key;
}
std::string child(const std::string& ptr, std::size_t i) {
  return ptr + "/" + std::to_string(i);
}
std::string shown(const json& v) {
  return shown_value(v, 60);
}

/// The helpers report into `problems` and say whether the value was good.
struct Reader {
  std::vector<std::string>& problems;

  void problem(const std::string& ptr, const std::string& what) {
    problems.push_back(ptr + ": " + what);
  }

  bool object(const json& v, const std::string& ptr, const std::string& level) {
    if (!v.is_object()) {
      problem(ptr, fmt::format("must be an object, got {}", shown(v)));
      return false;
    }
    const auto& accepted = scenario_accepted_keys().at(level);
    for (const auto& [key, value] : v.items())
      if (std::find(accepted.begin(), accepted.end(), key) == accepted.end()) {
        const std::string guess = closest_match(key, accepted);
        problem(
            child(ptr, key),
            "unknown key" + (guess.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", guess)));
      }
    if (const auto it = scenario_required_keys().find(level); it != scenario_required_keys().end())
      for (const auto& key : it->second)
        if (!v.contains(key)) problem(child(ptr, key), "missing");
    return true;
  }
  std::optional<std::int64_t> integer(const json& obj, const char* key, const std::string& ptr,
                                      std::int64_t min, std::int64_t max) {
    const auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    if (!it->is_number_integer()) {
      problem(child(ptr, key), fmt::format("must be an integer, got {}", shown(*it)));
      return std::nullopt;
    }
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
      problem(child(ptr, key), fmt::format("must be <= {}, got {}", max, shown(*it)));
      return std::nullopt;
    }
    const std::int64_t n = it->get<std::int64_t>();
    if (n < min || n > max) {
      problem(child(ptr, key), fmt::format("must be between {} and {}, got {}", min, max, n));
      return std::nullopt;
    }
    return n;
  }
  std::optional<bool> boolean(const json& obj, const char* key, const std::string& ptr) {
    return read_bool(obj, key, child(ptr, key), problems, 60);
  }
  std::optional<std::string> string(const json& obj, const char* key, const std::string& ptr,
                                    const std::vector<std::string>& allowed = {}) {
    const auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    if (!it->is_string() || it->get<std::string>().empty()) {
      problem(child(ptr, key), fmt::format("must be a non-empty string, got {}", shown(*it)));
      return std::nullopt;
    }
    const std::string v = it->get<std::string>();
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
      problem(child(ptr, key),
              fmt::format("must be one of {}, got \"{}\"", fmt::join(allowed, ", "), v));
      return std::nullopt;
    }
    return v;
  }
  /// Kubernetes' IntOrString: an integer >= 0 or "N%".
  std::optional<IntOrPercent> int_or_percent(const json& obj, const char* key,
                                             const std::string& ptr) {
    const auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    if (it->is_number_integer() && it->get<std::int64_t>() >= 0 &&
        it->get<std::int64_t>() <= 1000000)
      return IntOrPercent{it->get<std::int64_t>(), false};
    if (it->is_string()) {
      const std::string v = it->get<std::string>();
      if (v.size() >= 2 && v.size() <= 4 && v.back() == '%' &&
          std::all_of(v.begin(), v.end() - 1, [](char c) { return c >= '0' && c <= '9'; })) {
        const std::int64_t n = std::stoll(v.substr(0, v.size() - 1));
        if (n <= 100) return IntOrPercent{n, true};
      }
    }
    problem(child(ptr, key),
            fmt::format("must be an integer >= 0 or a percentage \"0%\"..\"100%\", got {}",
                        shown(*it)));
    return std::nullopt;
  }
};

constexpr std::int64_t kMaxSeconds = 7 * 24 * 3600;
constexpr std::int64_t kMaxReplicas = 1000;

void parse_rules(Reader& r, const json& v, const std::string& ptr, HpaRules& out) {
  if (!r.object(v, ptr, "scaling_rules")) return;
  if (auto n = r.integer(v, "stabilizationWindowSeconds", ptr, 0, 3600))
    out.stabilization_window = sim::ms(*n * 1000);
  if (auto s = r.string(v, "selectPolicy", ptr, {"Max", "Min", "Disabled"}))
    out.select = *s == "Max"   ? SelectPolicy::Max
                 : *s == "Min" ? SelectPolicy::Min
                               : SelectPolicy::Disabled;
  const auto it = v.find("policies");
  if (it == v.end()) return;
  const std::string pp = child(ptr, "policies");
  if (!it->is_array()) {
    r.problem(pp, fmt::format("must be an array, got {}", shown(*it)));
    return;
  }
  out.policies.clear();
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& p = (*it)[i];
    const std::string ip = child(pp, i);
    if (!r.object(p, ip, "hpa_policy")) continue;
    HpaPolicy policy;
    if (auto t = r.string(p, "type", ip, {"Pods", "Percent"})) policy.percent = *t == "Percent";
    if (auto n = r.integer(p, "value", ip, 1, 100000)) policy.value = static_cast<std::int32_t>(*n);
    if (auto n = r.integer(p, "periodSeconds", ip, 1, 1800)) policy.period = sim::ms(*n * 1000);
    out.policies.push_back(policy);
  }
}

/// One deployment's workload settings: kind, replicas, nodes, timings, the StatefulSet's policy.
void parse_workload(Reader& r, const json& v, const std::string& ptr, DeploymentSpec& d) {
  if (auto k = r.string(v, "kind", ptr, {"Deployment", "StatefulSet"}))
    d.kind = *k == "StatefulSet" ? WorkloadKind::StatefulSet : WorkloadKind::Deployment;
  if (auto n = r.integer(v, "replicas", ptr, 0, kMaxReplicas))
    d.replicas = static_cast<std::int32_t>(*n);
  if (auto n = r.integer(v, "nodes", ptr, 1, 1000)) d.nodes = static_cast<std::int32_t>(*n);
  if (auto n = r.integer(v, "minReadySeconds", ptr, 0, kMaxSeconds))
    d.min_ready = sim::ms(*n * 1000);
  if (auto n = r.integer(v, "terminationGracePeriodSeconds", ptr, 0, kMaxSeconds))
    d.termination_grace = sim::ms(*n * 1000);
  if (const auto it = v.find("preStop_ms"); it != v.end())
    if (auto dist = parse_distribution(*it, child(ptr, "preStop_ms"), r.problems))
      d.pre_stop = *dist;
  if (auto m = r.string(v, "podManagementPolicy", ptr, {"OrderedReady", "Parallel"})) {
    d.parallel = *m == "Parallel";
    if (d.kind != WorkloadKind::StatefulSet)
      r.problem(child(ptr, "podManagementPolicy"), "only a StatefulSet has a podManagementPolicy");
  }
}

/// A deployment's strategy.rollingUpdate (maxSurge, maxUnavailable).
void parse_strategy(Reader& r, const json& v, const std::string& ptr, DeploymentSpec& d) {
  const auto it = v.find("strategy");
  if (it == v.end() || !r.object(*it, child(ptr, "strategy"), "strategy")) return;
  const std::string sp = child(ptr, "strategy");
  r.string(*it, "type", sp, {"RollingUpdate"});
  if (d.kind == WorkloadKind::StatefulSet)
    r.problem(sp,
              "a StatefulSet updates one pod at a time, highest ordinal first (no "
              "maxSurge/maxUnavailable)");
  if (const auto ru = it->find("rollingUpdate");
      ru != it->end() && r.object(*ru, child(sp, "rollingUpdate"), "rollingUpdate")) {
    const std::string rp = child(sp, "rollingUpdate");
    if (auto x = r.int_or_percent(*ru, "maxSurge", rp)) d.max_surge = *x;
    if (auto x = r.int_or_percent(*ru, "maxUnavailable", rp)) d.max_unavailable = *x;
    if (d.max_surge.value == 0 && d.max_unavailable.value == 0 && ru->contains("maxSurge") &&
        ru->contains("maxUnavailable"))
      r.problem(rp, "maxSurge and maxUnavailable must not both be 0 (Kubernetes refuses it)");
  }
}

/// A pod's life: pod_start_ms, readinessProbe, podDisruptionBudget.
void parse_pod_life(Reader& r, const json& v, const std::string& ptr, DeploymentSpec& d) {
  if (const auto it = v.find("pod_start_ms");
      it != v.end() && r.object(*it, child(ptr, "pod_start_ms"), "pod_start")) {
    const std::string sp = child(ptr, "pod_start_ms");
    for (auto [key, out] :
         {std::pair{"scheduling", &d.scheduling}, std::pair{"image_pull", &d.image_pull},
          std::pair{"jvm_start", &d.jvm_start}})
      if (const auto x = it->find(key); x != it->end())
        if (auto dist = parse_distribution(*x, child(sp, key), r.problems)) *out = *dist;
  }
  if (const auto it = v.find("readinessProbe");
      it != v.end() && r.object(*it, child(ptr, "readinessProbe"), "readinessProbe")) {
    d.probe_delay = sim::SimTime{0};
    if (auto n =
            r.integer(*it, "initialDelaySeconds", child(ptr, "readinessProbe"), 0, kMaxSeconds))
      d.probe_delay = sim::ms(*n * 1000);
  }
  if (const auto it = v.find("podDisruptionBudget");
      it != v.end() && r.object(*it, child(ptr, "podDisruptionBudget"), "podDisruptionBudget")) {
    const std::string bp = child(ptr, "podDisruptionBudget");
    d.pdb_min_available = r.int_or_percent(*it, "minAvailable", bp);
    d.pdb_max_unavailable = r.int_or_percent(*it, "maxUnavailable", bp);
    if (it->contains("minAvailable") == it->contains("maxUnavailable"))
      r.problem(bp, "give minAvailable or maxUnavailable (exactly one)");
  }
}

/// The pod template: a consumer without a name (each pod's consumer is named after its pod), read
/// by the consumer rules themselves.
void parse_template(Reader& r, const json& doc, const ScenarioSpec& s, const json& v,
                    const std::string& ptr, DeploymentSpec& d) {
  const auto it = v.find("template");
  if (it == v.end()) return;
  const std::string tp = child(ptr, "template");
  if (!it->is_object()) {
    r.problem(tp, fmt::format("must be an object (a consumer without a name), got {}", shown(*it)));
    return;
  }
  if (it->contains("name")) {
    r.problem(child(tp, "name"), "the pods' consumers are named after their pods; leave it out");
    return;
  }
  json consumer = *it;
  consumer["name"] = d.name.empty() ? std::string("pod") : d.name;
  json one = {{"name", "template"}, {"consumers", json::array({consumer})}};
  for (const char* key : {"topics", "protocols", "duration_ms"})
    if (doc.contains(key)) one[key] = doc.at(key);
  try {
    const ScenarioSpec t = parse_scenario(one, s.source_path);
    d.consumer = std::make_shared<const ConsumerSpec>(t.consumers.at(0));
  } catch (const ScenarioError& e) {
    // The template's problems under its own path ("/consumers/0/x: what" -> ".../template/x:
    // what").
    for (const auto& pr : e.problems()) {
      const std::size_t colon = pr.find(": ");
      if (!pr.starts_with("/consumers/0") || colon == std::string::npos || colon < 12) continue;
      r.problem(tp + pr.substr(12, colon - 12), pr.substr(colon + 2));
    }
  }
}

/// `deployments`: each one whose every key is good joins s.deployments.
void parse_deployments(Reader& r, const json& doc, ScenarioSpec& s) {
  std::vector<std::string> names;
  for (const auto& c : s.consumers) names.push_back(c.name);
  const auto arr = doc.find("deployments");
  if (arr == doc.end()) return;
  if (!arr->is_array()) {
    r.problem("/deployments", fmt::format("must be an array, got {}", shown(*arr)));
    return;
  }
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const json& v = (*arr)[i];
    const std::string ptr = child("/deployments", i);
    if (!r.object(v, ptr, "deployment")) continue;
    const std::size_t before = r.problems.size();
    DeploymentSpec d;
    if (auto n = r.string(v, "name", ptr)) {
      d.name = *n;
      if (std::find(names.begin(), names.end(), *n) != names.end())
        r.problem(child(ptr, "name"),
                  fmt::format("\"{}\" is already a consumer's or deployment's name", *n));
      names.push_back(*n);
    }
    parse_workload(r, v, ptr, d);
    parse_strategy(r, v, ptr, d);
    parse_pod_life(r, v, ptr, d);
    parse_template(r, doc, s, v, ptr, d);
    if (r.problems.size() == before && d.consumer) s.deployments.push_back(std::move(d));
  }
}

/// One autoscaler's KEDA trigger and ScaledObject settings.
void parse_trigger(Reader& r, const json& v, const std::string& ptr, const DeploymentSpec* target,
                   AutoscalerSpec& a) {
  if (target != nullptr) a.group = target->consumer->group;
  if (auto g = r.string(v, "consumerGroup", ptr)) a.group = *g;
  if (auto t = r.string(v, "topic", ptr)) {
    a.topic = *t;
    if (target != nullptr &&
        std::find(target->consumer->topics.begin(), target->consumer->topics.end(), *t) ==
            target->consumer->topics.end())
      r.problem(child(ptr, "topic"),
                fmt::format("the deployment's consumers do not subscribe to \"{}\"", *t));
  }
  if (auto n = r.integer(v, "lagThreshold", ptr, 1, 1'000'000'000'000)) a.lag_threshold = *n;
  if (auto n = r.integer(v, "activationLagThreshold", ptr, 0, 1'000'000'000'000))
    a.activation_lag_threshold = *n;
  if (auto n = r.integer(v, "pollingInterval", ptr, 1, kMaxSeconds))
    a.polling_interval = sim::ms(*n * 1000);
  if (auto n = r.integer(v, "cooldownPeriod", ptr, 0, kMaxSeconds)) a.cooldown = sim::ms(*n * 1000);
  if (auto n = r.integer(v, "minReplicaCount", ptr, 0, kMaxReplicas))
    a.min_replicas = static_cast<std::int32_t>(*n);
  if (auto n = r.integer(v, "maxReplicaCount", ptr, 1, kMaxReplicas))
    a.max_replicas = static_cast<std::int32_t>(*n);
  if (a.min_replicas > a.max_replicas)
    r.problem(child(ptr, "minReplicaCount"), fmt::format("must be <= maxReplicaCount ({}), got {}",
                                                         a.max_replicas, a.min_replicas));
  if (auto b = r.boolean(v, "allowIdleConsumers", ptr)) a.allow_idle_consumers = *b;
  if (auto b = r.boolean(v, "limitToPartitionsWithLag", ptr)) a.limit_to_partitions_with_lag = *b;
  if (a.allow_idle_consumers && a.limit_to_partitions_with_lag)
    r.problem(child(ptr, "limitToPartitionsWithLag"),
              "KEDA refuses it together with allowIdleConsumers");
  if (auto b = r.boolean(v, "scaleToZeroOnInvalidOffset", ptr))
    a.scale_to_zero_on_invalid_offset = *b;
  if (auto p = r.string(v, "offsetResetPolicy", ptr, {"latest", "earliest"}))
    a.offset_reset_latest = *p == "latest";
}

/// The HPA KEDA creates: syncPeriodSeconds, tolerance, behavior.
void parse_hpa(Reader& r, const json& v, const std::string& ptr, AutoscalerSpec& a) {
  const auto h = v.find("hpa");
  if (h == v.end() || !r.object(*h, child(ptr, "hpa"), "hpa")) return;
  const std::string hp = child(ptr, "hpa");
  if (auto n = r.integer(*h, "syncPeriodSeconds", hp, 1, 3600)) a.sync_period = sim::ms(*n * 1000);
  if (const auto t = h->find("tolerance"); t != h->end()) {
    if (!t->is_number() || t->get<double>() < 0 || t->get<double>() >= 1)
      r.problem(child(hp, "tolerance"),
                fmt::format("must be a number in [0, 1), got {}", shown(*t)));
    else
      a.tolerance = t->get<double>();
  }
  if (const auto b = h->find("behavior");
      b != h->end() && r.object(*b, child(hp, "behavior"), "behavior")) {
    const std::string bp = child(hp, "behavior");
    if (const auto up = b->find("scaleUp"); up != b->end())
      parse_rules(r, *up, child(bp, "scaleUp"), a.scale_up);
    if (const auto dn = b->find("scaleDown"); dn != b->end())
      parse_rules(r, *dn, child(bp, "scaleDown"), a.scale_down);
  }
}

/// `autoscalers`: each scales one deployment of s.deployments (at most one per deployment).
void parse_autoscalers(Reader& r, const json& doc, ScenarioSpec& s,
                       const std::vector<std::string>& deployment_names) {
  std::set<std::string> scaled;
  const auto arr = doc.find("autoscalers");
  if (arr == doc.end()) return;
  if (!arr->is_array()) {
    r.problem("/autoscalers", fmt::format("must be an array, got {}", shown(*arr)));
    return;
  }
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const json& v = (*arr)[i];
    const std::string ptr = child("/autoscalers", i);
    if (!r.object(v, ptr, "autoscaler")) continue;
    const std::size_t before = r.problems.size();
    AutoscalerSpec a;
    if (auto n = r.string(v, "name", ptr)) a.name = *n;
    const DeploymentSpec* target = nullptr;
    if (auto n = r.string(v, "deployment", ptr)) {
      a.deployment = *n;
      for (const auto& d : s.deployments)
        if (d.name == *n) target = &d;
      if (target == nullptr) {
        const std::string guess = closest_match(*n, deployment_names);
        r.problem(child(ptr, "deployment"),
                  fmt::format("unknown deployment \"{}\"", *n) +
                      (guess.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", guess)));
      } else if (!scaled.insert(*n).second) {
        r.problem(child(ptr, "deployment"),
                  fmt::format("deployment \"{}\" already has an autoscaler", *n));
      }
    }
    parse_trigger(r, v, ptr, target, a);
    parse_hpa(r, v, ptr, a);
    if (r.problems.size() == before) s.autoscalers.push_back(std::move(a));
  }
}

/// A rollout's configs go over its deployment's template: Kafka refuses keys the pods' group
/// protocol does not support (the rollout's group.protocol, else every protocol the scenario runs).
void check_rollout_configs(Reader& r, const ScenarioSpec& s) {
  std::map<std::string, ConfigMap> merged;  // deployment -> template configs so far
  for (const auto& d : s.deployments) merged[d.name] = d.consumer->config;
  std::set<std::string> protocols;
  for (const auto& v : s.protocols)
    if (v != "share") protocols.insert(group_protocol_of(v));
  for (const auto& ev : s.events) {
    const auto* e = ev.as<verb::Rollout>();
    if (e == nullptr || !e->has_config || merged.count(e->deployment) == 0) continue;
    auto& cfg = merged[e->deployment];
    for (const auto& [k, v] : e->config) cfg[k] = v;
    std::set<std::string> runs = protocols;
    if (const auto gp = cfg.find("group.protocol"); gp != cfg.end())
      runs = {gp->second.get<std::string>()};
    for (const auto& gp : runs)
      for (const auto& key : consumer_keys_rejected_under(gp))
        if (cfg.count(key) > 0)
          r.problem(
              child(child("/events", ev.index), "config"),
              fmt::format("kafka rejects {} with group.protocol={}, which the rolled-out pods run",
                          key, gp));
  }
}

/// The fleet events name a deployment or a node.
void check_fleet_events(Reader& r, const ScenarioSpec& s,
                        const std::vector<std::string>& deployment_names) {
  std::int32_t nodes = 0;
  for (const auto& d : s.deployments) nodes = std::max(nodes, d.nodes);
  for (const auto& ev : s.events) {
    const std::string ptr = child("/events", ev.index);
    if (const auto* e = ev.as<verb::Rollout>();
        e != nullptr && std::find(deployment_names.begin(), deployment_names.end(),
                                  e->deployment) == deployment_names.end()) {
      const std::string guess = closest_match(e->deployment, deployment_names);
      r.problem(child(ptr, "deployment"),
                fmt::format("unknown deployment \"{}\"", e->deployment) +
                    (guess.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", guess)));
    }
    if (const auto* e = ev.as<verb::DrainNode>()) {
      const std::string n = e->node.starts_with("node-") ? e->node.substr(5) : "";
      const bool digits =
          !n.empty() && n.size() <= 4 &&
          std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || std::stoi(n) >= nodes)
        r.problem(child(ptr, "node"),
                  fmt::format("unknown node \"{}\": the deployments' nodes are node-0..node-{}",
                              e->node, std::max(nodes - 1, 0)));
    }
  }
}

}  // namespace

void parse_fleet(const json& doc, ScenarioSpec& s, std::vector<std::string>& problems) {
  Reader r{problems};
  parse_deployments(r, doc, s);
  std::vector<std::string> deployment_names;
  for (const auto& d : s.deployments) deployment_names.push_back(d.name);
  parse_autoscalers(r, doc, s, deployment_names);
  check_rollout_configs(r, s);
  check_fleet_events(r, s, deployment_names);
}

}  // namespace rsim
