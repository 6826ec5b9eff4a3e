// Fleets (issue 38): the Kubernetes controllers' and KEDA's arithmetic with numbers derived by
// hand from their rules (docs/model.md, "Fleets"), and runs whose pods and scaling decisions come
// at exactly the times those rules give.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "models/fleet/autoscaler.hpp"
#include "models/fleet/deployment.hpp"
#include "trace_helpers.hpp"

namespace {

using nlohmann::json;
using rsim::IntOrPercent;

std::vector<json> run_trace(const json& doc, const std::string& variant) {
  const auto spec = rsim::parse_scenario(doc, "fleet.json");
  std::vector<json> out;
  for (const auto& line : rsim::run_scenario(spec, variant, spec.seed).trace_lines)
    out.push_back(json::parse(line));
  return out;
}

/// "pod@ms" for each event of `type`, in trace order.
std::vector<std::string> pods(const std::vector<json>& trace, const std::string& type) {
  std::vector<std::string> out;
  for (const auto& e : trace)
    if (e["type"] == type)
      out.push_back(e["pod"].get<std::string>() + "@" +
                    std::to_string(e["t_us"].get<std::int64_t>() / 1000));
  return out;
}

/// A Deployment of 4 pods whose consumers never matter to readiness: each pod is ready 10 s after
/// it is created (a readiness probe; no scheduling, pull or JVM time), rolled out at 30 s.
json rollout_doc(const json& surge, const json& unavailable) {
  json doc = json::parse(R"({
    "name": "rollout", "seed": 3, "duration_ms": 90000, "protocols": ["classic-cooperative"],
    "topics": [{"name": "t", "partitions": 4}],
    "deployments": [{"name": "app", "replicas": 4, "readinessProbe": {"initialDelaySeconds": 10},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {}},
                     "template": {"group": "g", "topics": ["t"]}}],
    "events": [{"at_ms": 30000, "do": "rollout", "deployment": "app"}]
  })");
  doc["deployments"][0]["strategy"]["rollingUpdate"]["maxSurge"] = surge;
  doc["deployments"][0]["strategy"]["rollingUpdate"]["maxUnavailable"] = unavailable;
  return doc;
}

}  // namespace

TEST_CASE("maxSurge rounds up, maxUnavailable rounds down, and both 0 make maxUnavailable 1") {
  using rsim::fleet::resolve_fenceposts;
  CHECK(resolve_fenceposts({25, true}, {25, true}, 4) ==
        std::pair<std::int64_t, std::int64_t>{1, 1});
  CHECK(resolve_fenceposts({25, true}, {25, true}, 10) ==
        std::pair<std::int64_t, std::int64_t>{3, 2});
  CHECK(resolve_fenceposts({25, true}, {25, true}, 3) ==
        std::pair<std::int64_t, std::int64_t>{1, 0});
  CHECK(resolve_fenceposts({0, false}, {10, true}, 4) ==
        std::pair<std::int64_t, std::int64_t>{0, 1});
  CHECK(resolve_fenceposts({2, false}, {0, false}, 4) ==
        std::pair<std::int64_t, std::int64_t>{2, 0});
}

TEST_CASE(
    "one pass of the rolling update: surge first, then old pods down to desired - maxUnavailable") {
  // 10 replicas, 25%/25%: surge 3, unavailable 2. Nothing new is available yet.
  rsim::fleet::ReplicaSetCount next{0, 0};
  std::vector<rsim::fleet::ReplicaSetCount> old{{10, 10}};
  CHECK(rsim::fleet::rolling_update_pass(10, {25, true}, {25, true}, next, old));
  // new: 13 - 10 = 3; old: all 13 - min available 8 - new unavailable 3 = 2 down.
  CHECK(next.replicas == 3);
  CHECK(old[0].replicas == 8);
  // The next sync: 11 pods, room for 2 more new ones; the old keep 8 available (8 = min).
  old[0].available = 8;
  CHECK(rsim::fleet::rolling_update_pass(10, {25, true}, {25, true}, next, old));
  CHECK(next.replicas == 5);
  CHECK(old[0].replicas == 8);
  CHECK_FALSE(rsim::fleet::rolling_update_pass(10, {25, true}, {25, true}, next, old));
  // Unhealthy old pods go first, even below the available floor's allowance.
  rsim::fleet::ReplicaSetCount n2{1, 1};
  std::vector<rsim::fleet::ReplicaSetCount> o2{{3, 1}};
  CHECK(rsim::fleet::rolling_update_pass(4, {0, false}, {1, false}, n2, o2));
  // all 4 - min 3 - 0 = 1: one of the 2 unhealthy old pods; available 2 < 3: no more.
  CHECK(o2[0].replicas == 2);
}

