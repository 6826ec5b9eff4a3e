// Re-indents compact JSON text (as nlohmann's dump() writes it) into the layout of dump(2),
// without building a document: summary.json's streamed rebalances are spooled compact and hold
// up to two lists of every partition each, which a parse and a dump(2) spent most of the final
// write on at 10,000 x 100,000 (issue 39).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace reports {

/// Appends `compact` to `out` laid out as dump(2) lays it out, every line after the first
/// indented by `base` more spaces (a value `base` spaces deep in its enclosing document).
/// `compact` must be dump()'s output (no whitespace outside strings); strings are copied as they
/// are, so their escapes stay dump()'s.
void append_indented_json(std::string& out, std::string_view compact, std::size_t base);

}  // namespace reports
