#include "models/trace/trace_jsonl.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <map>
#include <set>
#include <utility>

#include "models/trace/group_records_json.hpp"

namespace rsim::trace {

namespace {

using ojson = nlohmann::ordered_json;

void write_partition(sim::JsonWriter& w, const TopicPartition& tp) {
  // "topic-partition", without building the string.
  char buf[16];
  const auto r = std::to_chars(buf, buf + sizeof buf, tp.partition);
  w.begin_string();
  w.string_part(tp.topic);
  w.string_part("-");
  w.string_part(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
  w.end_string();
}

ojson typed_json(const GroupSnapshots& groups) {
  return snapshots_json(groups);
}
ojson typed_json(const LeaderMoves& moves) {
  return leaders_json(moves);
}

// Opt and OrNull members, the same for every writer below: an unset Opt is left out, an unset
// OrNull is written `null` (the writer's null_member()).
template <class Self>
struct Optionals {
  template <class T>
  void operator()(std::string_view name, const Opt<T>& o) {
    if (o) self()(name, *o);
  }
  template <class T>
  void operator()(std::string_view name, const OrNull<T>& o) {
    if (o.value)
      self()(name, *o.value);
    else
      self().null_member(name);
  }
  Self& self() { return static_cast<Self&>(*this); }
};

struct Writer : Optionals<Writer> {
  using Optionals::operator();
  sim::JsonWriter& w;

  // Field names are the events' own identifiers: nothing in them needs escaping.
  void key(std::string_view name) {
    w.key_begin();
    w.out() += name;
    w.key_end();
  }

  void operator()(std::string_view name, sv s) {
    key(name);
    w.value(s);
  }
  void operator()(std::string_view name, std::int64_t v) {
    key(name);
    w.value(v);
  }
  void operator()(std::string_view name, std::int32_t v) {
    key(name);
    w.value(v);
  }
  void operator()(std::string_view name, std::uint64_t v) {
    key(name);
    w.value(v);
  }
  void operator()(std::string_view name, bool v) {
    key(name);
    w.value(v);
  }
  void operator()(std::string_view name, double v) {
    key(name);
    w.value(v);
  }
  void operator()(std::string_view name, const Number& n) {
    key(name);
    std::visit([&](auto x) { w.value(x); }, n);
  }
  void null_member(std::string_view name) {
    key(name);
    w.null();
  }
  void operator()(std::string_view name, const TopicPartition* tp) {
    key(name);
    if (tp == nullptr) {  // a line read back without it (the simulator always sets it)
      w.null();
      return;
    }
    write_partition(w, *tp);
  }
  void operator()(std::string_view name, Partitions ps) {
    key(name);
    w.begin_array();
    for (const auto& tp : ps) {
      w.element();
      write_partition(w, tp);
    }
    w.end_array();
  }
  void operator()(std::string_view name, Names ns) {
    key(name);
    w.begin_array();
    for (const auto& n : ns) {
      w.element();
      w.value(std::string_view(n));
    }
    w.end_array();
  }
  void operator()(std::string_view name, std::span<const FetchedRange> rs) {
    key(name);
    w.begin_array();
    for (const auto& r : rs) {
      w.element();
      w.begin_object();
      key("partition");
      write_partition(w, r.partition);
      key("first_offset");
      w.value(r.first);
      key("last_offset");
      w.value(r.last);
      w.end_object();
    }
    w.end_array();
  }
  void operator()(std::string_view name, std::span<const CommittedOffset> os) {
    // An object keyed by partition (each partition once: a request commits a partition once).
    key(name);
    w.begin_object();
    for (const auto& o : os) {
      char buf[16];
      const auto r = std::to_chars(buf, buf + sizeof buf, o.partition.partition);
      w.key_begin();
      w.string_part(o.partition.topic);
      w.string_part("-");
      w.string_part(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
      w.key_end();
      w.value(o.offset);
    }
    w.end_object();
  }
  void operator()(std::string_view name, std::span<const ShareStateBatch> bs) {
    key(name);
    w.begin_array();
    for (const auto& b : bs) {
      w.element();
      w.begin_object();
      key("first_offset");
      w.value(b.first_offset);
      key("last_offset");
      w.value(b.last_offset);
      key("delivery_state");
      w.value(b.delivery_state);
      key("delivery_count");
      w.value(b.delivery_count);
      w.end_object();
    }
    w.end_array();
  }
  void operator()(std::string_view name, Json j) {
    if (j == nullptr) return;
    key(name);
    w.value(*j);
  }
  template <class T>
  void operator()(std::string_view name, const Typed<T>& t) {
    if (t.typed != nullptr) {
      const ojson j = typed_json(*t.typed);  // rare events: one conversion, here
      (*this)(name, &j);
    } else {
      (*this)(name, t.json);
    }
  }
  void operator()(std::string_view, const Splice& s) {
    if (s.commit != nullptr) {
      const OffsetCommitValue& c = *s.commit;
      (*this)("record", sv("OffsetCommit"));
      (*this)("tombstone", false);
      (*this)("group", c.group);
      (*this)("topic", c.topic);
      (*this)("partition_index", c.partition_index);
      (*this)("committed_offset", c.committed_offset);
      (*this)("leader_epoch", c.leader_epoch);
      (*this)("commit_timestamp", c.commit_timestamp);
      return;
    }
    if (s.object != nullptr && s.object->is_object()) w.members(*s.object);
  }
};

// An integer field read from a JSON number: a float is truncated as nlohmann's get<> truncates it,
// but only within the field's range (converting 4e+70 to an int is undefined behaviour, a fuzz
// finding).
template <class I>
I integral(const ojson& j) {
  if (j.is_number_float()) {
    const double d = j.get<double>();
    const double lo = static_cast<double>(std::numeric_limits<I>::min());
    const double hi = static_cast<double>(std::numeric_limits<I>::max()) + 1.0;
    if (!(d >= lo && d < hi))
      throw std::runtime_error(j.dump() + " is out of the integer field's range");
    return static_cast<I>(d);
  }
  return j.get<I>();
}

struct Reader {
  const ojson& line;
  ReadStorage& st;
  std::set<std::string, std::less<>> seen;

  const ojson* find(std::string_view name) {
    seen.emplace(name);
    const auto it = line.find(name);
    return it == line.end() ? nullptr : &*it;
  }
  template <class T>
  void read(const ojson& j, T& out) {
    if constexpr (std::is_same_v<T, sv>) {
      out = j.get_ref<const std::string&>();
    } else if constexpr (std::is_same_v<T, Number>) {
      if (j.is_number_integer())
        out = j.get<std::int64_t>();
      else
        out = j.get<double>();
    } else if constexpr (std::is_same_v<T, const TopicPartition*>) {
      out = &st.partition.emplace_back(parse_partition(j.get_ref<const std::string&>()));
    } else if constexpr (std::is_same_v<T, Partitions>) {
      auto& v = st.partitions.emplace_back();
      for (const auto& p : j) v.push_back(parse_partition(p.get_ref<const std::string&>()));
      out = v;
    } else if constexpr (std::is_same_v<T, Names>) {
      auto& v = st.names.emplace_back();
      for (const auto& p : j) v.push_back(p.get<std::string>());
      out = v;
    } else if constexpr (std::is_same_v<T, std::span<const FetchedRange>>) {
      auto& v = st.ranges.emplace_back();
      for (const auto& r : j)
        v.push_back({parse_partition(r.at("partition").get_ref<const std::string&>()),
                     integral<std::int64_t>(r.at("first_offset")),
                     integral<std::int64_t>(r.at("last_offset"))});
      out = v;
    } else if constexpr (std::is_same_v<T, std::span<const CommittedOffset>>) {
      auto& v = st.offsets.emplace_back();
      for (const auto& [k, o] : j.items())
        v.push_back({parse_partition(k), integral<std::int64_t>(o), -1});
      out = v;
    } else if constexpr (std::is_same_v<T, std::span<const ShareStateBatch>>) {
      auto& v = st.share_batches.emplace_back();
      for (const auto& b : j)
        v.push_back({integral<std::int64_t>(b.at("first_offset")),
                     integral<std::int64_t>(b.at("last_offset")),
                     integral<std::int32_t>(b.at("delivery_state")),
                     integral<std::int32_t>(b.at("delivery_count"))});
      out = v;
    } else if constexpr (std::is_same_v<T, Json>) {
      out = &j;
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      out = integral<T>(j);
    } else {
      out = j.get<T>();
    }
  }
  // A field missing from the line keeps its default (hand-written traces leave some out).
  template <class T>
  void operator()(std::string_view name, T& out) {
    if (const ojson* j = find(name)) read(*j, out);
  }
  template <class T>
  void operator()(std::string_view name, Opt<T>& out) {
    if (const ojson* j = find(name)) read(*j, out.emplace());
  }
  template <class T>
  void operator()(std::string_view name, OrNull<T>& out) {
    const ojson* j = find(name);
    if (j != nullptr && !j->is_null()) read(*j, out.value.emplace());
  }
  void operator()(std::string_view name, Json& out) {
    const ojson* j = find(name);
    out = j;
  }
  template <class T>
  void operator()(std::string_view name, Typed<T>& out) {
    out.json = find(name);
  }
  void operator()(std::string_view, Splice& out) {
    // Everything the fields before it did not claim.
    auto& rest = st.json.emplace_back(ojson::object());
    for (const auto& [k, v] : line.items())
      if (seen.count(k) == 0) rest[k] = v;
    out.object = &rest;
  }
};

template <class E>
Event read_as(const ojson& line, ReadStorage& st) {
  E e{};
  Reader r{line, st, {"t_us", "type"}};
  E::fields(e, r);
  return e;
}

using ParseFn = Event (*)(const ojson&, ReadStorage&);

template <std::size_t... I>
std::map<std::string_view, ParseFn> make_parsers(std::index_sequence<I...>) {
  std::map<std::string_view, ParseFn> m;
  (
      [&] {
        using E = std::variant_alternative_t<I, Event>;
        if constexpr (!std::is_same_v<E, sim::RawTraceEvent>) m.emplace(E::kType, &read_as<E>);
      }(),
      ...);
  return m;
}

const std::map<std::string_view, ParseFn>& parsers() {
  static const auto m = make_parsers(std::make_index_sequence<std::variant_size_v<Event>>{});
  return m;
}

// --- fast paths for the high-volume kinds ------------------------------------------------------
// At --trace standard, lag, records.fetched, record (OffsetCommit), records.processed and commit
// lines are nearly all of the bytes (and position, callback and assignment lines in an eager
// rebalance), and the generic writer's many small appends (each checking
// capacity) and per-character escaping cost more than the bytes themselves. These write the same
// bytes through a raw cursor into room reserved once; a line whose strings need escaping (or whose
// record holds anything but scalars) is left to the generic writer, which is what decides the
// bytes.

// Whether `s` is written as it is between quotes (no '"', '\\' or control character in it).
bool plain(std::string_view s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == '"' || c == '\\') return false;
  }
  return true;
}

constexpr std::size_t kNumber = 24;  // room for any 64-bit integer

class Cursor {
 public:
  // Reserves `room` bytes at the end of `out`; done() trims to what was written.
  Cursor(std::string& out, std::size_t room) : out_(out) {
    const std::size_t start = out_.size();
    out_.resize(start + room);
    p_ = out_.data() + start;
  }
  void lit(std::string_view s) {
    if (s.empty()) return;  // an empty view's data() may be null, which memcpy must not get
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  void ch(char c) { *p_++ = c; }
  void num(std::int64_t v) { p_ = std::to_chars(p_, p_ + kNumber, v).ptr; }
  void num(std::uint64_t v) { p_ = std::to_chars(p_, p_ + kNumber, v).ptr; }
  void str(std::string_view s) {  // checked plain() by the caller
    ch('"');
    lit(s);
    ch('"');
  }
  void partition(const TopicPartition& tp) {  // "topic-partition", topic checked plain()
    ch('"');
    lit(tp.topic);
    ch('-');
    num(static_cast<std::int64_t>(tp.partition));
    ch('"');
  }
  void head(sim::SimTime t, std::string_view type_member) {  // {"t_us":..,"type":"..."
    lit("{\"t_us\":");
    num(static_cast<std::int64_t>(t.count()));
    lit(type_member);
  }
  void done() { out_.resize(static_cast<std::size_t>(p_ - out_.data())); }

 private:
  std::string& out_;
  char* p_;
};

// The hot kinds' members through their own fields() lists (the vocabulary stays in one place):
// Room sizes the line and checks that every string is plain, Put writes it. A member type Room
// does not know sends the line the generic way.
struct Room : Optionals<Room> {
  using Optionals::operator();
  std::size_t bytes = 64 + kNumber;  // {"t_us":..,"type":"..."}
  bool ok = true;
  void name(std::string_view n) { bytes += n.size() + 4; }
  void text(sv s) {
    ok = ok && plain(s);
    bytes += s.size() + 2;
  }
  void operator()(std::string_view n, sv s) { name(n), text(s); }
  void operator()(std::string_view n, std::int64_t) { name(n), bytes += kNumber; }
  void operator()(std::string_view n, const TopicPartition* tp) {
    name(n);
    if (tp == nullptr) {  // a line read back without it: written `null` the generic way
      ok = false;
      return;
    }
    text(tp->topic), bytes += kNumber;
  }
  void operator()(std::string_view n, Partitions ps) {
    name(n), bytes += 2;
    for (const auto& tp : ps) text(tp.topic), bytes += kNumber + 1;
  }
  void operator()(std::string_view n, std::span<const FetchedRange> rs) {
    name(n);
    for (const auto& r : rs) text(r.partition.topic), bytes += 50 + 3 * kNumber;
  }
  void operator()(std::string_view n, std::span<const CommittedOffset> os) {
    name(n);
    for (const auto& o : os) text(o.partition.topic), bytes += 4 + 2 * kNumber;
  }
  void null_member(std::string_view n) { name(n), bytes += 4; }
  template <class T>
  void operator()(std::string_view, const T&) {
    ok = false;
  }
};

struct Put : Optionals<Put> {
  using Optionals::operator();
  Cursor& c;
  void name(std::string_view n) {
    c.lit(",\"");
    c.lit(n);
    c.lit("\":");
  }
  void operator()(std::string_view n, sv s) { name(n), c.str(s); }
  void operator()(std::string_view n, std::int64_t v) { name(n), c.num(v); }
  void operator()(std::string_view n, const TopicPartition* tp) { name(n), c.partition(*tp); }
  void operator()(std::string_view n, Partitions ps) {
    name(n);
    c.ch('[');
    for (std::size_t i = 0; i < ps.size(); ++i) {
      if (i > 0) c.ch(',');
      c.partition(ps[i]);
    }
    c.ch(']');
  }
  void operator()(std::string_view n, std::span<const FetchedRange> rs) {
    name(n);
    c.ch('[');
    for (std::size_t i = 0; i < rs.size(); ++i) {
      if (i > 0) c.ch(',');
      c.lit("{\"partition\":");
      c.partition(rs[i].partition);
      c.lit(",\"first_offset\":");
      c.num(rs[i].first);
      c.lit(",\"last_offset\":");
      c.num(rs[i].last);
      c.ch('}');
    }
    c.ch(']');
  }
  void operator()(std::string_view n, std::span<const CommittedOffset> os) {
    name(n);
    c.ch('{');
    for (std::size_t i = 0; i < os.size(); ++i) {
      if (i > 0) c.ch(',');
      c.partition(os[i].partition);
      c.ch(':');
      c.num(os[i].offset);
    }
    c.ch('}');
  }
  void null_member(std::string_view n) { name(n), c.lit("null"); }
  template <class T>
  void operator()(std::string_view, const T&) {}  // never reached: Room said no
};

template <class E>
bool fast_fields(std::string& out, sim::SimTime t, const E& e) {
  Room room;
  room.bytes += E::kType.size();
  E::fields(e, room);
  if (!room.ok) return false;
  Cursor c(out, room.bytes);
  c.head(t, ",\"type\":\"");
  c.lit(E::kType);
  c.ch('"');
  Put put{{}, c};
  E::fields(e, put);
  c.ch('}');
  c.done();
  return true;
}

bool fast_commit_record(std::string& out, sim::SimTime t, const Record& e) {
  const OffsetCommitValue& v = *e.value.commit;
  if (!plain(v.group) || !plain(v.topic)) return false;
  Cursor c(out,
           256 + 8 * kNumber + v.group.size() + v.topic.size());  // 7 numbers, ~190 literal bytes
  c.head(t, ",\"type\":\"record\",\"partition\":");
  c.num(static_cast<std::int64_t>(e.partition));
  c.lit(",\"offset\":");
  c.num(e.offset);
  c.lit(",\"record\":\"OffsetCommit\",\"tombstone\":false,\"group\":");
  c.str(v.group);
  c.lit(",\"topic\":");
  c.str(v.topic);
  c.lit(",\"partition_index\":");
  c.num(static_cast<std::int64_t>(v.partition_index));
  c.lit(",\"committed_offset\":");
  c.num(v.committed_offset);
  c.lit(",\"leader_epoch\":");
  c.num(static_cast<std::int64_t>(v.leader_epoch));
  c.lit(",\"commit_timestamp\":");
  c.num(v.commit_timestamp);
  c.ch('}');
  c.done();
  return true;
}

bool fast_record(std::string& out, sim::SimTime t, const Record& e) {
  if (e.value.commit != nullptr) return fast_commit_record(out, t, e);
  // The value's members as JsonWriter::members() writes the scalars; any nested value (the
  // metadata records' arrays) goes the generic way.
  using value_t = ojson::value_t;
  const ojson::object_t* members = nullptr;
  std::size_t room = 200 + 3 * kNumber;
  if (e.value.object != nullptr && e.value.object->is_object()) {
    members = &e.value.object->get_ref<const ojson::object_t&>();
    for (const auto& [k, v] : *members) {
      if (!plain(k)) return false;
      room += 8 + kNumber + k.size();
      switch (v.type()) {
        case value_t::string: {
          const auto& s = v.get_ref<const std::string&>();
          if (!plain(s)) return false;
          room += s.size();
          break;
        }
        case value_t::number_integer:
        case value_t::number_unsigned:
        case value_t::boolean:
        case value_t::null:
          break;
        default:
          return false;
      }
    }
  }
  Cursor c(out, room);
  c.head(t, ",\"type\":\"record\",\"partition\":");
  c.num(static_cast<std::int64_t>(e.partition));
  c.lit(",\"offset\":");
  c.num(e.offset);
  if (members != nullptr)
    for (const auto& [k, v] : *members) {
      c.ch(',');
      c.str(k);
      c.ch(':');
      switch (v.type()) {
        case value_t::string:
          c.str(v.get_ref<const std::string&>());
          break;
        case value_t::number_integer:
          c.num(v.get<std::int64_t>());
          break;
        case value_t::number_unsigned:
          c.num(v.get<std::uint64_t>());
          break;
        case value_t::boolean:
          c.lit(v.get<bool>() ? "true" : "false");
          break;
        default:
          c.lit("null");
          break;
      }
    }
  c.ch('}');
  c.done();
  return true;
}

bool append_fast(std::string& out, sim::SimTime t, const Event& e) {
  if (const auto* x = std::get_if<Lag>(&e)) return fast_fields(out, t, *x);
  if (const auto* x = std::get_if<RecordsFetched>(&e)) return fast_fields(out, t, *x);
  if (const auto* x = std::get_if<Record>(&e)) return fast_record(out, t, *x);
  if (const auto* x = std::get_if<RecordsProcessed>(&e)) return fast_fields(out, t, *x);
  if (const auto* x = std::get_if<Commit>(&e)) return fast_fields(out, t, *x);
  // An eager rebalance writes one of each per partition or per member of the group.
  if (const auto* x = std::get_if<Position>(&e)) return fast_fields(out, t, *x);
  if (const auto* x = std::get_if<Callback>(&e)) return fast_fields(out, t, *x);
  if (const auto* x = std::get_if<Assignment>(&e)) return fast_fields(out, t, *x);
  return false;
}

// A group.epoch line at `standard` after its group's first: its fields as the generic writer
// writes them, with `joined` and `left` in place of `members`.
struct DeltaFields {
  Writer& w;
  const LevelFilter::MembersDelta& delta;
  template <class T>
  void operator()(std::string_view name, const T& v) {
    if constexpr (std::is_same_v<T, Names>) {
      if (name == "members") {
        w("joined", Names(delta.joined));
        w("left", Names(delta.left));
        return;
      }
    }
    w(name, v);
  }
};

// Every line starts with its time and type, written directly: `{"t_us":N,"type":"KIND"`.
void append_line_start(std::string& out, sim::SimTime t, std::string_view type,
                       sim::JsonWriter& w) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(t.count()));
  out += "{\"t_us\":";
  out.append(buf, r.ptr);
  out += ",\"type\":";
  w.value(type);
}

void append_group_epoch_delta(std::string& out, sim::SimTime t, const GroupEpoch& e,
                              const LevelFilter::MembersDelta& delta) {
  sim::JsonWriter w(out);
  append_line_start(out, t, GroupEpoch::kType, w);
  Writer v{{}, w};
  DeltaFields d{v, delta};
  GroupEpoch::fields(e, d);
  w.end_object();
}

std::vector<std::string> sorted_names(Names ns) {
  std::vector<std::string> v(ns.begin(), ns.end());
  std::sort(v.begin(), v.end());
  return v;
}

// What changed from `last` to `now` (both lists in one order, the coordinator's: by member id),
// as sorted multisets (a classic group may hold two incarnations of one consumer); `last`
// becomes `now`. What changed lies between the lists' common prefix and common suffix (a join
// or a leave: one name), so a group of ten thousand costs a scan, not a sort.
void diff_members(std::vector<std::string>& last, Names now, std::vector<std::string>& joined,
                  std::vector<std::string>& left) {
  std::size_t p = 0;
  while (p < last.size() && p < now.size() && last[p] == now[p]) ++p;
  std::size_t s = 0;
  while (s < last.size() - p && s < now.size() - p &&
         last[last.size() - 1 - s] == now[now.size() - 1 - s])
    ++s;
  const auto from = static_cast<std::ptrdiff_t>(p), tail = static_cast<std::ptrdiff_t>(s);
  std::vector<std::string> was(last.begin() + from, last.end() - tail);
  const std::vector<std::string> is = sorted_names(now.subspan(p, now.size() - p - s));
  std::sort(was.begin(), was.end());
  joined.clear();
  left.clear();
  std::set_difference(is.begin(), is.end(), was.begin(), was.end(), std::back_inserter(joined));
  std::set_difference(was.begin(), was.end(), is.begin(), is.end(), std::back_inserter(left));
  last.erase(last.begin() + from, last.end() - tail);
  last.insert(last.begin() + from, now.begin() + from, now.end() - tail);
}

}  // namespace

