#pragma once
// What the measured-run tests share: an element of a list by its id.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace budget::test {

/// The element of `items` (measured runs, predictions: anything with an `id`) whose id is `id`; the
/// test fails where there is none.
template <class T>
const T& with_id(const std::vector<T>& items, const std::string& id) {
  for (const T& item : items) {
    if (item.id == id) return item;
  }
  FAIL("no element with id " << id);
  return items.front();
}

}  // namespace budget::test
