// The CLI under bad input and failing output (issue 11): exit 2 with a clear message naming the
// path, and nothing left behind; output only ever under out/ or --out.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "tools/staged_output.hpp"

namespace fs = std::filesystem;
using testing::run_cli;

namespace {
const char* kScenario = "scenarios/examples/two-consumers.json";

fs::path scratch(const std::string& tag) {
  const fs::path p =
      fs::temp_directory_path() / ("rsim-cli-robust-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return testing::remove_at_exit(p);
}

bool has_staging(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find("rebalance-sim-staging") != std::string::npos)
      return true;
  return false;
}
}  // namespace

TEST_CASE("cli robustness: a repeated --protocol is exit 2 and writes nothing") {
  const fs::path dir = scratch("protocol");
  const auto r = run_cli(std::string("run ") + kScenario +
                             " --protocol classic-eager --protocol classic-eager --out " +
                             (dir / "o").string(),
                         "robust-protocol");
  CHECK(r.code == 2);
  CHECK(r.err.find("--protocol: \"classic-eager\" given twice") != std::string::npos);
  CHECK(!fs::exists(dir / "o"));
  fs::remove_all(dir);
}

TEST_CASE(
    "cli robustness: --out on an existing file, or where nothing can be written, is exit 2 naming "
    "it") {
  const fs::path dir = scratch("out");
  std::ofstream(dir / "file") << "x";
  auto r =
      run_cli(std::string("run ") + kScenario + " --out " + (dir / "file").string(), "robust-out");
  CHECK(r.code == 2);
  CHECK(r.err.find("cannot write " + (dir / "file").string() + ": exists and is not a folder") !=
        std::string::npos);
  CHECK(testing::read_file(dir / "file") == "x");
  CHECK(!has_staging(dir));
  r = run_cli(std::string("run ") + kScenario + " --out /proc/rebalance-sim-out", "robust-out2");
  CHECK(r.code == 2);
  CHECK(r.err.find("cannot write /proc/rebalance-sim-out") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("cli robustness: check --junit to an unwritable path is exit 2") {
  const auto r = run_cli(std::string("check ") + kScenario + " --junit /proc/rebalance-sim.xml",
                         "robust-junit");
  CHECK(r.code == 2);
  CHECK(r.err.find("cannot write /proc/rebalance-sim.xml") != std::string::npos);
}

TEST_CASE("cli robustness: validate of a folder or of /dev/zero is exit 2 and returns") {
  auto r = run_cli("validate scenarios", "robust-validate-dir");
  CHECK(r.code == 2);
  CHECK(r.err.find("scenarios: is a directory, not a scenario file") != std::string::npos);
  r = run_cli("validate /dev/zero", "robust-validate-zero");
  CHECK(r.code == 2);
  CHECK(r.err.find("/dev/zero: larger than 64 MiB") != std::string::npos);
}

TEST_CASE("cli robustness: --seed -1 and describe --at 99999999999999999999 are refused cleanly") {
  auto r = run_cli(std::string("run ") + kScenario + " --seed -1 --out /tmp/never", "robust-seed");
  CHECK(r.code == 2);
  CHECK(r.err.find("must be an integer >= 0, got \"-1\"") != std::string::npos);
  CHECK(!fs::exists("/tmp/never"));
  r = run_cli(std::string("describe ") + kScenario + " --at 99999999999999999999", "robust-at");
  CHECK(r.code == 2);
  CHECK(r.err.find("--at") != std::string::npos);
  CHECK(r.err.find("99999999999999999999") != std::string::npos);
  r = run_cli(std::string("describe ") + kScenario + " --at 9223372036854775", "robust-at2");
  CHECK(r.code == 2);
  CHECK(r.err.find("--at: must be <= duration_ms (30000), got 9223372036854775") !=
        std::string::npos);
}

TEST_CASE("cli robustness: the scenario's name is one sanitised folder under out/, never a path") {
  const fs::path dir = scratch("name");
  std::ifstream in(std::string(RSIM_SOURCE_DIR) + "/" + kScenario);
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["name"] = "../../" + dir.filename().string() + "-escaped";
  doc["protocols"] = {"classic-eager"};
  std::ofstream(dir / "s.json") << doc.dump();
  const auto r = run_cli("run " + (dir / "s.json").string(), "robust-name");
  CHECK(r.code == 0);
  const fs::path expected =
      fs::path(RSIM_SOURCE_DIR) / "out" / (".._.._" + dir.filename().string() + "-escaped");
  CHECK(fs::exists(expected / "classic-eager" / "summary.json"));
  CHECK(!fs::exists(fs::path(RSIM_SOURCE_DIR).parent_path().parent_path() /
                    (dir.filename().string() + "-escaped")));
  CHECK(!has_staging(expected));
  fs::remove_all(expected);
  fs::remove_all(dir);
  CHECK(rsim::cli::default_output_dir("/etc") == fs::path("out/_etc"));
  CHECK(rsim::cli::default_output_dir("..") == fs::path("out/scenario"));
  CHECK(rsim::cli::default_output_dir("a b/c") == fs::path("out/a_b_c"));
}

TEST_CASE("cli robustness: a write that fails (a full disk) is an OutputError naming the file") {
  // /dev/full answers every write with ENOSPC, as a full disk does.
  CHECK_THROWS_WITH_AS(
      [] {
        rsim::cli::OutputFile f("/dev/full");
        f.append(std::string(1 << 16, 'x'));
        f.close();
      }(),
      "cannot write /dev/full: No space left on device", rsim::cli::OutputError);
}

TEST_CASE("cli robustness: a full tmpfs gives exit 2, the path, and no partial output") {
  const fs::path dir = scratch("tmpfs");
  const std::string mount = "mount -t tmpfs -o size=16k tmpfs " + dir.string() + " 2>/dev/null";
  if (std::system(mount.c_str()) != 0) {
    MESSAGE("cannot mount a tmpfs here (not privileged): the /dev/full test covers the write path");
    fs::remove_all(dir);
    return;
  }
  const auto r =
      run_cli(std::string("run ") + kScenario + " --out " + (dir / "o").string(), "robust-tmpfs");
  CHECK(r.code == 2);
  CHECK(r.err.find("cannot write " + (dir / "o").string()) != std::string::npos);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  CHECK(!fs::exists(dir / "o"));
  CHECK(std::system(("umount " + dir.string()).c_str()) == 0);
  fs::remove_all(dir);
}

TEST_CASE("cli robustness: the watchdog ends a run with exit 2 naming the actor and the instant") {
  const auto r =
      run_cli(std::string("run ") + kScenario +
                  " --protocol classic-eager --max-events 1000 --out /tmp/rsim-watchdog-never",
              "robust-watchdog");
  CHECK(r.code == 2);
  CHECK(r.err.find("watchdog: 1000 events fired, the limit of one run, at t=") !=
        std::string::npos);
  CHECK(r.err.find("(the last by ") != std::string::npos);
  CHECK(!fs::exists("/tmp/rsim-watchdog-never"));
  const auto t = run_cli(
      std::string("run ") + kScenario +
          " --protocol classic-eager --max-trace-bytes 10000 --out /tmp/rsim-watchdog-never",
      "robust-watchdog2");
  CHECK(t.code == 2);
  CHECK(t.err.find("watchdog: the trace passed 10000 bytes") != std::string::npos);
  CHECK(!fs::exists("/tmp/rsim-watchdog-never"));
}

TEST_CASE("cli robustness: --check-determinism runs twice and compares the traces' hashes") {
  const fs::path dir = scratch("determinism");
  const auto r = run_cli(
      std::string("run ") + kScenario + " --check-determinism --out " + dir.string(), "robust-det");
  CHECK(r.code == 0);
  CHECK(r.out.find("determinism [classic-eager]: trace sha256 ") != std::string::npos);
  CHECK(r.out.find(": identical") != std::string::npos);
  CHECK(r.out.find("DIFFERENT") == std::string::npos);
  fs::remove_all(dir);
}
