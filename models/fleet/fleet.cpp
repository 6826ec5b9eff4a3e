#include "models/fleet/fleet.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "models/fleet/deployment.hpp"
#include "sim/assert.hpp"

namespace rsim {

namespace {
/// kubectl drain retries an eviction the PodDisruptionBudget refused (429) every 5 s.
constexpr std::int64_t kEvictionRetryMs = 5000;

std::string node_name(std::int32_t n) {
  return fmt::format("node-{}", n);
}
}  // namespace

Fleet::Fleet(sim::Kernel& kernel, Tracer& tracer, const ScenarioSpec& spec, std::uint64_t seed,
             FleetHost host)
    : kernel_(kernel), tracer_(tracer), seed_(seed), host_(std::move(host)) {
  for (const auto& d : spec.deployments) {
    Deployment& dep = deployments_.emplace_back(&d, sim::Rng(seed, "deployment-" + d.name));
    dep.replicas = d.replicas;
    dep.templates.push_back(d.consumer);
  }
  for (const auto& a : spec.autoscalers) {
    std::size_t d = 0;
    while (d < spec.deployments.size() && spec.deployments[d].name != a.deployment) ++d;
    SIM_ASSERT(d < spec.deployments.size());
    // KEDA gives its HPA minReplicas = max(minReplicaCount, 1): only KEDA scales to and from 0.
    autoscalers_.emplace_back(
        &a, d, fleet::Hpa(std::max(a.min_replicas, 1), a.max_replicas, a.scale_up, a.scale_down));
  }
}

Fleet::~Fleet() = default;

void Fleet::start() {
  for (std::size_t d = 0; d < deployments_.size(); ++d) reconcile(d);
  for (std::size_t a = 0; a < autoscalers_.size(); ++a) {
    const AutoscalerSpec& s = *autoscalers_[a].spec;
    // Both loops repeat until the run ends (the kernel stops at duration_ms).
    struct Loop {
      static void arm(Fleet* f, sim::SimTime period, std::function<void()> body) {
        f->kernel_.schedule_closure_after(period, [f, period, body] {
          body();
          arm(f, period, body);
        });
      }
    };
    Loop::arm(this, s.polling_interval, [this, a] { keda_poll(a); });
    Loop::arm(this, s.sync_period, [this, a] { hpa_sync(a); });
  }
}

// --- pods ---------------------------------------------------------------------------------------

std::vector<std::size_t> Fleet::live_pods(std::size_t d) const {
  std::vector<std::size_t> out;
  for (std::size_t p = 0; p < pods_.size(); ++p)
    if (pods_[p].deployment == d && !pods_[p].terminating && pods_[p].phase != Phase::Gone)
      out.push_back(p);
  return out;
}

std::int32_t Fleet::pick_node() const {
  // The scheduler spreads: the schedulable node with the fewest pods, the lowest number first.
  std::int32_t nodes = 1;
  for (const auto& d : deployments_) nodes = std::max(nodes, d.spec->nodes);
  std::vector<std::int32_t> load(static_cast<std::size_t>(nodes), 0);
  for (const auto& p : pods_)
    if (p.phase != Phase::Gone && p.node >= 0) ++load[static_cast<std::size_t>(p.node)];
  std::int32_t best = -1;
  for (std::int32_t n = 0; n < nodes; ++n) {
    if (cordoned_.count(n) > 0) continue;
    if (best < 0 || load[static_cast<std::size_t>(n)] < load[static_cast<std::size_t>(best)])
      best = n;
  }
  return best;
}

std::size_t Fleet::create_pod(std::size_t d, std::int32_t revision, std::int32_t ordinal) {
  Deployment& dep = deployments_[d];
  Pod pod;
  pod.deployment = d;
  pod.revision = revision;
  pod.ordinal = ordinal;
  pod.created = kernel_.now();
  pod.name = ordinal >= 0
                 ? fmt::format("{}-{}", dep.spec->name, ordinal)
                 : fmt::format("{}-{}-{}", dep.spec->name, revision, dep.next_index[revision]++);
  // The pod's consumer: the revision's template, named after the pod.
  ConsumerSpec& c =
      consumer_specs_.emplace_back(*dep.templates[static_cast<std::size_t>(revision - 1)]);
  c.name = pod.name;
  for (auto* cfg : {&c.config}) {
    const auto it = cfg->find("group.instance.id");
    if (it != cfg->end() && it->second.is_string()) {
      std::string v = it->second.get<std::string>();
      for (std::size_t at = v.find("$(POD_NAME)"); at != std::string::npos;
           at = v.find("$(POD_NAME)"))
        v.replace(at, 11, pod.name);
      it->second = v;
    }
  }
  pod.consumer_spec = &c;
  pods_.push_back(std::move(pod));
  const std::size_t p = pods_.size() - 1;
  const sim::SimTime scheduling = dep.spec->scheduling.sample(dep.rng);
  kernel_.schedule_closure_after(scheduling, [this, p] { schedule_pod(p); });
  return p;
}

void Fleet::schedule_pod(std::size_t p) {
  Pod& pod = pods_[p];
  if (pod.phase == Phase::Gone) return;
  pod.node = pick_node();
  if (pod.node < 0) return;  // unschedulable: every node is cordoned (it stays Pending)
  pod.phase = Phase::Scheduled;
  Deployment& dep = deployments_[pod.deployment];
  tracer_.publish(trace::PodScheduled{.pod = pod.name,
                                      .deployment = dep.spec->name,
                                      .node = node_name(pod.node),
                                      .revision = pod.revision});
  const sim::SimTime pull = dep.spec->image_pull.sample(dep.rng);
  const sim::SimTime jvm = dep.spec->jvm_start.sample(dep.rng);
  kernel_.schedule_closure_after(pull + jvm, [this, p] { start_pod(p); });
}

void Fleet::start_pod(std::size_t p) {
  Pod& pod = pods_[p];
  if (pod.phase != Phase::Scheduled) return;
  if (pod.terminating) {
    gone(p, "not started");
    return;
  }
  pod.phase = Phase::Running;
  const Deployment& dep = deployments_[pod.deployment];
  tracer_.publish(trace::PodStarted{.pod = pod.name, .deployment = dep.spec->name});
  const int n = incarnations_[pod.name]++;
  const std::uint64_t seed = seed_ ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(n + 1));
  pod.consumer = &host_.spawn(*pod.consumer_spec, seed);
  by_consumer_[pod.name] = p;
  pod.consumer->start();
  if (dep.spec->probe_delay) {
    kernel_.schedule_closure_after(*dep.spec->probe_delay, [this, p] { mark_ready(p, "probe"); });
  }
}

