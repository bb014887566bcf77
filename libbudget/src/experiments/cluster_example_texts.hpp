#pragma once
// Private: examples/clusters/*.json as compiled in. Defined in the file libbudget/CMakeLists.txt
// generates from cluster_examples_data.cpp.in; read by gpu_fit.cpp (a profile's GPU memory from
// the example cluster of its GPU name).

#include <cstddef>
#include <string_view>

namespace budget::detail {

struct ClusterExampleText {
  const char* path;       ///< "examples/clusters/<name>.json"
  std::string_view text;  ///< the file's text
};
extern const ClusterExampleText cluster_example_texts[];
extern const std::size_t cluster_example_count;

}  // namespace budget::detail
