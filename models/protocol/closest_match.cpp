#include "models/protocol/closest_match.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <utility>

namespace rsim {

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string w = lower(word);
  // Levenshtein distance, case-insensitive.
  const auto distance = [&](const std::string& c) {
    std::vector<std::size_t> prev(c.size() + 1);
    std::vector<std::size_t> cur(c.size() + 1);
    for (std::size_t j = 0; j <= c.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= w.size(); ++i) {
      cur[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j) {
        const std::size_t sub = prev[j - 1] + (w[i - 1] == c[j - 1] ? 0 : 1);
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      }
      std::swap(prev, cur);
    }
    return prev[c.size()];
  };
  // Short words tolerate fewer edits, so "do" does not suggest "op".
  const std::size_t limit = w.size() <= 3 ? 1 : w.size() <= 6 ? 2 : 3;
  std::string best;
  std::size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    const std::size_t d = distance(lower(c));
    if (d < best_d && d < w.size()) {  // replacing every letter is no suggestion
      best_d = d;
      best = c;
    }
  }
  // A truncated name ("classic" for "classic-eager") is far in edits but obvious.
  if (best.empty() && w.size() >= 3) {
    for (const auto& c : candidates) {
      if (lower(c).starts_with(w)) return c;
    }
  }
  return best;
}

}  // namespace rsim
