// Network<Payload>: named endpoints joined by links with a latency distribution, a drop rate
// and a cut switch. One link is one TCP connection: it never reorders. Messages for an endpoint
// whose receiving activity is stopped (a paused process) wait and arrive, in order, when it
// resumes; messages for a dead process are lost. Generic over the payload; no Kafka here.
// Links are found in O(1): each node keeps its outgoing links in a vector indexed by destination.
// Messages in flight and held wait in a Fifo (sim/fifo.hpp): no allocation per message.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/distribution.hpp"
#include "sim/fifo.hpp"
#include "sim/kernel.hpp"
#include "sim/rng.hpp"

namespace sim {

using NodeId = std::uint32_t;

struct LinkSpec {
  Distribution latency = Distribution::constant(1);
  std::uint32_t drop_ppm = 0;  // parts per million
};

template <typename Payload>
class Network {
 public:
  using Handler = std::function<void(NodeId from, Payload&& payload)>;
  /// Told of every dropped message: `cut` when the link was cut, else random loss.
  using DropObserver = std::function<void(NodeId from, NodeId to, bool cut)>;

  Network(Kernel& kernel, Rng rng, LinkSpec defaults, DropObserver on_drop = nullptr)
      : kernel_(kernel),
        on_drop_(std::move(on_drop)),
        rng_(std::move(rng)),
        defaults_(std::move(defaults)) {}
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  /// `receiver` (may be null) is the activity that takes delivery: while it cannot run,
  /// messages wait.
  NodeId add_node(std::string name, Activity* receiver, Handler handler) {
    nodes_.push_back(std::make_unique<Node>(*this, static_cast<NodeId>(nodes_.size()),
                                            std::move(name), receiver, std::move(handler)));
    return nodes_.back()->id;
  }
  const std::string& name(NodeId id) const { return nodes_.at(id)->name; }
  std::size_t size() const { return nodes_.size(); }
  void set_receiver(NodeId id, Activity* receiver) { nodes_.at(id)->receiver = receiver; }
  /// The time the node takes to handle each message it receives (a server's request queue and
  /// handler), added to the link's latency; one link stays in order. Drawn from `rng`, a stream
  /// of its own, so a constant (which draws nothing) leaves every other draw where it was.
  void set_handling(NodeId id, Distribution handling, Rng rng) {
    Node& n = *nodes_.at(id);
    n.handling = std::move(handling);
    n.handling_rng = std::move(rng);
  }

  /// The time the node takes to handle a message, as set by set_handling().
  const Distribution& handling(NodeId id) const { return nodes_.at(id)->handling; }

  /// Sends; returns false if the message was dropped (cut link or random loss). `after`: the
  /// sender's own wait before the message goes on the link (a connection being set up).
  bool send(NodeId from, NodeId to, Payload payload, SimTime after = SimTime{0}) {
    Link& l = link(from, to);
    if (l.cut || rng_.chance_ppm(l.spec.drop_ppm)) {
      if (on_drop_) on_drop_(from, to, l.cut);
      return false;
    }
    Node& dest = *nodes_[to];
    const SimTime delay = l.spec.latency.sample(rng_) + dest.handling.sample(dest.handling_rng);
    const SimTime arrival = std::max(l.last_delivery, kernel_.now() + after + delay);
    l.last_delivery = arrival;
    l.in_flight.push_back(std::move(payload));
    kernel_.schedule_at(arrival, &l, 0);
    return true;
  }

