// The playground (`make site`, docs/playground.md) in real headless Chromium: site/ is served on
// 127.0.0.1 by Python's http.server (no other network), each lesson is opened with
// ?lesson=NAME&run=1, and the test reads back the DOM: the page ran the lesson in WebAssembly, its
// summary.json text is byte for byte the native binary's for the same scenario file, the
// report's lanes and rebalance markers are the native run's, a knob re-runs the lesson with
// another (again native) result, bad input lists the parser's messages, and nothing is logged on
// the console. Screenshots (1,000 and 1,600 px wide) stay in
// build/test-artifacts/browser/playground/. Without site/rsim.wasm, or with a site built from
// another commit than rebalance-sim (site/commit.txt), the binary exits 77, which ctest reports as
// skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "browser_harness.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

const fs::path kSite = fs::path(RSIM_SOURCE_DIR) / "site";
const fs::path kDir = fs::path(RSIM_BUILD_DIR) / "test-artifacts" / "browser" / "playground";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int sh(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string chromium() {
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(c)) return c;
  return {};
}

/// The static server of site/ on a free loopback port, stopped (by its own pid) at exit.
class Server {
 public:
  Server() {
    fs::create_directories(kDir);
    const fs::path log = kDir / "server.log", pid = kDir / "server.pid";
    fs::remove(log);
    sh("cd " + kSite.string() + " && (python3 -u -m http.server 0 --bind 127.0.0.1 > " +
       log.string() + " 2>&1 & echo $! > " + pid.string() + ")");
    pid_ = std::stoi(slurp(pid));
    const std::regex port_re("port ([0-9]+)");
    for (int i = 0; i < 100 && port_ == 0; ++i) {
      std::smatch m;
      const std::string text = slurp(log);
      if (std::regex_search(text, m, port_re))
        port_ = std::stoi(m[1].str());
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ~Server() {
    if (pid_ > 0) sh("kill " + std::to_string(pid_));
  }
  std::string url(const std::string& query) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/index.html?" + query;
  }
  int port() const { return port_; }

 private:
  int pid_ = 0;
  int port_ = 0;
};

Server& server() {
  static Server s;
  return s;
}

std::string chromium_command(const fs::path& profile) {
  return chromium() +
         " --headless --no-sandbox --disable-gpu --disable-background-networking "
         "--disable-component-update"
         " --disable-sync --no-first-run --user-data-dir=" +
         profile.string() + " --enable-logging=stderr --v=0 --hide-scrollbars";
}

std::string attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  const std::regex re("<html[^>]*\\s" + name + "=\"([^\"]*)\"");
  return std::regex_search(dom, m, re) ? m[1].str() : std::string("(absent)");
}

std::string unescape_html(std::string s) {
  const std::pair<const char*, const char*> entities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities)
    for (auto p = s.find(from); p != std::string::npos; p = s.find(from, p + 1))
      s.replace(p, std::string(from).size(), to);
  return s;
}

/// protocol -> the summary.json text the page shows (<pre class="summary" data-protocol=...>).
std::map<std::string, std::string> page_summaries(const std::string& dom) {
  // Plain searches, not std::regex: libstdc++'s regex recurses once per character of a match and
  // overflows the stack on a summary of many kilobytes.
  std::map<std::string, std::string> out;
  const std::string open = "<pre class=\"summary\" data-protocol=\"";
  for (std::size_t at = dom.find(open); at != std::string::npos; at = dom.find(open, at)) {
    const std::size_t name_from = at + open.size();
    const std::size_t name_to = dom.find("\">", name_from);
    const std::size_t text_to =
        name_to == std::string::npos ? std::string::npos : dom.find("</pre>", name_to);
    if (text_to == std::string::npos) break;
    out[dom.substr(name_from, name_to - name_from)] =
        unescape_html(dom.substr(name_to + 2, text_to - name_to - 2));
    at = text_to;
  }
  return out;
}

struct Page {
  std::string dom, log;
};

/// Opens the page and waits (in virtual time) until it has run; `shot`: a screenshot too.
Page open_page(const std::string& name, const std::string& query, int width = 1400) {
  const fs::path dir = kDir / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path profile = dir / "profile", dom = dir / "dom.html", log = dir / "chromium.log";
  const std::string url = server().url(query);
  CHECK(sh(chromium_command(profile) + " --virtual-time-budget=20000 --dump-dom '" + url + "' > " +
           dom.string() + " 2> " + log.string()) == 0);
  fs::remove_all(profile);
  CHECK(sh(chromium_command(profile) + " --virtual-time-budget=20000 --window-size=" +
           std::to_string(width) + ",1800 --screenshot=" + (dir / "screenshot.png").string() +
           " '" + url + "' > /dev/null 2>> " + (dir / "shot.log").string()) == 0);
  fs::remove_all(profile);
  CHECK(fs::exists(dir / "screenshot.png"));
  return Page{slurp(dom), slurp(log)};
}

