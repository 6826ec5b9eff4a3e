#include "models/protocol/trace_jsonl.hpp"

#include <charconv>

#include <fmt/format.h>
#include <map>
#include <set>
#include <utility>

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

struct Writer {
  sim::JsonWriter& w;

  // Field names are the events' own identifiers: nothing in them needs escaping.
  void key(std::string_view name) {
    w.key_begin();
    w.out() += name;
    w.key_end();
  }

  void operator()(std::string_view name, sv s) { key(name); w.value(s); }
  void operator()(std::string_view name, std::int64_t v) { key(name); w.value(v); }
  void operator()(std::string_view name, std::int32_t v) { key(name); w.value(v); }
  void operator()(std::string_view name, std::uint64_t v) { key(name); w.value(v); }
  void operator()(std::string_view name, bool v) { key(name); w.value(v); }
  void operator()(std::string_view name, double v) { key(name); w.value(v); }
  void operator()(std::string_view name, const Number& n) {
    key(name);
    std::visit([&](auto x) { w.value(x); }, n);
  }
  template <class T>
  void operator()(std::string_view name, const Opt<T>& o) {
    if (o) (*this)(name, *o);
  }
  template <class T>
  void operator()(std::string_view name, const OrNull<T>& o) {
    if (o.value) (*this)(name, *o.value);
    else {
      key(name);
      w.null();
    }
  }
  void operator()(std::string_view name, const TopicPartition* tp) {
    key(name);
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
  void operator()(std::string_view, const Splice& s) {
    if (s.object != nullptr && s.object->is_object()) w.members(*s.object);
  }
};

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
      if (j.is_number_integer()) out = j.get<std::int64_t>();
      else out = j.get<double>();
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
                     r.at("first_offset").get<std::int64_t>(), r.at("last_offset").get<std::int64_t>()});
      out = v;
    } else if constexpr (std::is_same_v<T, std::span<const CommittedOffset>>) {
      auto& v = st.offsets.emplace_back();
      for (const auto& [k, o] : j.items()) v.push_back({parse_partition(k), o.template get<std::int64_t>(), -1});
      out = v;
    } else if constexpr (std::is_same_v<T, std::span<const ShareStateBatch>>) {
      auto& v = st.share_batches.emplace_back();
      for (const auto& b : j)
        v.push_back({b.at("first_offset").get<std::int64_t>(), b.at("last_offset").get<std::int64_t>(),
                     b.at("delivery_state").get<std::int32_t>(), b.at("delivery_count").get<std::int32_t>()});
      out = v;
    } else if constexpr (std::is_same_v<T, Json>) {
      out = &j;
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

}  // namespace

std::string_view type_of(const Event& e) {
  return std::visit(
      [](const auto& ev) -> std::string_view {
        using E = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<E, sim::RawTraceEvent>) return ev.type;
        else return E::kType;
      },
      e);
}

void append_jsonl(std::string& out, sim::SimTime t, const Event& e) {
  // The first two members written directly (every line starts with them).
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(t.count()));
  out += "{\"t_us\":";
  out.append(buf, r.ptr);
  out += ",\"type\":";
  sim::JsonWriter w(out);
  w.value(type_of(e));
  std::visit(
      [&](const auto& ev) {
        using E = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<E, sim::RawTraceEvent>) {
          if (ev.fields != nullptr && ev.fields->is_object()) w.members(*ev.fields);
        } else {
          Writer v{w};
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

void JsonlFileSink::on_event(sim::SimTime t, const Event& e) {
  append_jsonl(file_.buffer(), t, e);
  file_.buffer() += '\n';
  file_.maybe_flush();
}

void JsonlLinesSink::on_event(sim::SimTime t, const Event& e) {
  std::string line;
  append_jsonl(line, t, e);
  lines_.push_back(std::move(line));
  bound_.add(t, lines_.back(), 1);  // and its newline
}

void TraceByteBound::trip(sim::SimTime t, std::string_view line) const {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  throw sim::WatchdogTripped(fmt::format(
      "watchdog: the trace passed {} bytes at t={} us (the last line: {}); raise "
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

void read_jsonl(std::istream& in, TraceSink& sink) {
  ReadStorage st;
  std::string line;
  sim::SimTime t{0};
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const Event e = parse_jsonl(line, st, t);
    sink.on_event(t, e);
  }
}

void read_jsonl(const std::vector<std::string>& lines, TraceSink& sink) {
  ReadStorage st;
  sim::SimTime t{0};
  for (const auto& line : lines) {
    const Event e = parse_jsonl(line, st, t);
    sink.on_event(t, e);
  }
}

}  // namespace rsim::trace
