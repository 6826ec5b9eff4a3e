// The headless-Chromium harness shared by the browser tests: Debian's chromium found on the
// machine, its command line with the flags the tests rely on, a shell call, a file read back and
// an attribute of the page's <html> element read from a dumped DOM.
#pragma once
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace browser_harness {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline int sh(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::string chromium() {
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (std::filesystem::exists(c)) return c;
  return {};
}

// The flags the issue fixes, and a fresh profile per start.
inline std::string chromium_command(const std::filesystem::path& profile) {
  return chromium() +
         " --headless --no-sandbox --disable-gpu --disable-background-networking "
         "--disable-component-update"
         " --disable-sync --no-first-run --user-data-dir=" +
         profile.string() + " --enable-logging=stderr --v=0 --hide-scrollbars";
}

inline std::string attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  const std::regex re("<html[^>]*\\s" + name + "=\"([^\"]*)\"");
  return std::regex_search(dom, m, re) ? m[1].str() : std::string("(absent)");
}

/// What a run folder's report must draw: the consumers started in every variant's trace (its
/// lanes) and summary.json's rebalances.
struct RunShape {
  std::size_t lanes = 0;
  std::size_t rebalances = 0;
};

inline RunShape run_shape(const std::filesystem::path& out) {
  RunShape e;
  for (const auto& d : std::filesystem::directory_iterator(out)) {
    if (!d.is_directory()) continue;
    const auto summary = nlohmann::json::parse(slurp(d.path() / "summary.json"));
    e.rebalances += summary["rebalances"].size();
    std::set<std::string> consumers;
    std::istringstream trace(slurp(d.path() / "trace.jsonl"));
    std::string line;
    while (std::getline(trace, line)) {
      const auto j = nlohmann::json::parse(line);
      if (j["type"] == "consumer.start") consumers.insert(j["consumer"].get<std::string>());
    }
    e.lanes += consumers.size();
  }
  return e;
}

}  // namespace browser_harness