void no_console_output(const Page& p) {
  std::istringstream lines(p.log);
  std::string line;
  while (std::getline(lines, line)) CHECK_MESSAGE(line.find(":CONSOLE") == std::string::npos, line);
  CHECK(p.log.find("Uncaught") == std::string::npos);
}

struct Native {
  std::map<std::string, std::string> summaries;  // protocol -> summary.json bytes
  std::size_t lanes = 0, rebalances = 0;
};

/// `rebalance-sim run` of `text` saved as scenarios/lessons/NAME.json under `root` (the path the
/// page loads it at, so that summary.json's scenario_file is the same).
Native native_run(const fs::path& root, const std::string& lesson, const std::string& text) {
  const fs::path file = root / "scenarios" / "lessons" / (lesson + ".json");
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
  const fs::path out = root / "out";
  fs::remove_all(out);
  const int rc =
      sh("cd " + root.string() + " && " + RSIM_BINARY + " run scenarios/lessons/" + lesson +
         ".json --out " + out.string() + " > " + (root / "run.log").string() + " 2>&1");
  CHECK_MESSAGE((rc == 0 || rc == 1), slurp(root / "run.log"));
  Native n;
  for (const auto& d : fs::directory_iterator(out))
    if (d.is_directory())
      n.summaries[d.path().filename().string()] = slurp(d.path() / "summary.json");
  const auto shape = browser_harness::run_shape(out);
  n.lanes = shape.lanes;
  n.rebalances = shape.rebalances;
  return n;
}

/// The page's run equals the native run of the same scenario text (the lesson file, or what
/// the knobs made of it, which the page shows in <pre id="ran-scenario">).
void same_as_native(const std::string& name, const std::string& lesson, const Page& p,
                    const std::string& text) {
  const Native n = native_run(kDir / name / "native", lesson, text);
  const auto page = page_summaries(p.dom);
  REQUIRE(page.size() == n.summaries.size());
  for (const auto& entry : n.summaries) {
    const std::string protocol = entry.first;
    INFO("variant " << protocol);
    REQUIRE(page.count(protocol) == 1);
    CHECK(page.at(protocol) == entry.second);
  }
  CHECK(attribute(p.dom, "data-lanes") == std::to_string(n.lanes));
  CHECK(attribute(p.dom, "data-rebalances") == std::to_string(n.rebalances));
}

