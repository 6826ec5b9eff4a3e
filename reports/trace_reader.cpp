#include "reports/trace_reader.hpp"

#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

namespace reports {

bool LineReader::next(std::string_view& line) {
  // The lines as std::getline() splits them, read in blocks (a line-at-a-time getline cost as
  // much as scanning the line): `buffer_` holds [begin_, end_) of what was read.
  constexpr std::size_t kBlock = 1 << 20;
  for (;;) {
    const char* data = buffer_.data();
    if (const void* nl =
            end_ > begin_ ? std::memchr(data + begin_, '\n', end_ - begin_) : nullptr) {
      const auto at = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
      line = std::string_view(data + begin_, at - begin_);
      begin_ = at + 1;
      return true;
    }
    if (eof_) {
      if (begin_ == end_) return false;
      line = std::string_view(data + begin_, end_ - begin_);  // the last line, without '\n'
      begin_ = end_;
      return true;
    }
    // Keep the partial line, then read another block after it.
    buffer_.erase(0, begin_);
    end_ -= begin_;
    begin_ = 0;
    if (buffer_.size() < end_ + kBlock) buffer_.resize(end_ + kBlock);
    in_.read(buffer_.data() + end_, static_cast<std::streamsize>(kBlock));
    const auto got = static_cast<std::size_t>(in_.gcount());
    end_ += got;
    if (got < kBlock) eof_ = true;
  }
}

TraceReader::TraceReader(std::istream& in, std::string where)
    : where_(std::move(where)), stream_(std::in_place, in) {}

TraceReader::TraceReader(std::string_view text, std::string where)
    : where_(std::move(where)), whole_(text) {}

TraceReader::TraceReader(const std::vector<std::string>& lines, std::string where)
    : where_(std::move(where)), lines_(&lines) {}

bool TraceReader::next_text() {
  if (stream_) return stream_->next(text_);
  if (lines_ != nullptr) {
    if (line_no_ >= lines_->size()) return false;
    text_ = (*lines_)[line_no_];
    return true;
  }
  if (pos_ >= whole_.size()) return false;
  std::size_t end = whole_.find('\n', pos_);
  if (end == std::string_view::npos) end = whole_.size();
  text_ = whole_.substr(pos_, end - pos_);
  pos_ = end + 1;
  return true;
}

std::string TraceReader::error(std::string_view what) const {
  return fmt::format("{}line {}: {}", where_, line_no_, what);
}

bool TraceReader::next() {
  do {
    if (!next_text()) return false;
    ++line_no_;
  } while (text_.empty());
  storage_.clear();
  try {
    storage_.line = nlohmann::ordered_json::parse(text_);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(error(fmt::format("not valid json: {}", e.what())));
  }
  const auto& l = storage_.line;
  const auto t = l.is_object() ? l.find("t_us") : l.end();
  const auto type = l.is_object() ? l.find("type") : l.end();
  if (t == l.end() || !t->is_number_integer() || type == l.end() || !type->is_string())
    throw std::runtime_error(error("needs an integer t_us and a string type"));
  t_us_ = t->get<std::int64_t>();
  try {
    event_ = rsim::trace::parse_fields(type->get_ref<const std::string&>(), l, storage_);
    // A group's members carried over a `standard` trace's joined / left: the line and the event
    // read as a `full` line's, its members sorted by name.
    if (auto* ge = std::get_if<rsim::trace::GroupEpoch>(&event_))
      members_.read(storage_.line, *ge, true);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(error(fmt::format("a field of an unexpected type: {}", e.what())));
  } catch (const std::runtime_error& e) {  // a partition that is not TOPIC-N
    throw std::runtime_error(error(e.what()));
  }
  return true;
}

rsim::trace::Event typed_event(const nlohmann::ordered_json& line,
                               rsim::trace::ReadStorage& storage) {
  storage.clear();
  return rsim::trace::parse_fields(line.at("type").get_ref<const std::string&>(), line, storage);
}

namespace {
template <std::size_t... I>
std::unordered_map<std::string_view, std::size_t> kinds(std::index_sequence<I...>) {
  std::unordered_map<std::string_view, std::size_t> m;
  (
      [&] {
        using E = std::variant_alternative_t<I, rsim::trace::Event>;
        if constexpr (!std::is_same_v<E, sim::RawTraceEvent>) m.emplace(E::kType, I);
      }(),
      ...);
  return m;
}
}  // namespace

std::size_t kind_of(std::string_view type) {
  static const auto table =
      kinds(std::make_index_sequence<std::variant_size_v<rsim::trace::Event>>{});
  const auto it = table.find(type);
  return it == table.end() ? kKind<sim::RawTraceEvent> : it->second;
}

std::string partition_name(const rsim::TopicPartition& tp) {
  return fmt::format("{}-{}", tp.topic, tp.partition);
}

std::vector<std::string> partition_names(rsim::trace::Partitions ps) {
  std::vector<std::string> out;
  out.reserve(ps.size());
  for (const auto& tp : ps) out.push_back(partition_name(tp));
  return out;
}

}  // namespace reports
