#pragma once

#include <cstdint>
#include <string>

namespace rsim {

// Kafka's Uuid.randomUuid().toString(): 16 random bytes made a version-4 UUID, written in
// URL-safe base64 without padding (22 characters). Kafka draws again when the text would start
// with '-'. `next` yields the random 64-bit words (an RNG stream, or a seeded hash chain).
template <class NextWord>
std::string random_uuid_string(NextWord&& next) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::uint64_t hi = next(), lo = next();
  while (kAlphabet[(hi >> 58) & 63] == '-') {
    hi = next();
    lo = next();
  }
  hi = (hi & ~0xf000ULL) | 0x4000ULL;
  lo = (lo & ~(0x3ULL << 62)) | (0x2ULL << 62);
  std::uint8_t bytes[16];
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<std::uint8_t>(hi >> (56 - 8 * i));
    bytes[8 + i] = static_cast<std::uint8_t>(lo >> (56 - 8 * i));
  }
  std::string out;
  for (int i = 0; i < 16; i += 3) {
    const std::uint32_t b0 = bytes[i];
    const std::uint32_t b1 = i + 1 < 16 ? bytes[i + 1] : 0;
    const std::uint32_t b2 = i + 2 < 16 ? bytes[i + 2] : 0;
    const std::uint32_t v = (b0 << 16) | (b1 << 8) | b2;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    if (i + 1 < 16) out += kAlphabet[(v >> 6) & 63];
    if (i + 2 < 16) out += kAlphabet[v & 63];
  }
  return out;
}

}  // namespace rsim