std::string_view type_of(const Event& e) {
  return std::visit(
      [](const auto& ev) -> std::string_view {
        using E = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<E, sim::RawTraceEvent>)
          return ev.type;
        else
          return E::kType;
      },
      e);
}

void append_jsonl(std::string& out, sim::SimTime t, const Event& e) {
  if (append_fast(out, t, e)) return;
  sim::JsonWriter w(out);
  append_line_start(out, t, type_of(e), w);
  std::visit(
      [&](const auto& ev) {
        using E = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<E, sim::RawTraceEvent>) {
          if (ev.fields != nullptr && ev.fields->is_object()) w.members(*ev.fields);
        } else {
          Writer v{{}, w};
          E::fields(ev, v);
        }
      },
      e);
  w.end_object();
}

nlohmann::ordered_json to_json(sim::SimTime t, const Event& e) {
  std::string line;
  append_jsonl(line, t, e);
  return nlohmann::ordered_json::parse(line);
}

bool LevelFilter::keep_lag(const Lag& l) {
  if (l.slot == 0) return true;
  if (l.slot >= last_lag_.size())
    last_lag_.resize(std::max<std::size_t>(l.slot + 1, last_lag_.size() * 2));
  LastLag& last = last_lag_[l.slot];
  const bool owned = l.owner.value.has_value();
  const std::string_view owner = owned ? *l.owner.value : std::string_view();
  if (last.written && last.lag == l.lag && last.owned == owned && last.owner == owner) return false;
  last.written = true;
  last.lag = l.lag;
  last.owned = owned;
  if (last.owner != owner) last.owner.assign(owner);
  return true;
}