std::vector<std::string> lessons() {
  std::vector<std::string> out;
  for (const auto& f : fs::directory_iterator(fs::path(RSIM_SOURCE_DIR) / "scenarios" / "lessons"))
    if (f.path().extension() == ".json") out.push_back(f.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("the site holds every lesson and stays under 5 MB") {
  const auto names = lessons();
  CHECK(names.size() == 6);
  std::string index = "[";
  for (std::size_t i = 0; i < names.size(); ++i) index += (i ? ", \"" : "\"") + names[i] + "\"";
  CHECK(slurp(kSite / "lessons" / "index.json") == index + "]\n");
  for (const auto& n : names)
    CHECK(slurp(kSite / "lessons" / (n + ".json")) ==
          slurp(fs::path(RSIM_SOURCE_DIR) / "scenarios" / "lessons" / (n + ".json")));
  std::uintmax_t bytes = 0;
  for (const char* f : {"index.html", "playground.js", "playground.css", "editor.js", "schema.json",
                        "rsim.js", "rsim.wasm"}) {
    REQUIRE(fs::exists(kSite / f));
    bytes += fs::file_size(kSite / f);
  }
  CHECK(slurp(kSite / "schema.json") ==
        slurp(fs::path(RSIM_SOURCE_DIR) / "scenarios" / "schema.json"));
  MESSAGE("site (wasm + js + html + css + schema): " << bytes << " bytes");
  CHECK(bytes <= 5'000'000);
}

namespace {

/// The rebalance (1-based) the lesson names: the first of summary.json's `rebalances` that
/// starts at or after produced_by.lesson_rebalance_from_ms; 0 when none does.
std::size_t named_rebalance(const nlohmann::json& summary) {
  const auto from_us =
      summary["produced_by"]["lesson_rebalance_from_ms"].get<std::int64_t>() * 1000;
  const auto& rebalances = summary["rebalances"];
  for (std::size_t i = 0; i < rebalances.size(); ++i)
    if (rebalances[i]["start_us"].get<std::int64_t>() >= from_us) return i + 1;
  return 0;
}

}  // namespace

TEST_CASE("every lesson runs in the page with the native summary bytes, lanes and rebalances") {
  REQUIRE(server().port() > 0);
  // The rebalance each lesson is about (its lesson.rebalance_from_ms), by its trigger: the join
  // at 10 s (cooperative: the first, revoking rebalance of the two), C's join at 20 s under
  // KIP-848, B's leave once max.poll.interval.ms expired, and the start-up of the static group
  // (its rolling deploy makes no rebalance).
  const std::map<std::string, std::string> trigger{
      {"cooperative-two-rebalances", "member C joined"},
      {"eager-stop-the-world", "member C joined"},
      {"kip848-heartbeats", "member C joined"},
      {"slow-consumer-max-poll", "member B left the group"},
      {"static-rolling-deploy", "member A joined"},
      {"what-is-a-rebalance", "member B joined"}};
  for (const auto& lesson : lessons()) {
    INFO("lesson " << lesson);
    const Page p = open_page("lesson-" + lesson, "lesson=" + lesson + "&run=1");
    no_console_output(p);
    CHECK(attribute(p.dom, "data-ready") == "1");
    CHECK(attribute(p.dom, "data-errors") == "(absent)");
    CHECK(attribute(p.dom, "data-exit") == "0");     // the lesson's own assertions hold
    CHECK(p.dom.find("<li>") != std::string::npos);  // its watch-for steps are listed
    same_as_native("lesson-" + lesson, lesson, p,
                   slurp(fs::path(RSIM_SOURCE_DIR) / "scenarios" / "lessons" / (lesson + ".json")));
    // The step control opens the lesson's rebalance (the summaries are the native ones).
    const auto summaries = page_summaries(p.dom);
    REQUIRE(summaries.size() == 1);
    const auto summary = nlohmann::json::parse(summaries.begin()->second);
    const std::size_t n = named_rebalance(summary);
    REQUIRE(n > 0);
    CHECK(summary["rebalances"][n - 1]["trigger"] == trigger.at(lesson));
    CHECK(attribute(p.dom, "data-opened") == summaries.begin()->first + ":" + std::to_string(n));
  }
}

TEST_CASE("a link's rebalance=N opens another rebalance than the lesson's") {
  REQUIRE(server().port() > 0);
  // kip848-heartbeats names R3 (C's join); R2 is B's join at start-up.
  const Page p = open_page("link-rebalance", "lesson=kip848-heartbeats&run=1&rebalance=2", 1000);
  no_console_output(p);
  CHECK(attribute(p.dom, "data-exit") == "0");
  const auto summary = nlohmann::json::parse(page_summaries(p.dom).at("consumer"));
  CHECK(named_rebalance(summary) == 3);
  CHECK(summary["rebalances"][1]["trigger"] == "member B joined");
  CHECK(attribute(p.dom, "data-opened") == "consumer:2");
}

TEST_CASE("a knob re-runs a lesson with another result, still the native one") {
  REQUIRE(server().port() > 0);
  const Page eager = open_page("knob-before", "lesson=eager-stop-the-world&run=1", 1000);
  const Page coop = open_page(
      "knob-after", "lesson=eager-stop-the-world&protocol=classic-cooperative&run=1", 1600);
  no_console_output(coop);
  CHECK(attribute(coop.dom, "data-exit") == "0");
  const auto before = page_summaries(eager.dom), after = page_summaries(coop.dom);
  REQUIRE(before.count("classic-eager") == 1);
  REQUIRE(after.count("classic-cooperative") == 1);
  CHECK(after.size() == 1);
  // Cooperative: the join is two rebalances (eager: one), and fewer partitions are revoked.
  const auto b = nlohmann::json::parse(before.at("classic-eager")),
             a = nlohmann::json::parse(after.at("classic-cooperative"));
  CHECK(a["metrics"]["rebalance_count"].get<int>() ==
        b["metrics"]["rebalance_count"].get<int>() + 1);
  CHECK(a["metrics"]["revocations"].get<int>() < b["metrics"]["revocations"].get<int>());
  const std::size_t pre = coop.dom.find("<pre id=\"ran-scenario\"");
  REQUIRE(pre != std::string::npos);
  const std::size_t from = coop.dom.find('>', pre) + 1, to = coop.dom.find("</pre>", from);
  REQUIRE(to != std::string::npos);
  same_as_native("knob-after", "eager-stop-the-world", coop,
                 unescape_html(coop.dom.substr(from, to - from)));
}

TEST_CASE("bad input: the page lists the loader's messages and runs nothing") {
  REQUIRE(server().port() > 0);
  // heartbeat.interval.ms must be lower than session.timeout.ms.
  const Page p =
      open_page("bad-input", "lesson=what-is-a-rebalance&session=10000&heartbeat=20000&run=1");
  no_console_output(p);
  CHECK(attribute(p.dom, "data-exit") == "2");
  CHECK(attribute(p.dom, "data-errors") == "2");  // consumers A and B
  CHECK(p.dom.find("/consumers/0/config_by_protocol/classic/heartbeat.interval.ms") !=
        std::string::npos);
  CHECK(page_summaries(p.dom).empty());
}

namespace {

/// The text of every <li> under the element with id `id` (the page's lists of problems).
std::vector<std::string> list_items(const std::string& dom, const std::string& id) {
  std::vector<std::string> out;
  const std::size_t from = dom.find("id=\"" + id + "\"");
  if (from == std::string::npos) return out;
  const std::size_t to = dom.find("</div>", from);
  for (std::size_t at = dom.find("<li>", from); at != std::string::npos && at < to;
       at = dom.find("<li>", at + 1)) {
    const std::size_t end = dom.find("</li>", at);
    out.push_back(unescape_html(dom.substr(at + 4, end - at - 4)));
  }
  return out;
}

/// The lines `rebalance-sim validate` prints on stderr for `text` saved as the lesson's file.
std::vector<std::string> native_validate(const fs::path& root, const std::string& lesson,
                                         const std::string& text) {
  const fs::path file = root / "scenarios" / "lessons" / (lesson + ".json");
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
  const fs::path err = root / "validate.err";
  CHECK(sh("cd " + root.string() + " && " + RSIM_BINARY + " validate scenarios/lessons/" + lesson +
           ".json > /dev/null 2> " + err.string()) == 2);
  std::vector<std::string> lines;
  std::istringstream in(slurp(err));
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

// The editor's help (issue 35): an edit checked as it is typed (an input event, as a keystroke
// makes) by the WebAssembly loader, whose messages are `rebalance-sim validate`'s lines; the keys
// the JSON schema allows where the cursor is, with their descriptions, the ones already there
// left out.
TEST_CASE(
    "the scenario editor checks as you type with validate's messages and offers the schema's "
    "keys") {
  REQUIRE(server().port() > 0);
  const std::string lesson = "what-is-a-rebalance";
  // Consumer A's client.id misspelt, and the cursor after B's "group" value (where a key of a
  // consumer goes).
  const Page p =
      open_page("editor",
                "lesson=" + lesson +
                    "&edit=%22client.id%22~%22client.idd%22&caret=%22group%22%3A%20%22g%22%2C",
                1000);
  no_console_output(p);
  CHECK(attribute(p.dom, "data-live-errors") == "1");
  CHECK(attribute(p.dom, "data-live-checks") != "(absent)");
  std::string text =
      slurp(fs::path(RSIM_SOURCE_DIR) / "scenarios" / "lessons" / (lesson + ".json"));
  text.replace(text.find("\"client.id\""), 11, "\"client.idd\"");
  const auto native = native_validate(kDir / "editor" / "native", lesson, text);
  REQUIRE(native.size() == 1);
  CHECK(native[0] ==
        "scenarios/lessons/what-is-a-rebalance.json: /consumers/0/config/client.idd: unknown kafka "
        "consumer config; did you mean \"client.id\"?");
  CHECK(list_items(p.dom, "live") == native);
  // The hints: at /consumers/0 (the first "group": "g" is A's), the consumer's keys not yet
  // there, each titled with the schema's description.
  CHECK(attribute(p.dom, "data-hint-path") == "/consumers/0");
  const auto schema =
      nlohmann::json::parse(slurp(fs::path(RSIM_SOURCE_DIR) / "scenarios" / "schema.json"));
  const auto& props = schema["$defs"]["consumer"]["properties"];
  std::size_t offered = 0;
  for (auto it = props.begin(); it != props.end(); ++it) {
    const bool present =
        it.key() == "name" || it.key() == "group" || it.key() == "topics" || it.key() == "config";
    INFO("key " << it.key());
    CHECK((p.dom.find("data-key=\"" + it.key() + "\"") != std::string::npos) == !present);
    offered += present ? 0 : 1;
  }
  CHECK(attribute(p.dom, "data-hint-keys") == std::to_string(offered));
  const std::string about = props["processing"].contains("description")
                                ? props["processing"]["description"].get<std::string>()
                                : schema["$defs"]["processing"]["description"].get<std::string>();
  const std::size_t button = p.dom.find("data-key=\"processing\"");
  REQUIRE(button != std::string::npos);
  const std::size_t tag = p.dom.rfind("<button", button);
  CHECK(unescape_html(p.dom.substr(tag, button - tag)).find("title=\"" + about + "\"") !=
        std::string::npos);
}

// Every knob of the page (protocol, assignor, consumers, session / heartbeat / poll-interval
// timeouts, static membership, processing time, a crash or a slow member) lands in the scenario
// that runs, and the run is the native one for that scenario.
TEST_CASE("every knob reaches the scenario, and the page's run is the native run of it") {
  REQUIRE(server().port() > 0);
  struct Case {
    std::string name, query;
  };
  const std::vector<Case> cases{
      {"knobs-classic",
       "lesson=what-is-a-rebalance&assignor=roundrobin&consumers=4&session=20000&heartbeat=2000&"
       "poll=60000"
       "&static=on&processing=2&incident=crash&incident_at=15000&run=1"},
      {"knobs-consumer",
       "lesson=what-is-a-rebalance&protocol=consumer&assignor=uniform&consumers=3&incident=slow"
       "&incident_at=12000&incident_for=5000&poll=3000&run=1"}};
  for (const auto& c : cases) {
    INFO(c.name);
    const Page p = open_page(c.name, c.query, 1000);
    no_console_output(p);
    CHECK(attribute(p.dom, "data-exit") == "0");
    const std::size_t pre = p.dom.find("<pre id=\"ran-scenario\"");
    REQUIRE(pre != std::string::npos);
    const std::size_t from = p.dom.find('>', pre) + 1, to = p.dom.find("</pre>", from);
    const std::string ran = unescape_html(p.dom.substr(from, to - from));
    const auto doc = nlohmann::json::parse(ran);
    if (c.name == "knobs-classic") {
      REQUIRE(doc["consumers"].size() == 4);
      for (const auto& consumer : doc["consumers"]) {
        const auto& classic = consumer["config_by_protocol"]["classic"];
        CHECK(classic["partition.assignment.strategy"] == "roundrobin");
        CHECK(classic["session.timeout.ms"] == 20000);
        CHECK(classic["heartbeat.interval.ms"] == 2000);
        CHECK(consumer["config"]["max.poll.interval.ms"] == 60000);
        CHECK(consumer["config"]["group.instance.id"].is_string());
        CHECK(consumer["processing"]["per_record_ms"] == 2);
      }
      CHECK(doc["events"].back() ==
            nlohmann::json{{"at_ms", 15000}, {"do", "crash"}, {"consumer", "C4"}});
    } else {
      CHECK(doc["protocols"] == nlohmann::json::array({"consumer"}));
      REQUIRE(doc["consumers"].size() == 3);
      for (const auto& consumer : doc["consumers"]) {
        CHECK(consumer["config_by_protocol"]["consumer"]["group.remote.assignor"] == "uniform");
        CHECK(consumer["config"]["max.poll.interval.ms"] == 3000);
      }
      CHECK(
          doc["events"].back() ==
          nlohmann::json{{"at_ms", 12000}, {"do", "stall"}, {"consumer", "C3"}, {"for_ms", 5000}});
    }
    same_as_native(c.name, "what-is-a-rebalance", p, ran);
  }
}

int main(int argc, char** argv) {
  // CI sets RSIM_REQUIRE_SITE=1: there a missing or stale site is a failure, not a skip.
  const bool required = std::getenv("RSIM_REQUIRE_SITE") != nullptr;
  const int kSkipped = required ? 1 : 77;
  if (!fs::exists(kSite / "rsim.wasm")) {
    std::cout << "skipped: no site/rsim.wasm (run `make site` first)\n";
    return kSkipped;
  }
  // A site built from another commit than the binary differs in produced_by.commit: it is
  // stale, not wrong (`make test` does not rebuild it).
  std::string site_commit = slurp(kSite / "commit.txt");
  while (!site_commit.empty() && std::isspace(static_cast<unsigned char>(site_commit.back())))
    site_commit.pop_back();
  const fs::path version = kDir / "version.txt";
  fs::create_directories(kDir);
  sh(std::string(RSIM_BINARY) + " --version > " + version.string() + " 2>&1");
  if (site_commit.empty() || slurp(version).find("(" + site_commit + ")") == std::string::npos) {
    std::cout << "skipped: site/ was built from commit \"" << site_commit << "\", rebalance-sim is "
              << slurp(version) << "run `make site` again\n";
    return kSkipped;
  }
  if (chromium().empty()) {
    std::cout << "chromium is missing: `make test` installs it (apt package chromium)\n";
    return 1;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