void Fleet::mark_ready(std::size_t p, const char* by) {
  Pod& pod = pods_[p];
  if (pod.ready || pod.terminating || pod.phase != Phase::Running) return;
  pod.ready = true;
  pod.ready_at = kernel_.now();
  const Deployment& dep = deployments_[pod.deployment];
  tracer_.publish(trace::PodReady{.pod = pod.name, .deployment = dep.spec->name, .by = by});
  const auto becomes_available = [this, p] {
    Pod& q = pods_[p];
    if (!q.ready || q.terminating || q.phase != Phase::Running) return;
    q.available = true;
    reconcile(q.deployment);
  };
  if (dep.spec->min_ready > sim::SimTime{0}) {
    kernel_.schedule_closure_after(dep.spec->min_ready, becomes_available);
    reconcile(pod.deployment);
  } else {
    becomes_available();
  }
}

void Fleet::terminate(std::size_t p, const std::string& reason) {
  Pod& pod = pods_[p];
  if (pod.terminating || pod.phase == Phase::Gone) return;
  pod.terminating = true;
  pod.available = false;
  const Deployment& dep = deployments_[pod.deployment];
  tracer_.publish(trace::PodTerminating{.pod = pod.name,
                                        .deployment = dep.spec->name,
                                        .reason = reason,
                                        .grace_ms = sim::to_ms(dep.spec->termination_grace)});
  if (pod.phase != Phase::Running) {
    // No container yet: the pod is deleted at once (a scheduled one stops at its start).
    if (pod.phase == Phase::Pending) gone(p, "not started");
    return;
  }
  // preStop, then SIGTERM: the application calls close(); SIGKILL at the grace deadline.
  const sim::SimTime pre_stop =
      deployments_[pod.deployment].spec->pre_stop.sample(deployments_[pod.deployment].rng);
  kernel_.schedule_closure_after(std::min(pre_stop, dep.spec->termination_grace), [this, p] {
    Pod& q = pods_[p];
    if (q.phase == Phase::Gone || q.consumer == nullptr) return;
    if (q.consumer->running()) q.consumer->request_stop();
  });
  kernel_.schedule_closure_after(dep.spec->termination_grace, [this, p] {
    Pod& q = pods_[p];
    if (q.phase == Phase::Gone) return;
    if (q.consumer != nullptr && q.consumer->running()) q.consumer->crash();
    gone(p, "SIGKILL");
  });
}

