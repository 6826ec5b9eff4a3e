// append_indented_json: compact dump() text laid out as dump(2) lays it out, without a parse
// (summary.json's streamed rebalances, issue 39).
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "reports/json_indent.hpp"

namespace {

using ojson = nlohmann::ordered_json;

std::string indented(const std::string& compact, std::size_t base) {
  std::string out;
  reports::append_indented_json(out, compact, base);
  return out;
}

}  // namespace

TEST_CASE("append_indented_json: a rebalance entry as dump(2) writes it, 4 spaces deeper") {
  const std::string compact =
      R"({"group":"g","duration_ms":6012.315,"causes":["member c1 joined","a \"quoted\", {x}: [y]"],)"
      R"("lost":{},"revoked":{"c1":[]},"assigned":{"c1":["t-0","t-1"]},"drain_ms":null})";
  const std::string expected =
      "{\n"
      "      \"group\": \"g\",\n"
      "      \"duration_ms\": 6012.315,\n"
      "      \"causes\": [\n"
      "        \"member c1 joined\",\n"
      "        \"a \\\"quoted\\\", {x}: [y]\"\n"
      "      ],\n"
      "      \"lost\": {},\n"
      "      \"revoked\": {\n"
      "        \"c1\": []\n"
      "      },\n"
      "      \"assigned\": {\n"
      "        \"c1\": [\n"
      "          \"t-0\",\n"
      "          \"t-1\"\n"
      "        ]\n"
      "      },\n"
      "      \"drain_ms\": null\n"
      "    }";
  CHECK(indented(compact, 4) == expected);
}

TEST_CASE("append_indented_json: the same bytes as parse and dump(2)") {
  const std::string texts[] = {R"({})",
                               R"([])",
                               R"([1,-2,3.5,true,false,null])",
                               R"({"a":{"b":{"c":[[],{},[{}]]}}})",
                               R"({"s":"back\\slash \\\" and \n newline \u0001","k:e,y":"{[,:]}"})",
                               R"({"x":1e+100,"y":-0.001,"z":18446744073709551615})"};
  for (const std::string& text : texts) {
    CAPTURE(text);
    CHECK(indented(ojson::parse(text).dump(), 0) == ojson::parse(text).dump(2));
  }
}
