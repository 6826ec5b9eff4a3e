// The share view of report.html, from a hand-written trace: SPSO/SPEO points, records by state
// (a first delivery does not take from AVAILABLE, a redelivery does), the section's SVGs.
#include <doctest/doctest.h>

#include <string>

#include "reports/html_report.hpp"
#include "reports/share_view.hpp"

TEST_CASE("share view: window and record states over time, from the trace") {
  const std::string trace =
      R"({"t_us":0,"type":"run.start","scenario":"s","protocol":"share","seed":1,"duration_ms":10})"
      "\n"
      R"({"t_us":1000,"type":"share.window","group":"g","partition":"t-0","spso":0,"speo":0,"in_flight":0})"
      "\n"
      R"({"t_us":2000,"type":"share.records","group":"g","partition":"t-0","consumer":"A","from":"AVAILABLE","to":"ACQUIRED","first_offset":0,"last_offset":4,"records":5,"delivery_count":1,"cause":"fetch"})"
      "\n"
      R"({"t_us":2000,"type":"share.window","group":"g","partition":"t-0","spso":0,"speo":4,"in_flight":5})"
      "\n"
      R"({"t_us":3000,"type":"share.records","group":"g","partition":"t-0","consumer":"A","from":"ACQUIRED","to":"ACKNOWLEDGED","first_offset":0,"last_offset":2,"records":3,"delivery_count":1,"cause":"ACCEPT"})"
      "\n"
      R"({"t_us":3000,"type":"share.records","group":"g","partition":"t-0","consumer":"A","from":"ACQUIRED","to":"AVAILABLE","first_offset":3,"last_offset":4,"records":2,"delivery_count":1,"cause":"disconnect"})"
      "\n"
      R"({"t_us":4000,"type":"share.records","group":"g","partition":"t-0","consumer":"B","from":"AVAILABLE","to":"ACQUIRED","first_offset":3,"last_offset":4,"records":2,"delivery_count":2,"cause":"fetch"})"
      "\n"
      R"({"t_us":5000,"type":"share.records","group":"g","partition":"t-0","consumer":"B","from":"ACQUIRED","to":"ARCHIVED","first_offset":3,"last_offset":3,"records":1,"delivery_count":2,"cause":"REJECT"})"
      "\n";
  const reports::ShareView v = reports::build_share_view(trace, "share");
  CHECK(v.duration_us == 10000);
  REQUIRE(v.partitions.size() == 1);
  const auto& p = v.partitions[0];
  CHECK(p.group == "g");
  CHECK(p.partition == "t-0");
  REQUIRE(p.window.size() == 2);
  CHECK(p.window[1].speo == 4);
  CHECK(p.window[1].in_flight == 5);
  REQUIRE(p.states.size() == 4);  // one point per instant (3000 has two changes)
  CHECK(p.states[0].acquired == 5);
  CHECK(p.states[0].available == 0);
  CHECK(p.states[1].t_us == 3000);
  CHECK(p.states[1].acknowledged == 3);
  CHECK(p.states[1].available == 2);
  CHECK(p.states[1].acquired == 0);
  CHECK(p.states[2].available == 0);
  CHECK(p.states[2].acquired == 2);
  CHECK(p.states[3].archived == 1);
  CHECK(p.states[3].acquired == 1);

  const std::string section = reports::render_share_section({v});
  CHECK(section.find("<h2>Share groups</h2>") != std::string::npos);
  CHECK(section.find("<svg class=\"share-window\" data-variant=\"share\" data-group=\"g\" "
                     "data-partition=\"t-0\"") != std::string::npos);
  CHECK(section.find("SPSO 0, SPEO 4, 5 in flight") != std::string::npos);
  CHECK(reports::render_share_section({reports::build_share_view("", "consumer")}).empty());
  // A trace without share events adds nothing to the report.
  CHECK(reports::render_html_report({}, {reports::build_share_view("", "consumer")}) ==
        reports::render_html_report({}));
}
