#include "reports/critical_path.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <boost/graph/adjacency_list.hpp>

#include "models/spec/overloaded.hpp"

namespace reports {

namespace trace = rsim::trace;
using ojson = nlohmann::ordered_json;

const std::array<std::string_view, kCauseCount>& cause_names() {
  static const std::array<std::string_view, kCauseCount> names{
      "heartbeat_wait_ms",  "poll_wait_ms",
      "session_timeout_ms", "rebalance_timeout_ms",
      "initial_delay_ms",   "assignment_interval_ms",
      "network_ms",         "broker_ms",
      "callback_ms",        "other_ms"};
  return names;
}

namespace {

constexpr std::int64_t kNone = -1;

struct EdgeProp {
  Cause cause = Cause::Other;
  bool timer = false;  // a timer armed at the source fired at the target: the target's reason
};
// Edges in a vector too (the default keeps them in a std::list: a node per edge).
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                    boost::no_property, EdgeProp, boost::no_property, boost::vecS>;

/// What a vertex is, as far as the edges' causes go.
enum class Kind : std::uint8_t {
  RpcSend,
  HeartbeatSend,  // a Heartbeat / ConsumerGroupHeartbeat request (the heartbeat thread's)
  RpcRecv,
  CallbackStart,
  CallbackEnd,
  Assignment,
  PollDriven,  // consumer.reconcile, consumer.rejoin, consumer.poll_timeout: the application's
               // poll()
  ConsumerOther,
  Coordinator,
  Record,
};

constexpr std::uint32_t kNoActor = 0xffffffffu;

/// A vertex's event. Its label is shared by many (interned); what varies per event (the member
/// it is about, an epoch or a count) is kept beside it: "B" + "STABLE at epoch #" + 4.
struct Node {
  std::int64_t t = 0;
  std::int64_t num = -1;  // replaces '#' in the label
  std::uint32_t actor = 0;
  std::uint32_t about = kNoActor;  // the member a coordinator event is about: its name leads
  std::uint32_t label = 0;         // into Impl::labels
  std::uint16_t type = 0;          // into Impl::types
  Kind kind = Kind::ConsumerOther;
};

/// A request in flight: its send vertex (kNone while a heartbeat's send is held back: a
/// heartbeat that carries and causes no change never enters the graph).
struct Pending {
  std::int32_t id = 0;
  std::int64_t t_send = 0;
  std::int64_t send = kNone;
  std::int64_t app_at_send = kNone;  // the application's last vertex when it was sent
  std::uint32_t api_label = 0;       // "<api> request"
  bool heartbeat = false;
  bool drives_group = false;  // JoinGroup, SyncGroup, LeaveGroup: may change the group by itself
  bool attributable = false;  // the coordinator's member events may be this request's doing
};

struct Actor {
  std::string name;
  std::uint32_t group = 0;  // into Impl::groups (consumers: the group it started in)
  bool has_group = false;
  std::int64_t last_app = kNone;      // the application thread's last vertex
  std::int64_t last_hb = kNone;       // the heartbeat thread's last vertex
  std::int64_t hb_link = kNone;       // a heartbeat response the application has not acted on yet
  std::int64_t member_epoch = kNone;  // the coordinator's last member.epoch about it (KIP-848)
  std::vector<Pending> pending;
};

struct Group {
  std::string name;
  std::uint32_t coordinator = 0;         // its actor
  std::int64_t last = kNone;             // the coordinator's last vertex for this group
  std::string state;                     // the last group.state
  bool empty = true;                     // no state yet, or Empty
  std::int64_t initial_prepare = kNone;  // PreparingRebalance out of Empty: the initial delay's arm
  std::int64_t open = kNone;             // the last PreparingRebalance / group epoch bump
  std::int64_t bump_t = -1, ta_t = -1;
  bool bump_by_request = false;  // the last epoch bump came with a member's heartbeat
  std::int64_t last_ta = kNone;  // the last target assignment computed (KIP-848)
  std::int64_t ta_timestamp_ms =
      -1;  // its record's assignment_timestamp (0: none, computed at once)
  std::int64_t inherit_send = kNone,
               inherit_t = -1;     // the request behind this instant's member event
  std::vector<std::int64_t> ends;  // vertices a rebalance may end at, in time order
};

// Names to their numbers: only looked up, never iterated (no order reaches the output).
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class Id>
using IdMap = std::unordered_map<std::string, Id, NameHash, std::equal_to<>>;

bool heartbeat_api(std::string_view api) {
  return api == "Heartbeat" || api == "ConsumerGroupHeartbeat";
}
bool group_api(std::string_view api) {
  return heartbeat_api(api) || api == "JoinGroup" || api == "SyncGroup" || api == "LeaveGroup" ||
         api == "OffsetCommit" || api == "OffsetFetch" || api == "FindCoordinator";
}
bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace

struct CriticalPaths::Impl {
  Graph g;
  std::vector<Node> nodes;
  std::vector<Actor> actors;
  IdMap<std::uint32_t> actor_ids;
  std::vector<Group> groups;
  IdMap<std::uint32_t> group_ids;
  std::vector<std::string> types{""};
  IdMap<std::uint16_t> type_ids;
  /// The trace types met so far by their text's address: every vertex's type is a trace event's
  /// kType (or a literal), text of static storage, so an address names one text for the whole
  /// run; a few dozen of them, looked up without hashing the text of every vertex.
  struct TypeAt {
    const char* data;
    std::size_t size;
    std::uint16_t id;
  };
  std::vector<TypeAt> type_at;
  std::vector<std::string> labels{""};
  IdMap<std::uint32_t> label_ids;
  // What the next vertex carries beside its label (add() takes them).
  std::int64_t next_num = -1;
  std::uint32_t next_about = kNoActor;
  std::string buf;                                    // reused for labels
  std::size_t prune_at = CriticalPaths::kPruneSlack;  // prune_due() from this many vertices
  std::optional<std::int64_t>
      assignment_interval_ms;  // group.consumer.assignment.interval.ms, if known
  // Paths found before their vertices were pruned (remember()): each step as its vertex's
  // event (labels by number), a few dozen bytes a step.
  struct KeptStep {
    Node n;
    std::array<std::pair<Cause, std::int64_t>, 2> causes{};
    std::uint8_t cause_count = 0;
    bool waited = false;
    Node waited_for;
  };
  struct KeptPath {
    std::vector<KeptStep> steps;  // those summary.json keeps (kept_steps)
    std::size_t elided = 0;       // the others
    std::array<std::int64_t, kCauseCount> causes_us{};
  };
  using PathKey = std::tuple<std::string, std::int64_t, std::int64_t>;
  std::map<PathKey, KeptPath> kept_paths;

