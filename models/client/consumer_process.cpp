#include "models/client/consumer_process.hpp"

#include <algorithm>
#include <utility>

namespace rsim {

ConsumerProcess::ConsumerProcess(sim::Kernel& kernel, Tracer& tracer, const std::string& name,
                                 const char* network_thread,
                                 std::optional<std::string_view> resume_after_pause)
    : kernel_(kernel),
      tracer_(tracer),
      process_(kernel),
      app_(process_, "application"),
      network_thread_(process_, network_thread),
      name_(name),
      resume_after_pause_(resume_after_pause),
      stall_end_timer_(
          kernel,
          [this] {
            on_script_entry();
            app_.unstall();
            if (!process_.alive()) return;
            tracer_.publish(trace::ConsumerResume{.consumer = name_, .after = "stall"});
            // The application calls poll() again (or goes on with what it was doing).
            on_stall_end();
          }),
      pause_end_timer_(
          kernel,
          [this] {
            on_script_entry();
            if (!process_.alive()) return;
            tracer_.publish(trace::ConsumerResume{.consumer = name_, .after = resume_after_pause_});
            process_.resume();
          }),
      restart_timer_(kernel, [this] {
        on_script_entry();
        if (!next_incarnation_) return start();
        // The next incarnation is another client object: it may destroy nothing of this one,
        // which the World keeps.
        const auto next = std::exchange(next_incarnation_, {});
        next();
      }) {
  process_.set_name(name_);
  process_.attach(&app_);
  process_.attach(&network_thread_);
}

void ConsumerProcess::request_stop() {
  on_script_entry();
  if (!process_.alive() || closing()) return;
  tracer_.publish(trace::ConsumerStop{.consumer = name_});
  begin_close();
}

void ConsumerProcess::crash() {
  on_script_entry();
  if (!process_.alive()) return;
  tracer_.publish(trace::ConsumerCrash{.consumer = name_});
  on_crash();
  process_.kill();
  reset_process_state();
}

void ConsumerProcess::restart(sim::SimTime after, bool graceful, std::function<void()> next) {
  on_script_entry();
  next_incarnation_ = std::move(next);
  if (!process_.alive()) {
    restart_timer_.arm(after);
    return;
  }
  if (graceful) {
    restart_at_ = kernel_.now() + after;
    request_stop();
  } else {
    crash();
    restart_timer_.arm(after);
  }
}

void ConsumerProcess::stall(sim::SimTime duration) {
  on_script_entry();
  if (!process_.alive()) return;
  tracer_.publish(trace::ConsumerStall{.consumer = name_, .for_ms = sim::to_ms(duration)});
  on_stall();
  app_.stall();
  stall_end_timer_.arm(duration);
}

void ConsumerProcess::pause(sim::SimTime duration) {
  on_script_entry();
  if (!process_.alive()) return;
  tracer_.publish(trace::ConsumerPause{.consumer = name_, .for_ms = sim::to_ms(duration)});
  process_.pause();
  pause_end_timer_.arm(duration);
}

void ConsumerProcess::end_after_close() {
  tracer_.publish(trace::ConsumerClosed{.consumer = name_});
  process_.kill();
  reset_process_state();
  if (restart_at_) {
    const sim::SimTime at = std::max(*restart_at_, kernel_.now());
    restart_at_.reset();
    restart_timer_.arm_at(at);
  }
}

void ConsumerProcess::cancel_script_timers() {
  stall_end_timer_.cancel();
  pause_end_timer_.cancel();
}

}  // namespace rsim
