#include "reports/trace_reader.hpp"

#include <array>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

namespace reports {

bool LineReader::next(std::string_view& line) {
  // The lines as std::getline() splits them, read in blocks (a line-at-a-time getline cost as
  // much as scanning the line): `buffer_` holds [begin_, end_) of what was read.
  constexpr std::size_t kBlock = 1 << 20;
  for (;;) {
    const char* data = buffer_.data();
    if (const void* nl =
            end_ > begin_ ? std::memchr(data + begin_, '\n', end_ - begin_) : nullptr) {
      const auto at = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
      line = std::string_view(data + begin_, at - begin_);
      begin_ = at + 1;
      return true;
    }
    if (eof_) {
      if (begin_ == end_) return false;
      line = std::string_view(data + begin_, end_ - begin_);  // the last line, without '\n'
      begin_ = end_;
      return true;
    }
    // Keep the partial line, then read another block after it.
    buffer_.erase(0, begin_);
    end_ -= begin_;
    begin_ = 0;
    if (buffer_.size() < end_ + kBlock) buffer_.resize(end_ + kBlock);
    in_.read(buffer_.data() + end_, static_cast<std::streamsize>(kBlock));
    const auto got = static_cast<std::size_t>(in_.gcount());
    end_ += got;
    if (got < kBlock) eof_ = true;
  }
}

TraceReader::TraceReader(std::istream& in, std::string where)
    : where_(std::move(where)), stream_(std::in_place, in) {}

TraceReader::TraceReader(std::string_view text, std::string where)
    : where_(std::move(where)), whole_(text) {}

TraceReader::TraceReader(const std::vector<std::string>& lines, std::string where)
    : where_(std::move(where)), lines_(&lines) {}

bool TraceReader::next_text() {
  if (stream_) return stream_->next(text_);
  if (lines_ != nullptr) {
    if (line_no_ >= lines_->size()) return false;
    text_ = (*lines_)[line_no_];
    return true;
  }
  if (pos_ >= whole_.size()) return false;
  std::size_t end = whole_.find('\n', pos_);
  if (end == std::string_view::npos) end = whole_.size();
  text_ = whole_.substr(pos_, end - pos_);
  pos_ = end + 1;
  return true;
}

std::string TraceReader::error(std::string_view what) const {
  return fmt::format("{}line {}: {}", where_, line_no_, what);
}

namespace {

namespace tr = rsim::trace;
using Member = TraceReader::Member;

// --- the compact form, read from the text ---------------------------------------------------
// The JSON the trace writer produces, checked as strictly as a parse would check it over a
// narrower language: no whitespace, strings of printable ASCII and the two-character escapes,
// integers of at most 18 digits, at most kMaxDepth levels. Anything outside is left to the parse
// (which accepts or refuses it as nlohmann does).
constexpr auto npos = std::string_view::npos;
constexpr int kMaxDepth = 32;

// Byte masks of a little-endian word of 8 bytes: the high bit of a byte is set where the test
// holds. The lowest flagged byte is always right (borrows and carries only flag bytes above a
// true one), which is all the callers read.
constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
std::uint64_t zero_bytes(std::uint64_t v) {
  return (v - kOnes) & ~v & kHighs;
}
// Bytes outside printable ASCII [0x20, 0x7e], or '\\'.
std::uint64_t unplain8(std::uint64_t w) {
  return (w & kHighs) | ((w - kOnes * 0x20) & ~w & kHighs) | ((w + kOnes) & kHighs) |
         zero_bytes(w ^ (kOnes * '\\'));
}
std::size_t lowest_byte(std::uint64_t mask) {
  return static_cast<std::size_t>(__builtin_ctzll(mask)) / 8;
}

// The index just past the string starting at i, or npos.
std::size_t skip_string(std::string_view s, std::size_t i) {
  if (i >= s.size() || s[i] != '"') return npos;
  ++i;
  // Eight bytes at a time while all are printable ASCII other than '\\' (names and numbers in
  // strings, nearly every byte of a line): the closing quote is found in the word when no byte
  // before it needs a look. Anything else goes byte by byte from that word on.
  while (i + 8 <= s.size()) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    const std::uint64_t bad = unplain8(w), quote = zero_bytes(w ^ (kOnes * '"'));
    if (quote != 0 && (bad == 0 || lowest_byte(quote) < lowest_byte(bad)))
      return i + lowest_byte(quote) + 1;
    if (bad != 0 || quote != 0) break;
    i += 8;
  }
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') return i + 1;
    if (c < 0x20 || c > 0x7e) return npos;
    if (c == '\\') {
      if (++i >= s.size()) return npos;
      if (std::string_view("\"\\/bfnrt").find(s[i]) == npos) return npos;
    }
  }
  return npos;
}

