// Included before every file of the WebAssembly build (-include, tools/wasm/CMakeLists.txt).
// The libc++ of Debian's emscripten 3.1.6 has no operator<=> for std::basic_string, so a
// defaulted <=> of a struct with a string member (TopicPartition, ShareKey) is deleted there.
// This supplies it with the standard's meaning (lexicographic by char_traits::compare), which
// gives the order the native build uses.
#pragma once
#include <compare>
#include <string>

#if defined(__EMSCRIPTEN__) && defined(_LIBCPP_VERSION)
namespace std {
inline strong_ordering operator<=>(const string& a, const string& b) noexcept {
  const int c = a.compare(b);
  return c < 0 ? strong_ordering::less : c > 0 ? strong_ordering::greater : strong_ordering::equal;
}
}  // namespace std
#endif
