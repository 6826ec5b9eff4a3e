// The protocol variants a scenario runs (`protocols`, `--protocol`) and the group protocol each
// speaks (Kafka's `group.protocol`, or a share group). Inside the models they are enums; their
// strings, as the contract spells them, exist only at the edges: parsing and output.
#pragma once
#include <optional>
#include <string_view>

namespace rsim {

/// classic-eager, classic-cooperative, consumer (KIP-848), share (KIP-932).
enum class Variant { ClassicEager, ClassicCooperative, Consumer, Share };

/// The group protocol a consumer speaks: group.protocol=classic / consumer, or a share group.
enum class GroupProtocol { Classic, Consumer, Share };

/// The contract's name of a variant.
constexpr const char* variant_name(Variant v) {
  switch (v) {
    case Variant::ClassicEager:
      return "classic-eager";
    case Variant::ClassicCooperative:
      return "classic-cooperative";
    case Variant::Consumer:
      return "consumer";
    case Variant::Share:
      return "share";
  }
  return "";
}

/// The variant the contract names `name`; nullopt for any other name.
constexpr std::optional<Variant> variant_named(std::string_view name) {
  for (const Variant v :
       {Variant::ClassicEager, Variant::ClassicCooperative, Variant::Consumer, Variant::Share})
    if (name == variant_name(v)) return v;
  return std::nullopt;
}

/// Kafka's spelling of a group protocol: "classic", "consumer", "share".
constexpr const char* group_protocol_name(GroupProtocol p) {
  switch (p) {
    case GroupProtocol::Classic:
      return "classic";
    case GroupProtocol::Consumer:
      return "consumer";
    case GroupProtocol::Share:
      return "share";
  }
  return "";
}

/// The group protocol of a variant: classic for both classic variants.
constexpr GroupProtocol group_protocol(Variant v) {
  switch (v) {
    case Variant::ClassicEager:
    case Variant::ClassicCooperative:
      return GroupProtocol::Classic;
    case Variant::Consumer:
      return GroupProtocol::Consumer;
    case Variant::Share:
      return GroupProtocol::Share;
  }
  return GroupProtocol::Classic;
}

}  // namespace rsim