// An integer of at most 18 digits: -?(0|[1-9][0-9]*). A fraction, an exponent or a longer integer
// (which a parse may find out of range) is left to the parse.
std::size_t skip_number(std::string_view s, std::size_t i) {
  if (i < s.size() && s[i] == '-') ++i;
  const std::size_t first = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  const std::size_t n = i - first;
  if (n == 0 || n > 18 || (n > 1 && s[first] == '0')) return npos;
  if (i < s.size() && (s[i] == '.' || s[i] == 'e' || s[i] == 'E')) return npos;
  return i;
}

// The index just past the value starting at i, or npos.
std::size_t skip_value(std::string_view s, std::size_t i, int depth = 0) {
  if (i >= s.size() || depth > kMaxDepth) return npos;
  const char c = s[i];
  if (c == '"') return skip_string(s, i);
  if (c == '[' || c == '{') {
    const char close = c == '[' ? ']' : '}';
    ++i;
    if (i < s.size() && s[i] == close) return i + 1;
    while (i < s.size()) {
      if (close == '}') {
        i = skip_string(s, i);
        if (i == npos || i >= s.size() || s[i] != ':') return npos;
        ++i;
      }
      i = skip_value(s, i, depth + 1);
      if (i == npos || i >= s.size()) return npos;
      if (s[i] == close) return i + 1;
      if (s[i] != ',') return npos;
      ++i;
    }
    return npos;
  }
  // Numbers first (most values), without comparing them to the literals.
  if (c == '-' || (c >= '0' && c <= '9')) return skip_number(s, i);
  for (const std::string_view literal : {"true", "false", "null"})
    if (s.substr(i, literal.size()) == literal) return i + literal.size();
  return npos;
}

// Inline: the strings looked at are a few bytes long, shorter than a memchr call costs.
bool has_backslash(std::string_view v) {
  for (const char c : v)
    if (c == '\\') return true;
  return false;
}

// The members of the object `s` (exactly one object, nothing after it), keys without escapes;
// false for anything else.
bool scan_object(std::string_view s, std::vector<Member>& out, int depth = 0) {
  out.clear();
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return false;
  if (s.size() == 2) return true;
  std::size_t i = 1;
  while (i < s.size()) {
    const std::size_t after_key = skip_string(s, i);
    if (after_key == npos || after_key >= s.size() || s[after_key] != ':') return false;
    const std::string_view key = s.substr(i + 1, after_key - i - 2);
    if (has_backslash(key)) return false;
    const std::size_t value = after_key + 1;
    const std::size_t value_end = skip_value(s, value, depth);
    if (value_end == npos || value_end >= s.size()) return false;
    out.push_back({key, s.substr(value, value_end - value)});
    if (s[value_end] == '}') return value_end + 1 == s.size();
    if (s[value_end] != ',') return false;
    i = value_end + 1;
  }
  return false;
}

