// Output folders are owned and committed whole (issue 41): a folder the simulator does not own is
// refused and left as it was, a scenario file's name never chooses a path, a commit that fails
// half-way leaves the old folder, concurrent writers are refused with the lock's message, and an
// interrupt leaves neither a staging folder nor a changed output folder.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "tools/commands/check.hpp"
#include "tools/staged_output.hpp"

extern char** environ;

namespace fs = std::filesystem;
using testing::read_file;
using testing::run_cli;

namespace {

const std::string kScenario =
    std::string(RSIM_SOURCE_DIR) + "/scenarios/examples/two-consumers.json";

fs::path scratch(const std::string& tag) {
  const fs::path p =
      fs::temp_directory_path() / ("rsim-cli-owned-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return testing::remove_at_exit(p);
}

/// Every file under `dir` (relative path -> bytes), hidden ones included.
std::map<std::string, std::string> files_of(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file())
      out[e.path().lexically_relative(dir).generic_string()] = read_file(e.path());
  return out;
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

/// A copy of two-consumers with other keys, written to `path`.
void write_scenario(const fs::path& path, const nlohmann::json& patch) {
  std::ifstream in(kScenario);
  nlohmann::json doc = nlohmann::json::parse(in);
  doc.merge_patch(patch);
  fs::create_directories(path.parent_path());
  std::ofstream(path) << doc.dump(2);
}

/// The binary started in the background (stdout and stderr to files), for signals.
struct Background {
  pid_t pid = -1;
  fs::path err;
  Background(const std::vector<std::string>& args, const fs::path& err_file) : err(err_file) {
    std::vector<char*> argv;
    std::string binary = RSIM_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(posix_spawn(&pid, RSIM_BINARY, &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
  }
  /// The exit status after `sig` (-1 if it did not exit by itself).
  int stop(int sig) {
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  ~Background() {
    if (pid > 0) stop(SIGKILL);
  }
};

/// Waits (up to 60 s) until process `pid`'s staging folder of `target` exists beside it.
fs::path wait_for_staging(const fs::path& target, pid_t pid) {
  for (int i = 0; i < 6000; ++i) {
    for (const auto& e : fs::directory_iterator(target.parent_path())) {
      const std::string n = e.path().filename().string();
      if (n == "." + target.filename().string() + ".rebalance-sim-staging-" + std::to_string(pid))
        return e.path();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return {};
}

bool any_staging(const fs::path& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find("rebalance-sim-staging") != std::string::npos)
      return true;
  return false;
}

}  // namespace

TEST_CASE(
    "output folders: a non-empty folder without a manifest is refused and left intact and --force "
    "writes beside it") {
  const fs::path dir = scratch("foreign");
  const fs::path o = dir / "o";
  fs::create_directories(o / "consumer");
  std::ofstream(o / "notes.txt") << "my notes";
  std::ofstream(o / "consumer" / "mine") << "mine";
  const auto before = files_of(o);

  auto r =
      run_cli("run " + kScenario + " --protocol consumer --out " + o.string(), "owned-foreign");
  CHECK(r.code == 2);
  CHECK(r.err ==
        "rebalance-sim: cannot write " + o.string() +
            ": the folder is not empty and is not an output folder of rebalance-sim (it has no "
            ".rebalance-sim-manifest.json; it holds \"consumer\", \"notes.txt\"); choose a new or "
            "empty "
            "folder, or pass --force to write into it (what it holds is kept, except entries named "
            "as the "
            "outputs)\n");
  CHECK(files_of(o) == before);
  CHECK(names_in(dir) == std::set<std::string>{"o"});

  // --force: the outputs replace the entries of their names (consumer/), the rest is kept.
  r = run_cli("run " + kScenario + " --protocol consumer --force --out " + o.string(),
              "owned-force");
  CHECK(r.code == 0);
  CHECK(read_file(o / "notes.txt") == "my notes");
  CHECK(!fs::exists(o / "consumer" / "mine"));
  CHECK(fs::exists(o / "consumer" / "summary.json"));
  const auto manifest = nlohmann::json::parse(read_file(o / ".rebalance-sim-manifest.json"));
  CHECK(manifest["written_by"] == "rebalance-sim");
  CHECK(manifest["scenario"] == "two-consumers");
  CHECK(manifest["scenario_file"] == kScenario);
  CHECK(manifest["variants"] == nlohmann::json::array({"consumer"}));
  CHECK(manifest["files"] ==
        nlohmann::json::array({"consumer/summary.json", "consumer/trace.jsonl", "report.html"}));
  CHECK(names_in(dir) == std::set<std::string>{"o"});

  // Owned now: another run replaces exactly what the manifest lists (consumer/ goes, as its
  // variant is not run again) and keeps the user's file.
  r = run_cli("run " + kScenario + " --protocol classic-eager --out " + o.string(), "owned-again");
  CHECK(r.code == 0);
  CHECK(names_in(o) == std::set<std::string>{".rebalance-sim-manifest.json", "classic-eager",
                                             "notes.txt", "report.html"});
  CHECK(read_file(o / "notes.txt") == "my notes");

  // A folder the manifest does not list, named as an output: refused, nothing changes.
  fs::create_directories(o / "consumer");
  std::ofstream(o / "consumer" / "mine") << "mine again";
  const auto owned_before = files_of(o);
  r = run_cli("run " + kScenario + " --protocol consumer --out " + o.string(), "owned-claim");
  CHECK(r.code == 2);
  CHECK(r.err == "rebalance-sim: cannot write " + (o / "consumer").string() +
                     ": exists and is not an output of rebalance-sim (not listed in "
                     ".rebalance-sim-manifest.json); "
                     "move it away, or pass --force to replace it\n");
  CHECK(files_of(o) == owned_before);

  // The current folder (or one holding it) is never an output folder: it would be replaced whole.
  r = run_cli("run " + kScenario + " --force --out .", "owned-cwd");
  CHECK(r.code == 2);
  CHECK(r.err.find("cannot write .: is the current folder or one of its parents") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("output folders: a scenario file named ...json writes nowhere outside --out") {
  const fs::path dir = scratch("dots");
  write_scenario(dir / "in" / "...json", {{"protocols", nlohmann::json::array({"classic-eager"})}});
  fs::create_directories(dir / "sibling");
  std::ofstream(dir / "sibling" / "keep.txt") << "keep";
  auto r =
      run_cli("check " + (dir / "in" / "...json").string() + " --out " + (dir / "out").string(),
              "owned-dots");
  CHECK(r.code == 0);
  CHECK(names_in(dir) == std::set<std::string>{"in", "out", "sibling"});
  CHECK(names_in(dir / "out") == std::set<std::string>{"_."});
  CHECK(fs::exists(dir / "out" / "_." / "classic-eager" / "summary.json"));
  CHECK(read_file(dir / "sibling" / "keep.txt") == "keep");
  CHECK(names_in(dir / "in") == std::set<std::string>{"...json"});
  // Found in a folder, the same.
  r = run_cli("check " + (dir / "in").string() + " --out " + (dir / "out2").string(),
              "owned-dots-dir");
  CHECK(r.code == 0);
  CHECK(names_in(dir) == std::set<std::string>{"in", "out", "out2", "sibling"});
  CHECK(names_in(dir / "out2") == std::set<std::string>{"_."});
  fs::remove_all(dir);
}

TEST_CASE(
    "output folders: check --out gives same-named scenarios in different folders distinct "
    "folders") {
  const fs::path dir = scratch("same");
  write_scenario(dir / "a" / "x.json",
                 {{"protocols", nlohmann::json::array({"classic-eager"})}, {"seed", 1}});
  write_scenario(dir / "b" / "x.json",
                 {{"protocols", nlohmann::json::array({"classic-eager"})}, {"seed", 2}});
  auto file_of = [](const fs::path& summary) {
    return nlohmann::json::parse(read_file(summary))["produced_by"]["scenario_file"]
        .get<std::string>();
  };
  auto r = run_cli("check " + (dir / "a" / "x.json").string() + " " +
                       (dir / "b" / "x.json").string() + " --jobs 2 --out " + (dir / "o").string(),
                   "owned-same");
  CHECK(r.code == 0);
  CHECK(names_in(dir / "o") == std::set<std::string>{"x", "x-2"});
  CHECK(file_of(dir / "o" / "x" / "classic-eager" / "summary.json") ==
        (dir / "a" / "x.json").string());
  CHECK(file_of(dir / "o" / "x-2" / "classic-eager" / "summary.json") ==
        (dir / "b" / "x.json").string());
  r = run_cli("check " + dir.string() + " --jobs 2 --out " + (dir / "o2").string(),
              "owned-same-dir");
  CHECK(r.code == 0);
  CHECK(file_of(dir / "o2" / "a" / "x" / "classic-eager" / "summary.json") ==
        (dir / "a" / "x.json").string());
  CHECK(file_of(dir / "o2" / "b" / "x" / "classic-eager" / "summary.json") ==
        (dir / "b" / "x.json").string());
  fs::remove_all(dir);

  // The names: relative to their argument, made safe, unique, and never a folder of another name.
  const fs::path d = scratch("names");
  for (const char* f : {"a.json", "a/x.json", "b c/x.json", ".hidden.json"})
    write_scenario(d / f, nlohmann::json::object());
  write_scenario(d / "other" / "a.json", nlohmann::json::object());
  const auto files = rsim::cli::scenario_files({d.string(), (d / "other" / "a.json").string()});
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.second);
  // Sorted by path: .hidden.json, a.json, a/x.json, b c/x.json, other/a.json; then the argument.
  CHECK(names == std::vector<std::string>{"_hidden", "a-2", "a/x", "b_c/x", "other/a", "a-3"});
  fs::remove_all(d);
}

TEST_CASE("output folders: a commit that fails half-way leaves the old folder as it was") {
  const fs::path dir = scratch("commit");
  const fs::path o = dir / "o";
  auto r = run_cli(
      "run " + kScenario + " --protocol consumer --protocol classic-eager --out " + o.string(),
      "owned-commit1");
  REQUIRE(r.code == 0);
  std::ofstream(o / "notes.txt") << "my notes";  // carried into the new folder, and back on failure
  const auto before = files_of(o);
  ::setenv("RSIM_TEST_FAIL_COMMIT", "1", 1);
  r = run_cli(
      "run " + kScenario + " --protocol consumer --seed 99 --format csv --out " + o.string(),
      "owned-commit2");
  ::unsetenv("RSIM_TEST_FAIL_COMMIT");
  CHECK(r.code == 2);
  CHECK(r.err == "rebalance-sim: cannot write " + o.string() +
                     ": the commit failed half-way (RSIM_TEST_FAIL_COMMIT=1, a test hook)\n");
  CHECK(files_of(o) == before);
  CHECK(names_in(dir) == std::set<std::string>{"o"});
  // Without the hook the same run commits: the new outputs, the user's file kept.
  r = run_cli(
      "run " + kScenario + " --protocol consumer --seed 99 --format csv --out " + o.string(),
      "owned-commit3");
  CHECK(r.code == 0);
  CHECK(names_in(o) == std::set<std::string>{".rebalance-sim-manifest.json", "consumer",
                                             "notes.txt", "report.html"});
  CHECK(fs::exists(o / "consumer" / "lag.csv"));
  CHECK(read_file(o / "notes.txt") == "my notes");
  CHECK(names_in(dir) == std::set<std::string>{"o"});
  fs::remove_all(dir);
}

TEST_CASE(
    "output folders: a second writer is refused by the lock and SIGTERM or SIGINT leave the old "
    "outputs") {
  const fs::path dir = scratch("signals");
  const fs::path o = dir / "o";
  write_scenario(dir / "long.json", {{"duration_ms", 604800000},
                                     {"protocols", nlohmann::json::array({"classic-eager"})}});
  auto r = run_cli("run " + kScenario + " --out " + o.string(), "owned-sig0");
  REQUIRE(r.code == 0);
  const auto before = files_of(o);
  // A staging folder left by a process that was killed outright (SIGKILL): the next run removes it.
  fs::create_directories(dir / ".o.rebalance-sim-staging-999999999" / "classic-eager");
  std::ofstream(dir / ".o.rebalance-sim-staging-999999999" / "classic-eager" / "trace.jsonl")
      << "partial";
  // ... and one of an older version, inside the folder.
  fs::create_directories(o / ".rebalance-sim-staging-999999999");
  std::ofstream(o / ".rebalance-sim-staging-999999999" / "trace.jsonl") << "partial";

  for (const int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    Background run({"run", (dir / "long.json").string(), "--out", o.string()}, dir / "long.err");
    const fs::path staging = wait_for_staging(o, run.pid);
    REQUIRE(!staging.empty());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the trace is being written
    CHECK(!fs::exists(dir / ".o.rebalance-sim-staging-999999999"));
    CHECK(!fs::exists(o / ".rebalance-sim-staging-999999999"));
    if (sig == SIGTERM) {
      r = run_cli("run " + kScenario + " --out " + o.string(), "owned-lock");
      CHECK(r.code == 2);
      CHECK(r.err == "rebalance-sim: cannot write " + o.string() +
                         ": another rebalance-sim is writing to this folder (it holds the folder's "
                         "lock); wait until it "
                         "ends, or choose another output folder\n");
    }
    CHECK(run.stop(sig) == 128 + sig);
    CHECK(read_file(dir / "long.err") ==
          std::string("rebalance-sim: interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
              "; the outputs in progress were removed, the previous ones are intact\n");
    CHECK(!any_staging(dir));
    CHECK(files_of(o) == before);
  }
  fs::remove_all(dir);
}

TEST_CASE(
    "output folders: report reads the variants of the manifest and never writes through a planted "
    "symlink") {
  const fs::path dir = scratch("report");
  const fs::path o = dir / "o";
  auto r =
      run_cli("run " + kScenario + " --protocol consumer --out " + o.string(), "owned-report1");
  REQUIRE(r.code == 0);
  // A variant folder of another run copied in: not this run's, not reported.
  r = run_cli("run " + kScenario + " --protocol classic-eager --out " + (dir / "other").string(),
              "owned-report2");
  REQUIRE(r.code == 0);
  fs::copy(dir / "other" / "classic-eager", o / "classic-eager", fs::copy_options::recursive);
  r = run_cli("report " + o.string() + " --format perfetto", "owned-report3");
  CHECK(r.code == 0);
  CHECK(r.out == "wrote " + (o / "report.html").string() + "\nwrote " +
                     (o / "consumer" / "perfetto.json").string() + "\n");
  CHECK(!fs::exists(o / "classic-eager" / "perfetto.json"));
  // The variant folder replaced by a symbolic link to a folder elsewhere: refused, nothing written
  // there.
  fs::rename(o / "consumer", dir / "elsewhere");
  fs::remove(dir / "elsewhere" / "perfetto.json");
  fs::create_directory_symlink(dir / "elsewhere", o / "consumer");
  r = run_cli("report " + o.string() + " --format perfetto", "owned-report4");
  CHECK(r.code == 2);
  CHECK(r.err ==
        "rebalance-sim: cannot write " + (o / "consumer").string() +
            ": is a symbolic link; report writes only into the run's own folders and files\n");
  CHECK(!fs::exists(dir / "elsewhere" / "perfetto.json"));
  // A folder without a manifest is not read unless --force.
  r = run_cli("report " + dir.string(), "owned-report5");
  CHECK(r.code == 2);
  CHECK(r.err.find("not an output folder of rebalance-sim (no .rebalance-sim-manifest.json)") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("output folders: check writes its reports when stdout is closed (SIGPIPE)") {
  const fs::path dir = scratch("pipe");
  const fs::path junit = dir / "results.xml";
  // `true` exits at once: every write of check to stdout meets a closed pipe.
  const auto r = run_cli("check " + kScenario + " --junit " + junit.string() + " --json " +
                             (dir / "r.json").string() + " | true",
                         "owned-pipe");
  CHECK(r.out.empty());
  const std::string xml = read_file(junit);
  CHECK(xml.rfind("<?xml", 0) == 0);
  CHECK(xml.size() > 100);
  CHECK(xml.substr(xml.size() - 14) == "</testsuites>\n");
  const auto results = nlohmann::json::parse(read_file(dir / "r.json"));
  CHECK(results["failed"] == 0);
  CHECK(results["passed"].get<int>() > 0);
  fs::remove_all(dir);
}

// explore, compare, sweep and merge own their --out folder through the same StagedOutput as run.
namespace {

const std::string kForeignRefusal =
    ": the folder is not empty and is not an output folder of rebalance-sim (it has no "
    ".rebalance-sim-manifest.json; it holds ";
const std::string kForeignAdvice =
    "); choose a new or empty folder, or pass --force to write into it (what it holds is kept, "
    "except entries named "
    "as the outputs)\n";

/// A folder holding a user's notes and a file of an output's name: not rebalance-sim's.
fs::path foreign_folder(const fs::path& dir, const std::string& output_name) {
  const fs::path o = dir / "o";
  fs::create_directories(o);
  std::ofstream(o / "notes.txt") << "my notes";
  std::ofstream(o / output_name) << "mine";
  return o;
}

std::vector<std::string> manifest_files(const fs::path& o) {
  const auto m = nlohmann::json::parse(read_file(o / ".rebalance-sim-manifest.json"));
  CHECK(m["written_by"] == "rebalance-sim");
  CHECK(m["variants"] == nlohmann::json::array());
  return m["files"].get<std::vector<std::string>>();
}

}  // namespace

TEST_CASE(
    "output folders: explore refuses a foreign folder, --force writes, a re-run replaces only its "
    "seed files") {
  const fs::path dir = scratch("explore");
  const fs::path o = foreign_folder(dir, "seed-6.json");
  const auto before = files_of(o);
  const std::string explore =
      "explore " + std::string(RSIM_SOURCE_DIR) + "/scenarios/explore/two-groups-short.json " +
      "--protocol consumer --inject-bug skip-revocation --quiet --out " + o.string();
  // Of seeds 1..12, 3, 6, 7 and 11 catch the injected bug (6 and 7 two violations each, 11 four):
  // on 1 ms links the two owners' callbacks are a few ms apart, and the poll() calls' drift of
  // docs/fidelity.md's finding 27 put o1's revocation first in the others (before it, 2..7).
  auto r = run_cli(explore + " --seeds 6..7", "owned-explore");
  CHECK(r.code == 2);
  CHECK(r.err == "rebalance-sim: cannot write " + o.string() + kForeignRefusal +
                     "\"notes.txt\", \"seed-6.json\"" + kForeignAdvice);
  CHECK(r.out.empty());  // refused before any seed ran
  CHECK(files_of(o) == before);
  CHECK(names_in(dir) == std::set<std::string>{"o"});

  r = run_cli(explore + " --seeds 6..7 --force", "owned-explore-force");
  CHECK(r.code == 1);
  CHECK(r.out.find("4 violations in 2 seeds") != std::string::npos);
  CHECK(manifest_files(o) == std::vector<std::string>{"seed-6.json", "seed-7.json"});
  CHECK(names_in(o) == std::set<std::string>{".rebalance-sim-manifest.json", "notes.txt",
                                             "seed-6.json", "seed-7.json"});
  CHECK(read_file(o / "seed-6.json") != "mine");
  CHECK(read_file(o / "notes.txt") == "my notes");
  CHECK(names_in(dir) == std::set<std::string>{"o"});

  // Owned now: the next explore replaces the seed files the manifest lists, keeps the notes.
  std::ofstream(o / "more-notes.txt") << "more";
  r = run_cli(explore + " --seeds 10..11", "owned-explore-again");
  CHECK(r.code == 1);
  CHECK(manifest_files(o) == std::vector<std::string>{"seed-11.json"});
  CHECK(names_in(o) == std::set<std::string>{".rebalance-sim-manifest.json", "more-notes.txt",
                                             "notes.txt", "seed-11.json"});
  CHECK(read_file(o / "more-notes.txt") == "more");

  // An explore with no failure still commits: the folder holds no stale seed file.
  r = run_cli("explore " + std::string(RSIM_SOURCE_DIR) +
                  "/scenarios/explore/two-groups-short.json --protocol consumer "
                  "--seeds 1..2 --quiet --out " +
                  o.string(),
              "owned-explore-clean");
  CHECK(r.code == 0);
  CHECK(manifest_files(o).empty());
  CHECK(names_in(o) ==
        std::set<std::string>{".rebalance-sim-manifest.json", "more-notes.txt", "notes.txt"});
  fs::remove_all(dir);
}

TEST_CASE(
    "output folders: compare --out refuses a foreign folder, --force writes, a re-run replaces "
    "only its files") {
  const fs::path dir = scratch("compare");
  const fs::path o = foreign_folder(dir, "report.html");
  const auto before = files_of(o);
  const std::string compare = "compare " + kScenario + " --real " + std::string(RSIM_SOURCE_DIR) +
                              "/fidelity/real/two-consumers --out " + o.string();
  auto r = run_cli(compare, "owned-compare");
  CHECK(r.code == 2);
  CHECK(r.err == "rebalance-sim: cannot write " + o.string() + kForeignRefusal +
                     "\"notes.txt\", \"report.html\"" + kForeignAdvice);
  CHECK(r.out.empty());
  CHECK(files_of(o) == before);
  CHECK(names_in(dir) == std::set<std::string>{"o"});

  r = run_cli(compare + " --force", "owned-compare-force");
  REQUIRE(r.code <= 1);  // 0 agrees, 1 differs: both write
  CHECK(manifest_files(o) == std::vector<std::string>{"compare.json", "report.html"});
  CHECK(names_in(o) == std::set<std::string>{".rebalance-sim-manifest.json", "compare.json",
                                             "notes.txt", "report.html"});
  CHECK(read_file(o / "report.html") != "mine");
  CHECK(read_file(o / "notes.txt") == "my notes");
  const auto first = files_of(o);

  // Owned: the same compare again gives the same bytes, and a file beside them is kept.
  std::ofstream(o / "more-notes.txt") << "more";
  const auto again = run_cli(compare, "owned-compare-again");
  CHECK(again.code == r.code);
  auto now = files_of(o);
  CHECK(now.erase("more-notes.txt") == 1);
  CHECK(now == first);
  CHECK(names_in(dir) == std::set<std::string>{"o"});
  fs::remove_all(dir);
}

TEST_CASE(
    "output folders: sweep and merge refuse a foreign folder, --force writes, a re-run replaces "
    "only its files") {
  const fs::path dir = scratch("sweep");
  const fs::path o = foreign_folder(dir, "runs.csv");
  const auto before = files_of(o);
  const std::string sweep =
      "sweep " + kScenario + " --vary /consumers/*/config/session.timeout.ms=10000,20000 --quiet";
  auto r = run_cli(sweep + " --seeds 1..2 --out " + o.string(), "owned-sweep");
  CHECK(r.code == 2);
  CHECK(r.err == "rebalance-sim: cannot write " + o.string() + kForeignRefusal +
                     "\"notes.txt\", \"runs.csv\"" + kForeignAdvice);
  CHECK(files_of(o) == before);
  CHECK(names_in(dir) == std::set<std::string>{"o"});

  r = run_cli(sweep + " --seeds 1..2 --force --out " + o.string(), "owned-sweep-force");
  CHECK(r.code == 0);
  CHECK(names_in(o) == std::set<std::string>{".rebalance-sim-manifest.json", "cells.csv",
                                             "cells.json", "notes.txt", "phase.html", "runs.csv",
                                             "runs.json", "worst"});
  CHECK(read_file(o / "runs.csv") != "mine");
  // The manifest lists exactly the files written (all but the notes and itself).
  auto listed = [&] {
    std::vector<std::string> files;
    for (const auto& [rel, bytes] : files_of(o))
      if (rel != "notes.txt" && rel != ".rebalance-sim-manifest.json") files.push_back(rel);
    return files;
  };
  CHECK(manifest_files(o) == listed());
  // 5 tables and pages, and per cell (c1, c2) its worst seed's (seed 1) summary, trace and report.
  CHECK(manifest_files(o).size() == 5 + 2 * 3);
  CHECK(fs::exists(o / "worst" / "c1" / "seed-1" / "report.html"));
  CHECK(fs::exists(o / "worst" / "c2" / "seed-1" / "report.html"));

  // Owned: a re-run over one seed replaces worst/ whole (a file planted in it goes), keeps the
  // notes.
  std::ofstream(o / "worst" / "planted") << "x";
  r = run_cli(sweep + " --seeds 3 --out " + o.string(), "owned-sweep-again");
  CHECK(r.code == 0);
  CHECK(!fs::exists(o / "worst" / "planted"));
  CHECK(manifest_files(o) == listed());
  CHECK(manifest_files(o).size() == 5 + 2 * 3);
  CHECK(!fs::exists(o / "worst" / "c1" / "seed-1"));
  CHECK(fs::exists(o / "worst" / "c1" / "seed-3" / "report.html"));
  CHECK(read_file(o / "notes.txt") == "my notes");

  // merge: the same ownership (a shard of the same sweep, merged into a foreign folder, then
  // forced).
  r = run_cli(sweep + " --seeds 3 --shard 1/1 --out " + (dir / "shards").string(),
              "owned-sweep-shard");
  REQUIRE(r.code == 0);
  const fs::path m = foreign_folder(dir / "m", "phase.html");
  const auto m_before = files_of(m);
  const std::string merge =
      "merge " + (dir / "shards" / "shard-1-of-1.json").string() + " --quiet --out " + m.string();
  r = run_cli(merge, "owned-merge");
  CHECK(r.code == 2);
  CHECK(r.err == "rebalance-sim: cannot write " + m.string() + kForeignRefusal +
                     "\"notes.txt\", \"phase.html\"" + kForeignAdvice);
  CHECK(files_of(m) == m_before);
  r = run_cli(merge + " --force", "owned-merge-force");
  CHECK(r.code == 0);
  auto merged = files_of(m);
  CHECK(merged.erase("notes.txt") == 1);
  auto swept = files_of(o);
  CHECK(swept.erase("notes.txt") == 1);
  CHECK(merged == swept);  // what the unsharded sweep wrote, manifest included
  fs::remove_all(dir);
}

TEST_CASE(
    "output folders: explore and compare hold the folder's lock, and SIGINT leaves no staging and "
    "the old outputs") {
  const fs::path dir = scratch("explore-sig");
  const fs::path o = dir / "o";
  const std::string scenario =
      std::string(RSIM_SOURCE_DIR) + "/scenarios/explore/two-groups-short.json";
  auto r = run_cli(
      "explore " + scenario +
          " --protocol consumer --inject-bug skip-revocation --quiet --seeds 7 --out " + o.string(),
      "owned-explore-sig0");
  REQUIRE(r.code == 1);
  const auto before = files_of(o);
  REQUIRE(before.size() == 2);  // seed-7.json and the manifest
  // Far more seeds than the test waits for: the explore is still running when it is stopped.
  Background explore({"explore", scenario, "--seeds", "1..100000", "--quiet", "--out", o.string()},
                     dir / "explore.err");
  REQUIRE(!wait_for_staging(o, explore.pid).empty());
  r = run_cli("compare " + kScenario + " --real " + std::string(RSIM_SOURCE_DIR) +
                  "/fidelity/real/two-consumers --out " + o.string(),
              "owned-explore-lock");
  CHECK(r.code == 2);
  CHECK(r.err == "rebalance-sim: cannot write " + o.string() +
                     ": another rebalance-sim is writing to this folder (it holds the folder's "
                     "lock); wait until it "
                     "ends, or choose another output folder\n");
  CHECK(explore.stop(SIGINT) == 128 + SIGINT);
  CHECK(read_file(dir / "explore.err") ==
        "rebalance-sim: interrupted by SIGINT; the outputs in progress were removed, the previous "
        "ones are intact\n");
  CHECK(!any_staging(dir));
  CHECK(files_of(o) == before);
  fs::remove_all(dir);
}
