#include "reports/timeline.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <functional>
#include <istream>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include <fmt/format.h>

#include "models/trace/trace_jsonl.hpp"
#include "reports/max_tree.hpp"
#include "reports/summary.hpp"

namespace reports {

namespace {

using json = nlohmann::ordered_json;
namespace tr = rsim::trace;

std::string str(const json& o, const char* key) {
  const auto it = o.find(key);
  if (it == o.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

std::int64_t num(const json& o, const char* key, std::int64_t fallback = 0) {
  const auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return fallback;
  return it->is_number_integer() ? it->get<std::int64_t>()
                                 : static_cast<std::int64_t>(it->get<double>());
}

// Requests that move data rather than coordinate the group stay out of the message views.
bool data_api(std::string_view api) {
  return api == "Fetch" || api == "ListOffsets" || api == "OffsetForLeaderEpoch" ||
         api == "Metadata" || api == "ShareFetch" || api == "ShareAcknowledge";
}

struct LaneState {
  std::size_t index = 0;
  std::vector<std::string> owned;
  std::int64_t owned_since = 0;
  std::int64_t waiting_since = -1;
  std::int64_t revoking_since = -1;
  std::int64_t crashed_since = -1;
  std::int64_t paused_until = -1;
  std::int64_t paused_since = -1;
  std::int64_t waiting_cap =
      -1;  // a wait opened because a rebalance still owes partitions ends with it
  bool unreleased =
      false;  // KIP-848: the coordinator holds partitions back until their owner revokes them
  std::map<std::string, std::int64_t> callbacks;                          // callback name -> start
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> batches;  // batch -> (start, count)
};

struct GroupState {
  std::size_t index = 0;
  std::string state;
  std::string epoch_text;
  std::string reason;
  std::int64_t since = 0;
  bool open = false;
};

// The few top-level fields the timeline needs from the trace's high-volume lines (lag samples,
// fetched and processed batches, commits, rpcs), read from the line's text without building a json
// value. It reads only the compact form the trace writer produces; anything else (whitespace,
// escapes in a wanted string, a non-integer number) makes the caller parse the line in full.
class LineScan {
 public:
  enum Key {
    kTUs,
    kType,
    kPartition,
    kLag,
    kConsumer,
    kBatch,
    kCount,
    kApi,
    kPurpose,
    kPhase,
    kMembers,
    kDir,
    kFrom,
    kTo,
    kId,
    kError,
    kMemberEpoch,
    kFields,
    kKeys
  };

  bool read(std::string_view line) {
    for (auto& v : raw_) v = {};
    std::size_t i = 0;
    if (line.size() < 2 || line[i++] != '{' || line.back() != '}') return false;
    while (i < line.size()) {
      const std::size_t after_key = skip_string(line, i);
      if (after_key == std::string_view::npos || after_key >= line.size() || line[after_key] != ':')
        return false;
      const std::size_t key_end = after_key - 1;
      const std::string_view key = line.substr(i + 1, key_end - i - 1);
      if (has_backslash(key)) return false;
      const std::size_t value = key_end + 2;
      const std::size_t value_end = skip_value(line, value);
      if (value_end == std::string_view::npos || value_end >= line.size() || value_end == value)
        return false;
      const int k = key_index(key);
      if (k < kKeys) raw_[k] = line.substr(value, value_end - value);
      if (line[value_end] == '}')
        return value_end + 1 == line.size() && integer(kTUs, t_us) && string(kType, type);
      if (line[value_end] != ',') return false;
      i = value_end + 1;
    }
    return false;
  }
  // A wanted string field without escapes, unquoted.
  bool string(Key k, std::string_view& out) const {
    const std::string_view v = raw_[k];
    if (v.size() < 2 || v.front() != '"' || has_backslash(v)) return false;
    out = v.substr(1, v.size() - 2);
    return true;
  }
  std::string_view raw(Key k) const { return raw_[k]; }
  // The number of strings in a wanted array of strings and the first `limit` of them.
  bool strings(Key k, std::size_t limit, std::size_t& count,
               std::vector<std::string>& first) const {
    const std::string_view v = raw_[k];
    count = 0;
    first.clear();
    if (v.size() < 2 || v.front() != '[' || v.back() != ']' || has_backslash(v)) return false;
    std::size_t i = 1;
    if (v[i] == ']') return i + 1 == v.size();
    while (i < v.size()) {
      if (v[i] != '"') return false;
      const std::size_t end = v.find('"', i + 1);
      if (end == std::string_view::npos || end + 1 >= v.size()) return false;
      if (count++ < limit) first.emplace_back(v.substr(i + 1, end - i - 1));
      if (v[end + 1] == ']') return end + 2 == v.size();
      if (v[end + 1] != ',') return false;
      i = end + 2;
    }
    return false;
  }
  bool integer(Key k, std::int64_t& out) const {
    const std::string_view v = raw_[k];
    if (v.empty()) return false;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
    return r.ec == std::errc() && r.ptr == v.data() + v.size();
  }

  std::int64_t t_us = 0;
  std::string_view type;

 private:
  // Inline: the strings looked at are a few bytes long, shorter than a memchr call costs.
  static bool has_backslash(std::string_view v) {
    for (const char c : v)
      if (c == '\\') return true;
    return false;
  }
  static int key_index(std::string_view key) {
    // By length and first letter, then one comparison: every line has about ten keys, and a
    // search through the names compared most of them.
    // Compared inline, byte by byte (a memcmp call per key cost more than the compare).
    auto is = [&](std::string_view name, Key k) {
      if (key.size() != name.size()) return static_cast<int>(kKeys);
      for (std::size_t i = 0; i < name.size(); ++i)
        if (key[i] != name[i]) return static_cast<int>(kKeys);
      return static_cast<int>(k);
    };
    if (key.empty()) return kKeys;
    switch (key.size()) {
      case 2:
        return key[0] == 't' ? is("to", kTo) : is("id", kId);
      case 3:
        switch (key[0]) {
          case 'l':
            return is("lag", kLag);
          case 'a':
            return is("api", kApi);
          case 'd':
            return is("dir", kDir);
          default:
            return kKeys;
        }
      case 4:
        switch (key[1]) {
          case '_':
            return is("t_us", kTUs);
          case 'y':
            return is("type", kType);
          case 'r':
            return is("from", kFrom);
          default:
            return kKeys;
        }
      case 5:
        switch (key[0]) {
          case 'b':
            return is("batch", kBatch);
          case 'c':
            return is("count", kCount);
          case 'p':
            return is("phase", kPhase);
          case 'e':
            return is("error", kError);
          default:
            return kKeys;
        }
      case 6:
        return is("fields", kFields);
      case 7:
        return key[0] == 'p'   ? is("purpose", kPurpose)
               : key[0] == 'm' ? is("members", kMembers)
                               : kKeys;
      case 8:
        return is("consumer", kConsumer);
      case 9:
        return is("partition", kPartition);
      case 12:
        return is("member_epoch", kMemberEpoch);
      default:
        return kKeys;
    }
  }
  // The index just past the value starting at i, or npos.
  // The index just past the JSON value starting at i, or npos. The value is checked as strictly
  // as a parse would check it, over a narrower language: no whitespace, strings of printable
  // ASCII and the two-character escapes, at most kMaxDepth levels. Anything outside gives npos
  // and the caller's full parse (which accepts or rejects it as nlohmann does).
  static constexpr int kMaxDepth = 32;
  static std::size_t skip_value(std::string_view s, std::size_t i, int depth = 0) {
    constexpr auto npos = std::string_view::npos;
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
    return std::string_view::npos;
  }
  static std::size_t skip_string(std::string_view s, std::size_t i) {
    if (i >= s.size() || s[i] != '"') return std::string_view::npos;
    ++i;
    // Eight bytes at a time while all are printable ASCII other than '\\' (names and numbers
    // in strings, nearly every byte of a line): the closing quote is found in the word when no
    // byte before it needs a look. Anything else goes byte by byte from that word on.
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
      if (c < 0x20 || c > 0x7e) return std::string_view::npos;
      if (c == '\\') {
        if (++i >= s.size()) return std::string_view::npos;
        if (std::string_view("\"\\/bfnrt").find(s[i]) == std::string_view::npos)
          return std::string_view::npos;
      }
    }
    return std::string_view::npos;
  }
  // Byte masks of a little-endian word of 8 bytes: the high bit of a byte is set where the
  // test holds. The lowest flagged byte is always right (borrows and carries only flag bytes
  // above a true one), which is all the callers read.
  static constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
  static std::uint64_t zero_bytes(std::uint64_t v) { return (v - kOnes) & ~v & kHighs; }
  // Bytes outside printable ASCII [0x20, 0x7e], or '\\'.
  static std::uint64_t unplain8(std::uint64_t w) {
    return (w & kHighs) | ((w - kOnes * 0x20) & ~w & kHighs) | ((w + kOnes) & kHighs) |
           zero_bytes(w ^ (kOnes * '\\'));
  }
  static std::size_t lowest_byte(std::uint64_t mask) {
    return static_cast<std::size_t>(__builtin_ctzll(mask)) / 8;
  }
  // An integer of at most 18 digits: -?(0|[1-9][0-9]*). A fraction, an exponent or a longer
  // integer (which a parse may find out of range) is left to the full parse.
  static std::size_t skip_number(std::string_view s, std::size_t i) {
    if (i < s.size() && s[i] == '-') ++i;
    const std::size_t first = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    const std::size_t n = i - first;
    if (n == 0 || n > 18 || (n > 1 && s[first] == '0')) return std::string_view::npos;
    if (i < s.size() && (s[i] == '.' || s[i] == 'e' || s[i] == 'E')) return std::string_view::npos;
    return i;
  }

  std::string_view raw_[kKeys];
};

// Kinds the timeline passes over: not a consumer's own line and nothing it draws (a member
// record's `consumer` names the member, not an actor).
bool ignored_kind(std::size_t kind) {
  static constexpr std::size_t kIgnored[] = {kKind<tr::Record>,
                                             kKind<tr::LogEndOffset>,
                                             kKind<tr::Produce>,
                                             kKind<tr::Position>,
                                             kKind<tr::RunEnd>,
                                             kKind<tr::NetChange>,
                                             kKind<tr::NetHeal>,
                                             kKind<tr::NetPartition>,
                                             kKind<tr::NetRestore>,
                                             kKind<tr::NetDrop>,
                                             kKind<tr::CoordinatorElected>,
                                             kKind<tr::CoordinatorLoad>,
                                             kKind<tr::CoordinatorLoaded>,
                                             kKind<tr::CoordinatorUnloaded>,
                                             kKind<tr::BrokerFail>,
                                             kKind<tr::BrokerRecover>};
  return std::find(std::begin(kIgnored), std::end(kIgnored), kind) != std::end(kIgnored);
}

// The kinds the scan reads from a line's text (besides the ignored ones): the full parse reads
// them from their JSON as leniently as the scan does, so that a line reads the same whatever its
// spacing. Every other kind is read as its typed event.
bool scanned_kind(std::size_t kind) {
  return kind == kKind<tr::Lag> || kind == kKind<tr::Rpc> || kind == kKind<tr::RecordsFetched> ||
         kind == kKind<tr::Commit> || kind == kKind<tr::RecordsProcessed>;
}

// Heterogeneous lookup of a partition's lag series by the name read from a line.
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

}  // namespace

std::vector<TraceLine> parse_trace(std::string_view jsonl) {
  std::vector<TraceLine> out;
  std::size_t pos = 0, line_no = 0;
  while (pos < jsonl.size()) {
    std::size_t end = jsonl.find('\n', pos);
    if (end == std::string_view::npos) end = jsonl.size();
    ++line_no;
    const std::string_view line = jsonl.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    out.push_back(parse_line(line, line_no));
  }
  return out;
}

TraceLine parse_line(std::string_view line, std::size_t line_no) {
  TraceLine t;
  try {
    t.fields = json::parse(line);
  } catch (const json::exception& e) {
    throw std::runtime_error(
        fmt::format("trace.jsonl line {}: not valid json: {}", line_no, e.what()));
  }
  if (!t.fields.is_object() || !t.fields.contains("t_us") ||
      !t.fields["t_us"].is_number_integer() || !t.fields.contains("type") ||
      !t.fields["type"].is_string())
    throw std::runtime_error(
        fmt::format("trace.jsonl line {}: needs an integer t_us and a string type", line_no));
  t.t_us = t.fields["t_us"].get<std::int64_t>();
  t.type = t.fields["type"].get<std::string>();
  return t;
}

bool partition_less(const std::string& a, const std::string& b) {
  const auto da = a.rfind('-'), db = b.rfind('-');
  if (da == std::string::npos || db == std::string::npos) return a < b;
  const std::string_view ta(a.data(), da), tb(b.data(), db);
  if (ta != tb) return ta < tb;
  const std::string na = a.substr(da + 1), nb = b.substr(db + 1);
  if (na.size() != nb.size()) return na.size() < nb.size();
  return na < nb;
}

std::string compress_partitions(std::vector<std::string> partitions) {
  std::sort(partitions.begin(), partitions.end(), partition_less);
  partitions.erase(std::unique(partitions.begin(), partitions.end()), partitions.end());
  std::string out;
  std::size_t i = 0;
  while (i < partitions.size()) {
    const auto& p = partitions[i];
    const auto dash = p.rfind('-');
    std::size_t j = i;
    if (dash != std::string::npos) {
      const std::string topic = p.substr(0, dash);
      long first = std::strtol(p.c_str() + dash + 1, nullptr, 10);
      while (j + 1 < partitions.size()) {
        const auto& q = partitions[j + 1];
        const auto qd = q.rfind('-');
        if (qd == std::string::npos || q.substr(0, qd) != topic ||
            std::strtol(q.c_str() + qd + 1, nullptr, 10) != first + static_cast<long>(j + 1 - i))
          break;
        ++j;
      }
      if (!out.empty()) out += ", ";
      if (j == i)
        out += p;
      else
        out += fmt::format("{}-{}..{}", topic, first, first + static_cast<long>(j - i));
    } else {
      if (!out.empty()) out += ", ";
      out += p;
    }
    i = j + 1;
  }
  return out.empty() ? "none" : out;
}

std::string seconds(std::int64_t t_us) {
  if (t_us % 1000 == 0) return fmt::format("{}.{:03} s", t_us / 1'000'000, (t_us / 1000) % 1000);
  return fmt::format("{}.{:06} s", t_us / 1'000'000, t_us % 1'000'000);
}

std::string milliseconds(std::int64_t us) {
  if (us % 1000 == 0) return fmt::format("{} ms", us / 1000);
  std::string s = fmt::format("{:.3f}", static_cast<double>(us) / 1000.0);
  while (s.back() == '0') s.pop_back();
  return s + " ms";
}

// The timeline of the lines `next_line` yields one at a time (a trace is never held whole).
namespace {

/// The not-processed intervals (Timeline::not_processed): every line also goes through the
/// summary's own sink (no critical paths), so the partition view's gaps are the ones
/// summary.json counts. Off past kExactGapsMaxLines lines, or at a line it cannot read (the
/// timeline reports that line's problem).
class GapReader {
 public:
  explicit GapReader(bool on) : on_(on), sink_(inputs()) {}
  void read(std::string_view raw) {
    if (!on_ || raw.empty()) return;
    if (++lines_ > kExactGapsMaxLines) {
      on_ = false;
      return;
    }
    try {
      line_.assign(raw);
      sim::SimTime t{0};
      const rsim::trace::Event e = rsim::trace::parse_jsonl(line_, storage_, t);
      sink_.on_event(t, e);
    } catch (const std::exception&) {
      on_ = false;
    }
  }
  void finish(Timeline& tl) {
    if (!on_) return;
    try {
      sink_.finish();
      tl.not_processed = sink_.not_processed_gaps();
      tl.not_processed_exact = true;
    } catch (const std::exception&) {
      tl.not_processed.clear();
    }
  }