TEST_CASE(
    "rollout timelines: which pod stops and starts when, for three maxSurge/maxUnavailable pairs") {
  // Old pods app-1-0..3 are all ready at 10 s; the ReplicaSet deletes the newest first.
  SUBCASE("maxSurge 1, maxUnavailable 0: one new pod, then one old pod, every 10 s") {
    const auto trace = run_trace(rollout_doc(1, 0), "classic-cooperative");
    CHECK(pods(trace, "pod.scheduled") ==
          std::vector<std::string>{"app-1-0@0", "app-1-1@0", "app-1-2@0", "app-1-3@0",
                                   "app-2-0@30000", "app-2-1@40000", "app-2-2@50000",
                                   "app-2-3@60000"});
    CHECK(pods(trace, "pod.terminating") ==
          std::vector<std::string>{"app-1-3@40000", "app-1-2@50000", "app-1-1@60000",
                                   "app-1-0@70000"});
  }
  SUBCASE("maxSurge 0, maxUnavailable 1: one old pod down, its replacement at once") {
    const auto trace = run_trace(rollout_doc(0, 1), "classic-cooperative");
    CHECK(pods(trace, "pod.terminating") ==
          std::vector<std::string>{"app-1-3@30000", "app-1-2@40000", "app-1-1@50000",
                                   "app-1-0@60000"});
    CHECK(pods(trace, "pod.scheduled") ==
          std::vector<std::string>{"app-1-0@0", "app-1-1@0", "app-1-2@0", "app-1-3@0",
                                   "app-2-0@30000", "app-2-1@40000", "app-2-2@50000",
                                   "app-2-3@60000"});
  }
  SUBCASE("25% / 25% of 4 (surge 1, unavailable 1): two at a time, done at 50 s") {
    const auto trace = run_trace(rollout_doc("25%", "25%"), "classic-cooperative");
    CHECK(pods(trace, "pod.scheduled") ==
          std::vector<std::string>{"app-1-0@0", "app-1-1@0", "app-1-2@0", "app-1-3@0",
                                   "app-2-0@30000", "app-2-1@30000", "app-2-2@40000",
                                   "app-2-3@40000"});
    CHECK(pods(trace, "pod.terminating") ==
          std::vector<std::string>{"app-1-3@30000", "app-1-2@40000", "app-1-1@40000",
                                   "app-1-0@50000"});
  }
}

TEST_CASE("a StatefulSet starts in ordinal order and updates highest first, one pod at a time") {
  json doc = rollout_doc(1, 0);
  auto& d = doc["deployments"][0];
  d["kind"] = "StatefulSet";
  d["replicas"] = 3;
  d.erase("strategy");
  d["template"]["config"] = {{"group.instance.id", "$(POD_NAME)"}};
  doc["events"][0]["at_ms"] = 60000;
  const auto trace = run_trace(doc, "classic-cooperative");
  const auto scheduled = pods(trace, "pod.scheduled");
  REQUIRE(scheduled.size() == 6);
  // OrderedReady: app-1 after app-0 is ready, app-2 after app-1.
  CHECK(std::vector<std::string>(scheduled.begin(), scheduled.begin() + 3) ==
        std::vector<std::string>{"app-0@0", "app-1@10000", "app-2@20000"});
  std::vector<std::string> order;
  std::map<std::string, std::int64_t> terminating, killed, rescheduled;
  for (const auto& e : trace) {
    const std::int64_t t = e["t_us"].get<std::int64_t>();
    if (e["type"] == "pod.terminating") {
      order.push_back(e["pod"]);
      terminating[e["pod"]] = t;
    }
    if (e["type"] == "pod.killed") {
      killed[e["pod"]] = t;
      CHECK(e["how"] == "closed");
    }
    if (e["type"] == "pod.scheduled" && t >= 60'000'000) rescheduled[e["pod"]] = t;
  }
  CHECK(order == std::vector<std::string>{"app-2", "app-1", "app-0"});
  CHECK(terminating["app-2"] == 60'000'000);
  // Each pod comes back under its name after the old one is gone; the next goes when it is ready.
  for (const std::string p : {"app-2", "app-1", "app-0"}) CHECK(rescheduled[p] == killed[p]);
  CHECK(terminating["app-1"] == rescheduled["app-2"] + 10'000'000);
  CHECK(terminating["app-0"] == rescheduled["app-1"] + 10'000'000);
}

