#include "attention_cudnn.hpp"

#if BUDGET_PROFILER_HAS_CUDNN

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "check.hpp"

namespace budget::profiler {
namespace {

// Unique ids of the graph's non-virtual tensors (the variant pack binds pointers to them).
enum Uid : std::int64_t {
  uid_q = 1, uid_k = 2, uid_v = 3, uid_o = 4, uid_stats = 5, uid_scale = 6, uid_mask_value = 7,
  uid_dout = 8, uid_dq = 9, uid_dk = 10, uid_dv = 11, uid_dq_accum = 12, uid_one_f32 = 13, uid_virtual = 100,
};

/// An owned backend descriptor.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) { BUDGET_CUDA_CALL(cudnnBackendCreateDescriptor(type, &d_)); }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  Desc(Desc&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  ~Desc() {
    if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  cudnnBackendDescriptor_t release() {
    auto d = d_;
    d_ = nullptr;
    return d;
  }

  template <typename T>
  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T& value) {
    BUDGET_CUDA_CALL(cudnnBackendSetAttribute(d_, name, type, 1, &value));
    return *this;
  }
  template <typename T>
  Desc& set_array(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const std::vector<T>& values) {
    BUDGET_CUDA_CALL(cudnnBackendSetAttribute(d_, name, type, static_cast<std::int64_t>(values.size()), values.data()));
    return *this;
  }
  Desc& finalize() {
    BUDGET_CUDA_CALL(cudnnBackendFinalize(d_));
    return *this;
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

using Dims = std::array<std::int64_t, 4>;

/// Builds the operation list; owns every descriptor until the graph is finalised.
class GraphBuilder {
 public:
  struct Tensor {
    cudnnBackendDescriptor_t d;
  };

  Tensor tensor(std::int64_t uid, cudnnDataType_t type, Dims dims, Dims strides, bool is_virtual = false,
                bool by_value = false, bool reorder_f16x16 = false) {
    Desc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const std::vector<std::int64_t> dv(dims.begin(), dims.end()), sv(strides.begin(), strides.end());
    const std::int64_t alignment = 16;
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, type)
        .set_array(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dv)
        .set_array(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, sv)
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, alignment)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, is_virtual)
        .set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, by_value);
    if (reorder_f16x16) {
      const cudnnBackendTensorReordering_t mode = CUDNN_TENSOR_REORDERING_F16x16;
      t.set(CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TYPE_TENSOR_REORDERING_MODE, mode);
    }
    t.finalize();
    return keep(std::move(t));
  }
  /// A virtual fp32 (or `type`) intermediate with a fresh id.
  Tensor temp(Dims dims, Dims strides, cudnnDataType_t type = CUDNN_DATA_FLOAT, bool reorder = false) {
    return tensor(next_virtual_++, type, dims, strides, true, false, reorder);
  }

  void pointwise(cudnnPointwiseMode_t mode, Tensor x, Tensor y, const Tensor* b = nullptr, const Tensor* t = nullptr,
                 cudnnDataType_t precision = CUDNN_DATA_FLOAT, std::int64_t axis = -1) {
    Desc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
        .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, precision);
    if (axis >= 0) pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, axis);
    pw.finalize();
    Desc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    const cudnnBackendDescriptor_t pwd = pw.get();
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, pwd)
        .set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x.d);
    if (b != nullptr) op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, b->d);
    if (t != nullptr) op.set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, t->d);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, y.d).finalize();
    keep(std::move(pw));
    add_op(std::move(op));
  }
  void binary(cudnnPointwiseMode_t mode, Tensor x, Tensor b, Tensor y) { pointwise(mode, x, y, &b); }

  void reduction(cudnnReduceTensorOp_t reduce, Tensor x, Tensor y) {
    Desc r(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    r.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, reduce)
        .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, f32)
        .finalize();
    Desc op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    const cudnnBackendDescriptor_t rd = r.get();
    op.set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x.d)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, y.d)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, rd)
        .finalize();
    keep(std::move(r));
    add_op(std::move(op));
  }

  void matmul(Tensor a, Tensor b, Tensor c) {
    Desc m(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    m.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, f32).finalize();
    Desc op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    const cudnnBackendDescriptor_t md = m.get();
    op.set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, a.d)
        .set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, b.d)
        .set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, c.d)
        .set(CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, md)
        .finalize();
    keep(std::move(m));
    add_op(std::move(op));
  }

  void reshape(Tensor x, Tensor y) {
    Desc op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x.d)
        .set(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, y.d)
        .finalize();
    add_op(std::move(op));
  }

  /// Causal mask on scores s [b, h, s, s]: keep where row ≥ column, else the by-value mask value
  /// (the lowest float). Indices in INT32, the comparison in BOOLEAN, as cudnn_frontend builds it.
  Tensor causal_mask(Tensor s, Dims dims, Dims strides, Tensor mask_value) {
    const Tensor row = temp(dims, strides, CUDNN_DATA_INT32), col = temp(dims, strides, CUDNN_DATA_INT32);
    pointwise(CUDNN_POINTWISE_GEN_INDEX, s, row, nullptr, nullptr, CUDNN_DATA_INT32, 2);
    pointwise(CUDNN_POINTWISE_GEN_INDEX, s, col, nullptr, nullptr, CUDNN_DATA_INT32, 3);
    const Tensor keep_mask = temp(dims, strides, CUDNN_DATA_BOOLEAN);
    pointwise(CUDNN_POINTWISE_CMP_GE, row, keep_mask, &col, nullptr, CUDNN_DATA_BOOLEAN);
    const Tensor out = temp(dims, strides);
    pointwise(CUDNN_POINTWISE_BINARY_SELECT, s, out, &mask_value, &keep_mask);
    return out;
  }

  /// Finalises the operation graph, then the first engine config (heuristics mode A, then the
  /// fallback list) whose execution plan finalises. Returns the plan; throws CudnnRefused.
  cudnnBackendDescriptor_t build_plan(cudnnHandle_t handle, std::int64_t& workspace) {
    Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    std::vector<cudnnBackendDescriptor_t> ops;
    for (const Desc& d : ops_) ops.push_back(d.get());
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle);
#pragma GCC diagnostic pop
    graph.set_array(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops);
    if (const cudnnStatus_t s = cudnnBackendFinalize(graph.get()); s != CUDNN_STATUS_SUCCESS)
      throw CudnnRefused("cuDNN rejected the attention operation graph: " + detail::status_text(s));
    std::string last_error = "no engine config";
    for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
      Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
      const cudnnBackendDescriptor_t gd = graph.get();
      heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, gd)
          .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode);
      if (const cudnnStatus_t s = cudnnBackendFinalize(heur.get()); s != CUDNN_STATUS_SUCCESS) {
        last_error = "heuristics: " + detail::status_text(s);
        continue;
      }
      std::int64_t count = 0;
      BUDGET_CUDA_CALL(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                                0, &count, nullptr));
      if (count <= 0) continue;
      std::vector<Desc> configs;
      std::vector<cudnnBackendDescriptor_t> raw;
      for (std::int64_t i = 0; i < count; ++i) {
        configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        raw.push_back(configs.back().get());
      }
      std::int64_t returned = 0;
      BUDGET_CUDA_CALL(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                                count, &returned, raw.data()));
      for (std::int64_t i = 0; i < returned; ++i) {
        Desc plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, handle);