  void remember(const std::string& group_name, std::int64_t start, std::int64_t end) {
    PathKey key{group_name, start, end};
    if (kept_paths.contains(key)) return;
    const CriticalPath p = find(group_name, start, end, /*text=*/false);
    KeptPath k;
    k.causes_us = p.causes_us;
    // Only the steps summary.json keeps (a long path has thousands: the 1,000 x 10,000 bench
    // finds 150,349 steps on 38 paths and keeps 7,000 of them).
    const std::vector<bool> keep = kept_steps(p.steps);
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
      if (!keep[i]) {
        ++k.elided;
        continue;
      }
      const PathStep& s = p.steps[i];
      KeptStep ks;
      ks.n = nodes[s.node];
      for (const auto& c : s.causes) ks.causes[ks.cause_count++] = c;
      if (s.waited_for) {
        ks.waited = true;
        ks.waited_for = nodes[*s.waited_for];
      }
      k.steps.push_back(ks);
    }
    kept_paths.emplace(std::move(key), std::move(k));
  }
  /// A path as find() gives it: remembered, else found now.
  CriticalPath path(const std::string& group_name, std::int64_t start, std::int64_t end) const {
    const auto it = kept_paths.find(PathKey{group_name, start, end});
    if (it == kept_paths.end()) return find(group_name, start, end);
    CriticalPath out;
    out.causes_us = it->second.causes_us;
    out.steps_elided = it->second.elided;
    for (const KeptStep& ks : it->second.steps) {
      PathStep s;
      s.t_us = ks.n.t;
      s.actor = actors[ks.n.actor].name;
      s.event = types[ks.n.type];
      s.what = what(ks.n);
      for (std::uint8_t i = 0; i < ks.cause_count; ++i) s.causes.push_back(ks.causes[i]);
      if (ks.waited) {
        s.waited_for = 0;  // its vertex is gone: only what it was stays
        s.waited_for_t_us = ks.waited_for.t;
        s.waited_for_actor = actors[ks.waited_for.actor].name;
        s.waited_for_what = what(ks.waited_for);
      }
      out.steps.push_back(std::move(s));
    }
    return out;
  }