TEST_CASE("KEDA's kafka lag: capped at lagThreshold x partitions unless allowIdleConsumers") {
  rsim::AutoscalerSpec a;
  a.lag_threshold = 1000;
  const std::vector<rsim::fleet::PartitionOffsets> parts{
      {100, 5100}, {0, 3000}, {700, 700}, {1000, 5400}};
  auto l = rsim::fleet::total_lag(a, parts);
  CHECK(l.raw_lag == 12400);
  CHECK(l.partitions == 4);
  CHECK(l.partitions_with_lag == 3);
  CHECK(l.lag == 4000);  // 12 > 4 partitions: 4 x 1000
  a.allow_idle_consumers = true;
  CHECK(rsim::fleet::total_lag(a, parts).lag == 12400);
  a.allow_idle_consumers = false;
  a.limit_to_partitions_with_lag = true;
  CHECK(rsim::fleet::total_lag(a, parts).lag == 3000);
  // No committed offset: 1 (latest), 0 (scaleToZeroOnInvalidOffset) or the whole log (earliest).
  const rsim::fleet::PartitionOffsets none{std::nullopt, 800};
  CHECK(rsim::fleet::partition_lag(a, none) == 1);
  a.scale_to_zero_on_invalid_offset = true;
  CHECK(rsim::fleet::partition_lag(a, none) == 0);
  a.offset_reset_latest = false;
  CHECK(rsim::fleet::partition_lag(a, none) == 800);
  // Activation compares the uncapped lag.
  a.activation_lag_threshold = 12400;
  CHECK_FALSE(rsim::fleet::active(a, l));
  a.activation_lag_threshold = 12399;
  CHECK(rsim::fleet::active(a, l));
}

TEST_CASE("the HPA's replicas for an AverageValue external metric, with its 10% tolerance") {
  using rsim::fleet::external_metric_replicas;
  CHECK(external_metric_replicas(12400, 1000, 10, 0.1) == 13);  // ratio 1.24
  CHECK(external_metric_replicas(10900, 1000, 10, 0.1) == 10);  // ratio 1.09: within tolerance
  CHECK(external_metric_replicas(8900, 1000, 10, 0.1) == 9);    // ratio 0.89
  CHECK(external_metric_replicas(0, 1000, 5, 0.1) == 0);
}

TEST_CASE("HPA behavior: scale-up policies, the scale-down window and a Pods policy's period") {
  const auto s = [](std::int64_t sec) { return sim::ms(sec * 1000); };
  SUBCASE("default scale-up: the larger of +100% and +4 pods per 15 s") {
    rsim::fleet::Hpa h(1, 50, rsim::default_scale_up(), rsim::default_scale_down());
    auto d = h.decide(s(15), 2, 20);
    CHECK(d.desired == 6);  // max(ceil(2 x 2), 2 + 4)
    CHECK(d.limit == "ScaleUpLimit");
    h.record_scale(s(15), 2, 6);
    CHECK(h.decide(s(20), 6, 20).desired == 6);   // 4 added within 15 s: the period starts at 2
    CHECK(h.decide(s(30), 6, 20).desired == 12);  // the event is 15 s old: from 6, max(12, 10)
    rsim::HpaRules min_rule = rsim::default_scale_up();
    min_rule.select = rsim::SelectPolicy::Min;
    rsim::fleet::Hpa m(1, 50, min_rule, rsim::default_scale_down());
    CHECK(m.decide(s(15), 2, 20).desired == 4);
  }
  SUBCASE("the default 300 s scale-down window keeps the highest recommendation") {
    rsim::fleet::Hpa h(1, 50, rsim::default_scale_up(), rsim::default_scale_down());
    // The first sync at 0 s records 10 (the HPA's start); every later sync proposes 2.
    CHECK(h.decide(s(0), 10, 10).desired == 10);
    std::int64_t first = -1;
    for (std::int64_t t = 15; t <= 600 && first < 0; t += 15) {
      const auto d = h.decide(s(t), 10, 2);
      if (d.desired != 10) {
        first = t;
        CHECK(d.desired == 2);
      } else {
        CHECK(d.limit == "ScaleDownStabilized");
      }
    }
    CHECK(first == 300);  // the recommendation of 10 at 0 s leaves the window (0, 300]
  }
  SUBCASE("a scale-up window holds the count the HPA started with for that long") {
    rsim::HpaRules up = rsim::default_scale_up();
    up.stabilization_window = s(60);
    rsim::fleet::Hpa h(1, 50, up, rsim::default_scale_down());
    const auto d = h.decide(s(15), 2, 20);  // records 2 (its start), then 20
    CHECK(d.desired == 2);
    CHECK(d.limit == "ScaleUpStabilized");
    CHECK(h.decide(s(60), 2, 20).desired == 2);  // 2 at 15 s is inside (0, 60]
    CHECK(h.decide(s(75), 2, 20).desired == 6);  // out of (15, 75]: 20 wanted, max(+100%, +4)
  }
  SUBCASE("scale-down by at most 1 pod per 60 s, no window") {
    rsim::HpaRules down;
    down.policies = {{false, 1, s(60)}};
    rsim::fleet::Hpa h(1, 50, rsim::default_scale_up(), down);
    auto d = h.decide(s(0), 5, 1);
    CHECK(d.desired == 4);
    CHECK(d.limit == "ScaleDownLimit");
    h.record_scale(s(0), 5, 4);
    CHECK(h.decide(s(30), 4, 1).desired == 4);
    CHECK(h.decide(s(60), 4, 1).desired == 3);
  }
}