#pragma GCC diagnostic pop
        plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw[static_cast<std::size_t>(i)]);
        if (const cudnnStatus_t s = cudnnBackendFinalize(plan.get()); s != CUDNN_STATUS_SUCCESS) {
          last_error = "execution plan: " + detail::status_text(s);
          continue;
        }
        std::int64_t got = 0;
        BUDGET_CUDA_CALL(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                                  1, &got, &workspace));
        return plan.release();
      }
    }
    throw CudnnRefused("cuDNN has no engine for this attention graph (" + last_error + ")");
  }

 private:
  Tensor keep(Desc&& d) {
    const Tensor t{d.get()};
    owned_.push_back(std::move(d));
    return t;
  }
  void add_op(Desc&& d) { ops_.push_back(std::move(d)); }

  std::vector<Desc> owned_;
  std::vector<Desc> ops_;
  std::int64_t next_virtual_ = uid_virtual;
};

}  // namespace

CudnnSdpa::CudnnSdpa(cudnnHandle_t handle, const SdpaShape& shape, bool backward)
    : handle_(handle), shape_(shape), backward_(backward) {
  const std::int64_t b = shape.docs, s = shape.len, h = shape.heads, hk = shape.kv_heads, d = shape.head_dim;
  if (d % 8 != 0 || d > 256)
    throw CudnnRefused(fmt::format("cuDNN fused attention needs head_dim a multiple of 8 and at most 256 (got {})", d));
  const cudnnDataType_t bf16 = CUDNN_DATA_BFLOAT16, f32 = CUDNN_DATA_FLOAT;
  // BSHD storage seen as [b, h, s, d] tensors.
  const Dims q_dims{b, h, s, d}, q_strides{s * h * d, d, h * d, 1};
  const Dims kv_dims{b, hk, s, d}, kv_strides{s * hk * d, d, hk * d, 1};
  const Dims kt_dims{b, hk, d, s}, kt_strides{s * hk * d, d, 1, hk * d};  // Kᵀ (and Vᵀ) views
  const Dims p_dims{b, h, s, s}, p_strides{h * s * s, s * s, s, 1};
  const Dims pt_strides{h * s * s, s * s, 1, s};
  const Dims r_dims{b, h, s, 1}, r_strides{h * s, s, 1, 1};
  const Dims one{1, 1, 1, 1};

  GraphBuilder g;
  const auto scale = g.tensor(uid_scale, f32, one, one, false, true);
  const auto mask_value = g.tensor(uid_mask_value, f32, one, one, false, true);
  const auto q = g.tensor(uid_q, bf16, q_dims, q_strides);
  const auto kt = g.tensor(uid_k, bf16, kt_dims, kt_strides);
  const auto stats = g.tensor(uid_stats, f32, r_dims, r_strides);

  // Scores: Q·Kᵀ·scale, causal mask.
  const auto scores = g.temp(p_dims, p_strides);
  g.matmul(q, kt, scores);
  const auto scaled = g.temp(p_dims, p_strides);
  g.binary(CUDNN_POINTWISE_MUL, scores, scale, scaled);
  const auto masked = g.causal_mask(scaled, p_dims, p_strides, mask_value);

  if (!backward) {
    const auto v = g.tensor(uid_v, bf16, kv_dims, kv_strides);
    const auto o = g.tensor(uid_o, bf16, q_dims, q_strides);
    // Softmax with statistics: stats = max + log Σ exp(x − max); P = exp(x − max) / Σ.
    const auto row_max = g.temp(r_dims, r_strides);
    g.reduction(CUDNN_REDUCE_TENSOR_MAX, masked, row_max);
    const auto shifted = g.temp(p_dims, p_strides);
    g.binary(CUDNN_POINTWISE_SUB, masked, row_max, shifted);
    const auto expd = g.temp(p_dims, p_strides);
    g.pointwise(CUDNN_POINTWISE_EXP, shifted, expd);
    const auto row_sum = g.temp(r_dims, r_strides);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, expd, row_sum);
    const auto log_sum = g.temp(r_dims, r_strides);
    g.pointwise(CUDNN_POINTWISE_LOG, row_sum, log_sum);
    g.binary(CUDNN_POINTWISE_ADD, row_max, log_sum, stats);
    const auto probs = g.temp(p_dims, p_strides);
    g.binary(CUDNN_POINTWISE_DIV, expd, row_sum, probs);
    g.matmul(probs, v, o);
  } else {
    // The backward as cudnn_frontend (≥ 1.0, cuDNN ≥ 8.9.5) builds it without dropout; grouped
    // K/V heads: dK and dV per query head, then summed over each group by a reduction.
    const bool grouped = hk != h;
    const Dims hq_kv_dims{b, h, s, d}, hq_kv_strides{h * s * d, s * d, d, 1};
    const auto vt = g.tensor(uid_v, bf16, kt_dims, kt_strides);
    const auto o = g.tensor(uid_o, bf16, q_dims, q_strides);
    const auto dout = g.tensor(uid_dout, bf16, q_dims, q_strides);
    const auto dq = g.tensor(uid_dq, bf16, q_dims, q_strides);
    const auto dk = g.tensor(uid_dk, bf16, kv_dims, kv_strides);
    const auto dv = g.tensor(uid_dv, bf16, kv_dims, kv_strides);
    const auto one_f32 = g.tensor(uid_one_f32, f32, one, one, false, true);
    const Dims accum_strides{h * s * d, s * d, d, 1};  // packed [b, h, s, d]
    const auto dq_accum = g.tensor(uid_dq_accum, f32, q_dims, accum_strides, false, false, true);

    // softmax_sum = rowsum(dO ⊙ O) · 1 (the dropout-scale slot of the pattern).
    const auto do_o = g.temp(q_dims, q_strides);
    g.binary(CUDNN_POINTWISE_MUL, dout, o, do_o);
    const auto do_o_sum = g.temp(r_dims, r_strides);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, do_o, do_o_sum);
    const auto softmax_sum = g.temp(r_dims, r_strides);
    g.binary(CUDNN_POINTWISE_MUL, do_o_sum, one_f32, softmax_sum);
    // P = exp(masked − stats).
    const auto shifted = g.temp(p_dims, p_strides);
    g.binary(CUDNN_POINTWISE_SUB, masked, stats, shifted);
    const auto probs = g.temp(p_dims, p_strides);
    g.pointwise(CUDNN_POINTWISE_EXP, shifted, probs);
    // dV = Pᵀ·dO (bf16 transposed view of P).
    const auto probs_t = g.temp(p_dims, pt_strides, bf16);
    g.reshape(probs, probs_t);
    if (grouped) {
      const auto dv_heads = g.temp(hq_kv_dims, hq_kv_strides, bf16);
      g.matmul(probs_t, dout, dv_heads);
      g.reduction(CUDNN_REDUCE_TENSOR_ADD, dv_heads, dv);
    } else {
      g.matmul(probs_t, dout, dv);
    }
    // dS = scale · P ⊙ (dO·Vᵀ · 1 − softmax_sum).
    const auto dp = g.temp(p_dims, p_strides);
    g.matmul(dout, vt, dp);
    const auto dp_kept = g.temp(p_dims, p_strides);
    g.binary(CUDNN_POINTWISE_MUL, dp, one_f32, dp_kept);
    const auto dp_centered = g.temp(p_dims, p_strides);
    g.binary(CUDNN_POINTWISE_SUB, dp_kept, softmax_sum, dp_centered);
    const auto ds_unscaled = g.temp(p_dims, p_strides);
    g.binary(CUDNN_POINTWISE_MUL, dp_centered, probs, ds_unscaled);
    const auto ds = g.temp(p_dims, p_strides);
    g.binary(CUDNN_POINTWISE_MUL, ds_unscaled, scale, ds);
    // dK = dSᵀ·Q.
    const auto ds_t = g.temp(p_dims, pt_strides, bf16);
    g.reshape(ds, ds_t);
    if (grouped) {
      const auto dk_heads = g.temp(hq_kv_dims, hq_kv_strides, bf16);
      g.matmul(ds_t, q, dk_heads);
      g.reduction(CUDNN_REDUCE_TENSOR_ADD, dk_heads, dk);
    } else {
      g.matmul(ds_t, q, dk);
    }
    // dQ = dS·K through the fp32 accumulator (zeroed before each run).
    const auto k = g.temp(kv_dims, kv_strides, bf16);
    g.reshape(kt, k);
    g.matmul(ds, k, dq_accum);
    g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_accum, dq);
  }
  plan_ = g.build_plan(handle, workspace_);
}

