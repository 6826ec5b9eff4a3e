#include "models/spec/events.hpp"

#include <utility>

#include "models/spec/overloaded.hpp"

namespace rsim {
namespace {

template <std::size_t... I>
std::optional<Verb> verb_named_impl(const std::string& name, std::index_sequence<I...>) {
  std::optional<Verb> out;
  ((name == std::variant_alternative_t<I, Verb>::kDo ? (void)out.emplace(std::in_place_index<I>)
                                                     : (void)0),
   ...);
  return out;
}

}  // namespace

std::optional<Verb> verb_named(const std::string& name) {
  return verb_named_impl(name, std::make_index_sequence<std::variant_size_v<Verb>>{});
}

const std::string* verb_consumer(const Verb& v) {
  return std::visit(Overloaded{
                        [](const verb::Start& x) -> const std::string* { return &x.consumer; },
                        [](const verb::Stop& x) -> const std::string* { return &x.consumer; },
                        [](const verb::Crash& x) -> const std::string* { return &x.consumer; },
                        [](const verb::Restart& x) -> const std::string* { return &x.consumer; },
                        [](const verb::Stall& x) -> const std::string* { return &x.consumer; },
                        [](const verb::Pause& x) -> const std::string* { return &x.consumer; },
                        [](const verb::Subscribe& x) -> const std::string* { return &x.consumer; },
                        [](const verb::AddPartitions&) -> const std::string* { return nullptr; },
                        [](const verb::Network&) -> const std::string* { return nullptr; },
                        [](const verb::PartitionNetwork&) -> const std::string* { return nullptr; },
                        [](const verb::FailCoordinator&) -> const std::string* { return nullptr; },
                        [](const verb::Produce&) -> const std::string* { return nullptr; },
                        [](const verb::StopBroker&) -> const std::string* { return nullptr; },
                        [](const verb::CrashBroker&) -> const std::string* { return nullptr; },
                        [](const verb::StartBroker&) -> const std::string* { return nullptr; },
                        [](const verb::RestartBroker&) -> const std::string* { return nullptr; },
                        [](const verb::Rollout&) -> const std::string* { return nullptr; },
                        [](const verb::DrainNode&) -> const std::string* { return nullptr; },
                    },
                    v);
}

const EventConfig* verb_config(const Verb& v) {
  if (const auto* s = std::get_if<verb::Start>(&v)) return s->has_config ? &s->config : nullptr;
  if (const auto* r = std::get_if<verb::Restart>(&v)) return r->has_config ? &r->config : nullptr;
  if (const auto* r = std::get_if<verb::Rollout>(&v)) return r->has_config ? &r->config : nullptr;
  return nullptr;
}

}  // namespace rsim