 private:
  static SummaryInputs inputs() {
    SummaryInputs in;
    in.critical_paths = false;
    in.not_processed_gaps = true;
    return in;
  }
  bool on_;
  std::size_t lines_ = 0;
  SummarySink sink_;
  rsim::trace::ReadStorage storage_;
  std::string line_;
};

}  // namespace

namespace {

// The timeline of a summary and the lines of its trace, built in one pass (build_from): the state
// the pass keeps, and a member for each kind of line it reads.
class TimelineBuilder {
 public:
  explicit TimelineBuilder(const json& summary);
  /// Reads every line `next_line` yields, one at a time (a trace is never held whole).
  void read(const std::function<bool(std::string_view&)>& next_line);
  /// Closes what is still open at the end of the run.
  Timeline finish();

 private:
  void load_rebalances(const json& summary);
  void index_rebalances();
  bool scanned_line();
  void parsed_line(std::string_view raw, std::size_t line_no, bool scanned);
  bool on_typed(const tr::Event& e, const json& f, std::int64_t t);
  void on_group_state(const tr::GroupStateChange& e, std::int64_t t);
  void on_group_epoch(const tr::GroupEpoch& e, const json& f, std::int64_t t);
  void on_rpc(const json& f, std::int64_t t);
  void on_batch(const json& f, std::int64_t t, std::size_t kind, LaneState& ls);
  bool on_consumer_life(const tr::Event& e, std::int64_t t, LaneState& ls, Lane& ln);
  void on_consumer_group(const tr::Event& e, std::int64_t t, const std::string& name, LaneState& ls,
                         Lane& ln);

