// Fifo<T>: order across the ring's wrap and growth, no memory while empty, slots reused.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/fifo.hpp"

TEST_CASE(
    "fifo: an empty queue holds no slot; elements come out in the order they went in, across wrap "
    "and growth") {
  sim::Fifo<int> q;
  CHECK(q.capacity() == 0);
  CHECK(q.empty());
  // The ring grows 1, 2, 4 slots for 3 elements; 2 out, then 5 in: the ring of 4 wraps (head
  // at 2) and then grows to 8 with the 6 elements in order.
  q.push_back(1);
  CHECK(q.capacity() == 1);
  for (int i = 2; i <= 3; ++i) q.push_back(i);
  CHECK(q.capacity() == 4);
  std::vector<int> out;
  for (int i = 0; i < 2; ++i) {
    out.push_back(q.front());
    q.pop_front();
  }
  for (int i = 4; i <= 8; ++i) q.push_back(i);
  CHECK(q.size() == 6);
  CHECK(q.capacity() == 8);
  while (!q.empty()) {
    out.push_back(q.front());
    q.pop_front();
  }
  CHECK(out == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("fifo: a queue that never holds more than 4 keeps its 4 slots for 1,000 pushes") {
  sim::Fifo<std::pair<std::uint32_t, std::string>> q;
  std::uint32_t next = 0;
  std::uint32_t expected = 0;
  for (int round = 0; round < 250; ++round) {
    for (int k = 0; k < 4; ++k)
      q.emplace_back(next++, std::string(40, 'x'));  // past the short-string buffer
    for (int k = 0; k < 4; ++k) {
      CHECK(q.front().first == expected++);
      q.pop_front();
    }
  }
  CHECK(next == 1000);
  CHECK(q.capacity() == 4);
}

TEST_CASE("fifo: pop_front and clear free what the element held") {
  sim::Fifo<std::shared_ptr<int>> q;
  auto p = std::make_shared<int>(7);
  q.push_back(p);
  q.push_back(p);
  CHECK(p.use_count() == 3);
  q.pop_front();
  CHECK(p.use_count() == 2);
  q.clear();
  CHECK(p.use_count() == 1);
  CHECK(q.empty());
}
