#pragma once
// Private: one name table per enum. A domain writes each enum's names once, as a constexpr
// table of {enumerator, name} in declaration order; its to_string() prints from the table and
// its readers parse with it (ObjectReader::enum_or, enum_named), so a name is never spelled
// twice and the "allowed:" list of an error is the table itself.
//
// A table is made by enum_names<Last>({rows}), which checks at compile time that it holds one
// row per enumerator 0..Last, in declaration order, each named (the enum has no explicit values):
// a table that misses or reorders an enumerator does not compile (what -Wswitch did for the
// switches these tables replace).

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace budget::detail {

template <class Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

template <class Enum, std::size_t N>
using EnumNames = std::array<EnumName<Enum>, N>;

/// True when `names` holds every enumerator 0..last once, in order, each with a non-empty name.
template <class Enum, std::size_t N>
constexpr bool covers_in_order(const EnumNames<Enum, N>& names, Enum last) {
  using U = std::underlying_type_t<Enum>;
  if (static_cast<std::size_t>(static_cast<U>(last)) + 1 != N) return false;
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(static_cast<U>(names[i].value)) != i || names[i].name.empty()) return false;
  }
  return true;
}

/// The table of `rows`, checked: a constant expression only when covers_in_order(rows, Last).
template <auto Last, std::size_t N>
constexpr EnumNames<decltype(Last), N> enum_names(const EnumName<decltype(Last)> (&rows)[N]) {
  EnumNames<decltype(Last), N> names{};
  for (std::size_t i = 0; i < N; ++i) names[i] = rows[i];
  if (!covers_in_order(names, Last)) throw std::logic_error("an enum name table misses or reorders an enumerator");
  return names;
}

/// The name of `value` in `names`; `unknown` for a value outside the enum (a cast integer).
template <class Enum, std::size_t N>
constexpr std::string_view name_of(const EnumNames<Enum, N>& names, Enum value, std::string_view unknown = "?") {
  for (const auto& row : names) {
    if (row.value == value) return row.name;
  }
  return unknown;
}

/// The enumerator called `name` (exact, case-sensitive), or nothing.
template <class Enum, std::size_t N>
constexpr std::optional<Enum> enum_named(const EnumNames<Enum, N>& names, std::string_view name) {
  for (const auto& row : names) {
    if (row.name == name) return row.value;
  }
  return std::nullopt;
}

/// The names joined for an error's "allowed:" list: `quote` around each, ", " between.
template <class Enum, std::size_t N>
std::string names_list(const EnumNames<Enum, N>& names, std::string_view quote = "") {
  std::string out;
  for (const auto& row : names) {
    if (!out.empty()) out += ", ";
    out.append(quote).append(row.name).append(quote);
  }
  return out;
}

/// The class a pointer to member belongs to (enum_rows()'s row type).
template <class Member>
struct member_class;
template <class Class, class Value>
struct member_class<Value Class::*> {
  using type = Class;
};

/// A table of one row per enumerator 0..Last, in declaration order, each row's `Key` member its
/// enumerator (the op-traits table, accounting/op_traits.cpp): checked at compile time as
/// enum_names() is, so a row missed or out of order does not compile. Read a row by its
/// enumerator: rows[static_cast<std::size_t>(value)].
template <auto Last, auto Key, std::size_t N>
constexpr std::array<typename member_class<decltype(Key)>::type, N> enum_rows(
    const typename member_class<decltype(Key)>::type (&rows)[N]) {
  using U = std::underlying_type_t<decltype(Last)>;
  std::array<typename member_class<decltype(Key)>::type, N> table{};
  if (static_cast<std::size_t>(static_cast<U>(Last)) + 1 != N) {
    throw std::logic_error("an enum table misses an enumerator");
  }
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(static_cast<U>(rows[i].*Key)) != i) {
      throw std::logic_error("an enum table misses or reorders an enumerator");
    }
    table[i] = rows[i];
  }
  return table;
}

}  // namespace budget::detail
