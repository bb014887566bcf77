// Does a config's training state fit one GPU of the profile's kind (budget/gpu_fit.hpp).

#include "budget/gpu_fit.hpp"

#include <cctype>
#include <cmath>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/text_escape.hpp"
#include "experiments/cluster_example_texts.hpp"

namespace budget {
namespace {

std::vector<std::string> lower_words(const std::string& s) {
  std::vector<std::string> words;
  std::istringstream in(s);
  for (std::string w; in >> w;) {
    for (char& ch : w) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    words.push_back(w);
  }
  return words;
}

/// `name`'s words are the first words of `longer` ("NVIDIA H200" of "NVIDIA H200 SXM 141GB"),
/// case-insensitively; an empty name begins nothing.
bool begins_with_words(const std::string& longer, const std::string& name) {
  const std::vector<std::string> a = lower_words(longer), b = lower_words(name);
  if (b.empty() || b.size() > a.size()) return false;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

/// Bytes in binary units: "61.2 GiB", "1.90 TiB".
std::string bytes_text(double bytes) {
  if (bytes >= 1024.0 * gib) return fmt::format("{:.2f} TiB", bytes / (1024.0 * gib));
  return fmt::format("{:.1f} GiB", bytes / gib);
}

}  // namespace

const std::vector<ClusterExample>& cluster_examples() {
  static const std::vector<ClusterExample> examples = [] {
    std::vector<ClusterExample> out;
    for (std::size_t i = 0; i < detail::cluster_example_count; ++i) {
      const auto& e = detail::cluster_example_texts[i];
      out.push_back({e.path, parse_cluster_spec(e.text, e.path)});
    }
    return out;
  }();
  return examples;
}

ProfileGpu profile_gpu(const CalibrationProfile& profile) {
  ProfileGpu out;
  out.gpu_name = profile.device.name;
  const ClusterExample* example = nullptr;
  std::size_t matches = 0;
  for (const ClusterExample& e : cluster_examples()) {
    if (!begins_with_words(e.cluster.gpu_name, profile.device.name)) continue;
    ++matches;
    example = &e;
  }
  if (matches != 1) example = nullptr;
  if (profile.device.memory_gib > 0 && std::isfinite(profile.device.memory_gib)) {
    ClusterSpec c;
    if (example != nullptr) c = example->cluster;
    c.name = "one " + profile.device.name;
    c.gpu_name = profile.device.name;
    c.memory_bytes = static_cast<std::int64_t>(std::llround(profile.device.memory_gib * gib));
    c.reserved_bytes = 0;  // the profile's figure is what the device reported as its total
    c.memory_source = "the calibration profile's device.memory_gib";
    if (c.gpus_per_node < 1) c.gpus_per_node = 8;
    c.nodes = 1;
    out.source = GpuCapacitySource::profile;
    out.capacity_from = fmt::format("the profile (memory_gib {:g})", profile.device.memory_gib);
    out.cluster = std::move(c);
    return out;
  }
  if (example != nullptr) {
    out.source = GpuCapacitySource::cluster_example;
    out.capacity_from = fmt::format("{} ({})", example->path, example->cluster.gpu_name);
    out.cluster = example->cluster;
    out.cluster->nodes = 1;
    return out;
  }
  out.source = GpuCapacitySource::unknown;
  out.capacity_from =
      matches > 1 ? fmt::format("the profile has no memory_gib and its GPU \"{}\" names {} example clusters",
                                printable_text(profile.device.name), matches)
                  : fmt::format("the profile has no memory_gib and no example cluster has a GPU named \"{}\"",
                                printable_text(profile.device.name));
  return out;
}

OneGpuFit one_gpu_fit(const ArchConfig& config, const CalibrationProfile& profile, const Workload& workload) {
  OneGpuFit out;
  out.gpu = profile_gpu(profile);
  if (!out.gpu.cluster) return out;
  ParallelLayout one;
  one.gpus = 1;
  one.seq_len = workload.seq_len;
  one.recompute.kind = RecomputeKind::full;
  const TrainingMemory m = training_memory(config, one, *out.gpu.cluster, "one GPU of the profile's kind");
  out.fits = m.fits;
  out.needed_bytes = m.peak_bytes;
  out.capacity_bytes = m.capacity_bytes;
  for (const StageMemory& stage : m.stages) {
    if (stage.pipeline_rank == m.peak_stage) out.needed = stage.by_component;
  }
  if (!m.fits) {
    try {
      out.smallest = smallest_fitting_layout(config, *out.gpu.cluster, workload.seq_len);
    } catch (const TimeLimitError& e) {
      out.smallest_not_searched = e.text();  // the time limit passed: the rest of the answer stands
    }
  }
  return out;
}

std::string OneGpuFit::note() const {
  const std::string name = gpu.gpu_name.empty() ? std::string("GPU") : printable_text(gpu.gpu_name);
  if (!fits) return fmt::format("fits one {}: unknown ({})", name, gpu.capacity_from);
  const std::string needs = fmt::format("needs {} of {} usable; full recompute, micro-batch 1", bytes_text(needed_bytes),
                                        bytes_text(capacity_bytes));
  if (*fits) return fmt::format("fits one {} ({})", name, needs);
  std::string smallest_text = "no layout up to 4096 GPUs fits";
  if (!smallest_not_searched.empty()) smallest_text = "smallest layout not searched: " + smallest_not_searched;
  if (smallest && smallest->found) {
    const ParallelLayout& l = smallest->memory.layout;
    smallest_text = fmt::format("smallest layout that fits: {} GPUs, TP {} x PP {}{} x DP {}, EP {}, recompute {}",
                                l.gpus, l.tp, l.pp,
                                l.loop_placement == LoopPlacement::in_chunk
                                    ? std::string()
                                    : fmt::format(" (V {}, loop placement {})", l.virtual_stages, to_string(l.loop_placement)),
                                l.data_parallel(), l.ep, to_string(l.recompute.kind));
  }
  return fmt::format("does not fit one {} ({}; {})", name, needs, smallest_text);
}

}  // namespace budget
