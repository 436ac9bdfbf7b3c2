// One sampled token per row of [B, V] logits, deterministic given one uniform u in [0, 1) per row.
// One workgroup per row streams the row (any V):
//   1. Online logsumexp of y = logits / temperature and the argmax of the logits (ties: lowest id).
//   temperature <= 0: greedy. id = argmax, logprob = its log-softmax of the untempered logits.
//   2. Top-p (topP < 1): the nucleus is the smallest set of most probable tokens whose mass >= topP (equal
//      probabilities taken in id order). A radix select on the same composite key as topk_kl.wgsl
//      (descending logit, then id), but histogramming probability MASS per bin instead of counts, finds the
//      inclusive threshold of that set. Masses are fixed point, round(p * 2^31) in u32 workgroup atomics:
//      WGSL has no float atomics, and integer sums are exact and order-free, so the nucleus is deterministic.
//   3. Inverse CDF in id order over the allowed tokens: thread t owns the contiguous ids
//      [t * chunk, (t + 1) * chunk); a workgroup scan of the per-thread masses (f32) finds the thread whose
//      interval holds u * Z (Z = allowed mass), and that thread walks its chunk to the token.
// The returned log-prob is that of the token under the temperature-scaled FULL distribution, y_id - lse(y),
// i.e. before top-p truncation (the policy log-prob RL uses for ratios).
struct Params { B: u32, V: u32, temperature: f32, topP: f32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> uniforms: array<f32>;
@group(0) @binding(3) var<storage, read_write> ids: array<i32>;
@group(0) @binding(4) var<storage, read_write> logprobs: array<f32>;

override WG: u32; // the workgroup size, set by the host

#include "lib/sample_row.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= p.B) { return; }
  sampleRow(r, lid);
}