void Fleet::gone(std::size_t p, const char* how) {
  Pod& pod = pods_[p];
  if (pod.phase == Phase::Gone) return;
  pod.phase = Phase::Gone;
  pod.ready = pod.available = false;
  tracer_.publish(trace::PodKilled{
      .pod = pod.name, .deployment = deployments_[pod.deployment].spec->name, .how = how});
  reconcile(pod.deployment);
}

void Fleet::on_event(sim::SimTime, const trace::Event& e) {
  if (const auto* a = std::get_if<trace::Assignment>(&e)) {
    const auto it = by_consumer_.find(a->consumer);
    if (it == by_consumer_.end()) return;
    const std::size_t p = it->second;
    if (deployments_[pods_[p].deployment].spec->probe_delay || pods_[p].ready) return;
    kernel_.schedule_closure_after(sim::SimTime{0}, [this, p] { mark_ready(p, "assignment"); });
  } else if (const auto* c = std::get_if<trace::ConsumerClosed>(&e)) {
    const auto it = by_consumer_.find(c->consumer);
    if (it == by_consumer_.end()) return;
    const std::size_t p = it->second;
    if (!pods_[p].terminating) return;
    kernel_.schedule_closure_after(sim::SimTime{0}, [this, p] { gone(p, "closed"); });
  }
}

// --- controllers --------------------------------------------------------------------------------

void Fleet::reconcile(std::size_t d) {
  if (deployments_[d].spec->kind == WorkloadKind::StatefulSet)
    reconcile_stateful_set(d);
  else
    reconcile_deployment(d);
}

void Fleet::reconcile_deployment(std::size_t d) {
  Deployment& dep = deployments_[d];
  const auto count = [&](std::int32_t revision) {
    fleet::ReplicaSetCount c;
    c.replicas = dep.rs_replicas[revision];
    for (const auto& pod : pods_)
      if (pod.deployment == d && pod.revision == revision && pod.available && !pod.terminating)
        ++c.available;
    return c;
  };
  bool rolling = false;
  for (const auto& [rev, n] : dep.rs_replicas)
    if (rev != dep.revision && n > 0) rolling = true;
  if (!rolling) {
    dep.rs_replicas[dep.revision] = dep.replicas;
  } else {
    fleet::ReplicaSetCount next = count(dep.revision);
    std::vector<std::int32_t> old_revisions;
    std::vector<fleet::ReplicaSetCount> old;
    for (const auto& [rev, n] : dep.rs_replicas)
      if (rev != dep.revision && n > 0) {
        old_revisions.push_back(rev);
        old.push_back(count(rev));
      }
    // The controller syncs again after each change it makes: to a fixed point at this instant.
    while (fleet::rolling_update_pass(dep.replicas, dep.spec->max_surge, dep.spec->max_unavailable,
                                      next, old)) {
    }
    dep.rs_replicas[dep.revision] = next.replicas;
    for (std::size_t i = 0; i < old.size(); ++i)
      dep.rs_replicas[old_revisions[i]] = old[i].replicas;
  }
  // Each ReplicaSet controller: as many live pods as spec.replicas. Deleted first: pods not
  // scheduled, not running, not ready, ready the shortest time, the newest
  // (ActivePodsWithRanks).
  for (const auto& [rev, want] : dep.rs_replicas) {
    std::vector<std::size_t> live;
    for (std::size_t p = 0; p < pods_.size(); ++p) {
      const Pod& pod = pods_[p];
      if (pod.deployment == d && pod.revision == rev && !pod.terminating &&
          pod.phase != Phase::Gone)
        live.push_back(p);
    }
    const auto have = static_cast<std::int64_t>(live.size());
    for (std::int64_t i = have; i < want; ++i) create_pod(d, rev, -1);
    if (have > want) {
      std::sort(live.begin(), live.end(), [&](std::size_t a, std::size_t b) {
        const Pod& x = pods_[a];
        const Pod& y = pods_[b];
        const auto key = [](const Pod& q) {
          return std::make_tuple(q.phase != Phase::Pending, q.phase == Phase::Running, q.ready,
                                 q.ready ? -q.ready_at.count() : 0, -q.created.count());
        };
        const auto kx = key(x), ky = key(y);
        if (kx != ky) return kx < ky;
        return a > b;  // the newer pod first
      });
      for (std::int64_t i = 0; i < have - want; ++i)
        terminate(live[static_cast<std::size_t>(i)],
                  rev == dep.revision ? "scale down"
                                      : fmt::format("rolling update to revision {}", dep.revision));
    }
  }
}

