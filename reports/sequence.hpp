// The message sequence of a time window, in the order things happened: requests, responses,
// and notes (group state changes, callbacks, assignment changes). Shared by the HTML
// report's sequence view and the Mermaid writer, both pure functions of the timeline.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "reports/timeline.hpp"

namespace reports {

struct SequenceRow {
  std::int64_t t_us = 0;
  enum class Kind { Request, Response, Note } kind = Kind::Note;
  std::string from;  // a participant; for a note, the participant it is over
  std::string to;
  std::string text;
  bool error = false;  // a response with an error other than NONE
};

struct Sequence {
  std::vector<std::string> participants;  // consumers in lane order, then brokers
  std::vector<SequenceRow> rows;
  std::size_t omitted = 0;  // rows left out beyond `max_rows`
};

/// Everything between the consumers of `group` (every group when empty) and their
/// coordinators in [from_us, to_us], at most `max_rows` rows.
Sequence sequence_between(const Timeline& t, const std::string& group, std::int64_t from_us, std::int64_t to_us,
                          std::size_t max_rows);

}  // namespace reports
