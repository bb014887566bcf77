// The caches one cluster ranking's layout searches share per structure (search/structure_share.hpp).
#include "search/structure_share.hpp"

#include <utility>

#include "budget/config_io.hpp"

namespace budget::detail {

StructureShare::StructureShare(bool reference) {
  indexed_.indexed = true;
  indexed_.time_every_op = reference;
  indexed_.mutex = &parts_mutex_;
  rows_.mutex = &parts_mutex_;
}

const std::vector<StageExecutions>& StructureShare::stage_executions_of(const ArchConfig& config,
                                                                       const ParallelLayout& l) {
  const auto key = std::make_tuple(l.pp, l.virtual_stages, l.split, static_cast<int>(l.recompute.kind),
                                   l.recompute.full_layers, static_cast<int>(l.loop_placement));
  const std::lock_guard<std::mutex> lock(executions_mutex_);
  auto it = executions_.find(key);
  if (it == executions_.end()) {
    const std::vector<ModelChunk> chunks = model_chunks(config, l);
    std::vector<StageExecutions> stages;
    for (std::int64_t rank = 0; rank < l.pp; ++rank) stages.push_back(stage_executions(config, l, chunks, rank));
    it = executions_.emplace(key, std::move(stages)).first;
  }
  return it->second;  // std::map: the reference stays valid as other keys are added
}

std::string structure_key(const ArchConfig& config) {
  ArchConfig c = config;
  c.name.clear();
  c.notes.clear();
  c.ffn.num_experts = 0;
  c.ffn.expert_dim = 0;
  c.ffn.shared_expert_dim = 0;
  // Whether the config has experts and shared experts is part of the structure (the key would not
  // tell an expert count of 0 from a blanked one).
  return std::string(config.ffn.is_moe() ? "moe" : "dense") + (config.ffn.shared_expert_dim > 0 ? "+shared " : " ") +
         arch_config_to_json(c, -1);
}

StructureShare& StructureShares::of(const ArchConfig& config) {
  std::string key = structure_key(config);
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = shares_.find(key);
  if (it == shares_.end()) it = shares_.emplace(std::move(key), std::make_unique<StructureShare>()).first;
  return *it->second;
}

std::size_t StructureShares::size() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return shares_.size();
}

}  // namespace budget::detail