void Fleet::reconcile_stateful_set(std::size_t d) {
  Deployment& dep = deployments_[d];
  const bool ordered = !dep.spec->parallel;
  // The newest pod of each ordinal.
  std::map<std::int32_t, std::size_t> by_ordinal;
  for (std::size_t p = 0; p < pods_.size(); ++p)
    if (pods_[p].deployment == d && pods_[p].phase != Phase::Gone) by_ordinal[pods_[p].ordinal] = p;
  const auto healthy = [&](std::size_t p) {
    const Pod& q = pods_[p];
    return !q.terminating && q.ready;
  };
  // Create missing ordinals below replicas, in order (OrderedReady: one at a time, each after the
  // ones below it are Running and Ready).
  for (std::int32_t o = 0; o < dep.replicas; ++o) {
    const auto it = by_ordinal.find(o);
    if (it == by_ordinal.end()) {
      create_pod(d, dep.revision, o);
      if (ordered) return;
      continue;
    }
    if (ordered && !healthy(it->second)) return;
  }
  // Condemned ordinals (>= replicas): the highest first, one at a time when ordered.
  for (auto it = by_ordinal.rbegin(); it != by_ordinal.rend(); ++it) {
    if (it->first < dep.replicas) break;
    if (pods_[it->second].terminating) {
      if (ordered) return;
      continue;
    }
    terminate(it->second, "scale down");
    if (ordered) return;
  }
  for (const auto& [o, p] : by_ordinal)
    if (o >= dep.replicas) return;
  // RollingUpdate: the highest ordinal not at the update revision, once every pod is available.
  for (const auto& [o, p] : by_ordinal)
    if (pods_[p].terminating || !pods_[p].available) return;
  for (auto it = by_ordinal.rbegin(); it != by_ordinal.rend(); ++it) {
    if (pods_[it->second].revision == dep.revision) continue;
    terminate(it->second, fmt::format("rolling update to revision {}", dep.revision));
    return;
  }
}

// --- events -------------------------------------------------------------------------------------

void Fleet::apply(const verb::Rollout& e) {
  std::size_t d = 0;
  while (deployments_[d].spec->name != e.deployment) ++d;
  Deployment& dep = deployments_[d];
  // A new pod template: the current one with the event's configs over it (none: a restart).
  auto next = std::make_shared<ConsumerSpec>(*dep.templates.back());
  for (const auto& [k, v] : e.config) {
    next->config[k] = v;
    for (auto& [gp, cfg] : next->config_by_protocol) cfg.erase(k);
  }
  dep.templates.push_back(std::move(next));
  dep.revision = static_cast<std::int32_t>(dep.templates.size());
  reconcile(d);
}

void Fleet::apply(const verb::DrainNode& e) {
  drain(std::stoi(e.node.substr(5)));
}

void Fleet::drain(std::int32_t node) {
  cordoned_.insert(node);
  // Evict the node's pods in name order, each as its PodDisruptionBudget allows; kubectl drain
  // retries the refused ones.
  std::vector<std::size_t> on_node;
  for (std::size_t p = 0; p < pods_.size(); ++p)
    if (pods_[p].node == node && !pods_[p].terminating && pods_[p].phase != Phase::Gone)
      on_node.push_back(p);
  std::sort(on_node.begin(), on_node.end(),
            [&](std::size_t a, std::size_t b) { return pods_[a].name < pods_[b].name; });
  bool refused = false;
  for (const std::size_t p : on_node) {
    const std::size_t d = pods_[p].deployment;
    const Deployment& dep = deployments_[d];
    std::int64_t healthy = 0;
    for (const std::size_t q : live_pods(d))
      if (pods_[q].ready) ++healthy;
    if (fleet::disruptions_allowed(*dep.spec, dep.replicas, healthy) <= 0) {
      refused = true;
      continue;
    }
    terminate(p, fmt::format("evicted: drain {}", node_name(node)));
  }
  // Replacements for the evicted pods.
  for (std::size_t d = 0; d < deployments_.size(); ++d) reconcile(d);
  if (refused)
    kernel_.schedule_closure_after(sim::ms(kEvictionRetryMs), [this, node] { drain(node); });
}

