// The phase diagram of a sweep (DIR/phase.html): a heat map of one headline metric's median over
// the first two varied keys, one facet per value of the third (and further) keys and per series
// (settings variant / protocol). Each cell links to the report of its worst seed. A pure
// function of the cells: the same sweep gives the same bytes, sharded or not.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rsim::cli {

struct PhaseStat {
  double median = 0, p95 = 0, max = 0;
};

struct PhaseCell {
  std::string cell;                 // "c3"
  std::vector<std::size_t> coords;  // value index per axis
  std::string series;               // "<variant>/<protocol>" or "<protocol>"
  std::vector<PhaseStat> stats;     // per metric of PhaseInputs::metrics
  std::uint64_t worst_seed = 0;
  std::string report;  // relative link to the worst seed's report.html
};

struct PhaseInputs {
  std::string scenario;
  std::string metric;  // the metric that colours the map
  std::vector<std::string> metrics;
  std::string seeds;                                                   // "A..B"
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;  // path, values as text
  std::vector<PhaseCell> cells;
};

std::string render_phase_html(const PhaseInputs& in);

}  // namespace rsim::cli
