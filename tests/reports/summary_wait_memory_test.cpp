// The summary's waits stay bounded by the group, not by the run: a consumer-protocol rebalance
// holds the member ids it waits for only while it is open, and the members it notes for its next
// look never outgrow that wait, even when its group goes long without settling.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/trace/trace_jsonl.hpp"
#include "reports/summary.hpp"

namespace {

// Feeds trace lines to a live summary sink, as a run's bus would.
struct Feed {
  reports::SummarySink sink{reports::SummaryInputs{}};
  rsim::trace::ReadStorage storage;
  void line(const std::string& l) {
    storage.clear();
    sim::SimTime t{};
    const rsim::trace::Event e = rsim::trace::parse_jsonl(l, storage, t);
    sink.on_event(t, e);
  }
  void start() {
    line(
        R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"consumer","seed":1,"duration_ms":1000})");
  }
  /// Ends the run at `end_us`: its summary must hold one rebalance, begun at `start_us` and
  /// completed at `completed_us`.
  void end_with_one_rebalance(std::int64_t end_us, std::int64_t start_us,
                              std::int64_t completed_us) {
    line(fmt::format(R"({{"t_us":{},"type":"run.end"}})", end_us));
    const auto s = sink.finish();
    REQUIRE(s["rebalances"].size() == 1);
    CHECK(s["rebalances"][0]["start_us"] == start_us);
    CHECK(s["rebalances"][0]["end_us"] == completed_us);
    CHECK(s["rebalances"][0]["completed"] == true);
  }
  void bump(std::int64_t t_us, const std::string& group, std::int64_t epoch) {
    line(fmt::format(
        R"({{"t_us":{},"type":"group.epoch","group":"{}","epoch":{},"assignment_epoch":{},"members":[],"reason":"bump {}"}})",
        t_us, group, epoch, epoch, epoch));
  }
  // The coordinator's record of `member` at `epoch`: state 0 is STABLE, 1 UNREVOKED_PARTITIONS.
  void member(std::int64_t t_us, const std::string& group, const std::string& member,
              std::int64_t epoch, int state) {
    line(fmt::format(
        R"({{"t_us":{},"type":"record","partition":0,"offset":0,"record":"ConsumerGroupCurrentMemberAssignment","tombstone":false,"group":"{}","member_id":"{}","consumer":"{}","member_epoch":{},"previous_member_epoch":{},"state":{},"assigned":[],"pending_revocation":[]}})",
        t_us, group, member, member, epoch, epoch - 1, state));
  }
};

std::string member_id(const std::string& group, int i) {
  return fmt::format("{}-member-{:03}", group, i);
}

}  // namespace

TEST_CASE(
    "a completed rebalance gives back its wait: 100 epoch bumps of a 200-member group hold one "
    "wait") {
  Feed f;
  f.start();
  std::int64_t t = 1000;
  for (int i = 0; i < 200; ++i) f.member(t, "g", member_id("g", i), 1, 0);
  std::size_t most = 0;
  for (int epoch = 2; epoch <= 101; ++epoch) {
    t += 1000;
    f.bump(t, "g", epoch);
    most = std::max(most, f.sink.retained_wait_entries());
    t += 1000;
    for (int i = 0; i < 200; ++i) f.member(t, "g", member_id("g", i), epoch, 0);
    most = std::max(most, f.sink.retained_wait_entries());
  }
  f.line(fmt::format(R"({{"t_us":{},"type":"run.end"}})", t + 1000));
  // The open rebalance's 200 slots and, at most, one note per slot (without giving waits back,
  // 100 rebalances of 200 slots each: 20,000).
  CHECK(most <= 400);
  CHECK(f.sink.retained_wait_entries() == 0);
  const auto s = f.sink.finish();
  // Every bump was a rebalance of its own, completed when the last member reached its epoch.
  REQUIRE(s["rebalances"].size() == 100);
  CHECK(s["rebalances"][0]["start_us"] == 2000);
  CHECK(s["rebalances"][0]["end_us"] == 3000);
  CHECK(s["rebalances"][99]["start_us"] == 200000);
  CHECK(s["rebalances"][99]["end_us"] == 201000);
  for (const auto& r : s["rebalances"]) CHECK(r["completed"] == true);
}