  template <class Id>
  static Id intern(std::vector<std::string>& v, IdMap<Id>& ids, std::string_view s) {
    const auto it = ids.find(s);
    if (it != ids.end()) return it->second;
    const auto id = static_cast<Id>(v.size());
    v.emplace_back(s);
    ids.emplace(std::string(s), id);
    return id;
  }
  /// A label from a fixed set of shapes (names of states, apis, errors, callbacks; never a
  /// member's name or a number: those go to num() and about()).
  template <class... A>
  std::uint32_t label(fmt::format_string<A...> f, A&&... a) {
    buf.clear();
    fmt::format_to(std::back_inserter(buf), f, std::forward<A>(a)...);
    return intern(labels, label_ids, std::string_view(buf));
  }
  /// A group API's "<api> request" and "<api> response" labels, formatted and looked up once
  /// per API (each interned when first used, as label() would): an auto-commit's and a
  /// heartbeat's rpcs come every few seconds from every member.
  struct ApiLabels {
    std::string api;
    std::optional<std::uint32_t> request_label, response_label;
    std::uint32_t request(Impl& impl, std::string_view a) {
      if (!request_label) request_label = impl.label("{} request", a);
      return *request_label;
    }
    std::uint32_t response(Impl& impl, std::string_view a) {
      if (!response_label) response_label = impl.label("{} response", a);
      return *response_label;
    }
  };
  std::vector<ApiLabels> api_label_cache;
  ApiLabels& api_labels(std::string_view api) {
    for (auto& l : api_label_cache)
      if (l.api == api) return l;
    api_label_cache.push_back(ApiLabels{std::string(api), {}, {}});
    return api_label_cache.back();
  }
  std::uint32_t num(std::int64_t n, std::uint32_t lbl) {
    next_num = n;
    return lbl;
  }
  std::uint32_t about(std::string_view member, std::uint32_t lbl) {
    next_about = member.empty() ? kNoActor : actor(member);
    return lbl;
  }
  std::string what(const Node& n) const {
    std::string out = n.about == kNoActor ? std::string() : actors[n.about].name + " ";
    const std::string& l = labels[n.label];
    const auto hash = l.find('#');
    out += hash == std::string::npos || n.num < 0
               ? l
               : l.substr(0, hash) + std::to_string(n.num) + l.substr(hash + 1);
    return out;
  }
  std::uint32_t actor(std::string_view name) {
    const auto it = actor_ids.find(name);
    if (it != actor_ids.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(actors.size());
    actors.emplace_back();
    actors.back().name = std::string(name);
    actor_ids.emplace(std::string(name), id);
    return id;
  }
  Group& group(std::string_view name) {
    auto it = group_ids.find(name);
    if (it == group_ids.end()) {
      const auto id = static_cast<std::uint32_t>(groups.size());
      groups.emplace_back();
      groups.back().name = std::string(name);
      groups.back().coordinator = actor("coordinator");
      it = group_ids.emplace(std::string(name), id).first;
    }
    return groups[it->second];
  }
  std::uint16_t type_id(std::string_view type) {
    for (const TypeAt& a : type_at)
      if (a.data == type.data() && a.size == type.size()) return a.id;
    const std::uint16_t id = intern(types, type_ids, type);
    type_at.push_back(TypeAt{type.data(), type.size(), id});
    return id;
  }
  std::int64_t add(std::int64_t t, std::uint32_t actor_id, std::string_view type, std::uint32_t lbl,
                   Kind kind) {
    const auto v = static_cast<std::int64_t>(boost::add_vertex(g));
    Node n;
    n.t = t;
    n.num = next_num;
    n.actor = actor_id;
    n.about = next_about;
    n.label = lbl;
    n.type = type_id(type);
    n.kind = kind;
    nodes.push_back(n);
    next_num = -1;
    next_about = kNoActor;
    return v;
  }
  void edge(std::int64_t from, std::int64_t to, Cause c, bool timer = false) {
    if (from == kNone || to == kNone || from == to) return;
    boost::add_edge(static_cast<std::size_t>(from), static_cast<std::size_t>(to),
                    EdgeProp{c, timer}, g);
  }

  /// What kept an application thread from its next event: the cause of a program-order edge.
  static Cause app_cause(Kind next) {
    switch (next) {
      case Kind::CallbackEnd:
        return Cause::Callback;
      case Kind::RpcRecv:
        return Cause::Network;
      case Kind::CallbackStart:
      case Kind::Assignment:
      case Kind::RpcSend:
      case Kind::PollDriven:
        return Cause::PollWait;
      default:
        return Cause::Other;
    }
  }

  /// A vertex of consumer `c`'s application thread, after its previous one and after a
  /// heartbeat response it has not acted on yet.
  std::int64_t app_event(std::int64_t t, std::string_view consumer, std::string_view type,
                         std::uint32_t lbl, Kind kind) {
    return app_event(t, actor(consumer), type, lbl, kind);
  }
  /// The same for the consumer numbered `id` (a caller that has looked it up already).
  std::int64_t app_event(std::int64_t t, std::uint32_t id, std::string_view type, std::uint32_t lbl,
                         Kind kind) {
    const std::int64_t v = add(t, id, type, lbl, kind);
    Actor& a = actors[id];
    edge(a.last_app, v, app_cause(kind));
    // The application acts on what a heartbeat response said (it rejoins, reconciles); a
    // callback's end and a response to its own request are not that reaction.
    if (a.hb_link != kNone && kind != Kind::CallbackEnd && kind != Kind::RpcRecv) {
      edge(a.hb_link, v, app_cause(kind));
      a.hb_link = kNone;
    }
    a.last_app = v;
    if (a.has_group && (kind == Kind::Assignment || kind == Kind::CallbackEnd))
      groups[a.group].ends.push_back(v);
    return v;
  }

  /// A held-back heartbeat request enters the graph (its response or the coordinator's doing
  /// says it mattered).
  void materialize(Actor& a, std::uint32_t id, Pending& p) {
    if (p.send != kNone) return;
    // Between an event's label and its vertex (a coordinator event finding its request): what
    // that vertex carries stays for it.
    const std::int64_t keep_num = std::exchange(next_num, -1);
    const std::uint32_t keep_about = std::exchange(next_about, kNoActor);
    p.send = add(p.t_send, id, trace::Rpc::kType, p.api_label, Kind::HeartbeatSend);
    next_num = keep_num;
    next_about = keep_about;
    // The heartbeat timer: from the heartbeat thread's last event in the graph, and from the
    // application when it sent the heartbeat itself (KIP-848's acknowledgement, at once).
    edge(a.last_hb, p.send, Cause::HeartbeatWait);
    if (p.app_at_send != kNone && nodes[static_cast<std::size_t>(p.app_at_send)].t == p.t_send)
      edge(p.app_at_send, p.send, Cause::HeartbeatWait);
    a.last_hb = p.send;
  }

  void on_rpc(std::int64_t t, const trace::Rpc& e) {
    if (!group_api(e.api)) return;
    const bool send = e.dir == "send";
    const std::string_view consumer = send ? e.from : e.to;
    if (consumer.rfind("broker-", 0) == 0) return;
    const std::uint32_t id = actor(consumer);
    const bool hb = heartbeat_api(e.api);
    if (send) {
      Pending p{
          .id = e.id,
          .t_send = t,
          .api_label = api_labels(e.api).request(*this, e.api),
          .heartbeat = hb,
          .drives_group = e.api == "JoinGroup" || e.api == "SyncGroup" || e.api == "LeaveGroup",
          .attributable =
              hb || e.api == "JoinGroup" || e.api == "SyncGroup" || e.api == "LeaveGroup"};
      p.app_at_send = actors[id].last_app;
      if (!hb) p.send = app_event(t, id, trace::Rpc::kType, p.api_label, Kind::RpcSend);
      Actor& a = actors[id];
      // A request id is used once per connection; a stale entry with the same id goes.
      std::erase_if(a.pending, [&](const Pending& q) { return q.id == e.id; });
      a.pending.push_back(p);
      return;
    }
    Actor& a = actors[id];
    const auto it = std::find_if(a.pending.begin(), a.pending.end(),
                                 [&](const Pending& q) { return q.id == e.id; });
    std::optional<Pending> p;
    if (it != a.pending.end()) {
      p = *it;
      a.pending.erase(it);
    }
    const std::string_view error = e.error.value_or("NONE");
    // A heartbeat's response that carried and caused no change never enters the graph: no label.
    if (hb && (!p || (p->send == kNone && error == "NONE"))) return;
    const std::uint32_t lbl = error == "NONE" ? api_labels(e.api).response(*this, e.api)
                                              : label("{} response {}", e.api, error);
    if (hb) {
      materialize(a, id, *p);
      const std::int64_t v = add(t, id, trace::Rpc::kType, lbl, Kind::RpcRecv);
      Actor& b = actors[id];
      edge(b.last_hb, v, Cause::Network);
      link_coordinator(b, *p, v);
      b.last_hb = v;
      b.hb_link = v;
      return;
    }
    const std::int64_t v = app_event(t, id, trace::Rpc::kType, lbl, Kind::RpcRecv);
    if (p) {
      edge(p->send, v, Cause::Network);
      link_coordinator(actors[id], *p, v);
    }
  }
  /// The response left the coordinator after its last doing for the group since the request.
  void link_coordinator(const Actor& a, const Pending& p, std::int64_t recv) {
    if (!a.has_group) return;
    const Group& gr = groups[a.group];
    if (gr.last == kNone || nodes[static_cast<std::size_t>(gr.last)].t < p.t_send) return;
    edge(gr.last, recv,
         nodes[static_cast<std::size_t>(gr.last)].kind == Kind::Record ? Cause::Broker
                                                                       : Cause::Network);
  }

  /// The request behind a coordinator event: `consumer`'s latest attributable one in flight
  /// (a member's own event), else this instant's, else the group's latest JoinGroup, SyncGroup
  /// or LeaveGroup in flight.
  std::int64_t request_of(Group& gr, std::int64_t t, std::string_view consumer) {
    if (!consumer.empty()) {
      const auto it = actor_ids.find(consumer);
      if (it != actor_ids.end()) {
        Actor& a = actors[it->second];
        for (auto p = a.pending.rbegin(); p != a.pending.rend(); ++p) {
          if (!p->attributable || p->t_send > t) continue;
          materialize(a, it->second, *p);
          gr.inherit_send = p->send;
          gr.inherit_t = t;
          return p->send;
        }
      }
      return kNone;
    }
    if (gr.inherit_t == t) return gr.inherit_send;
    std::int64_t best = kNone;
    std::int64_t best_t = -1;
    for (const auto& a : actors) {
      if (!a.has_group || &groups[a.group] != &gr) continue;
      for (const auto& p : a.pending)
        if (p.drives_group && p.send != kNone && p.t_send <= t &&
            (best == kNone || std::tie(p.t_send, p.send) > std::tie(best_t, best))) {
          best = p.send;
          best_t = p.t_send;
        }
    }
    return best;
  }

  /// The group's latest heartbeat in flight at t (its send enters the graph), kNone if none.
  std::int64_t heartbeat_in_flight(Group& gr, std::int64_t t) {
    Actor* best_actor = nullptr;
    Pending* best = nullptr;
    std::uint32_t best_id = 0;
    for (std::uint32_t i = 0; i < actors.size(); ++i) {
      Actor& a = actors[i];
      if (!a.has_group || &groups[a.group] != &gr) continue;
      for (auto& p : a.pending)
        if (p.heartbeat && p.t_send <= t && (best == nullptr || p.t_send > best->t_send)) {
          best = &p;
          best_actor = &a;
          best_id = i;
        }
    }
    if (best == nullptr) return kNone;
    materialize(*best_actor, best_id, *best);
    return best->send;
  }

  /// A vertex of the group's coordinator, after its previous one; `by_request`: the request
  /// behind it gets an edge (`consumer`: the member the event is about).
  std::int64_t coordinator_event(std::int64_t t, std::string_view group_name, std::string_view type,
                                 std::uint32_t lbl, Kind kind, bool by_request,
                                 std::string_view consumer, Cause own = Cause::Broker,
                                 bool end = false) {
    Group& gr = group(group_name);
    const std::int64_t req = by_request ? request_of(gr, t, consumer) : kNone;
    const std::int64_t v = add(t, gr.coordinator, type, lbl, kind);
    Group& g2 = group(group_name);
    edge(g2.last, v,
         g2.last != kNone && nodes[static_cast<std::size_t>(g2.last)].kind == Kind::Record
             ? Cause::Broker
             : own);
    edge(req, v, Cause::Network);
    g2.last = v;
    if (end) g2.ends.push_back(v);
    return v;
  }

  void on_group_state(std::int64_t t, const trace::GroupStateChange& e) {
    Group& gr0 = group(e.group);
    const bool was_empty = gr0.empty;
    const std::string before = gr0.state;
    const std::string_view reason = e.reason.value_or("");
    // Timer-driven: the end of the join phase out of Empty (group.initial.rebalance.delay.ms) or
    // after the rebalance timeout; a write's completion. The others: a request's doing.
    const bool completes_join =
        before == "PreparingRebalance" && (e.state == "CompletingRebalance" || e.state == "Empty");
    const bool initial = completes_join && group(e.group).initial_prepare != kNone;
    const bool persisted = contains(reason, "persisted");
    const std::int64_t v =
        coordinator_event(t, e.group, trace::GroupStateChange::kType, label("{}", e.state),
                          Kind::Coordinator, !initial && !persisted, {}, Cause::Broker, true);
    Group& gr = group(e.group);
    if (initial) edge(gr.initial_prepare, v, Cause::InitialDelay, true);
    if (e.state == "PreparingRebalance") {
      gr.open = v;
      gr.initial_prepare = was_empty ? v : kNone;
    } else if (completes_join) {
      gr.initial_prepare = kNone;
    }
    gr.state = std::string(e.state);
    gr.empty = e.state == "Empty";
  }

  void on_record(std::int64_t t, const trace::Record& e) {
    if (e.value.object == nullptr) return;  // a typed OffsetCommit
    const ojson& o = *e.value.object;
    const auto kind = o.find("record");
    const auto grp = o.find("group");
    if (kind == o.end() || !kind->is_string() || grp == o.end() || !grp->is_string()) return;
    const std::string& record = kind->get_ref<const std::string&>();
    const std::string& group_name = grp->get_ref<const std::string&>();
    if (record == "GroupMetadata") {
      coordinator_event(t, group_name, trace::Record::kType, label("{}", record), Kind::Record,
                        true, {});
    } else if (record == "ConsumerGroupMemberMetadata" ||
               record == "ConsumerGroupCurrentMemberAssignment") {
      // A tombstone removes the member: the coordinator's doing (a timeout), not its request's.
      const bool tombstone = o.value("tombstone", false);
      const std::string consumer = o.value("consumer", std::string());
      coordinator_event(t, group_name, trace::Record::kType,
                        (tombstone ? label("{} removed", record) : label("{}", record)),
                        Kind::Record, !tombstone, consumer);
    } else if (record == "ConsumerGroupMetadata") {
      Group& gr = group(group_name);
      gr.bump_t = t;
      gr.bump_by_request = gr.inherit_t == t && gr.inherit_send != kNone;
    } else if (record == "ConsumerGroupTargetAssignmentMetadata") {
      Group& gr = group(group_name);
      // Computed at a later instant than the epoch bump: a heartbeat's bump that did not compute
      // it was inside group.consumer.assignment.interval.ms of the previous target; a bump
      // without a heartbeat (a member removed) waits for the next heartbeat, whoever's.
      const bool later = gr.bump_t >= 0 && gr.bump_t < t && gr.ta_t < gr.bump_t;
      const bool deferred = later && gr.bump_by_request;
      const std::int64_t prev = gr.last_ta != kNone ? gr.last_ta : gr.open;
      // A deferred one (Kafka's canComputeNextTargetAssignment): the interval ran from the
      // previous target's assignment_timestamp (ms); the first heartbeat after it computed this
      // one. The interval's end is a vertex of its own, so the gap splits into the interval's
      // wait and the wait for that heartbeat (step_back: waited_for).
      const std::int64_t due_us = deferred && assignment_interval_ms && gr.ta_timestamp_ms > 0
                                      ? (gr.ta_timestamp_ms + *assignment_interval_ms) * 1000
                                      : std::int64_t{-1};
      const bool split = prev != kNone && due_us > t_of(prev) && due_us < t;
      const std::int64_t hb = later && (!deferred || split) ? heartbeat_in_flight(gr, t) : kNone;
      const std::int64_t v =
          coordinator_event(t, group_name, trace::Record::kType,
                            label("target assignment computed"), Kind::Record, true, {});
      Group& g2 = group(group_name);
      if (split) {
        const std::int64_t due =
            add(due_us, g2.coordinator, "timer",
                label("group.consumer.assignment.interval.ms elapsed"), Kind::Coordinator);
        edge(prev, due, Cause::AssignmentInterval, true);
        edge(due, v, Cause::HeartbeatWait, true);
        edge(hb, v, Cause::Network);
      } else {
        edge(hb, v, Cause::Network);
        if (deferred) edge(prev, v, Cause::AssignmentInterval, true);
      }
      g2.last_ta = v;
      g2.ta_t = t;
      const auto ts = o.find("assignment_timestamp");
      g2.ta_timestamp_ms = ts != o.end() && ts->is_number_integer() ? ts->get<std::int64_t>() : -1;
    }
  }

  void on_member_leave(std::int64_t t, const trace::MemberLeave& e) {
    const std::string_view why = e.reason;
    const bool session = contains(why, "session timeout");
    const bool rebalance = contains(why, "rebalance timeout") || contains(why, "did not rejoin") ||
                           contains(why, "failed to join");
    const Cause own = session     ? Cause::SessionTimeout
                      : rebalance ? Cause::RebalanceTimeout
                                  : Cause::Broker;
    if (session || rebalance) {
      // The group's events of this instant are the timer's doing, whatever is in flight.
      Group& gr = group(e.group);
      gr.inherit_t = t;
      gr.inherit_send = kNone;
    }
    const std::int64_t v = coordinator_event(
        t, e.group, trace::MemberLeave::kType, about(e.consumer, label("left: {}", why)),
        Kind::Coordinator, !session && !rebalance, e.consumer, own);
    if (session) {
      // The member's session timer, armed at its last contact.
      if (const auto it = actor_ids.find(e.consumer); it != actor_ids.end()) {
        const Actor& a = actors[it->second];
        edge(std::max(a.last_app, a.last_hb), v, Cause::SessionTimeout, true);
      }
    } else if (rebalance) {
      // Armed when the member was told to revoke (KIP-848: its last member epoch), or when the
      // group began to rebalance (classic).
      std::int64_t armed = group(e.group).open;
      if (const auto it = actor_ids.find(e.consumer);
          it != actor_ids.end() && actors[it->second].member_epoch != kNone)
        armed = actors[it->second].member_epoch;
      edge(armed, v, Cause::RebalanceTimeout, true);
    }
  }

  void consumer_start(std::int64_t t, const trace::ConsumerStart& e) {
    const std::uint32_t id = actor(e.consumer);
    const std::uint32_t gid = [&] {
      group(e.group);
      return group_ids.find(e.group)->second;
    }();
    Actor& a = actors[id];
    a.group = gid;
    a.has_group = true;
    a.pending.clear();
    a.hb_link = kNone;
    app_event(t, e.consumer, trace::ConsumerStart::kType, label("start"), Kind::ConsumerOther);
  }

  void on_event(std::int64_t t, const trace::Event& ev) {
    using namespace rsim::trace;
    // The steady path's most frequent events, of which no vertex comes (the visit below ignores
    // them): out before it builds its visitor, a few dozen instructions an event.
    if (std::holds_alternative<Lag>(ev) || std::holds_alternative<RecordsFetched>(ev) ||
        std::holds_alternative<RecordsProcessed>(ev) || std::holds_alternative<Position>(ev) ||
        std::holds_alternative<Commit>(ev) || std::holds_alternative<Produce>(ev) ||
        std::holds_alternative<LogEndOffset>(ev))
      return;
    std::visit(
        rsim::Overloaded{
            [&](const Rpc& e) { on_rpc(t, e); },
            [&](const ConsumerStart& e) { consumer_start(t, e); },
            [&](const ConsumerStop& e) {
              app_event(t, e.consumer, ConsumerStop::kType, label("close()"), Kind::ConsumerOther);
            },
            [&](const ConsumerCrash& e) {
              app_event(t, e.consumer, ConsumerCrash::kType, label("crash"), Kind::ConsumerOther);
              actors[actor(e.consumer)].pending.clear();
            },
            [&](const ConsumerClosed& e) {
              app_event(t, e.consumer, ConsumerClosed::kType, label("closed"), Kind::ConsumerOther);
            },
            [&](const ConsumerStall& e) {
              app_event(t, e.consumer, ConsumerStall::kType, num(e.for_ms, label("stalled # ms")),
                        Kind::ConsumerOther);
            },
            [&](const ConsumerPause& e) {
              app_event(t, e.consumer, ConsumerPause::kType, num(e.for_ms, label("paused # ms")),
                        Kind::ConsumerOther);
            },
            [&](const ConsumerResume& e) {
              app_event(t, e.consumer, ConsumerResume::kType, label("resumed"),
                        Kind::ConsumerOther);
            },
            [&](const ConsumerRejoin& e) {
              app_event(t, e.consumer, ConsumerRejoin::kType, label("rejoin: {}", e.reason),
                        Kind::PollDriven);
            },
            [&](const ConsumerPollTimeout& e) {
              app_event(t, e.consumer, ConsumerPollTimeout::kType,
                        label("max.poll.interval.ms expired"), Kind::PollDriven);
            },
            // consumer.member_state: not a vertex (every state change it reports comes with one
            // that is: the heartbeat's response, the reconciliation, the callbacks, the
            // acknowledging heartbeat), which keeps a consumer-protocol graph a third smaller.
            [&](const ConsumerMemberState&) {},
            [&](const ConsumerReconcile& e) {
              app_event(t, e.consumer, ConsumerReconcile::kType,
                        num(e.epoch, label("reconcile to epoch #")), Kind::PollDriven);
            },
            [&](const ConsumerFenced& e) {
              app_event(t, e.consumer, ConsumerFenced::kType, label("fenced: {}", e.error),
                        Kind::ConsumerOther);
            },
            [&](const ConsumerError& e) {
              app_event(t, e.consumer, ConsumerError::kType, label("error {}", e.error),
                        Kind::ConsumerOther);
            },
            [&](const Callback& e) {
              const bool start = e.phase == "start";
              app_event(t, e.consumer, Callback::kType, label("{} {}", e.callback, e.phase),
                        start ? Kind::CallbackStart : Kind::CallbackEnd);
            },
            [&](const Assignment& e) {
              app_event(t, e.consumer, Assignment::kType,
                        num(static_cast<std::int64_t>(e.owned.size()), label("owns # partitions")),
                        Kind::Assignment);
            },
            [&](const GroupStateChange& e) { on_group_state(t, e); },
            [&](const GroupEpoch& e) {
              const std::int64_t n = e.epoch ? *e.epoch : e.generation.value_or(-1);
              const std::int64_t v =
                  coordinator_event(t, e.group, GroupEpoch::kType,
                                    num(n, label("{} #", e.epoch ? "epoch" : "generation")),
                                    Kind::Coordinator, true, {});
              if (e.epoch && e.reason) group(e.group).open = v;  // a bump (it says why)
            },
            [&](const MemberEpoch& e) {
              const std::int64_t v = coordinator_event(
                  t, e.group, MemberEpoch::kType,
                  about(e.consumer, num(e.epoch, label("{} at epoch #", e.state))),
                  Kind::Coordinator, true, e.consumer, Cause::Broker, true);
              if (e.state == "UNREVOKED_PARTITIONS") actors[actor(e.consumer)].member_epoch = v;
            },
            [&](const MemberJoin& e) {
              coordinator_event(t, e.group, MemberJoin::kType, about(e.consumer, label("joined")),
                                Kind::Coordinator, true, e.consumer);
            },
            [&](const MemberLeave& e) { on_member_leave(t, e); },
            [&](const Record& e) { on_record(t, e); },
            [&](const auto&) {},
        },
        ev);
  }

  // Backwards: a vertex a timer fired is reached through that timer; any other through the
  // predecessor that happened last (the one it waited for). When that predecessor is a
  // heartbeat that a timer sent, and another predecessor was ready while the timer ran, the
  // path goes on through that other one: the heartbeat's wait counts only from then.
  struct Pick {
    std::int64_t v = kNone, runner_up = kNone;
    Cause cause = Cause::Other;
    bool timer = false;
  };
  std::int64_t t_of(std::int64_t v) const { return nodes[static_cast<std::size_t>(v)].t; }
  Pick pick(std::int64_t at) const {
    Pick p;
    for (auto [ei, ee] = boost::in_edges(static_cast<std::size_t>(at), g); ei != ee; ++ei) {
      const auto s = static_cast<std::int64_t>(boost::source(*ei, g));
      const EdgeProp& e = g[*ei];
      const bool better =
          p.v == kNone || (e.timer && !p.timer) ||
          (e.timer == p.timer && std::make_pair(t_of(s), s) > std::make_pair(t_of(p.v), p.v));
      if (better) {
        if (p.v != kNone && !p.timer) p.runner_up = p.v;
        p.v = s;
        p.cause = e.cause;
        p.timer = e.timer;
      } else if (!e.timer && !p.timer &&
                 (p.runner_up == kNone ||
                  std::make_pair(t_of(s), s) > std::make_pair(t_of(p.runner_up), p.runner_up))) {
        p.runner_up = s;
      }
    }
    return p;
  }
  /// One step of the walk back from `cur` (after `start`): the vertex before it on the path,
  /// the cause of the edge, and the request it waited for when the wait is split.
  struct Step {
    std::int64_t next = kNone, via = kNone;
    Cause cause = Cause::Other, via_cause = Cause::Other;
  };
  Step step_back(std::int64_t cur, std::int64_t start) const {
    const Pick p = pick(cur);
    if (p.v == kNone) return {};
    if (p.timer && p.cause == Cause::HeartbeatWait) {
      // A timer's end waited for by a heartbeat (the assignment interval's): the wait lasts
      // until that heartbeat's send, its way to the coordinator follows.
      std::int64_t hb = kNone;
      for (auto [ei, ee] = boost::in_edges(static_cast<std::size_t>(cur), g); ei != ee; ++ei) {
        const auto s = static_cast<std::int64_t>(boost::source(*ei, g));
        if (g[*ei].cause == Cause::Network &&
            nodes[static_cast<std::size_t>(s)].kind == Kind::HeartbeatSend &&
            t_of(s) >= t_of(p.v) && (hb == kNone || t_of(s) > t_of(hb)))
          hb = s;
      }
      if (hb != kNone) return {p.v, hb, Cause::HeartbeatWait, Cause::Network};
    }
    if (runner_up_taken(p, start))
      // (Two edges from one source: the same vertex, reached by the edge that came first.)
      return {p.runner_up, p.v, p.runner_up == p.v ? p.cause : Cause::HeartbeatWait, p.cause};
    return {p.v, kNone, p.cause, Cause::Other};
  }
  /// Whether the walk back (after `start`) goes from the vertex `p` was picked at to its
  /// runner-up instead of p.v: the picked predecessor waited for a heartbeat that came after the
  /// runner-up was ready (after `start`). Only the runner-up's time depends on `start`: what holds
  /// for a start holds for every earlier one.
  bool runner_up_taken(const Pick& p, std::int64_t start) const {
    if (p.timer || p.runner_up == kNone || t_of(p.runner_up) <= start) return false;
    const Pick before = pick(p.v);
    // (Not a timer's end that a heartbeat ended, such as the assignment interval's: that
    // wait is split in its own step.)
    return before.v != kNone && before.cause == Cause::HeartbeatWait && !before.timer &&
           t_of(before.v) < t_of(p.runner_up);
  }

  /// What a later find() can read. Its rebalance is open now (it started at one of
  /// `open_starts`, it ends now or later) or starts now or later. Its end vertex is the group's
  /// last end so far or a vertex still to come, whose in-edges come from the vertices the actors
  /// and groups point at now (the frontier) or from vertices still to come. From any vertex,
  /// the walk back is a function of that vertex and the start: so it reads the frontier's
  /// vertices, and, for each open start, the walks back from the frontier and from the groups'
  /// last ends (each vertex on them after the start with its in-edges, and, for the one step
  /// that looks two edges back, its predecessors' in-edges too). The rest goes.
  void prune(const std::vector<std::int64_t>& open_starts) {
    const std::size_t n = nodes.size();
    enum : std::uint8_t { kDrop, kKeep, kKeepWithEdges };
    std::vector<std::uint8_t> keep(n, kDrop);
    std::vector<std::int64_t> frontier;
    auto mark = [&](std::int64_t v) {
      if (v == kNone) return;
      if (keep[static_cast<std::size_t>(v)] == kDrop) keep[static_cast<std::size_t>(v)] = kKeep;
      frontier.push_back(v);
    };
    for (const Actor& a : actors) {
      for (const std::int64_t v : {a.last_app, a.last_hb, a.hb_link, a.member_epoch}) mark(v);
      for (const Pending& p : a.pending) {
        mark(p.send);
        mark(p.app_at_send);
      }
    }
    for (Group& gr : groups) {
      for (const std::int64_t v :
           {gr.last, gr.initial_prepare, gr.open, gr.last_ta, gr.inherit_send})
        mark(v);
      // A later rebalance ends at the last end so far or at one still to come.
      if (gr.ends.size() > 1) gr.ends.erase(gr.ends.begin(), gr.ends.end() - 1);
      if (!gr.ends.empty()) mark(gr.ends.back());
    }
    std::sort(frontier.begin(), frontier.end());
    frontier.erase(std::unique(frontier.begin(), frontier.end()), frontier.end());
    auto with_edges = [&](std::size_t v) {
      keep[v] = kKeepWithEdges;
      for (auto [ei, ee] = boost::in_edges(v, g); ei != ee; ++ei) {
        const std::size_t s = boost::source(*ei, g);
        if (keep[s] == kDrop) keep[s] = kKeep;
      }
    };
    // One walk for all the open starts, from the earliest: the walk back for a start S goes, at
    // each vertex after S, to the vertex step_back() picks, which is always the predecessor
    // pick() chose or its runner-up, the latter only where the runner-up is after S (so after
    // the earliest start as well). This walk follows both wherever either can be taken for some
    // open start, so it passes every vertex each start's own walk passes, and keeps (with their
    // in-edges) every vertex any of them reads; each vertex once, not once per open start (at
    // 10,000 members dozens of consumer-protocol rebalances are open at once).
    if (!open_starts.empty()) {
      const std::int64_t start = *std::min_element(open_starts.begin(), open_starts.end());
      std::vector<char> seen(n, 0);
      std::vector<std::int64_t> todo(frontier.rbegin(), frontier.rend());
      while (!todo.empty()) {
        const std::int64_t cur = todo.back();
        todo.pop_back();
        if (cur == kNone || t_of(cur) <= start || seen[static_cast<std::size_t>(cur)] != 0)
          continue;
        const auto c = static_cast<std::size_t>(cur);
        seen[c] = 1;
        with_edges(c);
        // The step may look at a predecessor's own predecessors.
        for (auto [ei, ee] = boost::in_edges(c, g); ei != ee; ++ei) {
          const std::size_t s = boost::source(*ei, g);
          if (nodes[s].t > start && keep[s] != kKeepWithEdges) with_edges(s);
        }
        const Pick p = pick(cur);
        if (p.v == kNone) continue;
        todo.push_back(p.v);
        if (runner_up_taken(p, start)) todo.push_back(p.runner_up);
      }
    }
    std::vector<std::int64_t> to(n, kNone);
    std::size_t kept = 0;
    for (std::size_t v = 0; v < n; ++v)
      if (keep[v] != kDrop) to[v] = static_cast<std::int64_t>(kept++);
    Graph ng(kept);
    std::vector<Node> nn;
    nn.reserve(kept);
    for (std::size_t v = 0; v < n; ++v) {
      if (keep[v] == kDrop) continue;
      nn.push_back(nodes[v]);
      if (keep[v] != kKeepWithEdges) continue;
      // In their order: of two edges from one source, pick() takes the first.
      for (auto [ei, ee] = boost::in_edges(v, g); ei != ee; ++ei)
        boost::add_edge(static_cast<std::size_t>(to[boost::source(*ei, g)]),
                        static_cast<std::size_t>(to[v]), g[*ei], ng);
    }
    g = std::move(ng);
    nodes = std::move(nn);
    auto re = [&](std::int64_t& v) {
      if (v != kNone) v = to[static_cast<std::size_t>(v)];
    };
    for (Actor& a : actors) {
      for (std::int64_t* v : {&a.last_app, &a.last_hb, &a.hb_link, &a.member_epoch}) re(*v);
      for (Pending& p : a.pending) {
        re(p.send);
        re(p.app_at_send);
      }
    }
    for (Group& gr : groups) {
      for (std::int64_t* v :
           {&gr.last, &gr.initial_prepare, &gr.open, &gr.last_ta, &gr.inherit_send})
        re(*v);
      for (std::int64_t& v : gr.ends) re(v);
    }
    prune_at = 2 * kept + CriticalPaths::kPruneSlack;
  }

  /// The path; with `text` false its steps carry no text (`actor`, `event`, `what` and the
  /// waited-for request's `actor` and `what` empty): remember() keeps vertices, not text, and
  /// writes a few hundred of a path's thousands of steps.
  CriticalPath find(const std::string& group_name, std::int64_t start, std::int64_t end,
                    bool text = true) const {
    CriticalPath out;
    const std::int64_t total = std::max<std::int64_t>(end - start, 0);
    const auto git = group_ids.find(group_name);
    std::int64_t cur = kNone;
    if (git != group_ids.end()) {
      const auto& ends = groups[git->second].ends;
      // The last vertex at or before the end: the last member's assignment (or the group's
      // state) that closed the rebalance.
      const auto it = std::upper_bound(
          ends.begin(), ends.end(), end,
          [&](std::int64_t t, std::int64_t v) { return t < nodes[static_cast<std::size_t>(v)].t; });
      if (it != ends.begin() && nodes[static_cast<std::size_t>(*(it - 1))].t > start)
        cur = *(it - 1);
    }
    if (cur == kNone || total == 0) {
      out.causes_us[static_cast<std::size_t>(Cause::Other)] = total;
      return out;
    }
    struct Back {
      std::int64_t v;
      std::int64_t via = kNone;  // the request this vertex waited for (a wait split)
      Cause cause = Cause::Other, via_cause = Cause::Other;
    };
    std::vector<Back> chain{{cur}};
    while (t_of(cur) > start) {
      const Step st = step_back(cur, start);
      if (st.next == kNone) break;
      chain.back().cause = st.cause;
      chain.back().via = st.via;
      chain.back().via_cause = st.via_cause;
      chain.push_back({st.next});
      cur = st.next;
    }
    std::reverse(chain.begin(), chain.end());
    auto clip = [&](std::int64_t t) { return std::clamp(t, start, end); };
    auto add_part = [&](PathStep& s, Cause c, std::int64_t us) {
      out.causes_us[static_cast<std::size_t>(c)] += us;
      if (us > 0 || s.causes.empty()) s.causes.emplace_back(c, us);
    };
    // Before the path's first vertex: if it is a heartbeat with nothing before it in the graph
    // (the heartbeats before it changed nothing), the member was waiting for that heartbeat.
    const std::int64_t first_t = t_of(chain.front().v);
    const bool lead_wait =
        first_t > start &&
        nodes[static_cast<std::size_t>(chain.front().v)].kind == Kind::HeartbeatSend;
    for (std::size_t i = 0; i < chain.size(); ++i) {
      const Node& n = nodes[static_cast<std::size_t>(chain[i].v)];
      PathStep s;
      s.node = static_cast<std::size_t>(chain[i].v);
      s.t_us = n.t;
      if (text) {
        s.actor = actors[n.actor].name;
        s.event = types[n.type];
        s.what = what(n);
      }
      if (i == 0 && clip(first_t) > start)
        add_part(s, lead_wait ? Cause::HeartbeatWait : Cause::Other, clip(first_t) - start);
      if (i > 0) {
        // The edge from the previous step into this one, for the part inside the rebalance.
        const Back& b = chain[i];
        const std::int64_t from = clip(t_of(chain[i - 1].v));
        if (b.via != kNone) {
          const std::int64_t mid = std::max(from, clip(t_of(b.via)));
          add_part(s, Cause::HeartbeatWait, mid - from);
          add_part(s, b.via_cause, clip(n.t) - mid);
          const Node& w = nodes[static_cast<std::size_t>(b.via)];
          s.waited_for = static_cast<std::size_t>(b.via);
          s.waited_for_t_us = w.t;
          if (text) {
            s.waited_for_actor = actors[w.actor].name;
            s.waited_for_what = what(w);
          }
        } else {
          add_part(s, b.cause, clip(n.t) - from);
        }
      }
      out.steps.push_back(std::move(s));
    }
    out.causes_us[static_cast<std::size_t>(Cause::Other)] +=
        end - clip(out.steps.back().t_us);  // after the last
    return out;
  }
};

std::vector<bool> kept_steps(const std::vector<PathStep>& steps) {
  std::vector<bool> keep(steps.size(), true);
  if (steps.size() <= kMaxPathSteps) return keep;
  // Each step's time on the path; the first and the last step are always kept.
  const auto time_of = [](const PathStep& s) {
    std::int64_t us = 0;
    for (const auto& part : s.causes) us += part.second;
    return us;
  };
  std::vector<std::size_t> order;
  for (std::size_t i = 1; i + 1 < steps.size(); ++i) order.push_back(i);
  // The longest first; ties by position (deterministic).
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return time_of(steps[a]) > time_of(steps[b]);
  });
  std::fill(keep.begin(), keep.end(), false);
  keep.front() = keep.back() = true;
  for (std::size_t k = 0; k < order.size() && k + 2 < kMaxPathSteps; ++k)
    if (time_of(steps[order[k]]) > 0) keep[order[k]] = true;
  return keep;
}

