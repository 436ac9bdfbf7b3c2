// Policy losses over a batch of tokens (ALGORITHM.md section 5), token-mean over a mask, and the
// gradient in logp. Per token t with mask weight w (1 for tokens the policy sampled, 0 elsewhere):
//   MODE 0, clipped ratio (PPO/GRPO):
//     d = clamp(logp - old_logp, -20, 20), r = exp(d)
//     term = -min(r*A, clip(r, 1-eps_low, 1+eps_high)*A) + beta*k3,   k3 = exp(q) - q - 1, q = ref - logp
//     "clipped" = the clipped branch is strictly smaller (it is the active one of the min)
//   MODE 1, on-policy policy gradient: term = -A*logp + beta*k3 (no ratio; the examiner, Dr. Zero's eq. 2).
// Entries:
//   tokens:   out[t] = w*term (0 where w == 0), and per workgroup one partial sum of
//             (w*term, w, w*clipped, w*k3) into acc[4*wg ..]; clipped_ratio_finish.wgsl makes the means.
//   backward: out[t] = dL/dlogp[t] = (acc[0] + up[t]) * w * dterm/dlogp, where acc[0] = g_loss / sum(w) and
//             up is the upstream gradient of the per-token output (when HAS_UP).
// Masked-out tokens are skipped outright (not multiplied by 0), so garbage there cannot turn into NaN.
override MODE: u32 = 0u;
override HAS_REF: bool = false;
override HAS_UP: bool = false;

// clip_lo = 1 - eps_low and clip_hi = 1 + eps_high come from the host (float64 arithmetic).
struct Params { R: u32, clip_lo: f32, clip_hi: f32, beta: f32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> logp: array<f32>;
@group(0) @binding(2) var<storage, read> old_logp: array<f32>;
@group(0) @binding(3) var<storage, read> ref_logp: array<f32>;
@group(0) @binding(4) var<storage, read> adv: array<f32>;
@group(0) @binding(5) var<storage, read> mask: array<f32>;
@group(0) @binding(6) var<storage, read_write> out: array<f32>;
@group(0) @binding(7) var<storage, read_write> acc: array<f32>;
@group(0) @binding(8) var<storage, read> up: array<f32>;

#include "lib/grid.wgsl"
const MAX_LOG_RATIO = 20.0;

struct Token { term: f32, dterm: f32, clipped: f32, k3: f32 }

// exp(q) - q - 1 without the cancellation of the direct form near q = 0 (a Taylor series there).
fn k3(q: f32) -> f32 {
  if (abs(q) < 0.1) {
    return q * q * (0.5 + q * (1.0 / 6.0 + q * (1.0 / 24.0 + q * (1.0 / 120.0 + q * (1.0 / 720.0)))));
  }
  return exp(q) - q - 1.0;
}

fn token(t: u32) -> Token {
  var k: Token; // zero-initialised
  let lp = logp[t];
  let a = adv[t];
  if (MODE == 1u) {
    k.term = -a * lp;
    k.dterm = -a;
  } else {
    let d = lp - old_logp[t];
    let r = exp(clamp(d, -MAX_LOG_RATIO, MAX_LOG_RATIO));
    let unclipped = r * a;
    let clipped = clamp(r, p.clip_lo, p.clip_hi) * a;
    if (clipped < unclipped) {
      // The clipped branch is the min: it is constant in logp.
      k.term = -clipped;
      k.clipped = 1.0;
    } else {
      k.term = -unclipped;
      // d(-r*A)/dlogp = -r*A, and zero where the log-ratio clamp is active (as torch.clamp).
      k.dterm = select(0.0, -unclipped, abs(d) <= MAX_LOG_RATIO);
    }
  }
  if (HAS_REF) {
    let q = ref_logp[t] - lp;
    k.k3 = k3(q);
    // Skipped at beta = 0 so that an overflowing k3 (a metric then) cannot make 0*inf = NaN.
    if (p.beta != 0.0) {
      k.term += p.beta * k.k3;
      k.dterm += p.beta * (1.0 - exp(q));
    }
  }
  return k;
}

var<workgroup> sums: array<vec4f, WG>;

#include "lib/reduce_sum4.wgsl"

// Launched with at most a few hundred workgroups; each thread strides over the tokens.
@compute @workgroup_size(WG)
fn tokens(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  var s = vec4f(0.0);
  for (var t = wid.x * WG + lid; t < p.R; t += nwg.x * WG) {
    let w = mask[t];
    var v = 0.0;
    if (w != 0.0) {
      let k = token(t);
      v = w * k.term;
      s += vec4f(v, w, w * k.clipped, w * k.k3);
    }
    out[t] = v;
  }
  let s4 = reduceSum4(lid, s);
  if (lid == 0u) {
    acc[4u * wid.x] = s4.x;
    acc[4u * wid.x + 1u] = s4.y;
    acc[4u * wid.x + 2u] = s4.z;
    acc[4u * wid.x + 3u] = s4.w;
  }
}

@compute @workgroup_size(WG)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let t = gridIndex(gid, nwg);
  if (t >= p.R) { return; }
  let w = mask[t];
  var g = 0.0;
  if (w != 0.0) {
    var u = acc[0];
    if (HAS_UP) { u += up[t]; }
    g = u * w * token(t).dterm;
  }
  out[t] = g;
}
