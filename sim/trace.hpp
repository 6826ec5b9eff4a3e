// The trace bus: models publish typed events, sinks receive them in publication order, each with
// the virtual time it happened at. Generic over the event type (a std::variant the models
// define); the kernel knows no event kind. Also the JSON line writer sinks serialise with (the
// same bytes nlohmann::json::dump() writes) and a buffered file that streams lines to disk.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/kernel.hpp"

namespace sim {

/// An event given as a type name and a JSON object of fields: what a reader makes of a trace line
/// whose kind this build does not know (written back as it was).
struct RawTraceEvent {
  std::string_view type;
  const nlohmann::ordered_json* fields = nullptr;
};

template <class Event>
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void on_event(SimTime t, const Event& e) = 0;
};

template <class Event>
class TraceBus {
 public:
  explicit TraceBus(const Kernel& kernel) : kernel_(kernel) {}
  TraceBus(const TraceBus&) = delete;
  TraceBus& operator=(const TraceBus&) = delete;

  void attach(TraceSink<Event>& sink) { sinks_.push_back(&sink); }
  void detach(TraceSink<Event>& sink) { std::erase(sinks_, &sink); }
  bool active() const { return !sinks_.empty(); }
  /// How much detail the run keeps: a publisher asks wants(level) before building an event of
  /// that level, and events above the bus's detail are never built (levels are the models').
  void set_detail(int detail) { detail_ = detail; }
  bool wants(int level) const { return level <= detail_ && !sinks_.empty(); }

  /// Hands `e` to every sink, in the order they were attached.
  void publish(const Event& e) {
    const SimTime t = kernel_.now();
    for (auto* s : sinks_) s->on_event(t, e);
  }

 private:
  const Kernel& kernel_;
  std::vector<TraceSink<Event>*> sinks_;
  int detail_ = INT32_MAX;  // everything
};

/// Appends JSON to a string, byte for byte as nlohmann::json::dump() (compact) would write it.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}
  void begin_object() {
    out_ += '{';
    first_ = true;
  }
  void end_object() {
    out_ += '}';
    first_ = false;
  }
  void begin_array() {
    out_ += '[';
    first_ = true;
  }
  void end_array() {
    out_ += ']';
    first_ = false;
  }
  /// Writes `"name":` (with the comma before it when needed).
  void key(std::string_view name) {
    separator();
    string_body(name);
    out_ += ':';
    first_ = true;  // the value that follows needs no comma
  }
  /// A key written in parts: key_begin(), string_part()..., key_end().
  void key_begin() {
    separator();
    out_ += '"';
  }
  void key_end() {
    out_ += "\":";
    first_ = true;
  }
  /// A string value written in parts: begin_string(), string_part()..., end_string().
  void begin_string() { out_ += '"'; }
  void string_part(std::string_view s) { escaped(s); }
  void end_string() {
    out_ += '"';
    first_ = false;
  }
  /// Before an array element.
  void element() { separator(); }
  void value(std::string_view s) {
    string_body(s);
    first_ = false;
  }
  void value(const char* s) { value(std::string_view(s)); }
  void value(bool b) {
    out_ += b ? "true" : "false";
    first_ = false;
  }
  void value(std::int64_t v);
  void value(std::uint64_t v);
  void value(std::int32_t v) { value(static_cast<std::int64_t>(v)); }
  void value(double v);
  void null() {
    out_ += "null";
    first_ = false;
  }
  void value(const nlohmann::ordered_json& j) {
    out_ += j.dump();
    first_ = false;
  }
  /// The members of a JSON object, as if they were written one by one at this point.
  void members(const nlohmann::ordered_json& object);
  std::string& out() { return out_; }

 private:
  void separator() {
    if (!first_) out_ += ',';
    first_ = false;
  }
  void string_body(std::string_view s) {
    out_ += '"';
    escaped(s);
    out_ += '"';
  }
  void escaped(std::string_view s);
  std::string& out_;
  bool first_ = true;
};

/// A file written through a buffer of bounded size: append(), and the buffer is flushed to disk
/// whenever it passes its capacity. Nothing of what was written stays in memory.
class BufferedFile {
 public:
  static constexpr std::size_t kDefaultCapacity = 1 << 16;
  /// Throws std::runtime_error when the file cannot be opened.
  explicit BufferedFile(const std::string& path, std::size_t capacity = kDefaultCapacity);
  ~BufferedFile();
  BufferedFile(const BufferedFile&) = delete;
  BufferedFile& operator=(const BufferedFile&) = delete;

  /// The buffer to append to; call maybe_flush() after each append.
  std::string& buffer() { return buffer_; }
  void maybe_flush() {
    if (buffer_.size() >= capacity_) flush();
  }
  void flush();
  /// Flushes and closes; throws std::runtime_error if any write failed.
  void close();
  std::uint64_t bytes_written() const { return written_ + buffer_.size(); }
  /// The most the buffer ever held (at most capacity plus one line).
  std::size_t peak_buffered() const { return std::max(peak_, buffer_.size()); }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  std::size_t capacity_;
  std::uint64_t written_ = 0;
  std::size_t peak_ = 0;
  bool failed_ = false;
};

}  // namespace sim
