// What recompute repeats of the mixer parts of a stack, per layer kind (step_compute.hpp).
#include "step_time/step_compute.hpp"

namespace budget {

double mixer_recompute_seconds(const StageExecutions& e, const LayerTimes& times) {
  if (times.kinds.empty()) return e.recomputed_layers * (times.base4.attention - times.base3.attention);
  double seconds = 0.0;
  for (const LayerKindTimes& k : times.kinds) {
    seconds += e.kind_recomputed_layers[static_cast<std::size_t>(k.kind)] * (k.times4.attention - k.times3.attention);
  }
  return seconds;
}

double mixer_op_recompute_seconds(const StageExecutions& e, const LayerTimes& times, std::size_t op) {
  if (times.kinds.empty()) return e.layers * (times.base4.by_kind[op] - times.base3.by_kind[op]);
  double seconds = 0.0;
  for (const LayerKindTimes& k : times.kinds) {
    seconds += e.kind_layers[static_cast<std::size_t>(k.kind)] * (k.times4.by_kind[op] - k.times3.by_kind[op]);
  }
  return seconds;
}

}  // namespace budget
