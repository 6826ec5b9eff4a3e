#include "sim/trace.hpp"

#include <charconv>
#include <cstring>
#include <stdexcept>

namespace sim {

void JsonWriter::value(std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
  first_ = false;
}

void JsonWriter::value(std::uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
  first_ = false;
}

void JsonWriter::value(double v) {
  // Rare (rates); nlohmann's own float format keeps the bytes identical ("1000.0", "0.5").
  out_ += nlohmann::json(v).dump();
  first_ = false;
}

void JsonWriter::members(const nlohmann::ordered_json& object) {
  using value_t = nlohmann::ordered_json::value_t;
  for (const auto& [k, v] : object.items()) {
    key(k);
    // Scalars written directly, as dump() writes them (no string built per value); the strings
    // are valid UTF-8, as everything nlohmann parsed or we built is.
    switch (v.type()) {
      case value_t::string:
        value(std::string_view(v.get_ref<const std::string&>()));
        break;
      case value_t::number_integer:
        value(v.get<std::int64_t>());
        break;
      case value_t::number_unsigned:
        value(v.get<std::uint64_t>());
        break;
      case value_t::boolean:
        value(v.get<bool>());
        break;
      case value_t::null:
        null();
        break;
      default:
        value(v);
    }
  }
}

namespace {

// Whether any of the 8 bytes of `w` is a control character, '"' or '\\' (exact, no false
// positives: bytes >= 0x80 are never flagged).
bool needs_escape(std::uint64_t w) {
  constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  const auto has_zero = [&](std::uint64_t v) { return ((v - ones) & ~v & highs) != 0; };
  const bool control = ((w - ones * 0x20) & ~w & highs) != 0;  // some byte < 0x20
  return control || has_zero(w ^ (ones * '"')) || has_zero(w ^ (ones * '\\'));
}

}  // namespace

void JsonWriter::escaped(std::string_view s) {
  // As nlohmann's serializer with ensure_ascii off: the two-character escapes, \u00XX for the
  // other control characters, every other byte as it is. Eight bytes at a time while none of
  // them needs escaping (names, ids and keys almost never do).
  std::size_t i = 0;
  while (i + 8 <= s.size()) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (needs_escape(w)) break;
    i += 8;
  }
  std::size_t plain = 0;
  for (; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out_.append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\b':
        out_ += "\\b";
        break;
      case '\f':
        out_ += "\\f";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        out_ += "\\u00";
        out_ += kHex[c >> 4];
        out_ += kHex[c & 0xF];
      }
    }
  }
  out_.append(s.data() + plain, s.size() - plain);
}

BufferedFile::BufferedFile(const std::string& path, std::size_t capacity)
    : path_(path), file_(std::fopen(path.c_str(), "wb")), capacity_(capacity) {
  if (file_ == nullptr) throw std::runtime_error("cannot write " + path);
  buffer_.reserve(capacity_ + 4096);
}

BufferedFile::~BufferedFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void BufferedFile::flush() {
  peak_ = std::max(peak_, buffer_.size());
  if (buffer_.empty() || file_ == nullptr) return;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) failed_ = true;
  written_ += buffer_.size();
  buffer_.clear();
}

void BufferedFile::close() {
  flush();
  if (file_ == nullptr) return;
  if (std::fclose(file_) != 0) failed_ = true;
  file_ = nullptr;
  if (failed_) throw std::runtime_error("cannot write " + path_);
}

}  // namespace sim
