// perfetto.json: one variant's run in the Trace Event Format (chrome://tracing, ui.perfetto.dev).
// A process per consumer (application and heartbeat/background threads) and per coordinator
// broker; B/E spans strictly nested per thread, async b/e where spans overlap, instants for
// messages and counters for lag. A pure function of the timeline model.
#pragma once
#include <string>

#include "reports/timeline.hpp"

namespace reports {

std::string render_perfetto(const Timeline& timeline);

}  // namespace reports
