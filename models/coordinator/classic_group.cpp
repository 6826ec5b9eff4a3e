#include "models/coordinator/classic_group.hpp"

#include <algorithm>

namespace rsim {

bool classic_transition_allowed(ClassicGroupState from, ClassicGroupState to) {
  using S = ClassicGroupState;
  switch (to) {
    case S::Empty: return from == S::PreparingRebalance;
    case S::PreparingRebalance:
      return from == S::Stable || from == S::CompletingRebalance || from == S::Empty;
    case S::CompletingRebalance: return from == S::PreparingRebalance;
    case S::Stable: return from == S::CompletingRebalance;
    case S::Dead: return true;
  }
  return false;
}

bool ClassicGroup::has_all_members_joined() const {
  if (!pending_join_members.empty()) return false;
  return std::all_of(members.begin(), members.end(),
                     [](const auto& kv) { return kv.second.awaiting_join.has_value(); });
}

std::int32_t ClassicGroup::rebalance_timeout_ms() const {
  std::int32_t t = 0;
  for (const auto& [id, m] : members) t = std::max(t, m.rebalance_timeout_ms);
  return t;
}

std::set<std::string> ClassicGroup::candidate_protocols() const {
  // The protocols every member supports: the first member's, narrowed member by member in place
  // (no set built per member; once none is left, none will be: every JoinGroup asks this).
  std::set<std::string> candidates;
  bool first = true;
  for (const auto& [id, m] : members) {
    if (first) {
      for (const auto& p : m.protocols) candidates.insert(p.name);
      first = false;
      continue;
    }
    for (auto it = candidates.begin(); it != candidates.end();) {
      const bool supported = std::any_of(m.protocols.begin(), m.protocols.end(),
                                         [&](const JoinGroupProtocol& p) { return p.name == *it; });
      it = supported ? std::next(it) : candidates.erase(it);
    }
    if (candidates.empty()) break;
  }
  return candidates;
}

bool ClassicGroup::supports_protocols(const std::string& type,
                                      const std::vector<JoinGroupProtocol>& ps) const {
  if (members.empty()) return !type.empty() && !ps.empty();
  if (type != protocol_type) return false;
  const auto candidates = candidate_protocols();
  return std::any_of(ps.begin(), ps.end(),
                     [&](const JoinGroupProtocol& p) { return candidates.count(p.name) > 0; });
}

std::string ClassicGroup::select_protocol() const {
  const auto candidates = candidate_protocols();
  std::map<std::string, int> votes;
  for (const auto& [id, m] : members) {
    for (const auto& p : m.protocols) {
      if (candidates.count(p.name) > 0) {
        ++votes[p.name];
        break;
      }
    }
  }
  std::string best;
  int best_votes = -1;
  for (const auto& [name, n] : votes) {  // std::map: ties resolved to the smaller name
    if (n > best_votes) {
      best = name;
      best_votes = n;
    }
  }
  return best;
}

}  // namespace rsim