  Timeline tl;
  bool consumer_protocol = false;
  std::map<std::string, LaneState, std::less<>>
      lanes;  // found by a name read from a line, uncopied
  std::map<std::string, GroupState> groups;
  std::map<std::string, std::string> assignment_epoch;  // group -> latest target assignment epoch
  std::set<std::string, decltype(&partition_less)> partition_names{&partition_less};
  // Each sampled partition's latest lag; the points of the first kLagSeriesKept of them in
  // partition order (all that any renderer draws per partition).
  struct LagSeries {
    std::string name;
    std::int64_t now = 0;
    bool kept = false;
    std::vector<LagPoint> points;
  };
  std::unordered_map<std::string, std::size_t, NameHash, std::equal_to<>> lag_slot;
  std::vector<LagSeries> lag_series;
  std::set<std::string, decltype(&partition_less)> kept_series{&partition_less};
  std::int64_t lag_total = 0;
  std::int64_t last_lag_t = -1;
  std::map<std::tuple<std::string, std::string, std::int64_t>, std::size_t> open_requests;
  // Per consumer: its last answered ConsumerGroupHeartbeat (the consumer.reconcile line that
  // follows at the same time is the response's payload, Message::reply).
  std::map<std::string, std::size_t> last_heartbeat_response;
  std::vector<std::vector<std::tuple<std::int64_t, std::int64_t, std::vector<std::string>>>>
      raw_owned;
  std::int64_t last_t = 0;
  // A consumer-protocol member keeps waiting after an assignment while its rebalance still
  // owes it partitions (KIP-848 hands them over once their previous owner has revoked them).
  // Each rebalance's assigned partitions by consumer, indexed once (a summary's `assigned` is an
  // ordered object: a lookup in it is a linear search over the group's members).
  std::vector<std::unordered_map<std::string, const json*, NameHash, std::equal_to<>>> assigned_of;
  // Each group's rebalances by start, with a max tree over their ends: the rebalances open at t
  // are found by a binary search and a descent of the tree that visits only the open ones (an
  // assignment looks at its group's open rebalances, not at all; a rebalance that never
  // completes does not make every later question walk back over the whole run).
  struct GroupRebalances {
    std::vector<std::size_t> by_start;  // indexes into tl.rebalances
    MaxTree ends;                       // end_us of by_start[k]
  };
  std::map<std::string, GroupRebalances, std::less<>> rebalances_of;
  std::vector<std::size_t> open_now;
  std::size_t lag_guess = 0;
  std::vector<std::string> rpc_fields;  // a scanned request's `fields`
  std::size_t field_count = 0;
  // Fleets: per deployment (index into tl.deployments) its ready pods, and the pods of each.
  std::map<std::string, std::size_t> deployment_index;
  std::map<std::string, std::set<std::string>> ready_pods;
  LineScan scan;
  std::size_t scan_kind = 0;  // kind_of(scan.type)
  tr::ReadStorage storage;    // what the typed event of a parsed line points into
  bool scanned_members = false;
  std::size_t member_count = 0;
  std::vector<std::string> scanned_names;  // a group epoch's members, scanned from its text
  tr::GroupMembers group_members;          // carried over a standard trace's joined / left

  LaneState& lane(std::string_view name, std::int64_t t) {
    auto it = lanes.find(name);
    if (it == lanes.end()) {
      it = lanes.emplace(std::string(name), LaneState{}).first;
      it->second.index = tl.lanes.size();
      it->second.owned_since = t;
      tl.lanes.push_back(Lane{std::string(name), {}, {}, {}, {}});
      raw_owned.emplace_back();
    }
    return it->second;
  }
  void close_owned(LaneState& ls, std::int64_t t) {
    if (!ls.owned.empty() && t > ls.owned_since)
      raw_owned[ls.index].emplace_back(ls.owned_since, t, ls.owned);
    ls.owned_since = t;
  }
  void span(LaneState& ls, std::int64_t from, std::int64_t to, std::string kind,
            std::string label) {
    tl.lanes[ls.index].spans.push_back(
        Span{from, std::max(from, to), std::move(kind), std::move(label)});
  }
  void instant(LaneState& ls, std::int64_t t, std::string kind, std::string label) {
    tl.lanes[ls.index].instants.push_back(Instant{t, std::move(kind), std::move(label)});
  }
  void close_waiting(LaneState& ls, std::int64_t t) {
    const std::int64_t end = ls.waiting_cap >= 0 ? std::min(t, ls.waiting_cap) : t;
    if (ls.waiting_since >= 0 && end > ls.waiting_since)
      span(ls, ls.waiting_since, end, "waiting", "waiting for assignment");
    ls.waiting_since = -1;
    ls.waiting_cap = -1;
  }
  GroupState& group_band(const std::string& name) {
    auto it = groups.find(name);
    if (it == groups.end()) {
      it = groups.emplace(name, GroupState{}).first;
      it->second.index = tl.groups.size();
      tl.groups.push_back(GroupBand{name, consumer_protocol, {}, {}});
    }
    return it->second;
  }
  void close_segment(GroupState& gs, std::int64_t t) {
    if (gs.open && t > gs.since) {
      std::string label = gs.state;
      if (!gs.epoch_text.empty()) label += " · " + gs.epoch_text;
      tl.groups[gs.index].segments.push_back(GroupSegment{
          gs.since, t, gs.state, label + (gs.reason.empty() ? "" : " (" + gs.reason + ")")});
    }
    gs.since = t;
  }
  void flush_lag() {
    if (last_lag_t >= 0) tl.total_lag.push_back(LagPoint{last_lag_t, lag_total});
  }
  std::int64_t still_owed(const std::string& consumer, const std::string& group, std::int64_t t,
                          const std::vector<std::string>& owned) {
    const auto g = rebalances_of.find(group);
    if (g == rebalances_of.end()) return -1;
    const auto& gr = g->second;
    // The ones started at or before t that end after it.
    open_now.clear();
    const std::size_t k =
        static_cast<std::size_t>(std::upper_bound(gr.by_start.begin(), gr.by_start.end(), t,
                                                  [&](std::int64_t v, std::size_t i) {
                                                    return v < tl.rebalances[i].start_us;
                                                  }) -
                                 gr.by_start.begin());
    gr.ends.each_above(k, t, tl.search_steps,
                       [&](std::size_t j) { open_now.push_back(gr.by_start[j]); });
    // In the order of the summary, as every rebalance used to be looked at.
    std::sort(open_now.begin(), open_now.end());
    std::unordered_set<std::string_view> owned_set;
    for (const std::size_t i : open_now) {
      const auto& r = tl.rebalances[i];
      const auto it = assigned_of[i].find(consumer);
      if (it == assigned_of[i].end()) continue;
      if (owned_set.empty()) owned_set.insert(owned.begin(), owned.end());
      for (const auto& p : *it->second)
        if (p.is_string() && !owned_set.contains(p.get_ref<const std::string&>())) return r.end_us;
    }
    return -1;
  }

