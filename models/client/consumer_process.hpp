// ConsumerProcess: the process a simulated consumer runs in, and what the scenario's script does
// to it, for every variant's client (ClassicConsumer and AsyncConsumer through ConsumerClient,
// and ShareConsumer): stop, crash, restart, stall, pause, and the end of a close(). Each verb is
// carried out here, once; a client supplies what only it does through the hooks below (what its
// close() is, what its crash tells the brokers, what its application thread does around a stall).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "models/client/consumer_model.hpp"
#include "models/trace/trace_events.hpp"
#include "sim/kernel.hpp"

namespace rsim {

class ConsumerProcess : public ConsumerModel {
 public:
  ConsumerProcess(const ConsumerProcess&) = delete;
  ConsumerProcess& operator=(const ConsumerProcess&) = delete;

  bool running() const final { return process_.alive(); }
  /// Graceful close(): the `consumer.stop` event, then the client's own close (begin_close()).
  void request_stop() final;
  /// The process dies: no close(), no leave.
  void crash() final;
  /// Graceful: close(), and the next start `after` after the verb (or when the close is done, if
  /// later); else a crash and the next start `after` later. `next`, when given, starts the next
  /// incarnation instead of this object.
  void restart(sim::SimTime after, bool graceful, std::function<void()> next = {}) final;
  /// The application thread is busy outside poll() for `duration`; the rest of the process runs.
  void stall(sim::SimTime duration) final;
  /// The whole process stops (SIGSTOP, a long GC) for `duration`; messages to it wait.
  void pause(sim::SimTime duration) final;

 protected:
  /// `network_thread`: the name of the activity that owns the client's network node;
  /// `resume_after_pause`: the `after` of the `consumer.resume` that ends a pause (the share
  /// consumer's trace names it, the classic and KIP-848 ones' leave it out).
  ConsumerProcess(sim::Kernel& kernel, Tracer& tracer, const std::string& name,
                  const char* network_thread, std::optional<std::string_view> resume_after_pause);
  ~ConsumerProcess() override = default;

  // Hooks of the client.
  /// Every call of the script and every expiry of its timers enters the client here first.
  virtual void on_script_entry() {}
  /// A close() is under way: a stop request changes nothing.
  virtual bool closing() const = 0;
  /// close() begins (after the `consumer.stop` event).
  virtual void begin_close() = 0;
  /// The process is about to die in a crash (what its OS does for it on the way out).
  virtual void on_crash() {}
  /// The process ended (crash or close): the client forgets everything of it.
  virtual void reset_process_state() = 0;
  /// The application thread stalls, and its stall ended (the process is alive).
  virtual void on_stall() {}
  virtual void on_stall_end() {}

  /// close() is done: the `consumer.closed` event, the process ends, and starts again if a
  /// graceful restart asked for it.
  void end_after_close();
  /// The script's timers of this process (their expiries do nothing for a process that ended).
  void cancel_script_timers();

  sim::Kernel& kernel_;
  Tracer& tracer_;
  sim::Process process_;
  sim::Activity app_;
  sim::Activity network_thread_;

 private:
  std::string name_;
  std::optional<std::string_view> resume_after_pause_;
  sim::Timer stall_end_timer_;
  sim::Timer pause_end_timer_;
  sim::Timer restart_timer_;
  std::optional<sim::SimTime> restart_at_;  // a graceful restart's start, once close() is done
  std::function<void()> next_incarnation_;  // started by restart_timer_ instead of start()
};

}  // namespace rsim