  /// Changes one direction of a link (latency and/or loss); the change applies to later sends.
  void set_link(NodeId from, NodeId to, const LinkSpec& spec) {
    Link& l = link(from, to);
    l.spec = spec;
    l.mean_latency_ms = spec.latency.expected_ms();
    ++changes_;
  }
  const LinkSpec& link_spec(NodeId from, NodeId to) { return link(from, to).spec; }
  /// link_spec(from, to).latency.expected_ms(), kept with the link (asked per partition per poll
  /// pass).
  double mean_latency_ms(NodeId from, NodeId to) { return link(from, to).mean_latency_ms; }
  void set_cut(NodeId from, NodeId to, bool cut) {
    Link& l = link(from, to);
    if (l.cut && !cut) --cut_links_;
    if (!l.cut && cut) ++cut_links_;
    l.cut = cut;
    ++changes_;
  }
  /// O(1) and touching no link while nothing is cut (asked per partition per poll pass).
  bool is_cut(NodeId from, NodeId to) { return cut_links_ > 0 && link(from, to).cut; }
  const LinkSpec& defaults() const { return defaults_; }
  /// The link slots a node keeps (its highest destination so far, plus one): what a node's
  /// links cost does not grow with the number of nodes it never talks to.
  std::size_t link_slots(NodeId from) const { return nodes_.at(from)->out.size(); }
  /// Counts set_link() and set_cut() calls: what a caller derived from links (a latency, a cut)
  /// is still current while it is unchanged.
  std::uint64_t changes() const { return changes_; }

 private:
  struct Node;
  struct Link : EventTarget {
    Link(Network& net, NodeId from, NodeId to, LinkSpec spec)
        : net(net),
          from(from),
          to(to),
          spec(std::move(spec)),
          mean_latency_ms(this->spec.latency.expected_ms()) {}
    void fire(std::uint64_t) override {
      Payload p = std::move(in_flight.front());
      in_flight.pop_front();
      net.nodes_[to]->arrive(from, std::move(p));
    }
    std::string actor() const override {
      return "the network: delivery from " + net.name(from) + " to " + net.name(to);
    }
    Network& net;
    NodeId from, to;
    LinkSpec spec;
    double mean_latency_ms;  // spec.latency.expected_ms(), set with spec
    bool cut = false;
    SimTime last_delivery{0};
    Fifo<Payload> in_flight;
  };

  struct Node : EventTarget {
    Node(Network& net, NodeId id, std::string name, Activity* receiver, Handler handler)
        : net(net),
          id(id),
          name(std::move(name)),
          receiver(receiver),
          handler(std::move(handler)) {}
    void arrive(NodeId from, Payload&& p) {
      if (receiver != nullptr) {
        if (!receiver->process().alive()) {
          held.clear();
          return;  // a dead process receives nothing
        }
        if (!receiver->runnable() || !held.empty()) {
          const bool first = held.empty();
          held.emplace_back(from, std::move(p));
          if (first) {
            if (receiver->runnable())
              net.kernel_.schedule_after(SimTime::zero(), this, 0);
            else
              receiver->defer(this, 0);
          }
          return;
        }
      }
      handler(from, std::move(p));
    }
    void fire(std::uint64_t) override {  // release held messages, in arrival order
      while (!held.empty()) {
        if (receiver != nullptr && !receiver->process().alive()) {
          held.clear();
          return;
        }
        if (receiver != nullptr && !receiver->runnable()) {
          receiver->defer(this, 0);
          return;
        }
        auto [from, p] = std::move(held.front());
        held.pop_front();
        handler(from, std::move(p));
      }
    }
    std::string actor() const override { return name + " (messages held while it could not run)"; }
    Network& net;
    NodeId id;
    std::string name;
    Activity* receiver;
    Handler handler;
    Fifo<std::pair<NodeId, Payload>> held;
    std::vector<std::unique_ptr<Link>> out;  // by destination; created on first use
    Distribution handling = Distribution::constant(0);
    Rng handling_rng{0, "handling"};
  };

  Link& link(NodeId from, NodeId to) {
    SIM_ASSERT(from < nodes_.size());
    SIM_ASSERT(to < nodes_.size());
    auto& out = nodes_[from]->out;
    // Only as long as the highest destination used: a consumer talks to a few brokers, and a
    // slot for every node would cost each of 10,000 consumers 80 kB of mostly empty pointers.
    if (out.size() <= to) out.resize(to + 1);
    auto& slot = out[to];
    if (!slot) slot = std::make_unique<Link>(*this, from, to, defaults_);
    return *slot;
  }

  Kernel& kernel_;
  DropObserver on_drop_;
  Rng rng_;
  LinkSpec defaults_;  // never changed: a link made later is the link made now
  std::vector<std::unique_ptr<Node>> nodes_;
  std::size_t cut_links_ = 0;  // links whose cut is set
  std::uint64_t changes_ = 0;
};

}  // namespace sim
