// The producers: each partition's log end offset over virtual time, from the topic's
// `initial_records` and `produce` (a rate or a distribution of the gap between records), and
// the `produce` events that change the rate later. Production is lazy: no kernel event per
// record. A partition's arrivals are computed on demand when its log end offset is asked for
// (time only moves forward), each partition drawing from its own RNG stream
// ("produce-<topic>-<partition>"), so the answers do not depend on who asks or in what order.
//
// A constant rate r (records/s) is exact: after t µs of production, floor(t·r/10^6) records have
// been appended, the k-th at ceil(k·10^6/r) µs. Any other gap distribution draws one gap per
// record. A rate change at time T takes effect at T: the next record comes one new gap after T
// (for a constant rate, T + 1000/r ms), and the pending arrival of the old rate is dropped.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/protocol/topic_partition.hpp"
#include "models/spec/scenario_spec.hpp"
#include "models/trace/trace_events.hpp"
#include "sim/distribution.hpp"
#include "sim/kernel.hpp"
#include "sim/rng.hpp"

namespace rsim {

/// A constant rate's arithmetic: after dt of production at r records/s, floor(dt·r/10^6)
/// records have been appended (with 10^-9 of slack for a rate that is not whole), the k-th at
/// the smallest dt that reaches k. A whole rate (1 to 10^6 records/s) over spans up to 2^40 µs
/// (12.7 days) is computed in integers, with the same results as the long double formula (its
/// quotient's error, under 2^-23, never reaches the 10^-6 that separates a count from the next
/// integer); the formula switches the x87 rounding mode several times a call, and every lag
/// sample and every poll asks it.
class ProductionClock {
 public:
  ProductionClock() = default;
  explicit ProductionClock(double rate) : rate_(rate), whole_(whole_rate_of(rate)) {}
  /// Records after dt of production.
  std::int64_t count(sim::SimTime dt) const;
  /// The smallest dt with count(dt) >= k.
  sim::SimTime time_of(std::int64_t k) const;
  /// True when count() and time_of() take the integer path.
  bool whole() const { return whole_ > 0; }

  /// The long double formula, for any rate (what count() and time_of() equal).
  static std::int64_t reference_count(sim::SimTime dt, double rate);
  static sim::SimTime reference_time_of(std::int64_t k, double rate);

  static constexpr std::int64_t kMaxWholeRate = 1'000'000;
  static constexpr std::int64_t kMaxWholeSpan = std::int64_t{1} << 40;

 private:
  static std::int64_t whole_rate_of(double rate);
  double rate_ = 0;
  std::int64_t whole_ = 0;  // the rate when whole, else 0
};

class Workload {
 public:
  Workload(sim::Kernel& kernel, Tracer& tracer, const std::vector<TopicSpec>& topics,
           std::uint64_t seed);
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // Opaque to callers (held through Ref).
  struct Partition {
    std::int64_t records = 0;  // appended so far (the log end offset)
    // Constant rate: records = base + floor((now - since)·rate/10^6).
    std::int64_t base = 0;
    sim::SimTime since{0};
    // Drawn gaps: the instant of the next record.
    sim::SimTime next{sim::kNever};
    sim::Rng rng{0, ""};
  };
  struct Topic {
    std::optional<sim::Distribution> gap;
    double rate = 0;        // records per second when the gap is constant
    ProductionClock clock;  // of `rate`
    std::vector<Partition> partitions;
  };

  /// A partition found once (no lookup by topic name per call): valid until layout() changes.
  struct Ref {
    const Topic* topic = nullptr;
    Partition* partition = nullptr;  // nullptr: no such partition (log end offset 0, no appends)
  };
  Ref ref(const TopicPartition& tp) {
    const Topic* t = nullptr;
    Partition* p = find(tp, &t);
    return Ref{t, p};
  }
  /// Changes whenever production changes or partitions are added: Refs and any cached next
  /// append time are stale then.
  std::uint64_t layout() const { return layout_; }
  std::int64_t log_end_offset(Ref r) {
    if (r.partition == nullptr) return 0;
    advance(*r.topic, *r.partition, kernel_.now());
    return r.partition->records;
  }
  sim::SimTime next_append(Ref r) {
    if (r.partition == nullptr) return sim::kNever;
    advance(*r.topic, *r.partition, kernel_.now());
    return r.partition->next;
  }

  /// The partition's log end offset now (0 for an unknown partition).
  std::int64_t log_end_offset(const TopicPartition& tp);
  /// The log end offset at `at` (not before the last time asked about this partition).
  std::int64_t log_end_offset_at(const TopicPartition& tp, sim::SimTime at);
  /// The instant the log end offset next grows (sim::kNever if no production).
  sim::SimTime next_append(const TopicPartition& tp);
  /// Log start offset: retention is not modelled, so always 0.
  std::int64_t log_start_offset(const TopicPartition&) const { return 0; }

  /// The `produce` event: from now on every partition of `topic` appends with this gap
  /// (std::nullopt: production stops). Emits a `produce` trace event.
  void set_production(const std::string& topic, std::optional<sim::Distribution> gap,
                      double records_per_sec);
  /// `add-partitions`: new partitions start empty and produce at the topic's current rate.
  void set_partition_count(const std::string& topic, std::int32_t partitions);

 private:
  /// The partition and its topic, found with one lookup (nullptr: no such partition).
  Partition* find(const TopicPartition& tp, const Topic** topic);
  void advance(const Topic& t, Partition& p, sim::SimTime now);
  void start_production(const Topic& t, Partition& p, sim::SimTime from);

  std::uint64_t layout_ = 0;
  sim::Kernel& kernel_;
  Tracer& tracer_;
  std::uint64_t seed_;
  std::map<std::string, Topic> topics_;
};

}  // namespace rsim
