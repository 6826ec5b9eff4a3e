#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rsim {

/// A recording's member-id draws, replayed (`compare`, docs/fidelity.md finding 21). Which member
/// gets which partitions depends on the order of the members' ids, random UUIDs in Kafka: the
/// classic coordinator's `<client.id>-<UUID>` for every JoinGroup without a member id, the
/// KIP-848 and share client's own Uuid once per process. They are the run's random input, not its
/// behaviour: given a recording's ids, the simulator hands each consumer's fresh ids out in the
/// recorded order, whoever draws them (the classic coordinator, the consumer group coordinator
/// for a classic member of a consumer group, or the client itself). A consumer that needs more ids
/// than were recorded (or one with none) falls back to the seeded draw. One per World: the
/// coordinators of every broker and the clients of every incarnation share its cursors.
class MemberIdReplay {
 public:
  MemberIdReplay() = default;
  explicit MemberIdReplay(std::map<std::string, std::vector<std::string>> ids)
      : ids_(std::move(ids)) {}

  /// The next recorded member id of `consumer` (the scenario's name), or none once its recorded
  /// ids are used up.
  std::optional<std::string> next(const std::string& consumer) {
    const auto it = ids_.find(consumer);
    if (it == ids_.end()) return std::nullopt;
    std::size_t& used = used_[consumer];
    if (used >= it->second.size()) return std::nullopt;
    return it->second[used++];
  }

  /// `drawn` (the seeded draw, made in any case so that every other random stream stays where
  /// it would be), or the next recorded id of `consumer` when `replay` has one.
  static std::string replayed_or(MemberIdReplay* replay, const std::string& consumer,
                                 std::string drawn) {
    if (replay != nullptr)
      if (auto id = replay->next(consumer)) return std::move(*id);
    return drawn;
  }

 private:
  std::map<std::string, std::vector<std::string>> ids_;
  std::map<std::string, std::size_t> used_;
};

}  // namespace rsim
