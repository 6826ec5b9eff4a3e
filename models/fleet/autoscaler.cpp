#include "models/fleet/autoscaler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rsim::fleet {

std::int64_t partition_lag(const AutoscalerSpec& a, const PartitionOffsets& p) {
  if (!p.committed) {
    if (a.offset_reset_latest) return a.scale_to_zero_on_invalid_offset ? 0 : 1;
    return p.latest;
  }
  return p.latest - *p.committed;
}

KafkaLag total_lag(const AutoscalerSpec& a, const std::vector<PartitionOffsets>& partitions) {
  KafkaLag out;
  for (const auto& p : partitions) {
    const std::int64_t lag = partition_lag(a, p);
    out.raw_lag += lag;
    ++out.partitions;
    if (lag > 0) ++out.partitions_with_lag;
  }
  out.lag = out.raw_lag;
  if (!a.allow_idle_consumers || a.limit_to_partitions_with_lag) {
    const std::int64_t bound =
        a.limit_to_partitions_with_lag ? out.partitions_with_lag : out.partitions;
    if (out.lag / a.lag_threshold > bound) {
      out.lag = bound * a.lag_threshold;
      out.capped = true;
    }
  }
  return out;
}

std::int32_t external_metric_replicas(std::int64_t usage, std::int64_t target,
                                      std::int32_t replicas, double tolerance) {
  const auto wanted = static_cast<std::int32_t>(
      std::ceil(static_cast<double>(usage) / static_cast<double>(target)));
  if (replicas <= 0) return wanted;
  const double ratio = static_cast<double>(usage) / (static_cast<double>(target) * replicas);
  return std::fabs(1.0 - ratio) > tolerance ? wanted : replicas;
}

std::int32_t Hpa::change_in_period(sim::SimTime now, sim::SimTime period,
                                   const std::vector<ScaleEvent>& events) {
  std::int32_t sum = 0;
  for (const auto& e : events)
    if (e.at > now - period) sum += e.change;
  return sum;
}

HpaDecision Hpa::decide(sim::SimTime now, std::int32_t current, std::int32_t proposal) {
  HpaDecision d;
  d.proposal = proposal;
  // A new HPA starts as if it had recommended the current count (recordInitialRecommendation).
  if (!initialized_) {
    initialized_ = true;
    recommendations_.push_back({now, current});
  }
  // Stabilization: the lowest recommendation of the scale-up window bounds a rise, the highest
  // of the scale-down window bounds a fall.
  const sim::SimTime up_cutoff = now - up_.stabilization_window;
  const sim::SimTime down_cutoff = now - down_.stabilization_window;
  std::int32_t up = proposal, down = proposal;
  std::optional<std::size_t> old;
  for (std::size_t i = 0; i < recommendations_.size(); ++i) {
    const auto& r = recommendations_[i];
    if (r.at > up_cutoff) up = std::min(up, r.replicas);
    if (r.at > down_cutoff) down = std::max(down, r.replicas);
    if (r.at < up_cutoff && r.at < down_cutoff) old = i;
  }
  std::int32_t stabilized = current;
  if (stabilized < up) stabilized = up;
  if (stabilized > down) stabilized = down;
  if (old)
    recommendations_[*old] = {now, proposal};
  else
    recommendations_.push_back({now, proposal});
  d.stabilized = stabilized;
  if (stabilized != proposal)
    d.limit = proposal > current ? "ScaleUpStabilized" : "ScaleDownStabilized";

  // Rate: the policies of the direction, relative to the count at the start of each period.
  if (stabilized > current) {
    std::int32_t limit;
    if (up_.select == SelectPolicy::Disabled || up_.policies.empty()) {
      limit = current;
    } else {
      limit = up_.select == SelectPolicy::Max ? std::numeric_limits<std::int32_t>::min()
                                              : std::numeric_limits<std::int32_t>::max();
      for (const auto& p : up_.policies) {
        const std::int32_t start = current - change_in_period(now, p.period, up_events_);
        const std::int32_t proposed =
            p.percent ? static_cast<std::int32_t>(std::ceil(start * (1.0 + p.value / 100.0)))
                      : start + p.value;
        limit =
            up_.select == SelectPolicy::Max ? std::max(limit, proposed) : std::min(limit, proposed);
      }
    }
    limit = std::max(limit, current);
    std::int32_t allowed = max_;
    std::string why = "TooManyReplicas";
    if (allowed > limit) {
      allowed = limit;
      why = "ScaleUpLimit";
    }
    d.desired = std::min(stabilized, allowed);
    if (d.desired < stabilized) d.limit = why;
  } else if (stabilized < current) {
    std::int32_t limit;
    if (down_.select == SelectPolicy::Disabled || down_.policies.empty()) {
      limit = current;
    } else {
      limit = down_.select == SelectPolicy::Max ? std::numeric_limits<std::int32_t>::max()
                                                : std::numeric_limits<std::int32_t>::min();
      for (const auto& p : down_.policies) {
        const std::int32_t start = current + change_in_period(now, p.period, down_events_);
        const std::int32_t proposed =
            p.percent ? static_cast<std::int32_t>(start * (1.0 - p.value / 100.0))
                      : start - p.value;
        limit = down_.select == SelectPolicy::Max ? std::min(limit, proposed)
                                                  : std::max(limit, proposed);
      }
    }
    limit = std::min(limit, current);
    std::int32_t allowed = min_;
    std::string why = "TooFewReplicas";
    if (allowed < limit) {
      allowed = limit;
      why = "ScaleDownLimit";
    }
    d.desired = std::max(stabilized, allowed);
    if (d.desired > stabilized) d.limit = why;
  } else {
    d.desired = std::clamp(current, min_, max_);
    if (d.desired != current) d.limit = d.desired > current ? "TooFewReplicas" : "TooManyReplicas";
  }
  return d;
}

void Hpa::record_scale(sim::SimTime now, std::int32_t from, std::int32_t to) {
  if (to > from)
    up_events_.push_back({now, to - from});
  else if (to < from)
    down_events_.push_back({now, from - to});
  // Events older than every policy's period no longer count: drop them.
  sim::SimTime longest{0};
  for (const auto* rules : {&up_, &down_})
    for (const auto& p : rules->policies) longest = std::max(longest, p.period);
  for (auto* events : {&up_events_, &down_events_})
    events->erase(std::remove_if(events->begin(), events->end(),
                                 [&](const ScaleEvent& e) { return e.at <= now - longest; }),
                  events->end());
}

}  // namespace rsim::fleet