// Calls f(element) for each element of the array `s` (checked by skip_value already); false when
// `s` is not an array or f refuses an element.
template <class F>
bool each_element(std::string_view s, F&& f) {
  if (s.size() < 2 || s.front() != '[') return false;
  std::size_t i = 1;
  if (s[i] == ']') return true;
  while (i < s.size()) {
    const std::size_t end = skip_value(s, i);
    if (end == npos || end >= s.size() || !f(s.substr(i, end - i))) return false;
    if (s[end] == ']') return true;
    i = end + 1;
  }
  return false;
}

// The last member named `key` (a parse keeps the last of repeated names too).
const std::string_view* find_member(const std::vector<Member>& ms, std::string_view key) {
  for (std::size_t i = ms.size(); i-- > 0;)
    if (ms[i].key.size() == key.size() && ms[i].key == key) return &ms[i].value;
  return nullptr;
}

// A string without escapes, unquoted.
bool plain_string(std::string_view v, std::string_view& out) {
  if (v.size() < 2 || v.front() != '"' || has_backslash(v)) return false;
  out = v.substr(1, v.size() - 2);
  return true;
}

template <class T>
bool integer(std::string_view v, T& out) {
  if (v.empty() || !(v[0] == '-' || (v[0] >= '0' && v[0] <= '9'))) return false;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  return r.ec == std::errc() && r.ptr == v.data() + v.size();
}

// A partition name as the parse reads it (parse_partition); false where it would throw.
bool partition(std::string_view v, rsim::TopicPartition& out) {
  std::string_view name;
  if (!plain_string(v, name) || name.rfind('-') == npos) return false;
  out = tr::parse_partition(name);
  return true;
}

// An event's fields read from the members of its scanned line, as trace::parse_fields reads them
// from the parsed line (a missing member keeps its default, the last of repeated ones counts).
// `ok` false: a member the scan cannot read exactly as the parse would (a wrong type, an
// escape, a float, a kind of field it does not read): the line goes to the parse.
struct ScanFields {
  const std::vector<Member>& members;
  std::vector<Member>& nested;
  tr::ReadStorage& st;
  bool ok = true;

  template <class T>
  void operator()(std::string_view name, T& out) {
    if (!ok) return;
    if (const std::string_view* v = find_member(members, name)) ok = read(*v, out);
  }
  template <class T>
  void operator()(std::string_view name, tr::Opt<T>& out) {
    if (!ok) return;
    if (const std::string_view* v = find_member(members, name)) ok = read(*v, out.emplace());
  }
  // The members no field claims: only the parse collects them.
  void operator()(std::string_view, tr::Splice&) { ok = false; }
  template <class T>
  void operator()(std::string_view name, tr::OrNull<T>& out) {
    if (!ok) return;
    const std::string_view* v = find_member(members, name);
    if (v != nullptr && *v != "null") ok = read(*v, out.value.emplace());
  }

