#include "models/scenario/json_guard.hpp"

#include <algorithm>
#include <set>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rsim {
namespace {

// RFC 6901 escaping of one reference token.
std::string pointer_token(const std::string& key) {
  std::string out;
  for (const char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::optional<std::string> too_deep(const std::string& bytes) {
  std::size_t depth = 0, line = 1, line_start = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    }
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        return fmt::format(
            "line {}, column {}: nested deeper than {} levels (a scenario needs "
            "about 6)",
            line, i - line_start + 1, kMaxJsonDepth);
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

// A SAX pass that remembers the keys of every open object and where it is (a JSON pointer).
class DuplicateKeys : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::optional<std::string> problem;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) {
      problem = fmt::format("{}: duplicate key \"{}\" (a JSON object lists each key once)",
                            path() + "/" + pointer_token(k), k);
      return false;
    }
    f.token = pointer_token(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& ex) override {
    // A number beyond a double (1e400) is no syntax error to the parser but an out_of_range
    // one (406) that carries no position: reported here with the value's JSON pointer. Other
    // errors are left to the DOM parser, which reports them with line and column.
    if (ex.id == 406) {
      enter_value();
      overflow_at = position;
      problem = fmt::format(
          "{}: the number {} is beyond the range of a double (at most 1.7976931348623157e308)",
          path_with_current(), token);
    }
    return false;
  }
  std::size_t overflow_at = 0;

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string token;  // of the member or element being read
    std::size_t elements = 0;
  };
  // A value starts in the current container: arrays number their elements.
  void enter_value() {
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    if (!f.object) f.token = std::to_string(f.elements++);
  }
  bool value() {
    enter_value();
    return true;
  }
  bool open(bool object) {
    enter_value();
    frames_.push_back(Frame{object, {}, {}, 0});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }
  std::string path() const {
    std::string p;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) p += "/" + frames_[i].token;
    return p;
  }
  // The pointer of the value being read (a member or element of the innermost container).
  std::string path_with_current() const {
    std::string p;
    for (const auto& f : frames_) p += "/" + f.token;
    return p.empty() ? "/" : p;
  }
  std::vector<Frame> frames_;
};

}  // namespace

std::optional<std::string> check_json_structure(const std::string& bytes) {
  if (auto p = too_deep(bytes)) return p;
  DuplicateKeys sax;
  nlohmann::json::sax_parse(bytes, &sax);
  if (sax.problem && sax.overflow_at > 0) {
    // "line L, column C: /pointer: ...", as a syntax error is reported.
    const std::size_t end = std::min(sax.overflow_at, bytes.size());
    std::size_t line = 1, line_start = 0;
    for (std::size_t i = 0; i < end; ++i)
      if (bytes[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    // The position is the byte after the number: step back to its first character.
    std::size_t first = end;
    while (first > line_start &&
           std::string_view("0123456789+-.eE").find(bytes[first - 1]) != std::string_view::npos)
      --first;
    return fmt::format("line {}, column {}: {}", line, first - line_start + 1, *sax.problem);
  }
  return sax.problem;
}

}  // namespace rsim
