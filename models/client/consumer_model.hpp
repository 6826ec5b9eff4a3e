// What the scenario's script can do to a simulated KafkaConsumer, whichever group.protocol it
// speaks: the classic ClassicConsumer and the KIP-848 consumer implement this.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "models/protocol/messages.hpp"
#include "sim/network.hpp"
#include "sim/time.hpp"

namespace rsim {

class ConsumerModel {
 public:
  virtual ~ConsumerModel() = default;

  virtual sim::NodeId node() const = 0;

  virtual void start() = 0;
  /// The process is running (started, not yet closed or crashed).
  virtual bool running() const = 0;
  /// Graceful close(): through wakeup() or at the application's next return from poll(), by the
  /// scenario's `on_stop`.
  virtual void request_stop() = 0;
  virtual void crash() = 0;
  /// The process ends (graceful: close(), else a crash) and starts again `after` later (a
  /// graceful close that takes longer: when it is done). `next`, when given, starts the next
  /// incarnation instead of this object (a new client with other configs).
  virtual void restart(sim::SimTime after, bool graceful, std::function<void()> next = {}) = 0;
  /// The processes this client object has started so far (a replaced client's successor takes
  /// the replayed start latencies from there: ConsumerSpec::start_latencies).
  virtual std::size_t process_starts() const = 0;
  /// The topics the next start() subscribes to.
  virtual std::vector<std::string> topics() const = 0;
  virtual void stall(sim::SimTime duration) = 0;
  virtual void pause(sim::SimTime duration) = 0;
  virtual void subscribe(std::vector<std::string> topics) = 0;
  /// A change of the cluster's metadata (a topic got more partitions).
  virtual void on_metadata_change() {}
  /// A broker's process died: its connections are reset, so the client sees every request in
  /// flight to it fail at once.
  virtual void on_broker_down(sim::NodeId /*broker*/) {}
  /// Leaders of data partitions moved (a broker shut down, was fenced or came back).
  virtual void on_leaders_changed() {}
};

}  // namespace rsim