  bool read(std::string_view v, std::string_view& out) { return plain_string(v, out); }
  bool read(std::string_view v, bool& out) {
    out = v == "true";
    return out || v == "false";
  }
  template <class T>
  requires std::is_integral_v<T>
  bool read(std::string_view v, T& out) { return integer(v, out); }
  bool read(std::string_view v, double& out) {
    std::int64_t i = 0;
    if (!integer(v, i)) return false;
    out = static_cast<double>(i);
    return true;
  }
  bool read(std::string_view v, tr::Number& out) {
    std::int64_t i = 0;
    if (!integer(v, i)) return false;
    out = i;
    return true;
  }
  bool read(std::string_view v, const rsim::TopicPartition*& out) {
    rsim::TopicPartition tp;
    if (!partition(v, tp)) return false;
    out = &st.partition.emplace_back(std::move(tp));
    return true;
  }
  bool read(std::string_view v, tr::Partitions& out) {
    auto& ps = st.partitions.emplace_back();
    const bool ok =
        each_element(v, [&](std::string_view e) { return partition(e, ps.emplace_back()); });
    out = ps;  // after the last push_back
    return ok;
  }
  bool read(std::string_view v, tr::Names& out) {
    auto& ns = st.names.emplace_back();
    const bool ok = each_element(v, [&](std::string_view e) {
      std::string_view n;
      if (!plain_string(e, n)) return false;
      ns.emplace_back(n);
      return true;
    });
    out = ns;
    return ok;
  }
  bool read(std::string_view v, std::span<const rsim::FetchedRange>& out) {
    auto& rs = st.ranges.emplace_back();
    const bool ok = each_element(v, [&](std::string_view e) {
      if (!scan_object(e, nested)) return false;
      const std::string_view* p = find_member(nested, "partition");
      const std::string_view* first = find_member(nested, "first_offset");
      const std::string_view* last = find_member(nested, "last_offset");
      auto& r = rs.emplace_back();
      return p != nullptr && first != nullptr && last != nullptr && partition(*p, r.partition) &&
             integer(*first, r.first) && integer(*last, r.last);
    });
    out = rs;
    return ok;
  }
  bool read(std::string_view v, std::span<const rsim::CommittedOffset>& out) {
    // {"orders-0": offset, ...}: a repeated name goes to the parse (which keeps one of them).
    if (!scan_object(v, nested)) return false;
    for (std::size_t i = 0; i < nested.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (nested[i].key == nested[j].key) return false;
    auto& os = st.offsets.emplace_back();
    for (const auto& [key, value] : nested) {
      auto& o = os.emplace_back();
      if (key.rfind('-') == npos || !integer(value, o.offset)) return false;
      o.partition = tr::parse_partition(key);
    }
    out = os;
    return true;
  }
  // Nested JSON kept as it is, typed values, spliced members: only the parse reads them.
  template <class T>
  bool read(std::string_view, T&) {
    return false;
  }
};

template <class E>
tr::Event blank() {
  if constexpr (std::is_same_v<E, sim::RawTraceEvent>)
    return sim::RawTraceEvent{};
  else
    return E{};
}

template <class E>
bool scan_as(const std::vector<Member>& members, std::vector<Member>& nested, tr::ReadStorage& st,
             tr::Event& out) {
  if constexpr (std::is_same_v<E, sim::RawTraceEvent>) {
    return false;  // its fields are the parsed line's
  } else {
    E e{};
    ScanFields v{members, nested, st};
    E::fields(e, v);
    if (!v.ok) return false;
    out = e;
    return true;
  }
}

using ScanFn = bool (*)(const std::vector<Member>&, std::vector<Member>&, tr::ReadStorage&,
                        tr::Event&);
using BlankFn = tr::Event (*)();

template <std::size_t... I>
constexpr std::array<ScanFn, sizeof...(I)> scanners(std::index_sequence<I...>) {
  return {&scan_as<std::variant_alternative_t<I, tr::Event>>...};
}
template <std::size_t... I>
constexpr std::array<BlankFn, sizeof...(I)> blanks(std::index_sequence<I...>) {
  return {&blank<std::variant_alternative_t<I, tr::Event>>...};
}
constexpr auto kScan = scanners(std::make_index_sequence<std::variant_size_v<tr::Event>>{});
constexpr auto kBlank = blanks(std::make_index_sequence<std::variant_size_v<tr::Event>>{});

}  // namespace

bool TraceReader::next() {
  do {
    if (!next_text()) return false;
    ++line_no_;
  } while (text_.empty());
  storage_.clear();
  parsed_ = false;
  scanned_ = scan_on_ && read_scanned();
  if (!scanned_) read_parsed();
  return true;
}

