// "Did you mean ...?": the suggestion every input check makes for a misspelled key or name (the
// scenario loader's keys and verbs, Kafka config keys and values).
#pragma once
#include <string>
#include <vector>

namespace rsim {

/// The best match for `word` among `candidates` by edit distance, or "" if none is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace rsim