CriticalPaths::CriticalPaths() : impl_(std::make_unique<Impl>()) {}
CriticalPaths::~CriticalPaths() = default;

void CriticalPaths::on_event(std::int64_t t_us, const rsim::trace::Event& e) {
  impl_->on_event(t_us, e);
}
void CriticalPaths::set_assignment_interval_ms(std::optional<std::int64_t> ms) {
  impl_->assignment_interval_ms = ms;
}

CriticalPath CriticalPaths::find(const std::string& group, std::int64_t start_us,
                                 std::int64_t end_us) const {
  return impl_->find(group, start_us, end_us);
}

void CriticalPaths::remember(const std::string& group, std::int64_t start_us, std::int64_t end_us) {
  impl_->remember(group, start_us, end_us);
}

ojson CriticalPaths::to_json(const std::string& group, std::int64_t start_us,
                             std::int64_t end_us) const {
  const CriticalPath p = impl_->path(group, start_us, end_us);
  auto ms = [](std::int64_t us) { return static_cast<double>(us) / 1000.0; };
  ojson causes = ojson::object();
  for (std::size_t i = 0; i < kCauseCount; ++i)
    causes[std::string(cause_names()[i])] = ms(p.causes_us[i]);
  // A long path (thousands of steps: a storm, a long wait polled through) keeps its first and
  // last step and the steps that carry the causes' time, at most kMaxPathSteps of them (the
  // longest); `steps_elided` counts the others. `causes` stays exact.
  const std::vector<bool> keep = kept_steps(p.steps);
  std::size_t elided = p.steps_elided;  // a remembered path's, left out already
  ojson steps = ojson::array();
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    if (!keep[i]) {
      ++elided;
      continue;
    }
    const PathStep& s = p.steps[i];
    ojson j;
    j["t_us"] = s.t_us;
    j["actor"] = s.actor;
    j["event"] = s.event;
    j["what"] = s.what;
    if (!s.causes.empty()) {
      ojson c = ojson::object();
      for (const auto& [cause, us] : s.causes)
        c[std::string(cause_names()[static_cast<std::size_t>(cause)])] = ms(us);
      j["causes"] = std::move(c);
    }
    if (s.waited_for)
      j["waited_for"] = {
          {"t_us", s.waited_for_t_us}, {"actor", s.waited_for_actor}, {"what", s.waited_for_what}};
    steps.push_back(std::move(j));
  }
  // The dominant cause: the one with the most time (ties: the first in cause order); null when
  // the rebalance took no time.
  std::size_t most = 0;
  for (std::size_t i = 1; i < kCauseCount; ++i)
    if (p.causes_us[i] > p.causes_us[most]) most = i;
  const ojson dominant =
      p.causes_us[most] > 0 ? ojson(std::string(cause_names()[most])) : ojson(nullptr);
  ojson out{{"causes", std::move(causes)}, {"dominant", dominant}, {"steps", std::move(steps)}};
  if (elided > 0) out["steps_elided"] = elided;
  return out;
}

void CriticalPaths::prune(const std::vector<std::int64_t>& open_starts_us) {
  std::vector<std::int64_t> starts = open_starts_us;
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  impl_->prune(starts);
}
bool CriticalPaths::prune_due() const {
  return impl_->nodes.size() >= impl_->prune_at;
}

std::size_t CriticalPaths::vertices() const {
  return boost::num_vertices(impl_->g);
}
std::size_t CriticalPaths::edges() const {
  return boost::num_edges(impl_->g);
}
bool CriticalPaths::has_edge(std::size_t a, std::size_t b) const {
  if (a >= vertices() || b >= vertices()) return false;
  return boost::edge(a, b, impl_->g).second;
}

}  // namespace reports