  // A partition's first sample: its series, kept if it is among the smallest sampled.
  std::size_t new_lag_series(std::string_view partition) {
    const auto it = lag_slot.emplace(std::string(partition), lag_series.size()).first;
    lag_series.push_back(LagSeries{it->first, 0, false, {}});
    partition_names.insert(it->first);
    // The kept series are always the smallest sampled partitions: one pushed out (or never
    // let in) has kLagSeriesKept smaller ones sampled for good.
    if (kept_series.size() >= kLagSeriesKept && partition_less(it->first, *kept_series.rbegin())) {
      auto& out = lag_series[lag_slot.find(*kept_series.rbegin())->second];
      out.kept = false;
      std::vector<LagPoint>().swap(out.points);
      kept_series.erase(std::prev(kept_series.end()));
    }
    if (kept_series.size() < kLagSeriesKept) {
      kept_series.insert(it->first);
      lag_series.back().kept = true;
    }
    return it->second;
  }
  void on_lag(std::string_view partition, std::int64_t t, std::int64_t v) {
    if (t != last_lag_t) {
      flush_lag();
      last_lag_t = t;
    }
    // Samples come partition after partition in the same order at every tick: the series after
    // the last one is tried first, and the hash lookup only when it is not that one.
    std::size_t slot = lag_guess < lag_series.size() ? lag_guess : 0;
    if (slot >= lag_series.size() || lag_series[slot].name != partition) {
      auto it = lag_slot.find(partition);
      if (it != lag_slot.end())
        slot = it->second;
      else
        slot = new_lag_series(partition);
    }
    lag_guess = slot + 1;
    auto& series = lag_series[slot];
    lag_total += v - series.now;
    series.now = v;
    if (series.kept) series.points.push_back(LagPoint{t, v});
  }

  // A group-coordination request sent (`detail` as Message::detail) and a response received.
  void rpc_send(std::int64_t t, std::string from, std::string to, const std::string& api,
                std::int64_t id, std::string detail) {
    Message m;
    m.send_us = t;
    m.client = from;
    m.server = std::move(to);
    m.api = api;
    m.detail = std::move(detail);
    // A heartbeat that sends its owned partitions (TopicPartitions): which ones.
    if (api == "ConsumerGroupHeartbeat" && m.detail.find("TopicPartitions") != std::string::npos &&
        lanes.count(from))
      m.detail += " owned=[" + compress_partitions(lane(from, t).owned) + "]";
    open_requests[{from, api, id}] = tl.messages.size();
    tl.messages.push_back(std::move(m));
    if (lanes.count(from)) {
      auto& ls = lane(from, t);
      if (api == "JoinGroup") {
        instant(ls, t, "join", "JoinGroup request");
        if (ls.waiting_since < 0) ls.waiting_since = t;
      } else if (api == "SyncGroup") {
        instant(ls, t, "sync", "SyncGroup request");
      } else if (api == "LeaveGroup") {
        instant(ls, t, "leave", "LeaveGroup request");
      }
    }
  }
  void rpc_recv(std::int64_t t, const std::string& to, const std::string& api, std::int64_t id,
                const std::string& error) {
    const auto key = std::make_tuple(to, api, id);
    const auto it = open_requests.find(key);
    if (it != open_requests.end()) {
      tl.messages[it->second].recv_us = t;
      tl.messages[it->second].error = error.empty() ? "NONE" : error;
      if (api == "ConsumerGroupHeartbeat") last_heartbeat_response[to] = it->second;
      open_requests.erase(it);
    }
    if (lanes.count(to)) {
      auto& ls = lane(to, t);
      const std::string err = error.empty() || error == "NONE" ? "" : " (" + error + ")";
      if (api == "JoinGroup")
        instant(ls, t, "join", "JoinGroup response" + err);
      else if (api == "SyncGroup")
        instant(ls, t, "sync", "SyncGroup response" + err);
      else if ((api == "Heartbeat" || api == "ConsumerGroupHeartbeat" ||
                api == "ShareGroupHeartbeat") &&
               !err.empty())
        instant(ls, t, "heartbeat", api + " response" + err);
    }
  }