TEST_CASE("KEDA and the HPA scale a deployment whose lag is known: 1 -> 5 -> 10 -> 12") {
  // Pods take an hour to start, so nothing commits: with offsetResetPolicy earliest every
  // partition's lag is its whole log, 4 x 3100 = 12400 records; lagThreshold 1000 wants 13.
  const json doc = json::parse(R"({
    "name": "keda", "seed": 1, "duration_ms": 60000, "protocols": ["consumer"],
    "topics": [{"name": "t", "partitions": 4, "initial_records": 3100}],
    "deployments": [{"name": "app", "replicas": 1, "pod_start_ms": {"jvm_start": 3600000},
                     "template": {"group": "g", "topics": ["t"]}}],
    "autoscalers": [{"name": "keda", "deployment": "app", "lagThreshold": 1000, "allowIdleConsumers": true,
                     "offsetResetPolicy": "earliest", "minReplicaCount": 1, "maxReplicaCount": 12}]
  })");
  std::vector<std::string> decisions;
  const auto trace = run_trace(doc, "consumer");
  for (const auto& e : trace)
    if (e["type"] == "autoscaler.decision")
      decisions.push_back(std::to_string(e["t_us"].get<std::int64_t>() / 1000) + ":" +
                          std::to_string(e["from"].get<int>()) + "->" +
                          std::to_string(e["to"].get<int>()) + " " +
                          e["reason"].get<std::string>());
  CHECK(decisions ==
        std::vector<std::string>{
            "15000:1->5 lag 12400 > 1 x 1000 (lagThreshold): 13 replicas; ScaleUpLimit: 5",
            "30000:5->10 lag 12400 > 5 x 1000 (lagThreshold): 13 replicas; ScaleUpLimit: 10",
            "45000:10->12 lag 12400 > 10 x 1000 (lagThreshold): 13 replicas; TooManyReplicas: 12"});
  const auto spec = rsim::parse_scenario(doc, "fleet.json");
  reports::SummarySink summary({.scenario = "keda", .protocol = "consumer", .seed = 1});
  rsim::run_scenario(spec, "consumer", 1, std::vector<rsim::TraceSink*>{&summary});
  const auto s = summary.finish();
  CHECK(s["metrics"]["scaling_actions"] == 3);
  CHECK(s["metrics"]["flaps"] == 0);
  CHECK(s["scaling"].size() == 3);
  CHECK(s["scaling"][2]["to"] == 12);
}

