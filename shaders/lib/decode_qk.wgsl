// Decoding rows' q/k/v projections and from them the queries and key attention reads, shared by decode_attention
// (one row per workgroup) and decode_attention_lanes (several): where each column of the projections comes from
// (projColumn), the biases and LoRA adapters added to it (withBiasAndAdapter), then Qwen3's RMSNorm of each q head
// and of k over the head dim (where p.qNormAt is not NONE) and RoPE of q and k at the row's position (pairs i,
// i + DH/2 of each head; normAndRotate). The includer declares, in workgroup memory, `proj` (per row of the
// workgroup, PROJ_STRIDE values: the group's q heads, then k, then v, DH each), `headScale` ((GROUP + 1) per row) and
// `xa` (3 R per row: scale times the adapters' A products); the overrides WG, DH, GROUP and R; Params with rows,
// eps, qNormAt, kNormAt, freqAt, len0, biasQ/K/V and loraQ/K/V; and includes lib/rope_turns.wgsl and
// lib/decode_rows.wgsl.

/** The cache's length at this step: where the step's key and value go (p.len0: its length at step 0). */
fn cacheLen() -> u32 { return p.len0 + stepNow(); }

/** Where LoRA adapter `which` (0 q, 1 k, 2 v) is in the state, or NONE. */
fn loraOf(which: u32) -> u32 {
  switch (which) {
    case 0u: { return p.loraQ; }
    case 1u: { return p.loraK; }
    default: { return p.loraV; }
  }
}

/** Where bias `which` (0 q, 1 k, 2 v) is in the state, or NONE. */
fn biasOf(which: u32) -> u32 {
  switch (which) {
    case 0u: { return p.biasQ; }
    case 1u: { return p.biasK; }
    default: { return p.biasV; }
  }
}

/** Column c of proj for kv head kvh: (projection, weight row): q of head kvh * GROUP + c / DH, then k, then v. */
fn projColumn(kvh: u32, c: u32) -> vec2u {
  let nq = GROUP * DH;
  if (c >= nq + DH) { return vec2u(2u, kvh * DH + c - nq - DH); }
  if (c >= nq) { return vec2u(1u, kvh * DH + c - nq); }
  return vec2u(0u, kvh * nq + c);
}

/** proj's values per row of the workgroup: the group's q heads, then k, then v. */
override PROJ_STRIDE: u32 = (GROUP + 2u) * DH;

/**
 * acc (row `row` of projection `which` times the normed row) plus its bias and adapter; K is the hidden size,
 * xaAt where the row's adapter products start in xa.
 */
fn withBiasAndAdapter(which: u32, row: u32, K: u32, acc: f32, xaAt: u32) -> f32 {
  var out = acc;
  let bias = biasOf(which);
  if (bias != NONE) { out += stateF(bias + row); }
  let at = loraOf(which);
  if (at != NONE) {
    let bRow = at + R * K + row * R;
    var low = 0.0;
    for (var k = 0u; k < R; k++) { low += xa[xaAt + which * R + k] * stateF(bRow + k); }
    out += low;
  }
  return out;
}

// normAndRotate has barriers: call it in uniform control flow, once proj is complete and visible; it ends with a
// barrier.

/**
 * Thread t (of WG) of a workgroup whose proj holds `slots` rows, rows b0, b0 + 1, ... (a slot past the state's
 * rows takes the last row's position; the includer stores nothing of it).
 */
fn normAndRotate(t: u32, b0: u32, slots: u32) {
  let nq = GROUP * DH;
  if (p.qNormAt != NONE) {
    for (var i = t; i < slots * (GROUP + 1u); i += WG) {
      let at = (i / (GROUP + 1u)) * PROJ_STRIDE + (i % (GROUP + 1u)) * DH;
      var s = 0.0;
      for (var d = 0u; d < DH; d++) { s += proj[at + d] * proj[at + d]; }
      headScale[i] = 1.0 / sqrt(s / f32(DH) + p.eps);
    }
    workgroupBarrier();
    for (var i = t; i < slots * (nq + DH); i += WG) {
      let c = i % (nq + DH);
      let h = c / DH;
      let w = select(p.qNormAt, p.kNormAt, h == GROUP);
      let at = (i / (nq + DH)) * PROJ_STRIDE + c;
      proj[at] = proj[at] * headScale[(i / (nq + DH)) * (GROUP + 1u) + h] * stateF(w + c % DH);
    }
    workgroupBarrier();
  }
  let half = DH / 2u;
  let perRow = (GROUP + 1u) * half;
  for (var i3 = t; i3 < slots * perRow; i3 += WG) {
    let s = i3 / perRow;
    let i2 = i3 % perRow;
    let pos = basePosOf(min(b0 + s, p.rows - 1u)) + i32(stepNow());
    let i = i2 % half;
    let j0 = s * PROJ_STRIDE + (i2 / half) * DH + i;
    let f = vec2f(stateF(p.freqAt + 2u * i), stateF(p.freqAt + 2u * i + 1u));
    let sc = sincosTurns(turns(pos, f));
    let x0 = proj[j0];
    let x1 = proj[j0 + half];
    proj[j0] = x0 * sc.y - x1 * sc.x;
    proj[j0 + half] = x1 * sc.y + x0 * sc.x;
  }
  workgroupBarrier();
}