const LevelFilter::MembersDelta* LevelFilter::members_delta(const GroupEpoch& e) {
  if (!standard_) return nullptr;
  const auto it = members_.find(e.group);
  if (it == members_.end()) {
    members_.emplace(std::string(e.group),
                     std::vector<std::string>(e.members.begin(), e.members.end()));
    return nullptr;
  }
  diff_members(it->second, e.members, delta_.joined, delta_.left);
  return &delta_;
}

bool LevelFilter::keep(const Event& e) {
  if (!standard_) return true;
  if (const auto* l = std::get_if<Lag>(&e)) return keep_lag(*l);
  // An auto-commit answered NONE: its `sent` line (with the offsets) says what it carried.
  if (const auto* c = std::get_if<Commit>(&e))
    return !(c->phase == "completed" && c->purpose == "auto-commit" && c->error &&
             *c->error == "NONE");
  if (std::holds_alternative<RecordsFetched>(e) || std::holds_alternative<RecordsProcessed>(e))
    return false;
  if (const auto* r = std::get_if<Rpc>(&e)) return !r->quiet;
  if (const auto* r = std::get_if<Record>(&e)) {
    if (r->value.commit != nullptr) return false;  // a typed OffsetCommit
    if (r->value.object == nullptr) return true;
    const auto it = r->value.object->find("record");
    return it == r->value.object->end() || !it->is_string() ||
           it->get_ref<const std::string&>() != "OffsetCommit";
  }
  return true;
}

