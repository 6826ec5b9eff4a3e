#include "reports/ordered_parse.hpp"

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace reports {

namespace {

using json = nlohmann::ordered_json;

class Builder : public nlohmann::json_sax<json> {
 public:
  json root;

  bool null() override { return place(json(nullptr)); }
  bool boolean(bool v) override { return place(json(v)); }
  bool number_integer(number_integer_t v) override { return place(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return place(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return place(json(v)); }
  bool string(string_t& v) override { return place(json(std::move(v))); }
  bool binary(binary_t& v) override { return place(json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    // A number beyond a double (1e400) comes as an out_of_range error (406), not a parse_error.
    if (ex.id == 406) throw static_cast<const nlohmann::json::out_of_range&>(ex);
    throw static_cast<const nlohmann::json::parse_error&>(ex);
  }

 private:
  // An open object or array; a large object keeps an index of its keys.
  struct Open {
    json* value;
    std::unique_ptr<std::unordered_map<std::string, std::size_t>> index;
  };
  static constexpr std::size_t kIndexFrom = 16;

  json* place(json&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    Open& top = stack_.back();
    if (top.value->is_array()) {
      auto& a = top.value->get_ref<json::array_t&>();
      a.push_back(std::move(v));
      return &a.back();
    }
    auto& o = top.value->get_ref<json::object_t&>();
    auto& items = static_cast<std::vector<std::pair<const std::string, json>>&>(o);
    if (top.index) {
      const auto it = top.index->find(key_);
      if (it != top.index->end()) return &(items[it->second].second = std::move(v));
    } else {
      for (auto& kv : items)
        if (kv.first == key_) return &(kv.second = std::move(v));
    }
    items.emplace_back(key_, std::move(v));
    if (top.index) {
      top.index->emplace(key_, items.size() - 1);
    } else if (items.size() >= kIndexFrom) {
      top.index = std::make_unique<std::unordered_map<std::string, std::size_t>>();
      for (std::size_t i = 0; i < items.size(); ++i) top.index->emplace(items[i].first, i);
    }
    return &items.back().second;
  }
  bool open(json&& v) {
    json* at = place(std::move(v));
    stack_.push_back(Open{at, nullptr});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  std::vector<Open> stack_;
  std::string key_;
};

}  // namespace

json parse_ordered(std::string_view text) {
  Builder b;
  json::sax_parse(text.begin(), text.end(), &b);
  return std::move(b.root);
}

}  // namespace reports
