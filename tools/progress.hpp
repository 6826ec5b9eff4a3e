// Progress of a long run on stderr: a trace sink that, about once a second of wall time, rewrites
// one line with the virtual time reached and the rate of trace events. Only for terminals (the
// CLI attaches it when stderr is one and --quiet is off); reading the wall clock here cannot
// change the run, which never sees this sink's output.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "models/trace/trace_events.hpp"

namespace rsim::cli {

class ProgressSink final : public TraceSink {
 public:
  ProgressSink(std::string label, sim::SimTime duration, std::FILE* out = stderr)
      : label_(std::move(label)),
        duration_(duration),
        out_(out),
        start_(Clock::now()),
        last_(start_) {}
  ~ProgressSink() override { finish(); }
  void on_event(sim::SimTime t, const trace::Event&) override {
    ++events_;
    reached_ = t;
    if ((events_ & 0x3FFF) != 0) return;  // look at the clock every 16,384 events
    const auto now = Clock::now();
    if (now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    print(now);
  }
  /// Clears the line (if one was printed).
  void finish() {
    if (printed_) std::fprintf(out_, "\r\033[K");
    printed_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  void print(Clock::time_point now) {
    const double wall = std::chrono::duration<double>(now - start_).count();
    std::fprintf(out_, "\r\033[K%s: virtual %.1f s of %.1f s, %.0f trace events/s", label_.c_str(),
                 static_cast<double>(reached_.count()) / 1e6,
                 static_cast<double>(duration_.count()) / 1e6,
                 wall > 0 ? static_cast<double>(events_) / wall : 0.0);
    std::fflush(out_);
    printed_ = true;
  }
  std::string label_;
  sim::SimTime duration_;
  std::FILE* out_;
  Clock::time_point start_, last_;
  std::uint64_t events_ = 0;
  sim::SimTime reached_{0};
  bool printed_ = false;
};

}  // namespace rsim::cli