bool append_jsonl_at(std::string& out, sim::SimTime t, const Event& e, LevelFilter& filter) {
  if (!filter.keep(e)) return false;
  if (const auto* ge = std::get_if<GroupEpoch>(&e)) {
    if (const auto* delta = filter.members_delta(*ge)) {
      append_group_epoch_delta(out, t, *ge, *delta);
      return true;
    }
  }
  const std::size_t start = out.size();
  append_jsonl(out, t, e);
  if (std::holds_alternative<RunStart>(e) && out.size() > start && out.back() == '}') {
    out.pop_back();
    out += ",\"trace_level\":\"";
    out += filter.name();
    out += "\"}";
  }
  return true;
}

void JsonlFileSink::on_event(sim::SimTime t, const Event& e) {
  if (level_) {
    if (!append_jsonl_at(file_.buffer(), t, e, *level_)) return;
  } else {
    append_jsonl(file_.buffer(), t, e);
  }
  file_.buffer() += '\n';
  file_.maybe_flush();
}

void JsonlLinesSink::on_event(sim::SimTime t, const Event& e) {
  std::string line;
  if (level_) {
    if (!append_jsonl_at(line, t, e, *level_)) return;
  } else {
    append_jsonl(line, t, e);
  }
  lines_.push_back(std::move(line));
  bound_.add(t, lines_.back(), 1);  // and its newline
}

