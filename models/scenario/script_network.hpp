// The script's `network` and `partition-network` events on the world's one network, for every
// variant: which links an event's `between` names, the change (latency, loss)
// or the cut, and the restore after `for_ms`, each with its trace event.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/protocol/messages.hpp"
#include "models/scenario/scenario.hpp"
#include "models/trace/trace_events.hpp"
#include "sim/kernel.hpp"
#include "sim/network.hpp"

namespace rsim {

/// The nodes one endpoint of `between` names (`other` is the other endpoint).
using EndpointResolver =
    std::function<std::vector<sim::NodeId>(const std::string& endpoint, const std::string& other)>;

/// The directed links of an event's `between` (both directions unless `one_way`).
inline std::vector<std::pair<sim::NodeId, sim::NodeId>> event_links(
    const std::vector<std::string>& between, bool one_way, const EndpointResolver& resolve) {
  std::vector<std::pair<sim::NodeId, sim::NodeId>> out;
  for (const auto x : resolve(between.at(0), between.at(1)))
    for (const auto y : resolve(between.at(1), between.at(0)))
      if (x != y) {
        out.emplace_back(x, y);
        if (!one_way) out.emplace_back(y, x);
      }
  return out;
}

/// Applies a `network` event: new latency and/or loss, restored after `for_ms`.
inline void apply_network_event(sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& net,
                                const verb::Network& e, const EndpointResolver& resolve) {
  const auto ls = event_links(e.between, e.one_way, resolve);
  std::vector<sim::LinkSpec> before;
  for (const auto& [from, to] : ls) {
    before.push_back(net.link_spec(from, to));
    sim::LinkSpec s = before.back();
    if (e.latency) s.latency = *e.latency;
    if (e.drop_rate) s.drop_ppm = static_cast<std::uint32_t>(*e.drop_rate * 1'000'000.0 + 0.5);
    net.set_link(from, to, s);
  }
  tracer.publish(trace::NetChange{
      .between = e.between, .one_way = e.one_way, .for_ms = e.has_for ? sim::to_ms(e.for_) : -1});
  if (e.has_for) {
    // Only what this event changed goes back: another change of the same links meanwhile (a
    // loss window inside a latency spike) keeps its own fields and its own end.
    kernel.schedule_closure_after(
        e.for_, [&net, &tracer, ls, before, between = e.between, latency = e.latency.has_value(),
                 drop = e.drop_rate.has_value()] {
          for (std::size_t i = 0; i < ls.size(); ++i) {
            sim::LinkSpec s = net.link_spec(ls[i].first, ls[i].second);
            if (latency) s.latency = before[i].latency;
            if (drop) s.drop_ppm = before[i].drop_ppm;
            net.set_link(ls[i].first, ls[i].second, s);
          }
          tracer.publish(trace::NetRestore{.between = between});
        });
  }
}

/// Applies a `partition-network` event: the links are cut for `for_ms`.
inline void apply_network_event(sim::Kernel& kernel, Tracer& tracer, sim::Network<Envelope>& net,
                                const verb::PartitionNetwork& e, const EndpointResolver& resolve) {
  const auto ls = event_links(e.between, false, resolve);
  for (const auto& [from, to] : ls) net.set_cut(from, to, true);
  tracer.publish(trace::NetPartition{.between = e.between, .for_ms = sim::to_ms(e.for_)});
  kernel.schedule_closure_after(e.for_, [&net, &tracer, ls, between = e.between] {
    for (const auto& [from, to] : ls) net.set_cut(from, to, false);
    tracer.publish(trace::NetHeal{.between = between});
  });
}

}  // namespace rsim
