#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace reports {

// Text made safe for HTML and XML, in element content and in quoted attribute values alike: the
// five markup characters become entities, and a newline, a tab and a carriage return become
// character references so that an attribute keeps them (an XML parser would otherwise normalise
// them to spaces). The other control characters, and bytes that are not UTF-8, have no place in
// an XML 1.0 document at all (not even as references): they are written as the visible text
// \x01, so the document stays well-formed and nothing is lost silently.
inline std::string markup_escape(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  const auto visible = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += "&#39;";
        continue;
      case '\n':
        out += "&#10;";
        continue;
      case '\t':
        out += "&#9;";
        continue;
      case '\r':
        out += "&#13;";
        continue;
      default:
        break;
    }
    if (u < 0x20 || u == 0x7f) {
      visible(u);
      continue;
    }
    if (u < 0x80) {
      out += c;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, continuation bytes checked, overlong
    // forms, surrogates, code points past U+10FFFF and the non-characters U+FFFE/U+FFFF refused.
    const std::size_t len = u >= 0xf0 && u <= 0xf4 ? 4
                            : u >= 0xe0            ? (u <= 0xef ? 3 : 0)
                            : u >= 0xc2            ? 2
                                                   : 0;
    bool ok = len > 0 && i + len <= s.size();
    std::uint32_t cp = len == 2 ? u & 0x1f : len == 3 ? u & 0x0f : u & 0x07;
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) ok = false;
      cp = (cp << 6) | (b & 0x3f);
    }
    if (ok) {
      if ((len == 3 &&
           (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)) ||
          (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        ok = false;
    }
    if (!ok) {
      visible(u);
      continue;
    }
    out.append(s.substr(i, len));
    i += len - 1;
  }
  return out;
}

}  // namespace reports