// --- autoscalers --------------------------------------------------------------------------------

fleet::KafkaLag Fleet::read_lag(const Autoscaler& a) {
  const AutoscalerSpec& s = *a.spec;
  const ConsumerSpec& c = *deployments_[a.deployment].templates.front();
  std::vector<fleet::PartitionOffsets> offsets;
  for (const auto& topic : c.topics) {
    if (!s.topic.empty() && topic != s.topic) continue;
    const std::int32_t n = host_.partitions(topic);
    for (std::int32_t i = 0; i < n; ++i) {
      const TopicPartition tp{topic, i};
      offsets.push_back({host_.committed(s.group, tp), host_.log_end_offset(tp)});
    }
  }
  return fleet::total_lag(s, offsets);
}

void Fleet::keda_poll(std::size_t i) {
  Autoscaler& a = autoscalers_[i];
  const AutoscalerSpec& s = *a.spec;
  const Deployment& dep = deployments_[a.deployment];
  const fleet::KafkaLag lag = read_lag(a);
  if (fleet::active(s, lag)) {
    a.last_active = kernel_.now();
    if (dep.replicas == 0) {
      const std::int32_t to = std::max(s.min_replicas, 1);
      scale(i, to,
            fmt::format("activation: lag {} > activationLagThreshold {}", lag.raw_lag,
                        s.activation_lag_threshold),
            lag.lag);
    }
    return;
  }
  if (dep.replicas > 0 && s.min_replicas == 0 && kernel_.now() - a.last_active >= s.cooldown) {
    scale(i, 0,
          fmt::format("deactivation: lag {} <= activationLagThreshold {} for cooldownPeriod {} s",
                      lag.raw_lag, s.activation_lag_threshold, sim::to_ms(s.cooldown) / 1000),
          lag.lag);
  }
}

void Fleet::hpa_sync(std::size_t i) {
  Autoscaler& a = autoscalers_[i];
  const AutoscalerSpec& s = *a.spec;
  const Deployment& dep = deployments_[a.deployment];
  if (dep.replicas == 0) return;  // an HPA does not scale from zero (KEDA does)
  const fleet::KafkaLag lag = read_lag(a);
  const auto status = static_cast<std::int32_t>(live_pods(a.deployment).size());
  const std::int32_t proposal =
      fleet::external_metric_replicas(lag.lag, s.lag_threshold, status, s.tolerance);
  const fleet::HpaDecision d = a.hpa.decide(kernel_.now(), dep.replicas, proposal);
  if (d.desired == dep.replicas) return;
  // "lag 12400 > 5 x 1000 (lagThreshold): 13 replicas": the metric against what the current
  // replicas are meant to carry, and the HPA's proposal.
  std::string reason =
      fmt::format("lag {} {} {} x {} (lagThreshold): {} replicas", lag.lag,
                  lag.lag > std::int64_t{dep.replicas} * s.lag_threshold ? ">" : "<=", dep.replicas,
                  s.lag_threshold, proposal);
  if (lag.capped)
    reason +=
        fmt::format(" (lag capped at {} partitions x lagThreshold)",
                    s.limit_to_partitions_with_lag ? lag.partitions_with_lag : lag.partitions);
  if (!d.limit.empty()) reason += fmt::format("; {}: {}", d.limit, d.desired);
  const std::int32_t from = dep.replicas;
  scale(i, d.desired, reason, lag.lag);
  a.hpa.record_scale(kernel_.now(), from, d.desired);
}

void Fleet::scale(std::size_t i, std::int32_t to, const std::string& reason, std::int64_t lag) {
  Autoscaler& a = autoscalers_[i];
  Deployment& dep = deployments_[a.deployment];
  tracer_.publish(trace::AutoscalerDecision{.deployment = dep.spec->name,
                                            .group = a.spec->group,
                                            .from = dep.replicas,
                                            .to = to,
                                            .reason = reason,
                                            .lag = lag});
  dep.replicas = to;
  reconcile(a.deployment);
}

}  // namespace rsim
