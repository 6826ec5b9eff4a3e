// Which of a group's rebalances (in start order) are still open at a time t: a max tree over
// their end times. A walk back over the rebalances started before t, stopped at the first whose
// prefix of ends lies before t, is linear per question as soon as one rebalance never completes
// (its end, the end of the run, keeps every later prefix open): the tree answers in O(log n)
// per rebalance found (issue 41, `report` linear in the trace).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace reports {

class MaxTree {
 public:
  MaxTree() = default;
  explicit MaxTree(const std::vector<std::int64_t>& values) : n_(values.size()) {
    size_ = 1;
    while (size_ < n_) size_ *= 2;
    tree_.assign(2 * size_, INT64_MIN);
    for (std::size_t i = 0; i < n_; ++i) tree_[size_ + i] = values[i];
    for (std::size_t i = size_ - 1; i >= 1; --i)
      tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }

  /// The largest k < before with value[k] >= t, or -1. `steps` counts the nodes visited.
  std::ptrdiff_t last_at_least(std::size_t before, std::int64_t t, std::uint64_t& steps) const {
    if (n_ == 0) return -1;
    return last(1, 0, size_, std::min(before, n_), t, steps);
  }

  /// Calls f(k) for every k < before with value[k] > t, in increasing k. `steps` counts the
  /// nodes visited (O(log n) per k found).
  template <class F>
  void each_above(std::size_t before, std::int64_t t, std::uint64_t& steps, F&& f) const {
    if (n_ == 0) return;
    each(1, 0, size_, std::min(before, n_), t, steps, f);
  }

 private:
  std::ptrdiff_t last(std::size_t node, std::size_t lo, std::size_t hi, std::size_t before,
                      std::int64_t t, std::uint64_t& steps) const {
    ++steps;
    if (lo >= before || tree_[node] < t) return -1;
    if (hi - lo == 1) return static_cast<std::ptrdiff_t>(lo);
    const std::size_t mid = lo + (hi - lo) / 2;
    const std::ptrdiff_t right = last(2 * node + 1, mid, hi, before, t, steps);
    return right >= 0 ? right : last(2 * node, lo, mid, before, t, steps);
  }

  template <class F>
  void each(std::size_t node, std::size_t lo, std::size_t hi, std::size_t before, std::int64_t t,
            std::uint64_t& steps, F& f) const {
    ++steps;
    if (lo >= before || tree_[node] <= t) return;
    if (hi - lo == 1) {
      f(lo);
      return;
    }
    const std::size_t mid = lo + (hi - lo) / 2;
    each(2 * node, lo, mid, before, t, steps, f);
    each(2 * node + 1, mid, hi, before, t, steps, f);
  }

  std::size_t n_ = 0, size_ = 1;
  std::vector<std::int64_t> tree_;
};

}  // namespace reports