// The line read from its text; false (nothing decided) when the parse must read it.
bool TraceReader::read_scanned() {
  if (!scan_object(text_, members_)) return false;
  const std::string_view* t = find_member(members_, "t_us");
  const std::string_view* type_value = find_member(members_, "type");
  std::string_view type;
  if (t == nullptr || type_value == nullptr || !integer(*t, t_us_) ||
      !plain_string(*type_value, type))
    return false;
  const std::size_t kind = kind_of(type);
  // group.epoch lines go to the parse, which carries a group's members forward (read_parsed)
  if (kind == kKind<sim::RawTraceEvent> || kind == kKind<tr::GroupEpoch>) return false;
  if (!kinds_[kind]) {
    event_ = kBlank[kind]();
    return true;
  }
  try {
    return kScan[kind](members_, nested_, storage_, event_);
  } catch (const std::exception&) {  // the parse tells what is wrong
    return false;
  }
}

void TraceReader::read_parsed() {
  storage_.clear();
  members_.clear();
  try {
    storage_.line = nlohmann::ordered_json::parse(text_);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(error(fmt::format("not valid json: {}", e.what())));
  }
  parsed_ = true;
  const auto& l = storage_.line;
  const auto t = l.is_object() ? l.find("t_us") : l.end();
  const auto type = l.is_object() ? l.find("type") : l.end();
  if (t == l.end() || !t->is_number_integer() || type == l.end() || !type->is_string())
    throw std::runtime_error(error("needs an integer t_us and a string type"));
  t_us_ = t->get<std::int64_t>();
  const std::string& type_name = type->get_ref<const std::string&>();
  const std::size_t kind = kind_of(type_name);
  // group.epoch lines are always read whole: the members carried forward need every one.
  if (!kinds_[kind] && kind != kKind<sim::RawTraceEvent> && kind != kKind<tr::GroupEpoch>) {
    event_ = kBlank[kind]();
    return;
  }
  try {
    event_ = rsim::trace::parse_fields(type_name, l, storage_);
    // A group's members carried over a `standard` trace's joined / left: the line and the event
    // read as a `full` line's, its members sorted by name.
    if (auto* ge = std::get_if<rsim::trace::GroupEpoch>(&event_))
      group_members_.read(storage_.line, *ge, true);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(error(fmt::format("a field of an unexpected type: {}", e.what())));
  } catch (const std::runtime_error& e) {  // a partition that is not TOPIC-N
    throw std::runtime_error(error(e.what()));
  }
}

const nlohmann::ordered_json& TraceReader::line() const {
  if (!parsed_) {
    storage_.line = nlohmann::ordered_json::parse(text_);  // read from its text: valid JSON
    parsed_ = true;
  }
  return storage_.line;
}

bool TraceReader::has(std::string_view key) const {
  if (scanned_) return find_member(members_, key) != nullptr;
  return line().contains(std::string(key));
}

rsim::trace::Event typed_event(const nlohmann::ordered_json& line,
                               rsim::trace::ReadStorage& storage) {
  storage.clear();
  return rsim::trace::parse_fields(line.at("type").get_ref<const std::string&>(), line, storage);
}

namespace {
template <std::size_t... I>
std::unordered_map<std::string_view, std::size_t> kinds(std::index_sequence<I...>) {
  std::unordered_map<std::string_view, std::size_t> m;
  (
      [&] {
        using E = std::variant_alternative_t<I, rsim::trace::Event>;
        if constexpr (!std::is_same_v<E, sim::RawTraceEvent>) m.emplace(E::kType, I);
      }(),
      ...);
  return m;
}
}  // namespace

std::size_t kind_of(std::string_view type) {
  static const auto table =
      kinds(std::make_index_sequence<std::variant_size_v<rsim::trace::Event>>{});
  const auto it = table.find(type);
  return it == table.end() ? kKind<sim::RawTraceEvent> : it->second;
}

std::string partition_name(const rsim::TopicPartition& tp) {
  return fmt::format("{}-{}", tp.topic, tp.partition);
}

std::vector<std::string> partition_names(rsim::trace::Partitions ps) {
  std::vector<std::string> out;
  out.reserve(ps.size());
  for (const auto& tp : ps) out.push_back(partition_name(tp));
  return out;
}

}  // namespace reports