void TraceByteBound::trip(sim::SimTime t, std::string_view line) const {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  throw sim::WatchdogTripped(
      fmt::format("watchdog: the trace passed {} bytes at t={} us (the last line: {}); raise "
                  "--max-trace-bytes if the scenario really needs more",
                  max_, t.count(), line.substr(0, 160)));
}

void ReadStorage::clear() {
  partition.clear();
  partitions.clear();
  names.clear();
  ranges.clear();
  offsets.clear();
  share_batches.clear();
  json.clear();
}

TopicPartition parse_partition(std::string_view s) {
  const auto dash = s.rfind('-');
  if (dash == std::string_view::npos)
    throw std::runtime_error(fmt::format("\"{}\" is not a partition (TOPIC-N)", s.substr(0, 80)));
  TopicPartition tp;
  tp.topic = std::string(s.substr(0, dash));
  std::int32_t p = 0;
  std::from_chars(s.data() + dash + 1, s.data() + s.size(), p);
  tp.partition = p;
  return tp;
}

Event parse_fields(std::string_view type, const nlohmann::ordered_json& fields, ReadStorage& st) {
  const auto& ps = parsers();
  const auto it = ps.find(type);
  if (it == ps.end()) return sim::RawTraceEvent{type, &fields};
  return it->second(fields, st);
}

