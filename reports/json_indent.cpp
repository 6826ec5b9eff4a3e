#include "reports/json_indent.hpp"

namespace reports {

void append_indented_json(std::string& out, std::string_view compact, std::size_t base) {
  std::size_t depth = 0;
  const auto new_line = [&] {
    out += '\n';
    out.append(base + 2 * depth, ' ');
  };
  for (std::size_t i = 0; i < compact.size(); ++i) {
    const char c = compact[i];
    switch (c) {
      case '"': {
        // A string, escapes and all, up to its closing quote.
        std::size_t end = i + 1;
        while (end < compact.size() && compact[end] != '"') end += compact[end] == '\\' ? 2 : 1;
        end = end < compact.size() ? end : compact.size() - 1;
        out.append(compact, i, end + 1 - i);
        i = end;
        break;
      }
      case '{':
      case '[':
        // dump(2) writes an empty object or array as {} or [] on one line.
        if (i + 1 < compact.size() && compact[i + 1] == (c == '{' ? '}' : ']')) {
          out += c;
          out += compact[++i];
          break;
        }
        out += c;
        ++depth;
        new_line();
        break;
      case '}':
      case ']':
        if (depth > 0) --depth;
        new_line();
        out += c;
        break;
      case ',':
        out += ',';
        new_line();
        break;
      case ':':
        out += ": ";
        break;
      default:
        out += c;
    }
  }
}

}  // namespace reports
