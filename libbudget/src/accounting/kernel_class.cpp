#include "budget/kernel_class.hpp"

#include "budget/op_traits.hpp"
#include "base/enum_names.hpp"

namespace budget {

KernelClass kernel_class(OpKind kind) { return op_traits(kind).kernel; }

namespace {
constexpr auto kernel_class_names = detail::enum_names<KernelClass::not_timed>({
    {KernelClass::projection_gemm, "projection_gemm"}, {KernelClass::mlp_gemms, "mlp_gemms"},
    {KernelClass::expert_gemms, "expert_gemms"}, {KernelClass::attention, "attention"},
    {KernelClass::rms_norm, "rms_norm"}, {KernelClass::router_topk, "router_topk"},
    {KernelClass::gather_scatter, "gather_scatter"}, {KernelClass::activation, "activation"},
    {KernelClass::embedding_lookup, "embedding_lookup"}, {KernelClass::layer_glue, "layer_glue"},
    {KernelClass::short_convolution, "short_convolution"}, {KernelClass::recurrent_scan, "recurrent_scan"},
    {KernelClass::indexer_scores, "indexer_scores"}, {KernelClass::not_timed, "not_timed"}});
}  // namespace

std::string_view to_string(KernelClass kernel) { return detail::name_of(kernel_class_names, kernel); }

}  // namespace budget