Event parse_jsonl(const std::string& text, ReadStorage& st, sim::SimTime& t) {
  st.clear();
  st.line = ojson::parse(text);
  t = sim::SimTime{st.line.at("t_us").get<std::int64_t>()};
  return parse_fields(st.line.at("type").get_ref<const std::string&>(), st.line, st);
}

GroupMembers::Group& GroupMembers::group(std::string_view name) {
  auto it = groups_.find(name);
  if (it == groups_.end()) it = groups_.emplace(std::string(name), Group{}).first;
  return it->second;
}

const std::vector<std::string>& GroupMembers::set(std::string_view name, Names members) {
  Group& g = group(name);
  if (!g.has_listed) {
    g.listed.assign(members.begin(), members.end());
    g.sorted = sorted_names(members);
    g.has_listed = true;
    return g.sorted;
  }
  // A full trace lists every member on every line: the change from the last list, applied.
  diff_members(g.listed, members, joined_, left_);
  apply(g.sorted, joined_, left_);
  return g.sorted;
}

const std::vector<std::string>& GroupMembers::change(std::string_view name, Names joined,
                                                     Names left) {
  Group& g = group(name);
  g.has_listed = false;  // the next `members` line (if any) is read whole
  apply(g.sorted, joined, left);
  return g.sorted;
}

