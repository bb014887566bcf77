#!/usr/bin/env python3
"""Predicted against measured peak allocated memory on SimuMax's 8x B200 Megatron-Core runs
(tests/data/measured/simumax_b200_runs.json, MooreThreads/SimuMax v1.2 at 4dcaae5; docs/cluster.md,
"Checked against measured memory").

For every run with a measured peak, builds the run's model as a native config, hands the run's
Megatron-LM arguments to `budget-match layout --megatron-args` (native options with --native) and
compares the predicted peak of each pipeline stage with the measured max_memory_allocated() of that
stage. Runs whose memory was measured once for several micro-batch counts (`memory_reused_from_
other_mbc_run`) are listed but count once (the distinct measurements).

  python3 scripts/validate_memory.py --exe build/cli/budget-match [--native] [--format json]
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = os.path.join(HERE, '..', 'tests', 'data', 'measured', 'simumax_b200_runs.json')
CLUSTER = os.path.join(HERE, '..', 'examples', 'clusters', 'b200.json')
# The fitted part (docs/cluster.md): the one fitted term (context parallelism's second logits
# copy) was fitted on this run; every other run validates.
FIT_IDS = {'llama3_70b_l12_tp2_cp4_pp1_dp1_seq32768_mbc4_cef'}


def native_config(model):
    c = {'name': model['name'] + '-l%d' % model['num_layers_run'], 'hidden_size': model['hidden_size'],
         'num_layers': model['num_layers_run'], 'vocab_size': model['tokenizer_vocab_size'],
         'tie_embeddings': model['tied_embeddings'], 'mtp_layers': model['mtp_num_layers'] or 0}
    if model['mla']:
        m = model['mla']
        c['attention'] = {'num_heads': model['num_attention_heads'],
                          'mla': {'q_lora_rank': m['q_lora_rank'], 'kv_lora_rank': m['kv_lora_rank'],
                                  'qk_nope_head_dim': m['qk_nope_head_dim'],
                                  'qk_rope_head_dim': m['qk_rope_head_dim'], 'v_head_dim': m['v_head_dim']}}
    else:
        c['attention'] = {'num_heads': model['num_attention_heads'], 'head_dim': model['kv_channels'],
                          'num_kv_heads': model['num_query_groups']}
    if model['moe']:
        e = model['moe']
        c['ffn'] = {'num_experts': e['num_experts'], 'top_k': e['router_topk'], 'expert_dim': e['moe_ffn_hidden_size'],
                    'gated': True, 'num_shared_experts': 1 if e['shared_expert_intermediate_size'] else 0,
                    'shared_expert_dim': e['shared_expert_intermediate_size'] or 0,
                    'first_dense_layers': e['num_dense_first_layers'], 'dense_dim': e['dense_layer_ffn_hidden_size']}
    else:
        c['ffn'] = {'dense_dim': model['ffn_hidden_size'], 'gated': True}
    return c


def megatron_args(run, model):
    """The run's parallelism and training arguments (Megatron-LM flags; the model shape comes from
    the config, so only the flags that must agree with it are repeated)."""
    r = run
    args = ['--num-layers', str(model['num_layers_run']), '--hidden-size', str(model['hidden_size']),
            '--tensor-model-parallel-size', str(r['tp']), '--pipeline-model-parallel-size', str(r['pp']),
            '--context-parallel-size', str(r['cp']), '--micro-batch-size', str(r['micro_batch_size']),
            '--global-batch-size', str(r['global_batch_size']), '--seq-length', str(r['seq_length']),
            '--bf16', '--use-distributed-optimizer', '--sequence-parallel', '--recompute-granularity', 'full',
            '--recompute-method', 'block', '--recompute-num-layers', '0',
            '--make-vocab-size-divisible-by', str(model['make_vocab_size_divisible_by']),
            '--accumulate-allreduce-grads-in-fp32', '--transformer-impl', 'transformer_engine',
            '--hidden-dropout', '0.0', '--attention-dropout', '0.0', '--num-attention-heads',
            str(model['num_attention_heads']), '--swiglu', '--normalization', 'RMSNorm', '--disable-bias-linear',
            '--untie-embeddings-and-output-weights', '--tokenizer-type', 'NullTokenizer',
            '--vocab-size', str(model['vocab_size_arg']), '--max-position-embeddings', str(r['seq_length'])]
    if not model['mla']:
        args += ['--group-query-attention', '--num-query-groups', str(model['num_query_groups']),
                 '--kv-channels', str(model['kv_channels']), '--ffn-hidden-size', str(model['ffn_hidden_size'])]
    if r['cross_entropy_loss_fusion']:
        args += ['--cross-entropy-loss-fusion', '--cross-entropy-fusion-impl', r['cross_entropy_fusion_impl']]
    if model['moe']:
        e = model['moe']
        m = model['mla']
        args += ['--expert-model-parallel-size', str(r['ep']), '--moe-token-dispatcher-type', e['token_dispatcher'],
                 '--num-experts', str(e['num_experts']), '--moe-router-topk', str(e['router_topk']),
                 '--moe-ffn-hidden-size', str(e['moe_ffn_hidden_size']),
                 '--moe-shared-expert-intermediate-size', str(e['shared_expert_intermediate_size']),
                 '--moe-layer-freq', e['moe_layer_freq'], '--ffn-hidden-size', str(e['dense_layer_ffn_hidden_size']),
                 '--moe-grouped-gemm', '--moe-permute-fusion', '--multi-latent-attention', '--qk-layernorm',
                 '--q-lora-rank', str(m['q_lora_rank']), '--kv-lora-rank', str(m['kv_lora_rank']),
                 '--qk-head-dim', str(m['qk_nope_head_dim']), '--qk-pos-emb-head-dim', str(m['qk_rope_head_dim']),
                 '--v-head-dim', str(m['v_head_dim'])]
        if e['expert_capacity_factor']:
            args += ['--moe-expert-capacity-factor', str(e['expert_capacity_factor'])]
        if e['pad_expert_input_to_capacity']:
            args += ['--moe-pad-expert-input-to-capacity']
    return args


def native_options(run, model):
    r = run
    o = ['--tp', str(r['tp']), '--pp', str(r['pp']), '--cp', str(r['cp']), '--gpus', str(r['world_size']),
         '--micro-batch-size', str(r['micro_batch_size']), '--micro-batches', str(r['num_microbatches']),
         '--seq-len', str(r['seq_length']), '--distributed-optimizer',
         '--vocab-divisible-by', str(model['make_vocab_size_divisible_by'])]
    if r['tp'] > 1:
        o.append('--sequence-parallel')
    if r['cross_entropy_loss_fusion']:
        o.append('--cross-entropy-fusion')
    if model['moe']:
        o += ['--ep', str(r['ep'])]
        if model['moe']['expert_capacity_factor']:
            o += ['--capacity-factor', str(model['moe']['expert_capacity_factor'])]
    return o


def predict(exe, run, native, tmp):
    model, r = run['model'], run['run']
    cfg = os.path.join(tmp, run['id'] + '.json')
    with open(cfg, 'w') as f:
        json.dump(native_config(model), f)
    cmd = [exe, 'layout', cfg, '--cluster', CLUSTER, '--format', 'json']
    if native:
        cmd += native_options(r, model)
    else:
        args = os.path.join(tmp, run['id'] + '.args')
        with open(args, 'w') as f:
            f.write(' '.join(shlex.quote(w) for w in megatron_args(r, model)) + '\n')
        cmd += ['--gpus', str(r['world_size']), '--megatron-args', args]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 3):
        raise SystemExit(f"{run['id']}: {' '.join(cmd)}\n{p.stderr}")
    out = json.loads(p.stdout)
    return [s['peak_bytes'] / 2**30 for s in out['memory']['stages']]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--exe', required=True)
    ap.add_argument('--native', action='store_true', help='native layout options instead of --megatron-args')
    ap.add_argument('--format', choices=['table', 'json'], default='table')
    ap.add_argument('--max-median', type=float, help='fail when the median |error| (%%) is above')
    ap.add_argument('--max-worst', type=float, help='fail when the worst |error| (%%) is above')
    ap.add_argument('--max-low', type=float, help='fail when a prediction is below the measured peak by more (%%)')
    a = ap.parse_args()
    runs = json.load(open(RUNS))['runs']
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in runs:
            res = run['results']
            if res.get('real_alloc_gib') is None or res.get('memory_reused_from_other_mbc_run'):
                continue
            stages = predict(a.exe, run, a.native, tmp)
            measured = [res['real_alloc_gib_by_stage'][f'stage{i}'] for i in range(len(stages))]
            peak_p, peak_m = max(stages), max(measured)
            rows.append({'id': run['id'], 'part': 'fit' if run['id'] in FIT_IDS else 'validate',
                         'predicted_gib': round(peak_p, 2), 'measured_gib': peak_m,
                         'error_pct': round(100 * (peak_p / peak_m - 1), 2),
                         'stage_predicted_gib': [round(s, 2) for s in stages], 'stage_measured_gib': measured,
                         'simumax_gib': run['simumax_prediction']['perf_alloc_gib'],
                         'simumax_error_pct': run['simumax_prediction']['alloc_err_pct']})
    errs = [abs(r['error_pct']) for r in rows]
    summary = {'runs': len(rows), 'median_abs_error_pct': round(statistics.median(errs), 2),
               'worst_abs_error_pct': round(max(errs), 2), 'lowest_error_pct': round(min(r['error_pct'] for r in rows), 2)}
    for part in ('fit', 'validate'):
        e = [abs(r['error_pct']) for r in rows if r['part'] == part]
        if e:
            summary[part] = {'runs': len(e), 'median_abs_error_pct': round(statistics.median(e), 2),
                             'worst_abs_error_pct': round(max(e), 2)}
    if a.format == 'json':
        print(json.dumps({'rows': rows, 'summary': summary}, indent=1))
    else:
        print(f"{'run':52} {'part':8} {'pred':>7} {'meas':>7} {'err%':>6} {'SimuMax%':>8}  stages (pred / meas)")
        for r in rows:
            st = ' '.join(f'{p:.1f}/{m:.1f}' for p, m in zip(r['stage_predicted_gib'], r['stage_measured_gib']))
            print(f"{r['id']:52} {r['part']:8} {r['predicted_gib']:7.2f} {r['measured_gib']:7.2f} "
                  f"{r['error_pct']:6.2f} {r['simumax_error_pct']:8.2f}  {st}")
        print(json.dumps(summary))
    bad = []
    if a.max_median is not None and summary['median_abs_error_pct'] > a.max_median:
        bad.append('median')
    if a.max_worst is not None and summary['worst_abs_error_pct'] > a.max_worst:
        bad.append('worst')
    if a.max_low is not None and summary['lowest_error_pct'] < -a.max_low:
        bad.append('lowest')
    if bad:
        print('FAILED: ' + ', '.join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
