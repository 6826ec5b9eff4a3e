// Overloaded{...}: a visitor built from lambdas, for std::visit over the closed Message variant.
#pragma once

namespace rsim {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace rsim
