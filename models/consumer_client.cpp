#include "models/consumer_client.hpp"

#include <algorithm>
#include <cmath>

namespace rsim {

ConsumerClient::ConsumerClient(sim::Kernel& kernel, sim::Tracer& tracer,
                               sim::Network<Envelope>& network, const ClusterMetadata& cluster,
                               const ConsumerSpec& spec, ConsumerConfig config, std::uint64_t seed,
                               Workload& workload, LagMonitor* lag, const char* network_thread)
    : kernel_(kernel),
      tracer_(tracer),
      network_(network),
      cluster_(cluster),
      spec_(spec),
      config_(std::move(config)),
      rng_(seed, "consumer-" + spec.name),
      process_(kernel),
      app_(process_, "application"),
      network_thread_(process_, network_thread),
      poll_return_timer_(kernel, [this] { on_poll_return(); }, &app_),
      callback_timer_(kernel, [this] { on_callback_end(); }, &app_),
      fetch_wake_timer_(kernel, [this] { on_app_wake(); }, &app_),
      processing_timer_(kernel, [this] { on_processing_end(); }, &app_),
      commit_retry_timer_(kernel, [this] { commit_after_batch(); }, &app_),
      request_timeout_timer_(kernel, [this] { on_request_timeout_check(); }, &network_thread_),
      stall_end_timer_(kernel,
                       [this] {
                         app_.unstall();
                         // A batch being processed or a commitSync() goes on; otherwise the loop
                         // polls again.
                         if (process_.alive() && close_stage_ == CloseStage::None && !batch_ &&
                             !commit_sync_waiting_)
                           begin_poll();
                       }),
      pause_end_timer_(kernel,
                       [this] {
                         if (!process_.alive()) return;
                         tracer_.emit("consumer.resume", {{"consumer", spec_.name}});
                         process_.resume();
                       }),
      restart_timer_(kernel, [this] { start(); }),
      consumption_(kernel, tracer, workload, lag,
                   RecordConsumption::Options{
                       spec.name, config_.group_id, config_.max_poll_records,
                       config_.auto_offset_reset, spec.processing,
                       [this](const TopicPartition& tp) {
                         const sim::NodeId leader = partition_leader(tp);
                         return !network_.is_cut(leader, node_) && !network_.is_cut(node_, leader);
                       },
                       [this](const TopicPartition& tp) {
                         // The mean one-way latency of the leader's link (no draw: no RNG use).
                         const double ms =
                             network_.link_spec(partition_leader(tp), node_).latency.expected_ms();
                         return sim::SimTime{static_cast<std::int64_t>(std::llround(ms * 1000.0))};
                       }},
                   sim::Rng(seed, "processing-" + spec.name)) {
  process_.attach(&app_);
  process_.attach(&network_thread_);
  node_ = network_.add_node(spec_.name, &network_thread_, [this](sim::NodeId from, Envelope&& e) {
    on_message(from, std::move(e));
  });
}

sim::NodeId ConsumerClient::partition_leader(const TopicPartition& tp) const {
  const auto n = cluster_.broker_nodes.size();
  const auto replicas = std::min<std::size_t>(
      n, static_cast<std::size_t>(std::max(1, cluster_.offsets_topic_replication_factor)));
  for (std::size_t k = 0; k < replicas; ++k) {
    const std::size_t b = (static_cast<std::size_t>(tp.partition) + k) % n;
    if (b >= cluster_.broker_down.size() || !cluster_.broker_down[b]) return cluster_.broker_nodes[b];
  }
  return cluster_.broker_nodes[static_cast<std::size_t>(tp.partition) % n];
}

void ConsumerClient::request_stop() {
  if (!process_.alive() || close_stage_ != CloseStage::None) return;
  tracer_.emit("consumer.stop", {{"consumer", spec_.name}});
  stop_requested_ = true;
}

void ConsumerClient::crash() {
  if (!process_.alive()) return;
  tracer_.emit("consumer.crash", {{"consumer", spec_.name}});
  process_.kill();
  reset_client_state();
}

void ConsumerClient::restart(sim::SimTime after, bool graceful) {
  if (!process_.alive()) {
    restart_timer_.arm(after);
    return;
  }
  if (graceful) {
    restart_after_ = kernel_.now() + after;
    request_stop();
  } else {
    crash();
    restart_timer_.arm(after);
  }
}

void ConsumerClient::stall(sim::SimTime duration) {
  if (!process_.alive()) return;
  tracer_.emit("consumer.stall", {{"consumer", spec_.name}, {"for_ms", duration.count() / 1000}});
  // The application is busy outside poll(): nothing of its thread runs until it returns.
  in_poll_ = false;
  poll_return_timer_.cancel();
  fetch_wake_timer_.cancel();
  app_.stall();
  stall_end_timer_.arm(duration);
}

void ConsumerClient::pause(sim::SimTime duration) {
  if (!process_.alive()) return;
  tracer_.emit("consumer.pause", {{"consumer", spec_.name}, {"for_ms", duration.count() / 1000}});
  process_.pause();
  pause_end_timer_.arm(duration);
}

}  // namespace rsim
