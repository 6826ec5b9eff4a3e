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
  bool error = false;   // a response with an error other than NONE and other than a normal round
                        // trip (JoinGroup's MEMBER_ID_REQUIRED: the member retries with its id)
  std::string payload;  // the tail of `text` that is the message's payload ("member_epoch=3 ...")
};

/// A response error that is a normal step of the protocol, not a failure: JoinGroup's
/// MEMBER_ID_REQUIRED (KIP-394), which every new classic member gets once.
bool normal_round_trip(const std::string& api, const std::string& error);

struct Sequence {
  std::vector<std::string> participants;  // consumers in lane order, then brokers
  std::vector<SequenceRow> rows;
  std::size_t omitted = 0;  // rows left out beyond `max_rows`
};

/// Everything between the consumers of `group` (every group when empty) and their
/// coordinators in [from_us, to_us], at most `max_rows` rows.
Sequence sequence_between(const Timeline& t, const std::string& group, std::int64_t from_us,
                          std::int64_t to_us, std::size_t max_rows);

}  // namespace reports
