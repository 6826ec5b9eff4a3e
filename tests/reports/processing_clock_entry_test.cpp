// ProcessingClock's kept entries (entry(), and the want/own/disown calls that take one): the
// summary keeps each owned partition's entry instead of hashing (group, partition) at every
// change (SummaryBuilder::refresh_active, the ownership clock's refresh). An entry must stay the
// entry of its key for the clock's life, and a change through it must count as the same change
// through the key does. Every number below is derived by hand in the comments.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "reports/availability.hpp"

namespace {

using reports::ClockWindow;
using reports::ProcessingClock;

constexpr int kPartitions = 1000;

ProcessingClock::Key key(const std::string& group, int p) {
  return {group, "t-" + std::to_string(p)};
}

// One group g of 1,000 partitions and one live member A: wanted from 0 µs, owned and active from
// 100, inactive (a callback) 250..300, disowned at 400, the run ends at 1,000. With `kept`, every
// change goes through the entries taken at 0; else through the keys.
void drive(ProcessingClock& clock, bool kept, std::vector<ProcessingClock::State*>& entries) {
  const std::string a = "A";
  clock.live("g", +1, 0);
  for (int p = 0; p < kPartitions; ++p) entries.push_back(&clock.entry(key("g", p), 0));
  // 20,000 more keys (another group, never wanted): the table rehashes many times over.
  for (int p = 0; p < 20 * kPartitions; ++p) clock.entry(key("h", p), 0);
  for (int p = 0; p < kPartitions; ++p)
    kept ? clock.want(*entries[p], true, 0) : clock.want(key("g", p), true, 0);
  for (const auto& [t, active] : {std::pair{100, true}, {250, false}, {300, true}})
    for (int p = 0; p < kPartitions; ++p)
      kept ? clock.own(*entries[p], a, active, t) : clock.own(key("g", p), a, active, t);
  for (int p = 0; p < kPartitions; ++p)
    kept ? clock.disown(*entries[p], a, 400) : clock.disown(key("g", p), a, 400);
  clock.finish(1000);
}

}  // namespace

TEST_CASE("a processing clock's kept entries are their keys' and count as the keys do") {
  ProcessingClock by_key(ClockWindow{}), by_entry(ClockWindow{});
  std::vector<ProcessingClock::State*> key_entries, kept_entries;
  drive(by_key, false, key_entries);
  drive(by_entry, true, kept_entries);

  // Each entry kept at 0 is still its key's after 20,000 insertions, and names its key.
  for (int p = 0; p < kPartitions; ++p) {
    CHECK(&by_entry.entry(key("g", p), 1000) == kept_entries[p]);
    REQUIRE(kept_entries[p]->key != nullptr);
    CHECK(*kept_entries[p]->key == key("g", p));
  }
  for (ProcessingClock* clock : {&by_key, &by_entry}) {
    // Per partition: not processed 0..100 (no owner), 250..300 (its owner in a callback) and
    // 400..1,000 (disowned): 100 + 50 + 600 = 750 µs, the longest 600; 1,000 partitions.
    CHECK(clock->total_us() == 750 * kPartitions);
    CHECK(clock->max_us() == 600);
    // Attributed to A: 250..300 (its owner) and 400..1,000 (its last owner); 0..100 to no one.
    REQUIRE(clock->by_consumer().count("A") == 1);
    CHECK(clock->by_consumer().at("A") == 650 * kPartitions);
    // The group stops while nothing is processed: 0..100, 250..300, 400..1,000.
    CHECK(clock->stopped_us() == 750);
    CHECK(clock->max_stopped_us() == 600);
    REQUIRE(clock->stops().size() == 3);
    CHECK(clock->stops()[1].start_us == 250);
    CHECK(clock->stops()[1].end_us == 300);
    CHECK(clock->unowned("g") == kPartitions);
  }
}