  DeploymentBand& deployment_band(std::string_view deployment) {
    auto [it, added] = deployment_index.emplace(std::string(deployment), tl.deployments.size());
    if (added) tl.deployments.push_back(DeploymentBand{it->first, {}, {}, 0});
    return tl.deployments[it->second];
  }
  void on_scaling(const tr::AutoscalerDecision& e, std::int64_t t) {
    deployment_band(e.deployment)
        .decisions.push_back(ScalingDecision{t, e.from, e.to, std::string(e.reason)});
  }
  // A pod ready (`ready`), or terminating or killed.
  void on_pod(std::string_view deployment, std::string_view pod_name, bool ready, std::int64_t t) {
    auto& band = deployment_band(deployment);
    auto& pods = ready_pods[std::string(deployment)];
    const std::string pod(pod_name);
    const bool changed = ready ? pods.insert(pod).second : pods.erase(pod) > 0;
    if (!changed) return;
    const int n = static_cast<int>(pods.size());
    // Changes at one time are one step: the count after the last of them.
    if (!band.ready.empty() && band.ready.back().t_us == t)
      band.ready.back().ready = n;
    else
      band.ready.push_back(ReplicaStep{t, n});
    const int before = band.ready.size() >= 2 ? band.ready[band.ready.size() - 2].ready : 0;
    if (before == n) band.ready.pop_back();
  }
};

TimelineBuilder::TimelineBuilder(const json& summary) {
  tl.summary = summary;
  tl.scenario = summary.value("scenario", std::string());
  tl.protocol = summary.value("protocol", std::string());
  consumer_protocol = tl.protocol == "consumer" || tl.protocol == "share";
  load_rebalances(summary);
  index_rebalances();
}

void TimelineBuilder::load_rebalances(const json& summary) {
  if (summary.contains("rebalances") && summary["rebalances"].is_array()) {
    int index = 0;
    for (const auto& r : summary["rebalances"]) {
      Rebalance rb;
      rb.index = ++index;
      rb.group = str(r, "group");
      rb.start_us = num(r, "start_us");
      rb.end_us = num(r, "end_us", rb.start_us);
      rb.trigger = str(r, "trigger");
      if (r.contains("generation") && r["generation"].is_number())
        rb.epoch_label =
            fmt::format("{} {}", consumer_protocol ? "epoch" : "generation", num(r, "generation"));
      rb.completed = r.value("completed", true);
      rb.revoked = r.contains("revoked") ? r["revoked"] : json::object();
      rb.assigned = r.contains("assigned") ? r["assigned"] : json::object();
      tl.rebalances.push_back(std::move(rb));
    }
  }
}

void TimelineBuilder::index_rebalances() {
  assigned_of.resize(tl.rebalances.size());
  for (std::size_t i = 0; i < tl.rebalances.size(); ++i)
    if (tl.rebalances[i].assigned.is_object())
      for (auto it = tl.rebalances[i].assigned.cbegin(); it != tl.rebalances[i].assigned.cend();
           ++it)
        assigned_of[i].emplace(it.key(), &it.value());
  for (std::size_t i = 0; i < tl.rebalances.size(); ++i)
    rebalances_of[tl.rebalances[i].group].by_start.push_back(i);
  for (auto& [g, gr] : rebalances_of) {
    std::stable_sort(gr.by_start.begin(), gr.by_start.end(), [&](std::size_t a, std::size_t b) {
      return tl.rebalances[a].start_us < tl.rebalances[b].start_us;
    });
    std::vector<std::int64_t> ends;
    ends.reserve(gr.by_start.size());
    for (const std::size_t i : gr.by_start) ends.push_back(tl.rebalances[i].end_us);
    gr.ends = MaxTree(ends);
  }
}

void TimelineBuilder::read(const std::function<bool(std::string_view&)>& next_line) {
  std::string_view raw;
  std::size_t line_no = 0;
  while (next_line(raw)) {
    ++line_no;
    if (raw.empty()) continue;
    // The high-volume lines, read without a json parse.
    const bool scanned = scan.read(raw);
    if (scanned && scanned_line()) continue;
    parsed_line(raw, line_no, scanned);
  }
  flush_lag();
}

// A high-volume line the scan read whole: false when it is one the parse below must read.
bool TimelineBuilder::scanned_line() {
  const std::int64_t t = scan.t_us;
  const std::size_t kind = scan_kind = kind_of(scan.type);
  std::string_view name, api, purpose, phase, dir, to, error;
  std::int64_t value = 0, count = 0;
  bool done = true;
  if (ignored_kind(kind)) {
  } else if (kind == kKind<tr::Lag> && scan.string(LineScan::kPartition, name) &&
             scan.integer(LineScan::kLag, value)) {
    on_lag(name, t, value);
  } else if (kind == kKind<tr::Rpc> && scan.string(LineScan::kApi, api) && data_api(api)) {
  } else if (kind == kKind<tr::Rpc> && scan.string(LineScan::kApi, api) &&
             scan.string(LineScan::kDir, dir) && dir == "recv" && scan.string(LineScan::kTo, to) &&
             scan.integer(LineScan::kId, value) &&
             (scan.raw(LineScan::kError).empty() || scan.string(LineScan::kError, error))) {
    // A response, as the parse below reads it (an absent error is "").
    rpc_recv(t, std::string(to), std::string(api), value, std::string(error));
  } else if (kind == kKind<tr::Rpc> && scan.string(LineScan::kApi, api) &&
             scan.string(LineScan::kDir, dir) && dir == "send" &&
             scan.string(LineScan::kFrom, name) && scan.string(LineScan::kTo, to) &&
             scan.integer(LineScan::kId, value) &&
             (scan.raw(LineScan::kMemberEpoch).empty() ||
              scan.integer(LineScan::kMemberEpoch, count)) &&
             (scan.raw(LineScan::kFields).empty() ||
              scan.strings(LineScan::kFields, SIZE_MAX, field_count, rpc_fields))) {
    // A request, as the parse below reads it.
    std::string detail;
    if (!scan.raw(LineScan::kMemberEpoch).empty()) detail = fmt::format("member_epoch={}", count);
    if (!scan.raw(LineScan::kFields).empty()) {
      std::string fields;
      for (const auto& x : rpc_fields) {
        if (!fields.empty()) fields += ',';
        fields += x;
      }
      if (!detail.empty()) detail += ' ';
      detail += "fields=" + fields;
    }
    rpc_send(t, std::string(name), std::string(to), std::string(api), value, std::move(detail));
  } else if (kind == kKind<tr::RecordsFetched> && scan.string(LineScan::kConsumer, name) &&
             scan.integer(LineScan::kBatch, value) && scan.integer(LineScan::kCount, count)) {
    lane(name, t).batches[value] = {t, count};
  } else if (kind == kKind<tr::Commit> && scan.string(LineScan::kConsumer, name) &&
             scan.string(LineScan::kPurpose, purpose) && scan.string(LineScan::kPhase, phase)) {
    auto& ls = lane(name, t);
    if (purpose == "before revocation" && phase == "sent" && ls.revoking_since < 0)
      ls.revoking_since = t;
  } else if (kind == kKind<tr::RecordsProcessed> && scan.string(LineScan::kConsumer, name) &&
             scan.integer(LineScan::kBatch, value)) {
    auto& ls = lane(name, t);
    const auto it = ls.batches.find(value);
    if (it != ls.batches.end()) {
      span(ls, it->second.first, t, "processing",
           fmt::format("processing batch {}: {} records", it->first, it->second.second));
      ls.batches.erase(it);
    }
  } else {
    done = false;
  }
  if (!done) return false;
  last_t = std::max(last_t, t);
  return true;
}

// Any other line, parsed (a group epoch's long member list counted from the scanned text).
void TimelineBuilder::parsed_line(std::string_view raw, std::size_t line_no, bool scanned) {
  // A group epoch's member list (ten thousand names in a large group) is read from the text;
  // the rest of the line is parsed.
  scanned_members = false;
  std::string reduced;
  if (scanned && scan_kind == kKind<tr::GroupEpoch> && !scan.raw(LineScan::kMembers).empty() &&
      scan.strings(LineScan::kMembers, static_cast<std::size_t>(-1), member_count, scanned_names)) {
    const std::string_view m = scan.raw(LineScan::kMembers);
    const std::size_t at = static_cast<std::size_t>(m.data() - raw.data());
    reduced.append(raw.substr(0, at)).append("[]").append(raw.substr(at + m.size()));
    raw = reduced;
    scanned_members = true;
  }
  const TraceLine line = parse_line(raw, line_no);
  const auto& f = line.fields;
  const std::int64_t t = line.t_us;
  last_t = std::max(last_t, t);
  const std::size_t kind = kind_of(line.type);
  if (ignored_kind(kind)) return;
  if (kind == kKind<tr::Lag>) {
    on_lag(str(f, "partition"), t, num(f, "lag"));
    return;
  }
  if (kind == kKind<tr::Rpc>) {
    on_rpc(f, t);
    return;
  }
  const bool scanned_kind_line = scanned_kind(kind);
  tr::Event e;
  if (!scanned_kind_line) {
    try {
      e = typed_event(f, storage);
    } catch (const json::exception& ex) {
      throw std::runtime_error(fmt::format("trace.jsonl line {}: a field of an unexpected type: {}",
                                           line_no, ex.what()));
    } catch (const std::runtime_error& ex) {  // a partition that is not TOPIC-N
      throw std::runtime_error(fmt::format("trace.jsonl line {}: {}", line_no, ex.what()));
    }
    if (on_typed(e, f, t)) return;
  }
  // Any line with a consumer is that consumer's (a kind this build does not know included).
  const auto c = f.find("consumer");
  if (c == f.end() || !c->is_string()) return;
  const std::string& name = c->get_ref<const std::string&>();
  auto& ls = lane(name, t);
  auto& ln = tl.lanes[ls.index];
  if (scanned_kind_line)
    on_batch(f, t, kind, ls);
  else if (!on_consumer_life(e, t, ls, ln))
    on_consumer_group(e, t, name, ls, ln);
}

// The run's, the groups' and the fleets' lines; false for any other.
bool TimelineBuilder::on_typed(const tr::Event& e, const json& f, std::int64_t t) {
  if (const auto* run = std::get_if<tr::RunStart>(&e)) {
    tl.duration_us = run->duration_ms * 1000;
    if (tl.scenario.empty()) tl.scenario = run->scenario;
    if (tl.protocol.empty()) tl.protocol = run->protocol;
  } else if (const auto* tp = std::get_if<tr::TopicPartitionCount>(&e)) {
    for (std::int32_t p = 0; p < tp->partitions && p < 1'000'000; ++p)
      partition_names.insert(fmt::format("{}-{}", tp->topic, p));
  } else if (const auto* gs = std::get_if<tr::GroupStateChange>(&e)) {
    on_group_state(*gs, t);
  } else if (const auto* ge = std::get_if<tr::GroupEpoch>(&e)) {
    on_group_epoch(*ge, f, t);
  } else if (const auto* ready = std::get_if<tr::PodReady>(&e)) {
    on_pod(ready->deployment, ready->pod, true, t);
  } else if (const auto* term = std::get_if<tr::PodTerminating>(&e)) {
    on_pod(term->deployment, term->pod, false, t);
  } else if (const auto* killed = std::get_if<tr::PodKilled>(&e)) {
    on_pod(killed->deployment, killed->pod, false, t);
  } else if (const auto* decision = std::get_if<tr::AutoscalerDecision>(&e)) {
    on_scaling(*decision, t);
  } else {
    return false;
  }
  return true;
}

void TimelineBuilder::on_group_state(const tr::GroupStateChange& e, std::int64_t t) {
  const std::string g(e.group);
  auto& gs = group_band(g);
  close_segment(gs, t);
  gs.state = e.state;
  gs.reason = e.reason.value_or("");
  gs.open = true;
  if (e.generation)
    gs.epoch_text = fmt::format("generation {}", *e.generation);
  else if (e.epoch) {
    gs.epoch_text = fmt::format("epoch {}", *e.epoch);
    if (assignment_epoch.count(g)) gs.epoch_text += " / target " + assignment_epoch[g];
  }
}

void TimelineBuilder::on_group_epoch(const tr::GroupEpoch& e, const json& f, std::int64_t t) {
  const std::string g(e.group);
  auto& gs = group_band(g);
  std::string label;
  if (e.generation) {
    label = fmt::format("generation {}", *e.generation);
    if (e.leader) label += fmt::format(", leader {}", *e.leader);
  } else {
    if (e.assignment_epoch) assignment_epoch[g] = std::to_string(*e.assignment_epoch);
    label = fmt::format("group epoch {}", e.epoch.value_or(0));
    if (e.assignment_epoch)
      label += fmt::format(", target assignment epoch {}", assignment_epoch[g]);
  }
  // The members, sorted by name: a full line's list, or a standard line's change carried over.
  const std::vector<std::string>* members = nullptr;
  if (f.contains("members")) {
    members = &group_members.set(g, scanned_members ? tr::Names(scanned_names) : e.members);
  } else if (f.contains("joined") || f.contains("left")) {
    const auto names_of = [&](const char* key) {
      std::vector<std::string> v;
      if (const auto it = f.find(key); it != f.end() && it->is_array())
        for (const auto& n : *it)
          if (n.is_string()) v.push_back(n.get<std::string>());
      return v;
    };
    members = &group_members.change(g, names_of("joined"), names_of("left"));
  }
  if (members != nullptr) {
    // A thousand members would make every epoch's label kilobytes long: name the first few.
    member_count = members->size();
    std::string names;
    for (std::size_t k = 0; k < std::min<std::size_t>(8, members->size()); ++k) {
      if (k > 0) names += ", ";
      names += (*members)[k];
    }
    if (member_count > 8) names += fmt::format(" and {} more", member_count - 8);
    label += fmt::format(", {} member{}: {}", member_count, member_count == 1 ? "" : "s", names);
  }
  if (e.reason) label += fmt::format(" ({})", *e.reason);
  tl.groups[gs.index].epochs.push_back(Instant{t, "epoch", label});
  if (gs.open) {
    close_segment(gs, t);
    if (e.generation)
      gs.epoch_text = fmt::format("generation {}", *e.generation);
    else {
      gs.epoch_text = fmt::format("epoch {}", e.epoch.value_or(0));
      if (assignment_epoch.count(g)) gs.epoch_text += " / target " + assignment_epoch[g];
      // The new epoch's own trigger: the segment it opens is not the previous epoch's.
      gs.reason = e.reason.value_or("");
    }
  }
}

void TimelineBuilder::on_rpc(const json& f, std::int64_t t) {
  const std::string dir = str(f, "dir"), api = str(f, "api");
  if (data_api(api)) return;
  if (dir == "send") {
    std::string detail;
    if (f.contains("member_epoch")) detail = fmt::format("member_epoch={}", num(f, "member_epoch"));
    if (f.contains("fields") && f["fields"].is_array()) {
      std::string fields;
      for (const auto& x : f["fields"]) {
        if (!fields.empty()) fields += ',';
        fields += x.is_string() ? x.get<std::string>() : x.dump();
      }
      if (!detail.empty()) detail += ' ';
      detail += "fields=" + fields;
    }
    rpc_send(t, str(f, "from"), str(f, "to"), api, num(f, "id", -1), std::move(detail));
  } else {
    rpc_recv(t, str(f, "to"), api, num(f, "id", -1), str(f, "error"));
  }
}

// A consumer's fetched and processed batches and its commits, read as the scan reads them.
void TimelineBuilder::on_batch(const json& f, std::int64_t t, std::size_t kind, LaneState& ls) {
  if (kind == kKind<tr::Commit>) {
    if (str(f, "purpose") == "before revocation" && str(f, "phase") == "sent" &&
        ls.revoking_since < 0)
      ls.revoking_since = t;
  } else if (kind == kKind<tr::RecordsFetched>) {
    ls.batches[num(f, "batch")] = {t, num(f, "count")};
  } else if (kind == kKind<tr::RecordsProcessed>) {
    const auto it = ls.batches.find(num(f, "batch"));
    if (it != ls.batches.end()) {
      span(ls, it->second.first, t, "processing",
           fmt::format("processing batch {}: {} records", it->first, it->second.second));
      ls.batches.erase(it);
    }
  }
}

// A consumer's process: started, stopped, crashed, stalled, paused; false for any other line.
bool TimelineBuilder::on_consumer_life(const tr::Event& e, std::int64_t t, LaneState& ls,
                                       Lane& ln) {
  if (const auto* start = std::get_if<tr::ConsumerStart>(&e)) {
    if (ln.group.empty()) ln.group = start->group;
    if (ls.crashed_since >= 0) span(ls, ls.crashed_since, t, "crashed", "crashed (process down)");
    ls.crashed_since = -1;
    ls.owned.clear();
    ls.owned_since = t;
    ls.waiting_since = t;
    instant(ls, t, "start", "started (subscribe, poll)");
  } else if (std::holds_alternative<tr::ConsumerStop>(e)) {
    instant(ls, t, "stop", "close() called");
  } else if (std::holds_alternative<tr::ConsumerClosed>(e)) {
    close_owned(ls, t);
    ls.owned.clear();
    close_waiting(ls, t);
    instant(ls, t, "stop", "closed");
  } else if (std::holds_alternative<tr::ConsumerCrash>(e)) {
    close_owned(ls, t);
    ls.owned.clear();
    close_waiting(ls, t);
    if (ls.revoking_since >= 0)
      span(ls, ls.revoking_since, t, "revoking", "revoking (interrupted by the crash)");
    ls.revoking_since = -1;
    ls.batches.clear();
    ls.crashed_since = t;
    instant(ls, t, "crash", "crashed");
  } else if (const auto* stall = std::get_if<tr::ConsumerStall>(&e)) {
    const auto for_ms = stall->for_ms;
    span(ls, t, t + for_ms * 1000, "stalled", fmt::format("stalled: no poll() for {} ms", for_ms));
  } else if (const auto* pause = std::get_if<tr::ConsumerPause>(&e)) {
    ls.paused_since = t;
    ls.paused_until = t + pause->for_ms * 1000;
  } else if (std::holds_alternative<tr::ConsumerResume>(e)) {
    if (ls.paused_since >= 0)
      span(ls, ls.paused_since, t, "paused",
           fmt::format("process paused for {} ms", (t - ls.paused_since) / 1000));
    ls.paused_since = -1;
  } else {
    return false;
  }
  return true;
}

namespace {
// What a line that resets or fences a member says: its kind without "consumer.", and why.
std::string membership_note(std::string_view kind, std::string_view error,
                            std::string_view reason) {
  std::string detail(error.empty() ? reason : error);
  return std::string(kind.substr(9)) + (detail.empty() ? "" : ": " + detail);
}
}  // namespace

// A consumer's part in its group: callbacks, assignments, epochs.
void TimelineBuilder::on_consumer_group(const tr::Event& e, std::int64_t t, const std::string& name,
                                        LaneState& ls, Lane& ln) {
  if (const auto* c = std::get_if<tr::Callback>(&e)) {
    const std::string cb(c->callback);
    if (c->phase == "start") {
      ls.callbacks[cb] = t;
      if (cb == "onPartitionsRevoked" && ls.revoking_since < 0) ls.revoking_since = t;
    } else {
      const auto it = ls.callbacks.find(cb);
      const std::int64_t from = it == ls.callbacks.end() ? t : it->second;
      if (it != ls.callbacks.end()) ls.callbacks.erase(it);
      span(ls, from, t, "callback",
           fmt::format("{}({})", cb, compress_partitions(reports::partition_names(c->partitions))));
    }
  } else if (const auto* r = std::get_if<tr::ConsumerReconcile>(&e)) {
    const auto revoked = reports::partition_names(r->revoked),
               added = reports::partition_names(r->added);
    const std::string target = compress_partitions(reports::partition_names(r->target));
    instant(ls, t, "heartbeat",
            fmt::format(
                "ConsumerGroupHeartbeat response (member epoch {}, target {}, revoke {}, add {})",
                r->epoch, target, compress_partitions(revoked), compress_partitions(added)));
    if (!revoked.empty() && ls.revoking_since < 0) ls.revoking_since = t;
    if (ls.waiting_since < 0 && !added.empty()) ls.waiting_since = t;
    if (const auto hb = last_heartbeat_response.find(name);
        hb != last_heartbeat_response.end() && tl.messages[hb->second].recv_us == t)
      tl.messages[hb->second].reply =
          fmt::format("member_epoch={} target=[{}]{}{}", r->epoch, target,
                      revoked.empty() ? "" : " revoke=[" + compress_partitions(revoked) + "]",
                      added.empty() ? "" : " add=[" + compress_partitions(added) + "]");
  } else if (const auto* a = std::get_if<tr::Assignment>(&e)) {
    auto owned = reports::partition_names(a->owned);
    for (const auto& p : owned) partition_names.insert(p);
    if (ls.revoking_since >= 0) {
      std::vector<std::string> gone;
      for (const auto& p : ls.owned)
        if (std::find(owned.begin(), owned.end(), p) == owned.end()) gone.push_back(p);
      span(ls, ls.revoking_since, t, "revoking", "revoking " + compress_partitions(gone));
      ls.revoking_since = -1;
    }
    close_owned(ls, t);
    ls.owned = owned;
    close_waiting(ls, t);
    const std::int64_t owed_until = still_owed(name, ln.group, t, owned);
    if (ls.unreleased || owed_until >= 0) ls.waiting_since = t;
    if (!ls.unreleased && owed_until >= 0) ls.waiting_cap = owed_until;
  } else if (const auto* m = std::get_if<tr::MemberEpoch>(&e)) {
    instant(ls, t, "epoch", fmt::format("member epoch {} ({})", m->epoch, m->state));
    ls.unreleased = m->state == "UNRELEASED_PARTITIONS";
    if (ls.unreleased && ls.waiting_since < 0) ls.waiting_since = t;
  } else if (const auto* leave = std::get_if<tr::MemberLeave>(&e)) {
    instant(ls, t, "leave", fmt::format("coordinator removed the member: {}", leave->reason));
  } else if (const auto* f = std::get_if<tr::ConsumerFenced>(&e)) {
    instant(ls, t, "fenced", membership_note(f->kType, f->error, {}));
  } else if (const auto* p = std::get_if<tr::ConsumerPollTimeout>(&e)) {
    instant(
        ls, t, "fenced",
        membership_note(
            p->kType, fmt::format("max.poll.interval.ms {} expired", p->max_poll_interval_ms), {}));
  } else if (const auto* err = std::get_if<tr::ConsumerError>(&e)) {
    instant(ls, t, "fenced", membership_note(err->kType, err->error, {}));
  } else if (const auto* rejoin = std::get_if<tr::ConsumerRejoin>(&e)) {
    instant(ls, t, "epoch", membership_note(rejoin->kType, {}, rejoin->reason));
  } else if (const auto* reset = std::get_if<tr::ConsumerGenerationReset>(&e)) {
    instant(ls, t, "epoch", membership_note(reset->kType, {}, reset->reason));
  }
}

Timeline TimelineBuilder::finish() {
  const std::int64_t end = std::max(tl.duration_us, last_t);
  if (tl.duration_us == 0) tl.duration_us = end;
  for (auto& [name, ls] : lanes) {
    close_owned(ls, end);
    close_waiting(ls, end);
    if (ls.revoking_since >= 0) span(ls, ls.revoking_since, end, "revoking", "revoking");
    if (ls.crashed_since >= 0) span(ls, ls.crashed_since, end, "crashed", "crashed (process down)");
    if (ls.paused_since >= 0)
      span(ls, ls.paused_since, std::min(end, std::max(ls.paused_until, ls.paused_since)), "paused",
           "process paused");
    for (const auto& [cb, from] : ls.callbacks)
      span(ls, from, end, "callback", cb + " (still running at the end)");
  }
  for (auto& [name, gs] : groups) {
    close_segment(gs, end);
    gs.open = false;
  }

  for (auto& band : tl.deployments)
    for (const auto& step : band.ready) band.max_ready = std::max(band.max_ready, step.ready);
  tl.partitions.assign(partition_names.begin(), partition_names.end());
  std::map<std::string, int> index_of;
  for (std::size_t i = 0; i < tl.partitions.size(); ++i)
    index_of[tl.partitions[i]] = static_cast<int>(i);
  for (std::size_t l = 0; l < tl.lanes.size(); ++l) {
    for (auto& [from, to, owned] : raw_owned[l]) {
      Ownership o{from, to, {}};
      for (const auto& p : owned) o.partitions.push_back(index_of.at(p));
      std::sort(o.partitions.begin(), o.partitions.end());
      tl.lanes[l].owned.push_back(std::move(o));
    }
    auto& spans = tl.lanes[l].spans;
    std::stable_sort(spans.begin(), spans.end(),
                     [](const Span& a, const Span& b) { return a.start_us < b.start_us; });
  }
  tl.time_ordered =
      std::is_sorted(tl.messages.begin(), tl.messages.end(),
                     [](const Message& a, const Message& b) { return a.send_us < b.send_us; });
  for (const auto& l : tl.lanes) {
    if (!tl.time_ordered) break;
    tl.time_ordered =
        std::is_sorted(l.instants.begin(), l.instants.end(),
                       [](const Instant& a, const Instant& b) { return a.t_us < b.t_us; }) &&
        std::is_sorted(l.owned.begin(), l.owned.end(), [](const Ownership& a, const Ownership& b) {
          return a.start_us < b.start_us;
        });
  }
  tl.lag.resize(tl.partitions.size());
  tl.lag_series = lag_series.size();
  for (auto& series : lag_series)
    if (series.kept)
      tl.lag[static_cast<std::size_t>(index_of.at(series.name))] = std::move(series.points);
  return tl;
}

}  // namespace

static Timeline build_from(const std::function<bool(std::string_view&)>& next_line,
                           const json& summary) {
  TimelineBuilder builder(summary);
  builder.read(next_line);
  return builder.finish();
}

namespace {
/// The next line of a JSONL text from `pos` on (moved past it); false at the text's end.
bool next_jsonl_line(std::string_view text, std::size_t& pos, std::string_view& line) {
  if (pos >= text.size()) return false;
  std::size_t end = text.find('\n', pos);
  if (end == std::string_view::npos) end = text.size();
  line = text.substr(pos, end - pos);
  pos = end + 1;
  return true;
}
}  // namespace

Timeline build_timeline(std::string_view trace_jsonl, const json& summary,
                        std::vector<NotProcessedGaps> not_processed) {
  std::size_t pos = 0;
  Timeline tl = build_from(
      [&](std::string_view& line) { return next_jsonl_line(trace_jsonl, pos, line); }, summary);
  tl.not_processed = std::move(not_processed);
  tl.not_processed_exact = true;
  return tl;
}

Timeline build_timeline(std::string_view trace_jsonl, const json& summary) {
  std::size_t pos = 0;
  GapReader gaps(true);
  Timeline tl = build_from(
      [&](std::string_view& line) {
        if (!next_jsonl_line(trace_jsonl, pos, line)) return false;
        gaps.read(line);
        return true;
      },
      summary);
  gaps.finish(tl);
  return tl;
}

Timeline build_timeline(std::istream& trace_jsonl, const json& summary) {
  LineReader reader(trace_jsonl);
  GapReader gaps(true);
  Timeline tl = build_from(
      [&](std::string_view& line) {
        if (!reader.next(line)) return false;
        gaps.read(line);
        return true;
      },
      summary);
  gaps.finish(tl);
  return tl;
}

std::vector<std::string> summary_shape_problems(const json& summary) {
  std::vector<std::string> out;
  auto got = [](const json& v) {
    std::string d = v.dump();
    return d.size() > 40 ? d.substr(0, 37) + "..." : d;
  };
  auto need = [&](const json& o, const std::string& where, const char* key, const char* what,
                  bool (json::*is)() const) {
    const auto it = o.find(key);
    if (it != o.end() && !((*it).*is)())
      out.push_back(fmt::format("{}/{}: must be {}, got {}", where, key, what, got(*it)));
  };
  if (!summary.is_object()) {
    out.push_back(fmt::format("the document must be an object (the summary a run writes), got {}",
                              got(summary)));
    return out;
  }
  need(summary, "", "scenario", "a string", &json::is_string);
  need(summary, "", "protocol", "a string", &json::is_string);
  need(summary, "", "seed", "an integer", &json::is_number_integer);
  need(summary, "", "metrics", "an object", &json::is_object);
  need(summary, "", "produced_by", "an object", &json::is_object);
  need(summary, "", "rebalances", "an array", &json::is_array);
  if (const auto pb = summary.find("produced_by"); pb != summary.end() && pb->is_object())
    for (const char* k : {"scenario_file", "simulator", "version"})
      need(*pb, "/produced_by", k, "a string", &json::is_string);
  if (const auto rs = summary.find("rebalances"); rs != summary.end() && rs->is_array()) {
    std::size_t i = 0;
    for (const auto& r : *rs) {
      const std::string where = fmt::format("/rebalances/{}", i++);
      if (!r.is_object()) {
        out.push_back(fmt::format("{}: must be an object, got {}", where, got(r)));
        continue;
      }
      for (const char* k : {"start_us", "end_us", "generation"})
        need(r, where, k, "a number", &json::is_number);
      need(r, where, "completed", "true or false", &json::is_boolean);
      need(r, where, "revoked", "an object", &json::is_object);
      need(r, where, "assigned", "an object", &json::is_object);
      if (out.size() >= 20) break;
    }
  }
  return out;
}

std::string trace_end_problem(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "cannot be read";
  const std::streamoff size = in.tellg();
  if (size <= 0) return "is empty (a trace ends with its run.end line)";
  // The last line: at most the last 64 KiB are read (a run.end line is about 60 bytes).
  const std::streamoff from = std::max<std::streamoff>(0, size - (64 << 10));
  in.seekg(from);
  std::string tail(static_cast<std::size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  if (!in) return "cannot be read";
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  const auto nl = tail.rfind('\n');
  const std::string last = nl == std::string::npos ? tail : tail.substr(nl + 1);
  const json doc = json::parse(last, nullptr, false);
  const auto type = doc.is_object() ? doc.find("type") : doc.end();
  if (type != doc.end() && type->is_string() &&
      kind_of(type->get_ref<const std::string&>()) == kKind<tr::RunEnd>)
    return "";
  return "does not end with its run.end line: the trace was cut short (copy or record it again)";
}

std::vector<const Message*> messages_between(const Timeline& t, std::int64_t from_us,
                                             std::int64_t to_us) {
  std::vector<const Message*> out;
  for (const auto& m : t.messages) {
    const bool sent_inside = m.send_us >= from_us && m.send_us <= to_us;
    const bool answered_inside = m.recv_us >= from_us && m.recv_us <= to_us;
    if (sent_inside || answered_inside) out.push_back(&m);
  }
  return out;
}

std::pair<std::int64_t, std::int64_t> rebalance_window(const Timeline& t, const Rebalance& r) {
  // Saturating: a summary's times are input, and may be anything.
  const auto minus = [](std::int64_t v, std::int64_t d) {
    return v < INT64_MIN + d ? INT64_MIN : v - d;
  };
  // The request that opened the rebalance (a JoinGroup, a heartbeat with news, a LeaveGroup)
  // reaches the coordinator just before the window starts: take the last one sent before it.
  std::int64_t from = r.start_us;
  const auto& ms = t.messages;
  if (!t.time_ordered) {
    for (const auto& m : ms) {
      if (m.send_us > r.start_us) break;
      if (m.send_us >= minus(r.start_us, 5'000'000) && m.recv_us >= r.start_us)
        from = std::min(from, m.send_us);
    }
    // A round trip that ended just before (JoinGroup's MEMBER_ID_REQUIRED answer) belongs too.
    for (const auto& m : ms) {
      if (m.send_us > r.start_us) break;
      if (m.recv_us >= from && m.recv_us <= r.start_us && m.send_us < from &&
          m.send_us >= minus(from, 1'000'000))
        from = m.send_us;
    }
    return {from, r.end_us};
  }
  // The same, with the messages in send order: only those sent within the 5 s (then 1 s)
  // before are looked at, found by binary search (a long run's report stays linear).
  const auto sent_from = [&](std::int64_t v) {
    return std::lower_bound(ms.begin(), ms.end(), v,
                            [](const Message& m, std::int64_t x) { return m.send_us < x; });
  };
  for (auto it = sent_from(minus(r.start_us, 5'000'000));
       it != ms.end() && it->send_us <= r.start_us; ++it)
    if (it->recv_us >= r.start_us) from = std::min(from, it->send_us);
  // Once `from` moves to a message's send time, no later message is sent before it: the first
  // match is the only one.
  const std::int64_t first_from = from;
  for (auto it = sent_from(minus(first_from, 1'000'000));
       it != ms.end() && it->send_us < first_from && it->send_us <= r.start_us; ++it) {
    if (it->recv_us >= first_from && it->recv_us <= r.start_us) {
      from = it->send_us;
      break;
    }
  }
  return {from, r.end_us};
}

}  // namespace reports