CudnnSdpa::~CudnnSdpa() {
  if (plan_ != nullptr) cudnnBackendDestroyDescriptor(plan_);
}

void CudnnSdpa::run(const SdpaBuffers& bufs, void* workspace, cudaStream_t stream) const {
  BUDGET_CUDA_CALL(cudnnSetStream(handle_, stream));
  float scale = 1.0f / std::sqrt(static_cast<float>(shape_.head_dim));
  float mask_value = std::numeric_limits<float>::lowest();
  float one_f32 = 1.0f;
  std::vector<std::int64_t> uids{uid_q, uid_k, uid_v, uid_o, uid_stats, uid_scale, uid_mask_value};
  std::vector<void*> ptrs{const_cast<void*>(bufs.q), const_cast<void*>(bufs.k), const_cast<void*>(bufs.v), bufs.o,
                          bufs.stats, &scale, &mask_value};
  if (backward_) {
    const std::size_t accum_bytes =
        static_cast<std::size_t>(shape_.docs * shape_.len * shape_.heads * shape_.head_dim) * sizeof(float);
    BUDGET_CUDA_CALL(cudaMemsetAsync(bufs.dq_accum, 0, accum_bytes, stream));
    for (auto [uid, p] : std::initializer_list<std::pair<std::int64_t, void*>>{
             {uid_dout, const_cast<void*>(bufs.dout)}, {uid_dq, bufs.dq}, {uid_dk, bufs.dk}, {uid_dv, bufs.dv},
             {uid_dq_accum, bufs.dq_accum}, {uid_one_f32, &one_f32}}) {
      uids.push_back(uid);
      ptrs.push_back(p);
    }
  }
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set_array(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids)
      .set_array(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, ptrs)
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, workspace)
      .finalize();
  BUDGET_CUDA_CALL(cudnnBackendExecute(handle_, plan_, pack.get()));
}

}  // namespace budget::profiler

#endif  // BUDGET_PROFILER_HAS_CUDNN
