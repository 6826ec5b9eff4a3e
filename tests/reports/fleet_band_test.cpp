// The fleet bands of the timeline model (issue 38): ready pods per deployment from pod.ready,
// pod.terminating and pod.killed, and each autoscaler.decision, on a hand-written trace.
#include <doctest/doctest.h>

#include "reports/html_report.hpp"
#include "reports/timeline.hpp"

namespace {

// Deployment "w": a and b ready at 1 s; the autoscaler goes 2 -> 3 at 2 s; c ready at 3 s;
// 3 -> 1 at 5 s: b and c terminate at 5 s (ready 1), b killed at 6 s after its close (no change),
// c's SIGKILL at 6 s (no change). Deployment "v": d ready and terminating at 4 s (no step: 0 -> 0).
constexpr const char* kFleetTrace =
    R"({"t_us":0,"type":"run.start","scenario":"fleet","protocol":"consumer","duration_ms":8000})"
    "\n"
    R"({"t_us":1000000,"type":"pod.ready","pod":"w-0","deployment":"w","by":"assignment"})"
    "\n"
    R"({"t_us":1000000,"type":"pod.ready","pod":"w-1","deployment":"w","by":"assignment"})"
    "\n"
    R"({"t_us":2000000,"type":"autoscaler.decision","deployment":"w","group":"g","from":2,"to":3,"reason":"lag 9000 > 2 x 3000","lag":9000})"
    "\n"
    R"({"t_us":3000000,"type":"pod.ready","pod":"w-2","deployment":"w","by":"probe"})"
    "\n"
    R"({"t_us":3000000,"type":"pod.ready","pod":"w-2","deployment":"w","by":"probe"})"
    "\n"
    R"({"t_us":4000000,"type":"pod.ready","pod":"v-0","deployment":"v","by":"probe"})"
    "\n"
    R"({"t_us":4000000,"type":"pod.terminating","pod":"v-0","deployment":"v","reason":"scale down","grace_ms":30000})"
    "\n"
    R"({"t_us":5000000,"type":"autoscaler.decision","deployment":"w","group":"g","from":3,"to":1,"reason":"lag 10 <= 3 x 3000","lag":10})"
    "\n"
    R"({"t_us":5000000,"type":"pod.terminating","pod":"w-1","deployment":"w","reason":"scale down","grace_ms":30000})"
    "\n"
    R"({"t_us":5000000,"type":"pod.terminating","pod":"w-2","deployment":"w","reason":"scale down","grace_ms":30000})"
    "\n"
    R"({"t_us":6000000,"type":"pod.killed","pod":"w-1","deployment":"w","how":"closed"})"
    "\n"
    R"({"t_us":6000000,"type":"pod.killed","pod":"w-2","deployment":"w","how":"SIGKILL"})"
    "\n"
    R"({"t_us":8000000,"type":"run.end"})"
    "\n";

}  // namespace

TEST_CASE(
    "timeline: a deployment's ready pods step at pod.ready and leave at pod.terminating, once") {
  const auto t =
      reports::build_timeline(kFleetTrace, nlohmann::ordered_json{{"protocol", "consumer"}});
  REQUIRE(t.deployments.size() == 2);
  const auto& w = t.deployments[0];
  CHECK(w.deployment == "w");
  CHECK(w.max_ready == 3);
  REQUIRE(w.ready.size() == 3);  // 1 s: 2 (two pods at one time are one step), 3 s: 3, 5 s: 1
  CHECK(w.ready[0].t_us == 1'000'000);
  CHECK(w.ready[0].ready == 2);
  CHECK(w.ready[1].t_us == 3'000'000);
  CHECK(w.ready[1].ready == 3);  // a repeated pod.ready counts once
  CHECK(w.ready[2].t_us == 5'000'000);
  CHECK(w.ready[2].ready == 1);  // the kills at 6 s remove pods already terminating
  REQUIRE(w.decisions.size() == 2);
  CHECK(w.decisions[0].t_us == 2'000'000);
  CHECK(w.decisions[0].from == 2);
  CHECK(w.decisions[0].to == 3);
  CHECK(w.decisions[0].reason == "lag 9000 > 2 x 3000");
  CHECK(w.decisions[1].from == 3);
  CHECK(w.decisions[1].to == 1);
  const auto& v = t.deployments[1];
  CHECK(v.deployment == "v");
  CHECK(v.ready.empty());  // ready and terminating at one time: never a change
  CHECK(v.max_ready == 0);
  CHECK(v.decisions.empty());
}

TEST_CASE(
    "report.html: a band per deployment, a rect per step and a marker per decision with its "
    "reason") {
  const auto t =
      reports::build_timeline(kFleetTrace, nlohmann::ordered_json{{"protocol", "consumer"}});
  const std::string html = reports::render_html_report({t}, {});
  CHECK(
      html.find(
          R"(<g class="fleet" data-deployment="w" data-steps="3" data-decisions="2" data-max-ready="3">)") !=
      std::string::npos);
  CHECK(
      html.find(
          R"(<g class="fleet" data-deployment="v" data-steps="0" data-decisions="0" data-max-ready="0">)") !=
      std::string::npos);
  std::size_t rects = 0, markers = 0;
  for (auto at = html.find("class=\"replicas\""); at != std::string::npos;
       at = html.find("class=\"replicas\"", at + 1))
    ++rects;
  for (auto at = html.find("class=\"inst scaling\""); at != std::string::npos;
       at = html.find("class=\"inst scaling\"", at + 1))
    ++markers;
  CHECK(rects == 3);
  CHECK(markers == 2);
  CHECK(html.find(R"(class="replicas" data-ready="3" data-start-us="3000000")") !=
        std::string::npos);
  CHECK(html.find(R"(data-scaling="2" data-from="3" data-to="1" data-t-us="5000000")") !=
        std::string::npos);
  CHECK(html.find("<title>5.000 s: w 3 -&gt; 1 replicas: lag 10 &lt;= 3 x 3000</title>") !=
        std::string::npos);
}