void GroupMembers::apply(std::vector<std::string>& sorted, Names joined, Names left) {
  for (const auto& name : left) {
    const auto at = std::lower_bound(sorted.begin(), sorted.end(), name);
    if (at != sorted.end() && *at == name) sorted.erase(at);
  }
  for (const auto& name : joined)
    sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), name), name);
}

void GroupMembers::read(ojson& line, GroupEpoch& e, bool rewrite) {
  const auto names = [&](std::string_view key) {
    std::vector<std::string> v;
    const auto it = line.find(key);
    if (it != line.end() && it->is_array())
      for (const auto& n : *it)
        if (n.is_string()) v.push_back(n.get<std::string>());
    return v;
  };
  const std::vector<std::string>* members = nullptr;
  if (line.contains("members")) {
    members = &set(e.group, e.members);
  } else if (line.contains("joined") || line.contains("left")) {
    const auto joined = names("joined"), left = names("left");
    members = &change(e.group, joined, left);
  }
  if (members == nullptr) return;
  e.members = *members;
  if (!rewrite) return;
  // `members` where a full line has it (where `joined` stood), sorted.
  ojson full = ojson::object();
  for (auto& [k, v] : line.items()) {
    if (k == "left") continue;
    if (k == "members" || k == "joined")
      full["members"] = *members;
    else
      full[k] = std::move(v);
  }
  line = std::move(full);
  // The event's views pointed into the old line's strings, which moved (a short string keeps its
  // characters inside the object, so a move does not keep them where they were): point them
  // into the new line.
  const auto view = [&line](const char* key) -> Opt<sv> {
    const auto it = line.find(key);
    if (it == line.end() || !it->is_string()) return std::nullopt;
    return sv(it->get_ref<const std::string&>());
  };
  e.group = view("group").value_or(sv());
  e.protocol = view("protocol");
  e.leader = view("leader");
  e.reason = view("reason");
}

void read_jsonl(std::istream& in, TraceSink& sink) {
  ReadStorage st;
  GroupMembers members;
  std::string line;
  sim::SimTime t{0};
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    Event e = parse_jsonl(line, st, t);
    if (auto* ge = std::get_if<GroupEpoch>(&e)) members.read(st.line, *ge, false);
    sink.on_event(t, e);
  }
}

void read_jsonl(const std::vector<std::string>& lines, TraceSink& sink) {
  ReadStorage st;
  GroupMembers members;
  sim::SimTime t{0};
  for (const auto& line : lines) {
    Event e = parse_jsonl(line, st, t);
    if (auto* ge = std::get_if<GroupEpoch>(&e)) members.read(st.line, *ge, false);
    sink.on_event(t, e);
  }
}

}  // namespace rsim::trace
