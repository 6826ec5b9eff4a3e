// The portable SHA-256 of the WebAssembly build (models/scenario/sha256_portable.hpp) gives the
// digest OpenSSL gives (sha256_hex, the native scenario_sha256) on the FIPS 180-4 examples and on
// every length around the padding's block boundaries.
#include <doctest/doctest.h>

#include <string>

#include <fmt/format.h>

#include "models/scenario/scenario.hpp"
#include "models/scenario/sha256_portable.hpp"

namespace {
std::string portable_hex(const std::string& bytes) {
  std::string hex;
  for (const auto b : rsim::portable::sha256(bytes)) hex += fmt::format("{:02x}", b);
  return hex;
}
}  // namespace

TEST_CASE("the portable sha256 is SHA-256: the FIPS 180-4 examples and OpenSSL's digest") {
  CHECK(portable_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(portable_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(portable_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  std::string bytes;
  for (int n = 0; n <= 200; ++n) {
    CAPTURE(n);
    CHECK(portable_hex(bytes) == rsim::sha256_hex(bytes));
    bytes += static_cast<char>((n * 37 + 11) & 0xff);
  }
}
