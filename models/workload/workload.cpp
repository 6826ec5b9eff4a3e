#include "models/workload/workload.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace rsim {

std::int64_t ProductionClock::reference_count(sim::SimTime dt, double rate) {
  const long double x = static_cast<long double>(dt.count()) * rate / 1e6L;
  return static_cast<std::int64_t>(std::floor(x + 1e-9L));
}

sim::SimTime ProductionClock::reference_time_of(std::int64_t k, double rate) {
  auto dt =
      static_cast<std::int64_t>(std::ceil((static_cast<long double>(k) - 1e-9L) * 1e6L / rate));
  while (dt > 0 && reference_count(sim::SimTime{dt - 1}, rate) >= k) --dt;
  while (reference_count(sim::SimTime{dt}, rate) < k) ++dt;
  return sim::SimTime{dt};
}

std::int64_t ProductionClock::whole_rate_of(double rate) {
  if (!(rate >= 1 && rate <= static_cast<double>(kMaxWholeRate)) || rate != std::floor(rate))
    return 0;
  return static_cast<std::int64_t>(rate);
}

std::int64_t ProductionClock::count(sim::SimTime dt) const {
  if (whole_ > 0 && dt.count() >= 0 && dt.count() <= kMaxWholeSpan)
    return dt.count() * whole_ / 1'000'000;
  return reference_count(dt, rate_);
}

sim::SimTime ProductionClock::time_of(std::int64_t k) const {
  if (whole_ > 0 && k >= 0 && k <= kMaxWholeSpan) {
    const std::int64_t dt = (k * 1'000'000 + whole_ - 1) / whole_;
    if (dt <= kMaxWholeSpan) return sim::SimTime{dt};
  }
  return reference_time_of(k, rate_);
}

namespace {
constexpr sim::SimTime kMinGap{1};  // two drawn arrivals are at least 1 µs apart
}  // namespace

Workload::Workload(sim::Kernel& kernel, Tracer& tracer, const std::vector<TopicSpec>& topics,
                   std::uint64_t seed)
    : kernel_(kernel), tracer_(tracer), seed_(seed) {
  for (const auto& spec : topics) {
    Topic& t = topics_[spec.name];
    t.gap = spec.produce_gap;
    t.rate = spec.produce_gap && spec.produce_gap->is_constant() ? spec.records_per_sec : 0;
    if (t.gap && t.gap->is_constant() && t.rate <= 0) t.rate = 1000.0 / t.gap->value;
    t.clock = ProductionClock(t.rate);
    for (std::int32_t i = 0; i < spec.partitions; ++i) {
      Partition p;
      p.rng = sim::Rng(seed_, fmt::format("produce-{}-{}", spec.name, i));
      p.records = spec.initial_records;
      start_production(t, p, sim::SimTime::zero());
      t.partitions.push_back(std::move(p));
    }
  }
}

Workload::Partition* Workload::find(const TopicPartition& tp, const Topic** topic) {
  const auto it = topics_.find(tp.topic);
  if (it == topics_.end() || tp.partition < 0 ||
      tp.partition >= static_cast<std::int32_t>(it->second.partitions.size()))
    return nullptr;
  *topic = &it->second;
  return &it->second.partitions[static_cast<std::size_t>(tp.partition)];
}

void Workload::start_production(const Topic& t, Partition& p, sim::SimTime from) {
  p.base = p.records;
  p.since = from;
  p.next = sim::kNever;
  if (!t.gap) return;
  if (t.gap->is_constant()) {
    p.next = from + t.clock.time_of(1);
  } else {
    p.next = from + std::max(kMinGap, t.gap->sample(p.rng));
  }
}

void Workload::advance(const Topic& t, Partition& p, sim::SimTime now) {
  if (!t.gap || now < p.next) return;
  if (t.gap->is_constant()) {
    const std::int64_t n = t.clock.count(now - p.since);
    p.records = p.base + n;
    p.next = p.since + t.clock.time_of(n + 1);
    return;
  }
  while (p.next <= now) {
    ++p.records;
    p.next += std::max(kMinGap, t.gap->sample(p.rng));
  }
}

std::int64_t Workload::log_end_offset(const TopicPartition& tp) {
  return log_end_offset_at(tp, kernel_.now());
}

std::int64_t Workload::log_end_offset_at(const TopicPartition& tp, sim::SimTime at) {
  const Topic* t = nullptr;
  Partition* p = find(tp, &t);
  if (p == nullptr) return 0;
  advance(*t, *p, at);
  return p->records;
}

sim::SimTime Workload::next_append(const TopicPartition& tp) {
  const Topic* t = nullptr;
  Partition* p = find(tp, &t);
  if (p == nullptr) return sim::kNever;
  advance(*t, *p, kernel_.now());
  return p->next;
}

void Workload::set_production(const std::string& topic, std::optional<sim::Distribution> gap,
                              double records_per_sec) {
  Topic& t = topics_.at(topic);
  ++layout_;  // cached next append times are stale
  const sim::SimTime now = kernel_.now();
  for (auto& p : t.partitions) advance(t, p, now);
  t.gap = std::move(gap);
  t.rate = t.gap && t.gap->is_constant()
               ? (records_per_sec > 0 ? records_per_sec : 1000.0 / t.gap->value)
               : 0;
  t.clock = ProductionClock(t.rate);
  for (auto& p : t.partitions) start_production(t, p, now);
  trace::Produce f{.topic = topic};
  std::string described;
  if (!t.gap)
    f.records_per_sec = std::int64_t{0};
  else if (t.gap->is_constant())
    f.records_per_sec = t.rate;
  else
    f.gap_ms = described = t.gap->describe();
  tracer_.publish(f);
}

void Workload::set_partition_count(const std::string& topic, std::int32_t partitions) {
  Topic& t = topics_[topic];
  ++layout_;  // the partitions may move
  while (static_cast<std::int32_t>(t.partitions.size()) < partitions) {
    Partition p;
    p.rng = sim::Rng(seed_, fmt::format("produce-{}-{}", topic, t.partitions.size()));
    start_production(t, p, kernel_.now());
    t.partitions.push_back(std::move(p));
  }
}

}  // namespace rsim
