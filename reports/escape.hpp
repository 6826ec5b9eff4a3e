#pragma once

#include <string>
#include <string_view>

namespace reports {

// Text made safe for HTML and XML, in element content and in quoted attribute values alike: the
// five markup characters become entities, and a newline becomes &#10; so that an attribute keeps
// it (an XML parser would otherwise normalise it to a space).
inline std::string markup_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\n': out += "&#10;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace reports
