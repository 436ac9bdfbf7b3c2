// The sampling of one row of logits by one workgroup (shaders/sample.wgsl has the method): sampleRow(r, lid)
// stores row r's token in ids[r] and its log-prob in logprobs[r], and leaves the token in `picked` for the
// workgroup. The including shader declares struct Params (the uniform p, with B, V, temperature and topP),
// override WG (a power of two) and the bindings logits, uniforms (read) and ids, logprobs (read_write).
// sampleRow has barriers: call it in uniform control flow.
const NONE = 0xFFFFFFFFu;
const FIXED_ONE = 2147483648.0; // 2^31: probability 1 in fixed point; V/2 rounding slack still fits a u32

var<workgroup> redM: array<f32, WG>;
var<workgroup> redS: array<f32, WG>;
var<workgroup> redI: array<u32, WG>;
var<workgroup> massHist: array<atomic<u32>, WG>;
var<workgroup> countHist: array<atomic<u32>, WG>;
var<workgroup> scanU: array<u32, WG>;
var<workgroup> need: u32; // probability mass (fixed point) still needed from the elements sharing the prefix
var<workgroup> totalMass: atomic<u32>;
var<workgroup> lastNonEmpty: atomic<u32>;
var<workgroup> chosen: atomic<u32>;
var<workgroup> picked: u32; // the row's token, for the caller

#include "lib/online_lse.wgsl"
#include "lib/radix_select.wgsl"
#include "lib/scan_u32.wgsl"

fn fixedMass(y: f32, lse: f32) -> u32 {
  return u32(min(exp(y - lse), 1.0) * FIXED_ONE + 0.5);
}

// After a pass's mass histogram is complete: the bin where the cumulative mass (in key order) reaches the
// mass still needed. Extend the prefix by it; done when that bin holds a single token (or ids are exhausted).
fn pickBin(lid: u32, level: u32) {
  let want = need; // read by all before the winner rewrites it (the scan's barriers separate the two)
  let c = atomicLoad(&massHist[lid]);
  let n = atomicLoad(&countHist[lid]);
  let incl = scanU32(lid, c);
  let excl = incl - c;
  if (excl < want && incl >= want) {
    need = want - excl;
    extendPrefix(lid, level, n == 1u);
  }
  workgroupBarrier();
}

fn sampleRow(r: u32, lid: u32) {
  let base = r * p.V;
  let greedy = p.temperature <= 0.0;
  let invT = select(1.0 / p.temperature, 1.0, greedy);

  // 1. logsumexp of y and the argmax of the logits.
  var ms = vec2f(NEG_BIG, 0.0);
  var best = NEG_BIG;
  var bestId = NONE;
  for (var j = lid; j < p.V; j += WG) {
    let x = logits[base + j];
    ms = lseStep(ms, x * invT);
    if (bestId == NONE || x > best) { // j only grows, so strict > keeps this thread's lowest tied id
      best = x;
      bestId = j;
    }
  }
  let lse = reduceLse(lid, ms.x, ms.y);

  if (greedy) {
    redM[lid] = best;
    redI[lid] = bestId;
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
      if (lid < stride) {
        let i1 = redI[lid];
        let i2 = redI[lid + stride];
        let v1 = redM[lid];
        let v2 = redM[lid + stride];
        if (i2 != NONE && (i1 == NONE || v2 > v1 || (v2 == v1 && i2 < i1))) {
          redM[lid] = v2;
          redI[lid] = i2;
        }
      }
      workgroupBarrier();
    }
    if (lid == 0u) {
      let id = redI[0];
      ids[r] = i32(id);
      logprobs[r] = logits[base + id] - lse;
      picked = id;
    }
    workgroupBarrier();
    return;
  }

  // 2. The nucleus threshold (everything is allowed when topP >= 1).
  if (lid == 0u) {
    thrKey = NONE;
    thrId = NONE;
    prefKey = 0u;
    prefId = 0u;
    done = 0u;
    atomicStore(&totalMass, 0u);
    atomicStore(&lastNonEmpty, 0u);
    atomicStore(&chosen, NONE);
  }
  workgroupBarrier();
  if (p.topP < 1.0) {
    var level = 0u;
    loop {
      atomicStore(&massHist[lid], 0u);
      atomicStore(&countHist[lid], 0u);
      workgroupBarrier();
      let pk = prefKey;
      let pi = prefId;
      var mine = 0u;
      for (var j = lid; j < p.V; j += WG) {
        let key = descKey(logits[base + j] * invT);
        if (inPrefix(level, key, j, pk, pi)) {
          let q = fixedMass(logits[base + j] * invT, lse);
          let d = digit(level, key, j);
          atomicAdd(&massHist[d], q);
          atomicAdd(&countHist[d], 1u);
          mine += q;
        }
      }
      if (level == 0u) { atomicAdd(&totalMass, mine); }
      workgroupBarrier();
      if (level == 0u && lid == 0u) {
        // Mass >= topP of the total (at least one unit, so the top token is always in).
        need = max(1u, u32(p.topP * f32(atomicLoad(&totalMass))));
      }
      workgroupBarrier();
      pickBin(lid, level);
      if (workgroupUniformLoad(&done) != 0u) { break; }
      level = nextLevel(level, p.V);
    }
  }
  let tk = workgroupUniformLoad(&thrKey);
  let ti = thrId;

  // 3. Inverse CDF in id order over the allowed tokens.
  let chunk = (p.V + WG - 1u) / WG;
  let lo = min(lid * chunk, p.V);
  let hi = min(lo + chunk, p.V);
  var mass = 0.0;
  for (var j = lo; j < hi; j++) {
    let y = logits[base + j] * invT;
    let key = descKey(y);
    if (key < tk || (key == tk && j <= ti)) { mass += exp(y - lse); }
  }
  redS[lid] = mass;
  if (mass > 0.0) { atomicMax(&lastNonEmpty, lid); }
  workgroupBarrier();
  for (var off = 1u; off < WG; off *= 2u) {
    let v = select(0.0, redS[lid - off], lid >= off);
    workgroupBarrier();
    redS[lid] += v;
    workgroupBarrier();
  }
  let incl = redS[lid];
  let excl = select(0.0, redS[max(lid, 1u) - 1u], lid > 0u);
  let goal = clamp(uniforms[r], 0.0, 1.0) * redS[WG - 1u];
  // Intervals [excl, incl) tile [0, Z); a target at or past Z (rounding, u = 1) goes to the last non-empty chunk.
  let last = atomicLoad(&lastNonEmpty);
  if (mass > 0.0 && excl <= goal && (goal < incl || lid == last)) {
    var acc = excl;
    var pick = NONE;
    var lastAllowed = NONE;
    for (var j = lo; j < hi; j++) {
      let y = logits[base + j] * invT;
      let key = descKey(y);
      if (key < tk || (key == tk && j <= ti)) {
        let pj = exp(y - lse);
        if (pj > 0.0) {
          lastAllowed = j;
          acc += pj;
          if (acc > goal) {
            pick = j;
            break;
          }
        }
      }
    }
    atomicMin(&chosen, select(lastAllowed, pick, pick != NONE));
  }
  workgroupBarrier();
  if (lid == 0u) {
    let id = atomicLoad(&chosen);
    ids[r] = i32(id);
    logprobs[r] = logits[base + id] * invT - lse;
    picked = id;
  }
  workgroupBarrier();
}
