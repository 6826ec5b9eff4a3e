// Protocol variants: enums inside the models, the contract's names only at the edges.
#include <doctest/doctest.h>

#include <string>

#include "models/protocol/config.hpp"
#include "models/protocol/variant.hpp"
#include "models/scenario/scenario.hpp"

using rsim::GroupProtocol;
using rsim::Variant;

TEST_CASE("every variant name of the contract maps to its enum and back") {
  // The four names of scenario-format.md's `protocols`, in their order.
  REQUIRE(rsim::protocol_variants().size() == 4);
  const Variant expected[] = {Variant::ClassicEager, Variant::ClassicCooperative, Variant::Consumer,
                              Variant::Share};
  for (std::size_t i = 0; i < 4; ++i) {
    const std::string& name = rsim::protocol_variants()[i];
    REQUIRE(rsim::variant_named(name).has_value());
    CHECK(*rsim::variant_named(name) == expected[i]);
    CHECK(std::string(rsim::variant_name(expected[i])) == name);
    // The group protocol is the one the loader's string function names.
    CHECK(std::string(rsim::group_protocol_name(rsim::group_protocol(expected[i]))) ==
          rsim::group_protocol_of(name));
  }
  // group.protocol values and misspellings are not variants.
  CHECK_FALSE(rsim::variant_named("classic").has_value());
  CHECK_FALSE(rsim::variant_named("classic_eager").has_value());
  CHECK_FALSE(rsim::variant_named("").has_value());
  static_assert(rsim::group_protocol(Variant::ClassicCooperative) == GroupProtocol::Classic);
  static_assert(rsim::group_protocol(Variant::Share) == GroupProtocol::Share);
  static_assert(rsim::variant_named("consumer") == Variant::Consumer);
}

TEST_CASE("the classic variants choose the assignors, the consumer variant does not") {
  // resolve_consumer_config: classic-eager lists range first, classic-cooperative only
  // cooperative-sticky (the contract's table); group.protocol follows the variant.
  rsim::ConsumerSpec c;
  c.name = "A";
  c.group = "g";
  const auto eager = rsim::resolve_consumer_config(c, "classic-eager", 1);
  CHECK(eager.group_protocol == "classic");
  CHECK(eager.partition_assignment_strategy ==
        std::vector<std::string>{"range", "cooperative-sticky"});
  const auto coop = rsim::resolve_consumer_config(c, "classic-cooperative", 1);
  CHECK(coop.group_protocol == "classic");
  CHECK(coop.partition_assignment_strategy == std::vector<std::string>{"cooperative-sticky"});
  CHECK(rsim::resolve_consumer_config(c, "consumer", 1).group_protocol == "consumer");
  CHECK(rsim::resolve_consumer_config(c, "share", 1).group_protocol == "share");
}