TEST_CASE("a rebalance that does not settle notes no more members than it waits for") {
  // Group h's rebalance waits for its 50 members, one stuck in UNREVOKED_PARTITIONS, and h sees
  // nothing else: it never settles. Group g's 200 members change 100 times meanwhile; each change
  // is noted for every open rebalance. h's notes stop at its 50 slots and it looks at its whole
  // wait instead, which finds the same members reconciled.
  Feed f;
  f.start();
  std::int64_t t = 1000;
  for (int i = 0; i < 50; ++i) f.member(t, "h", member_id("h", i), 1, 0);
  for (int i = 0; i < 200; ++i) f.member(t, "g", member_id("g", i), 1, 0);
  t += 1000;
  f.bump(t, "h", 2);
  t += 1000;
  f.member(t, "h", member_id("h", 0), 2, 1);  // stuck
  for (int i = 1; i < 50; ++i) f.member(t, "h", member_id("h", i), 2, 0);
  std::size_t most = 0;
  for (int round = 0; round < 100; ++round) {
    t += 1000;
    for (int i = 0; i < 200; ++i) f.member(t, "g", member_id("g", i), 1, round % 2);
    most = std::max(most, f.sink.retained_wait_entries());
  }
  // h's 50 slots and at most 50 notes (without the cap: 20,000 notes).
  CHECK(most <= 100);
  // The stuck member reaches its epoch: h's rebalance completes then, and not before.
  t += 1000;
  f.member(t, "h", member_id("h", 0), 2, 0);
  f.end_with_one_rebalance(t + 1000, 2000, t);
  CHECK(f.sink.retained_wait_entries() == 0);
}

namespace {
// A bump before the target of the previous one was computed (no `assignment_epoch`): the summary
// folds it into the rebalance in progress, as a join storm's bumps are.
void folded_bump(Feed& f, std::int64_t t_us, const std::string& group, std::int64_t epoch) {
  f.line(fmt::format(
      R"({{"t_us":{},"type":"group.epoch","group":"{}","epoch":{},"members":[],"reason":"bump {}"}})",
      t_us, group, epoch, epoch));
}
}  // namespace

TEST_CASE(
    "a join storm folded into one rebalance: 400 joins, each bumping the epoch before any "
    "target, complete when the last member reaches the last epoch, not before") {
  // Each of 400 members joins (its record at epoch 1) and bumps the group's epoch at once, before
  // any target: one rebalance, its wait refilled at every bump. At a bump nobody is at the new
  // epoch, so the summary looks at nobody then (a walk of the whole wait at each bump cost
  // 1 + 2 + ... + 400 = 80,200 looks; docs/performance.md, "Growth in members"), yet nobody may
  // be taken for reconciled before reaching the last epoch.
  constexpr int n = 400;
  Feed f;
  f.start();
  std::int64_t t = 1000;
  for (int i = 0; i < n; ++i) {
    t += 1000;
    f.member(t, "g", member_id("g", i), 1, 0);
    folded_bump(f, t, "g", i + 2);
  }
  // All but one reach the last epoch, n + 1: the rebalance still waits.
  t += 1000;
  for (int i = 1; i < n; ++i) f.member(t, "g", member_id("g", i), n + 1, 0);
  // The last one reaches it later: the rebalance completes then.
  t += 1000;
  f.member(t, "g", member_id("g", 0), n + 1, 0);
  f.end_with_one_rebalance(t + 1000, 2000, t);
}

TEST_CASE(
    "at a bump, a member already at the new epoch or away (epoch -2) is found reconciled without "
    "another change") {
  SUBCASE("every member's record at the new epoch came before the bump: done at the bump") {
    Feed f;
    f.start();
    for (int i = 0; i < 3; ++i) f.member(1000, "g", member_id("g", i), 1, 0);
    for (int i = 0; i < 3; ++i) f.member(2000, "g", member_id("g", i), 2, 0);
    f.bump(2000, "g", 2);
    f.end_with_one_rebalance(5000, 2000, 2000);
  }
  SUBCASE("a static member's temporary leave (epoch -2) is not waited for") {
    Feed f;
    f.start();
    for (int i = 0; i < 3; ++i) f.member(1000, "g", member_id("g", i), 1, 0);
    // Member 2 leaves for a while (a static member's temporary leave: epoch -2).
    f.line(
        R"({"t_us":1500,"type":"record","partition":0,"offset":0,"record":"ConsumerGroupCurrentMemberAssignment","tombstone":false,"group":"g","member_id":"g-member-002","consumer":"g-member-002","member_epoch":-2,"previous_member_epoch":1,"state":0,"assigned":[],"pending_revocation":[]})");
    f.bump(2000, "g", 2);
    for (int i = 0; i < 2; ++i) f.member(3000, "g", member_id("g", i), 2, 0);
    f.end_with_one_rebalance(5000, 2000, 3000);
  }
}

