#include "models/coordinator/classic_group.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace rsim {

bool classic_transition_allowed(ClassicGroupState from, ClassicGroupState to) {
  using S = ClassicGroupState;
  switch (to) {
    case S::Empty:
      return from == S::PreparingRebalance;
    case S::PreparingRebalance:
      return from == S::Stable || from == S::CompletingRebalance || from == S::Empty;
    case S::CompletingRebalance:
      return from == S::PreparingRebalance;
    case S::Stable:
      return from == S::CompletingRebalance;
    case S::Dead:
      return true;
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

namespace {

// Each distinct name of a member's list once (a name listed twice is supported once).
void count_protocols(std::map<std::string, std::int32_t>& counts,
                     const std::vector<JoinGroupProtocol>& ps, std::int32_t delta) {
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const bool seen = std::any_of(ps.begin(), ps.begin() + static_cast<std::ptrdiff_t>(i),
                                  [&](const JoinGroupProtocol& p) { return p.name == ps[i].name; });
    if (seen) continue;
    auto it = counts.try_emplace(ps[i].name, 0).first;
    it->second += delta;
    if (it->second == 0) counts.erase(it);
  }
}

}  // namespace

ClassicGroupMember& ClassicGroup::member(std::string_view id) {
  ClassicGroupMember* m = find_member(id);
  SIM_ASSERT_MSG(m != nullptr, "no member " + std::string(id));
  return *m;
}

ClassicGroupMember& ClassicGroup::add_member(ClassicGroupMember m) {
  const auto [it, inserted] = members.emplace(m.member_id, std::move(m));
  SIM_ASSERT_MSG(inserted, "a member added twice: " + it->first);
  member_index.emplace(std::string_view(it->first), &it->second);
  count_protocols(supported_protocols, it->second.protocols, +1);
  return it->second;
}

void ClassicGroup::remove_member(std::map<std::string, ClassicGroupMember>::iterator it) {
  count_protocols(supported_protocols, it->second.protocols, -1);
  member_index.erase(std::string_view(it->first));
  members.erase(it);
}

ClassicGroupMember ClassicGroup::take_member(const std::string& member_id) {
  member_index.erase(std::string_view(member_id));
  auto node = members.extract(member_id);
  SIM_ASSERT_MSG(!node.empty(), "taking a member that is not in the group: " + member_id);
  count_protocols(supported_protocols, node.mapped().protocols, -1);
  return std::move(node.mapped());
}

void ClassicGroup::set_protocols(ClassicGroupMember& m, std::vector<JoinGroupProtocol> protocols) {
  count_protocols(supported_protocols, m.protocols, -1);
  m.protocols = std::move(protocols);
  count_protocols(supported_protocols, m.protocols, +1);
}

std::set<std::string> ClassicGroup::candidate_protocols() const {
  // The names every member supports: O(protocols), not O(members), per JoinGroup.
  std::set<std::string> candidates;
  const auto n = static_cast<std::int32_t>(members.size());
  if (n == 0) return candidates;
  for (const auto& [name, count] : supported_protocols)
    if (count == n) candidates.insert(name);
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
