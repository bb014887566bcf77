#pragma once
// std::visit over several lambdas: Overloaded{[](const A&) {...}, [](const B&) {...}}.

namespace budget {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace budget