TEST_CASE(
    "the members' index stays exact through joins, epoch changes, fencing and a rejoin, and the "
    "wait found through it completes each rebalance when its last member reconciles") {
  // The summary keeps each group's members in id order with their epochs and dense numbers
  // (what a bump's wait is filled from) and finds a noted member by its dense number: after
  // every line the index must hold exactly the members the records left, and the rebalances end
  // at the instants a lookup by id gave.
  Feed f;
  f.start();
  const auto step = [&f](const std::string& l) {
    f.line(l);
    REQUIRE(f.sink.member_index_consistent());
  };
  const auto record = [&](std::int64_t t_us, const std::string& group, const std::string& id,
                          std::int64_t epoch, int state) {
    f.member(t_us, group, id, epoch, state);
    REQUIRE(f.sink.member_index_consistent());
  };
  const auto fence = [&](std::int64_t t_us, const std::string& group, const std::string& id) {
    step(fmt::format(
        R"({{"t_us":{},"type":"record","partition":0,"offset":0,"record":"ConsumerGroupCurrentMemberAssignment","tombstone":true,"group":"{}","member_id":"{}"}})",
        t_us, group, id));
  };
  // Six members of g and three of h join in an order that is not their ids'.
  for (const int i : {3, 0, 5, 1, 4, 2}) record(1000, "g", member_id("g", i), 1, 0);
  for (const int i : {2, 0, 1}) record(1000, "h", member_id("h", i), 1, 0);
  // g's epoch 2: members 0 to 3 reach it, member 4 is fenced, member 5 is still at 1.
  step(
      R"({"t_us":2000,"type":"group.epoch","group":"g","epoch":2,"assignment_epoch":2,"members":[],"reason":"bump 2"})");
  for (int i = 0; i < 4; ++i) record(3000, "g", member_id("g", i), 2, 0);
  fence(3000, "g", member_id("g", 4));
  CHECK(f.sink.retained_rebalances().first == 1);  // member 5 is still waited for
  // Member 5 reaches epoch 2 by its member.epoch event (no record): the rebalance ends at 4000.
  step(
      R"({"t_us":4000,"type":"member.epoch","group":"g","consumer":"g-member-005","member_id":"g-member-005","epoch":2,"state":"STABLE"})");
  step(
      R"({"t_us":4500,"type":"member.epoch","group":"h","consumer":"h-member-000","member_id":"h-member-000","epoch":1,"state":"STABLE"})");
  CHECK(f.sink.retained_rebalances().first == 0);
  // The fenced member rejoins with its old id (its dense number again); g's epoch 3 waits for it
  // and for member 0, which stays in UNREVOKED_PARTITIONS (state 1) until 7000.
  record(5000, "g", member_id("g", 4), 2, 0);
  step(
      R"({"t_us":5500,"type":"group.epoch","group":"g","epoch":3,"assignment_epoch":3,"members":[],"reason":"bump 3"})");
  for (const int i : {1, 2, 3, 5}) record(6000, "g", member_id("g", i), 3, 0);
  record(6000, "g", member_id("g", 0), 3, 1);
  record(6500, "g", member_id("g", 4), 3, 0);
  CHECK(f.sink.retained_rebalances().first == 1);
  record(7000, "g", member_id("g", 0), 3, 0);
  f.line(R"({"t_us":9000,"type":"run.end"})");
  REQUIRE(f.sink.member_index_consistent());
  const auto s = f.sink.finish();
  REQUIRE(s["rebalances"].size() == 2);
  CHECK(s["rebalances"][0]["start_us"] == 2000);
  CHECK(s["rebalances"][0]["end_us"] == 4000);
  CHECK(s["rebalances"][1]["start_us"] == 5500);
  CHECK(s["rebalances"][1]["end_us"] == 7000);
  for (const auto& r : s["rebalances"]) CHECK(r["completed"] == true);
}
