#include "layout_options.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "budget/comm_overlap.hpp"
#include "budget/error.hpp"
#include "budget/layout_fields.hpp"
#include "budget/workload.hpp"
#include "option_checks.hpp"
#include "recipe_file_option.hpp"

namespace budget::cli {
namespace {

/// The flags that set a layout or its recipe, each named once, in the order an error names the
/// first one given. A recipe file (--megatron-args, --bridge-config) gives every one of them, so
/// each is refused beside it; `chosen_by_search`: --search chooses it (refused with --search);
/// `asks_for_a_layout`: without --search it asks for one layout (none given: the search).
struct LayoutFlag {
  const char* name;
  bool chosen_by_search;
  bool asks_for_a_layout;
};

constexpr LayoutFlag layout_flags[] = {
    {"--tp", true, true},
    {"--pp", true, true},
    {"--vp", true, true},
    {"--ep", true, true},
    {"--etp", true, true},
    {"--cp", true, true},
    {"--dp", true, true},
    {"--micro-batch-size", false, true},
    {"--micro-batches", true, true},
    {"--recompute", false, true},
    {"--sequence-parallel", true, true},
    {"--distributed-optimizer", false, true},
    {"--precision", false, false},
    {"--cross-entropy-fusion", false, false},
    {"--capacity-factor", false, false},
    {"--vocab-divisible-by", false, false},
    {"--overlap", false, false},
    {"--seq-len", false, false},
    {"--dropout", false, false},
    {"--no-flash-attention", false, false},
    {"--fp8-recipe", false, false},
    {"--cuda-graphs", false, false},
    {"--cuda-graph-modules", false, false},
    {"--moe-permute-fusion", false, false},
    {"--grad-reduce-in-bf16", false, false},
    {"--precision-aware-optimizer", false, false},
    {"--main-params-dtype", false, false},
    {"--exp-avg-dtype", false, false},
    {"--exp-avg-sq-dtype", false, false},
    {"--imbalance", false, false},
    {"--global-batch-tokens", false, false},
    {"--pipeline-layout", false, false},
};

/// The recipe file gives every flag of the table: each is refused beside it.
void refuse_beside_recipe_file(const CLI::App& command, bool bridge) {
  for (const LayoutFlag& flag : layout_flags) {
    if (command.count(flag.name) > 0) {
      throw_option_dependency_error(
          "layout", fmt::format("{} and {} both give it; give one", flag.name, recipe_file_option(bridge)));
    }
  }
}

/// --search: the search chooses the parallel sizes and the micro-batch count (refused when given),
/// needs --gpus, and with --megatron-args takes the rest from the file.
void check_search_options(const CLI::App& command, const LayoutOptions& o) {
  for (const LayoutFlag& flag : layout_flags) {
    if (flag.chosen_by_search && command.count(flag.name) > 0) {
      throw_option_dependency_error("layout", fmt::format("--search chooses TP, PP, V, EP, ETP, CP, DP and the "
                                                          "micro-batch count; leave {} out",
                                                          flag.name));
    }
  }
  if (command.count("--gpus") == 0) throw_option_dependency_error("layout", "--search needs --gpus");
  if (!o.cluster.megatron_args.empty()) refuse_beside_recipe_file(command, o.cluster.bridge_config);
}

/// Whether a flag that asks for one layout was given.
bool asks_for_a_layout(const CLI::App& command) {
  return std::any_of(std::begin(layout_flags), std::end(layout_flags),
                     [&](const LayoutFlag& flag) { return flag.asks_for_a_layout && command.count(flag.name) > 0; });
}

/// The config and the cluster file.
void add_layout_inputs(CLI::App& command, LayoutOptions& o) {
  command.add_option("config", o.config_path, "Native or Hugging Face config JSON")->required();
  add_cluster_option(command, o.cluster, "Cluster description (docs/cluster.md; examples/clusters/)")->required();
  add_nodes_option(command, o.cluster, "Nodes of the cluster (default: the file's)");
}

/// The range of a layout field, the one a run file's "layout" reads it in (budget/layout_fields.hpp).
CLI::Range field_range(const LayoutField& field) { return CLI::Range(field.minimum, field.maximum); }

/// The flags that set one scalar field of the layout's field table (budget/layout_fields.hpp) as it
/// is: the help is the row's doc (with this command's note, and an integer's or a number's range), the
/// value the member the row reads and writes. The flag names are the command line's own, as users'
/// scripts give them. Added by group, in this order, among the hand-written flags of the group.
enum class FieldFlagGroup { sizes, batch, memory, optimizer };

using FieldMember = std::variant<std::int64_t*, double*, bool*>;

struct FieldFlag {
  const char* name;
  const char* field;  ///< the row's JSON name
  FieldFlagGroup group;
  FieldMember (*member)(ParallelLayout& layout);  ///< the member the row's get/set read and write
  const char* note;                               ///< what the flag means to this command beyond the field; "": none
};

template <auto Member>
FieldMember member_of(ParallelLayout& l) {
  return &(l.*Member);
}

FieldMember bf16_main_grads_of(ParallelLayout& l) { return &l.optimizer_dtypes.bf16_main_grads; }
FieldMember precision_aware_of(ParallelLayout& l) { return &l.optimizer_dtypes.precision_aware; }

const FieldFlag field_flags[] = {
    {"--tp", "tp", FieldFlagGroup::sizes, member_of<&ParallelLayout::tp>, ""},
    {"--pp", "pp", FieldFlagGroup::sizes, member_of<&ParallelLayout::pp>, ""},
    {"--vp", "virtual_stages", FieldFlagGroup::sizes, member_of<&ParallelLayout::virtual_stages>, ""},
    {"--ep", "ep", FieldFlagGroup::sizes, member_of<&ParallelLayout::ep>, ""},
    {"--etp", "etp", FieldFlagGroup::sizes, member_of<&ParallelLayout::etp>, ""},
    {"--cp", "cp", FieldFlagGroup::sizes, member_of<&ParallelLayout::cp>, ""},
    {"--dp", "dp", FieldFlagGroup::batch, member_of<&ParallelLayout::dp>, ""},
    {"--micro-batch-size", "micro_batch_size", FieldFlagGroup::batch, member_of<&ParallelLayout::micro_batch_size>,
     "with --micro-batches: one layout; without any layout option: search"},
    {"--micro-batches", "micro_batches", FieldFlagGroup::batch, member_of<&ParallelLayout::micro_batches>, ""},
    {"--seq-len", "seq_len", FieldFlagGroup::batch, member_of<&ParallelLayout::seq_len>,
     "default: the workload's, 4096 for the paper's"},
    {"--distributed-optimizer", "distributed_optimizer", FieldFlagGroup::memory,
     member_of<&ParallelLayout::distributed_optimizer>, "shard the optimizer states over DP (experts: expert DP)"},
    {"--sequence-parallel", "sequence_parallel", FieldFlagGroup::memory, member_of<&ParallelLayout::sequence_parallel>,
     ""},
    {"--cross-entropy-fusion", "cross_entropy_fusion", FieldFlagGroup::memory,
     member_of<&ParallelLayout::cross_entropy_fusion>, "no fp32 copy of the logits"},
    {"--capacity-factor", "capacity_factor", FieldFlagGroup::memory, member_of<&ParallelLayout::capacity_factor>, ""},
    {"--imbalance", "imbalance", FieldFlagGroup::memory, member_of<&ParallelLayout::imbalance>, ""},
    {"--vocab-divisible-by", "vocab_divisible_by", FieldFlagGroup::memory,
     member_of<&ParallelLayout::vocab_divisible_by>, ""},
    {"--dropout", "dropout", FieldFlagGroup::memory, member_of<&ParallelLayout::dropout>, ""},
    {"--moe-permute-fusion", "moe_permute_fusion", FieldFlagGroup::optimizer,
     member_of<&ParallelLayout::moe_permute_fusion>, "TE's row map instead of an index per row"},
    {"--grad-reduce-in-bf16", "bf16_main_grads", FieldFlagGroup::optimizer, bf16_main_grads_of, ""},
    {"--precision-aware-optimizer", "precision_aware_optimizer", FieldFlagGroup::optimizer, precision_aware_of,
     "Transformer Engine's FusedAdam keeps the master weights and moments in the dtypes below; needs "
     "--distributed-optimizer"},
};

/// A flag's help from its row: "Doc; note (layout field NAME: MIN to MAX)", the doc's first letter
/// capitalized unless its first word holds a digit ("bf16"). A doc that is a Megatron argument alone
/// ("--use-distributed-optimizer") reads "Megatron --use-distributed-optimizer".
std::string field_flag_help(const LayoutField& field, const FieldFlag& flag) {
  std::string help(field.doc);
  if (help.rfind("--", 0) == 0) help = "Megatron " + help;
  const std::string first_word = help.substr(0, help.find(' '));
  if (std::none_of(first_word.begin(), first_word.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
    help[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(help[0])));
  }
  if (*flag.note != '\0') help += fmt::format("; {}", flag.note);
  help += fmt::format(" (layout field {}", field.name);
  if (field.type == LayoutFieldType::integer || field.type == LayoutFieldType::number) {
    help += fmt::format(": {} to {}", field.minimum, field.maximum);
  }
  return help + ")";
}

/// Adds the flags of `group` from their rows: an integer or a number an option bound to the member, a
/// boolean a flag. A number is range-checked here as well as by the layout's validation_error(): the
/// search would otherwise drop every layout as invalid and report "0 valid" without the reason.
/// (Integers are left to validation_error(), whose messages name the layout's sizes.)
void add_field_flags(CLI::App& command, ParallelLayout& l, FieldFlagGroup group) {
  for (const FieldFlag& flag : field_flags) {
    if (flag.group != group) continue;
    const LayoutField* row = find_layout_field(flag.field);
    if (row == nullptr) throw std::logic_error(fmt::format("{}: no layout field {}", flag.name, flag.field));
    const LayoutField& field = *row;
    const std::string help = field_flag_help(field, flag);
    std::visit(
        [&](auto* member) {
          using Member = std::remove_pointer_t<decltype(member)>;
          if constexpr (std::is_same_v<Member, bool>) {
            command.add_flag(flag.name, *member, help);
          } else if constexpr (std::is_same_v<Member, double>) {
            command.add_option(flag.name, *member, help)->check(field_range(field));
          } else {
            command.add_option(flag.name, *member, help);
          }
        },
        flag.member(l));
  }
}

/// The parallel sizes, the GPU count and the batch: the sizes and the batch from the field table;
/// --gpus is the cluster options' (it excludes --dp), --global-batch-tokens and --top the search's.
void add_parallel_options(CLI::App& command, LayoutOptions& o) {
  add_field_flags(command, o.layout, FieldFlagGroup::sizes);
  CLI::Option* gpus = add_gpus_option(command, o.cluster, "GPU count N (DP = N / (TP·CP·PP))");
  add_field_flags(command, o.layout, FieldFlagGroup::batch);
  command.get_option("--dp")->excludes(gpus);
  add_global_batch_tokens_option(command, o.cluster, "Search: tokens per step b·s·m·DP (default 4,194,304)");
  command.add_option("--top", o.top, "Search: best layouts printed (default 5)")->check(CLI::Range(1, 1000));
}

/// What the memory of a step depends on beyond the parallel sizes. Hand-written, as their form differs
/// from their field's: --recompute's text (full:N), --precision (parsed later), --loop-placement (the
/// cluster options', held by a search), --pipeline-layout (parsed on reading), --no-flash-attention
/// (the negation of flash_attention).
void add_memory_options(CLI::App& command, LayoutOptions& o) {
  ParallelLayout& l = o.layout;
  command.add_option("--recompute", o.recompute,
                     "none (default), selective (attention core), full or full:N layers per chunk");
  command.add_option("--precision", o.precision, "bf16 (default: bf16 weights, fp32 grads and Adam), fp16 or fp32");
  add_field_flags(command, l, FieldFlagGroup::memory);
  add_loop_placement_option(
      command, o.cluster,
      "Where a repeated loop sits on the pipeline: in_chunk (inside one model chunk), wrap (its passes "
      "wrap around the pipeline, each rank storing its loop layers once) or replicated (each stage "
      "stores what it runs, the copies' gradients all-reduced); a search holds it, else tries each "
      "(docs/cluster.md, \"Loops across pipeline stages\")");
  command.add_flag("--replicate-loop-weights", o.replicate_loop_weights, "The same as --loop-placement replicated");
  command.add_option_function<std::string>(
      "--pipeline-layout", [&l](const std::string& text) { l.split = PipelineSplit::per_stage(text, "layout"); },
      "Megatron's pipeline layout string (E, t, m, L, | between chunks, x*N, (...)*N); with --loop-placement "
      "wrap or replicated each t is one layer execution, the loop unrolled (docs/cluster.md)");
  command.add_flag("!--no-flash-attention", l.flash_attention, "Keep the s² softmax terms (no FlashAttention)");
}

/// The step time: calibration, attention, routing, overlap and kernels.
void add_step_time_options(CLI::App& command, LayoutOptions& o) {
  command.add_option("--profile,--calibration", o.profile_path,
                     "Calibration profile for the step time (default: the cluster file's, if it names one)");
  add_workload_option(command, o.workload,
                      "Workload JSON: the sequence length and attended keys of the step time (default: the paper's, "
                      "as the cluster ranking)");
  command
      .add_option("--attended-keys", o.attended_keys,
                  "Mean attended keys per query; 0: a causal window, (s + 1)/2 (default: the workload's: a document "
                  "mask's mean, else causal)")
      ->check(non_negative_real(1e12));
  add_max_nodes_per_token_option(
      command, o.cluster, "Node-limited routing: each token to at most M nodes (DeepSeek-V3; default unlimited)");
  command.add_option("--overlap", o.overlap,
                     "Collectives overlapped with compute: none or a list of tp,ep,cp,pp,dp (default dp)");
  command.add_option("--fp8-recipe", o.fp8_recipe,
                     "FP8 GEMMs: none (default, bf16), delayed, tensorwise, blockwise or mxfp8 (docs/calibration.md)");
  auto* graphs = command.add_flag("--cuda-graphs", o.cuda_graphs,
                                  "CUDA graphs of whole layers: no CPU launch gaps (Megatron-Core stack; without: 30 "
                                  "µs of CPU a launch, docs/calibration.md)");
  command
      .add_option("--cuda-graph-modules", o.cuda_graph_modules,
                  "CUDA graphs of these modules only (Megatron-LM's --cuda-graph-modules: attn, mlp, moe, moe_router, "
                  "moe_preprocess, mamba): their kernels launch nothing, the rest costs the CPU 30 µs a launch")
      ->excludes(graphs);
  command.add_option("--stack", o.stack,
                     "Kernel stack timed: profile (default: the profile's), pytorch-eager or megatron-core-te");
}

/// The team's recipe file read, the layout written, and --search.
void add_recipe_file_options_of_layout(CLI::App& command, LayoutOptions& o) {
  add_recipe_file_options(
      command, o.cluster,
      "Megatron-LM's arguments (shell words, or the bash-array file export --to megatron writes): the "
      "layout, batch, recompute, precision and overlap as a team runs them; needs --gpus (docs/megatron.md)",
      "the layout and recipe as --megatron-args; needs --gpus");
  command
      .add_option("--megatron-out", o.megatron_out,
                  "Write the layout (with a search: the best one) as Megatron-LM's arguments (MODEL_ARGS and "
                  "TRAINING_ARGS bash arrays)")
      ->check(output_path());
  command.add_flag(
      "--search", o.search,
      "Search the layouts on --gpus holding the recipe given: --megatron-args' file (its parallel sizes "
      "left to the search), or --micro-batch-size, --recompute, --distributed-optimizer where given and the "
      "precision, FP8 and optimizer options (docs/cluster.md, \"The recipe held\")");
}

/// Fusions and the optimizer's dtypes. The dtypes are hand-written: text kept as given and parsed
/// with the rest of the recipe (apply_native_recipe(), naming the flag).
void add_optimizer_options(CLI::App& command, LayoutOptions& o) {
  add_field_flags(command, o.layout, FieldFlagGroup::optimizer);
  command.add_option("--main-params-dtype", o.main_params_dtype,
                     "With --precision-aware-optimizer: fp32 (default) or fp16");
  command.add_option("--exp-avg-dtype", o.exp_avg_dtype,
                     "With --precision-aware-optimizer: Adam's first moment fp32 (default), bf16, fp16 or fp8");
  command.add_option("--exp-avg-sq-dtype", o.exp_avg_sq_dtype,
                     "With --precision-aware-optimizer: Adam's second moment fp32 (default), bf16, fp16 or fp8");
}

}  // namespace

void add_layout_options(CLI::App& command, LayoutOptions& o) {
  add_layout_inputs(command, o);
  add_parallel_options(command, o);
  add_memory_options(command, o);
  add_step_time_options(command, o);
  add_recipe_file_options_of_layout(command, o);
  add_optimizer_options(command, o);
  command
      .add_option("--run-tokens", o.run_tokens,
                  "Training tokens of the run: wall clock and GPU-hours (of the layout, or of each layout found)")
      ->check(positive_real(1e30));
  add_min_headroom_option(command, o.cluster.min_headroom_gib);
  add_format_option(command, o.format, document_formats());
}

LayoutRequest read_layout_request(const CLI::App& command, LayoutOptions& o) {
  o.layout.gpus = o.cluster.gpus;
  o.attended_keys_given = command.count("--attended-keys") > 0;
  o.seq_len_given = command.count("--seq-len") > 0;
  o.hold_micro_batch_size = command.count("--micro-batch-size") > 0;
  o.hold_recompute = command.count("--recompute") > 0;
  o.hold_distributed_optimizer = command.count("--distributed-optimizer") > 0;
  if (o.search) {
    check_search_options(command, o);
    return LayoutRequest::search;
  }
  if (!o.cluster.megatron_args.empty()) {
    refuse_beside_recipe_file(command, o.cluster.bridge_config);
    if (command.count("--gpus") == 0) {
      throw_option_dependency_error("layout",
                                    fmt::format("{} needs --gpus", recipe_file_option(o.cluster.bridge_config)));
    }
    return LayoutRequest::one_layout;
  }
  const bool layout_given = asks_for_a_layout(command);
  if (layout_given && (command.count("--micro-batch-size") == 0 || command.count("--micro-batches") == 0)) {
    throw_option_dependency_error("layout",
                                  "a layout needs --micro-batch-size and --micro-batches (give no layout option to "
                                  "search, or --search to search holding --micro-batch-size, --recompute and "
                                  "--distributed-optimizer where given)");
  }
  return layout_given ? LayoutRequest::one_layout : LayoutRequest::search;
}

std::string resolve_attention(LayoutOptions& o, const MegatronRun* team) {
  const Workload w = o.workload.load();
  if (!o.seq_len_given) o.layout.seq_len = w.seq_len;
  if (o.attended_keys_given) {
    return attended_keys_text(o.attended_keys, o.layout.seq_len) + " (--attended-keys)";
  }
  if (team != nullptr) {
    const MegatronAttention a = megatron_attention(*team, w);
    o.attended_keys = a.attended_keys;
    return attended_keys_text(o.attended_keys, o.layout.seq_len) + " (" + recipe_file_option(o.cluster.bridge_config) +
           ": " + a.says + ")";
  }
  o.attended_keys = o.layout.seq_len == w.seq_len ? layout_attended_keys(w) : 0.0;
  const bool from_workload = o.attended_keys > 0.0;
  return attended_keys_text(o.attended_keys, o.layout.seq_len) +
         (from_workload                   ? " (the workload's document mask; --attended-keys to change)"
          : o.layout.seq_len == w.seq_len ? " (the workload's causal mask)"
                                          : " (--seq-len differs from the workload's)");
}

bool priced_on_document_mask(const LayoutOptions& o) {
  if (o.attended_keys_given || !(o.attended_keys > 0.0)) return false;
  const Workload w = o.workload.load();
  return w.attention_mask == AttentionMask::document && w.seq_len == o.layout.seq_len;
}

CommOverlap parse_overlap(const std::string& text) {
  std::string unknown;
  const std::optional<CommOverlap> o = parse_comm_overlap(text, unknown);
  if (!o) {
    throw Error(fmt::format("value \"{}\" is not allowed; allowed: none or a comma-separated list of tp, ep, cp, "
                            "pp, dp",
                            unknown),
                "--overlap");
  }
  return *o;
}

TimeModelOptions time_model_options(const LayoutOptions& o, const TrainingRecipe& recipe,
                                    const MegatronKernelOptions* kernels) {
  TimeModelOptions t;
  t.recipe = recipe;
  t.cuda_graphs = o.cuda_graphs;
  if (kernels != nullptr) set_cuda_graphs(t, *kernels);
  for (const std::string& module : o.cuda_graph_modules) {
    if (!add_cuda_graph_module(t.cuda_graph_modules, module)) {
      throw Error(fmt::format("value \"{}\" is not allowed; allowed: attn, mlp, moe, moe_router, moe_preprocess, mamba",
                              module),
                  "--cuda-graph-modules");
    }
  }
  if (o.stack == "pytorch-eager")
    t.stack = KernelStack::pytorch_eager;
  else if (o.stack == "megatron-core-te")
    t.stack = KernelStack::megatron_core_te;
  else if (o.stack != "profile") {
    throw Error(fmt::format("value \"{}\" is not allowed; allowed: profile, pytorch-eager, megatron-core-te", o.stack),
                "--stack");
  }
  return t;
}

void apply_loop_placement(const LayoutOptions& o, TrainingRecipe& l) {
  if (o.replicate_loop_weights && !o.cluster.loop_placement.empty() && o.cluster.loop_placement != "replicated") {
    throw_option_dependency_error("layout", "--replicate-loop-weights means --loop-placement replicated; give one");
  }
  l.loop_placement = !o.cluster.loop_placement.empty()
                         ? parse_loop_placement(o.cluster.loop_placement, "--loop-placement")
                     : o.replicate_loop_weights ? LoopPlacement::replicated
                                                : LoopPlacement::in_chunk;
}

bool loop_placement_given(const LayoutOptions& o) {
  return !o.cluster.loop_placement.empty() || o.replicate_loop_weights;
}

void apply_native_recipe(const LayoutOptions& o, TrainingRecipe& l) {
  l.recompute = parse_recompute(o.recompute, "--recompute");
  l.precision = parse_training_precision(o.precision, "--precision");
  l.fp8 = parse_fp8_recipe(o.fp8_recipe, "--fp8-recipe");
  l.optimizer_dtypes.main_params = parse_state_dtype(o.main_params_dtype, "--main-params-dtype");
  l.optimizer_dtypes.exp_avg = parse_state_dtype(o.exp_avg_dtype, "--exp-avg-dtype");
  l.optimizer_dtypes.exp_avg_sq = parse_state_dtype(o.exp_avg_sq_dtype, "--exp-avg-sq-dtype");
  apply_loop_placement(o, l);
}

LayoutRecipe native_recipe(const LayoutOptions& o) {
  LayoutRecipe r;
  r.base = o.layout;
  apply_native_recipe(o, r.base);
  r.hold_micro_batch_size = o.hold_micro_batch_size;
  r.hold_recompute = o.hold_recompute;
  r.hold_distributed_optimizer = o.hold_distributed_optimizer;
  r.hold_loop_placement = loop_placement_given(o);
  return r;
}

}  // namespace budget::cli