TEST_CASE("KEDA activates a deployment at 0 at its polling interval, then the HPA takes over") {
  const json doc = json::parse(R"({
    "name": "keda0", "seed": 1, "duration_ms": 40000, "protocols": ["classic-eager"],
    "topics": [{"name": "t", "partitions": 4, "initial_records": 3100}],
    "deployments": [{"name": "app", "replicas": 0, "pod_start_ms": {"jvm_start": 3600000},
                     "template": {"group": "g", "topics": ["t"]}}],
    "autoscalers": [{"name": "keda", "deployment": "app", "lagThreshold": 1000, "pollingInterval": 30,
                     "offsetResetPolicy": "earliest", "maxReplicaCount": 12}]
  })");
  std::vector<std::string> decisions;
  for (const auto& e : run_trace(doc, "classic-eager"))
    if (e["type"] == "autoscaler.decision")
      decisions.push_back(std::to_string(e["t_us"].get<std::int64_t>() / 1000) + ":" +
                          std::to_string(e["from"].get<int>()) + "->" +
                          std::to_string(e["to"].get<int>()));
  // Not allowIdleConsumers: the metric is capped at 4 partitions x 1000 = 4000 -> 4 replicas.
  CHECK(decisions == std::vector<std::string>{"30000:0->1", "30000:1->4"});
}

TEST_CASE("fleet input problems: named by path, all in one pass") {
  const json doc = json::parse(R"({
    "name": "bad", "topics": [{"name": "t", "partitions": 4}],
    "deployments": [{"name": "app", "kind": "Deployments", "template": {"group": "g", "topics": ["u"]},
                     "strategy": {"rollingUpdate": {"maxSurge": "150%"}}}],
    "autoscalers": [{"name": "k", "deployment": "apq", "lagThreshold": 0}],
    "events": [{"at_ms": 10, "do": "drain-node", "node": "node-3"}]
  })");
  try {
    rsim::parse_scenario(doc, "bad.json");
    FAIL("accepted");
  } catch (const rsim::ScenarioError& e) {
    const std::string m = e.what();
    CHECK(m.find(
              "/deployments/0/kind: must be one of Deployment, StatefulSet, got \"Deployments\"") !=
          std::string::npos);
    CHECK(m.find("/deployments/0/template/topics/0: unknown topic \"u\"") != std::string::npos);
    CHECK(m.find("/deployments/0/strategy/rollingUpdate/maxSurge: must be an integer >= 0 or a "
                 "percentage") != std::string::npos);
    CHECK(m.find("/autoscalers/0/deployment: unknown deployment \"apq\"") != std::string::npos);
    CHECK(m.find("/autoscalers/0/lagThreshold: must be between 1 and") != std::string::npos);
    CHECK(m.find("/events/0/node: unknown node \"node-3\"") != std::string::npos);
  }
}

TEST_CASE("drain-node under a PodDisruptionBudget: one eviction at a time, retried every 5 s") {
  // 4 pods spread over 2 nodes (app-1-0, app-1-2 on node-0), each ready 10 s after it starts;
  // maxUnavailable 1: with 4 ready pods one eviction is allowed, with 3 none.
  const json doc = json::parse(R"({
    "name": "drain", "seed": 1, "duration_ms": 60000, "protocols": ["classic-cooperative"],
    "topics": [{"name": "t", "partitions": 4}],
    "deployments": [{"name": "app", "replicas": 4, "nodes": 2, "readinessProbe": {"initialDelaySeconds": 10},
                     "podDisruptionBudget": {"maxUnavailable": 1},
                     "template": {"group": "g", "topics": ["t"]}}],
    "events": [{"at_ms": 30000, "do": "drain-node", "node": "node-0"}]
  })");
  const auto trace = run_trace(doc, "classic-cooperative");
  std::vector<std::string> nodes;
  for (const auto& e : trace)
    if (e["type"] == "pod.scheduled")
      nodes.push_back(e["pod"].get<std::string>() + ":" + e["node"].get<std::string>());
  CHECK(nodes == std::vector<std::string>{"app-1-0:node-0", "app-1-1:node-1", "app-1-2:node-0",
                                          "app-1-3:node-1", "app-1-4:node-1", "app-1-5:node-1"});
  // app-1-2's eviction is refused at 30 s and 35 s; at 40 s app-1-0's replacement is ready.
  CHECK(pods(trace, "pod.terminating") ==
        std::vector<std::string>{"app-1-0@30000", "app-1-2@40000"});
  CHECK(pods(trace, "pod.scheduled").back() == "app-1-5@40000");
  CHECK(pods(trace, "pod.ready") == std::vector<std::string>{"app-1-0@10000", "app-1-1@10000",
                                                             "app-1-2@10000", "app-1-3@10000",
                                                             "app-1-4@40000", "app-1-5@50000"});
}
