// The summary's wait of a consumer-protocol rebalance: found by a binary search over the ids'
// first eight bytes, which must order exactly as the ids themselves do.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "reports/wait_set.hpp"
#include "sim/rng.hpp"

using reports::WaitSet;

TEST_CASE("WaitSet::key_of orders as std::string compares the first eight bytes") {
  // Shorter than eight bytes, an embedded zero, bytes past 0x7f (std::string compares them as
  // unsigned char), a shared prefix of eight bytes and more.
  const std::vector<std::string> ids{"",          "a",        std::string("a\0", 2),
                                     "ab",        "abcdefgh", "abcdefghX",
                                     "abcdefghY", "abcdefgi", "\x7f",
                                     "\x80",      "\xff\xff", "Zz",
                                     "g-c1-7f3"};
  for (const auto& a : ids)
    for (const auto& b : ids) {
      CAPTURE(a);
      CAPTURE(b);
      const std::uint64_t ka = WaitSet::key_of(a), kb = WaitSet::key_of(b);
      // Different keys order as the strings; equal keys leave the order to the strings.
      if (ka != kb) CHECK((ka < kb) == (a < b));
      if (a.compare(0, 8, b, 0, 8) != 0 && a.size() >= 8 && b.size() >= 8) CHECK(ka != kb);
    }
}

TEST_CASE("WaitSet::find agrees with a std::set over 3,000 random ids and removals") {
  sim::Rng rng(7, "wait-set");
  // Few letters and lengths around eight, so that many ids share their first eight bytes.
  const std::string alphabet = std::string("ab\x80\xff", 4);
  std::set<std::string> all;
  while (all.size() < 3000) {
    std::string id;
    const auto len = rng.next() % 13;
    for (std::uint64_t i = 0; i < len; ++i) id += alphabet[rng.next() % alphabet.size()];
    all.insert(id);
  }
  WaitSet wait;
  for (const auto& id : all) wait.push_back(&id);  // in id order, as a bump fills it
  std::set<std::string> waiting = all;
  std::vector<std::string> ids(all.begin(), all.end());
  for (int step = 0; step < 3000; ++step) {
    const std::string& id = ids[rng.next() % ids.size()];
    const std::string copy = id;  // another string with the same bytes
    const std::size_t i = wait.find(copy);
    REQUIRE((i != WaitSet::npos) == (waiting.count(id) > 0));
    if (i != WaitSet::npos) {
      REQUIRE(&wait.at(i) == &*all.find(id));  // the pointer it was given
      if (rng.next() % 2 == 0) {
        wait.erase_at(i);
        waiting.erase(id);
      }
    }
    // Ids never put in the wait are not found.
    REQUIRE(wait.find(copy + "c") == WaitSet::npos);
  }
  CHECK(wait.empty() == waiting.empty());
  CHECK(waiting.size() < all.size());
}
