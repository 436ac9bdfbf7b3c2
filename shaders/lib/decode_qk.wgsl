// A decoding row's q/k/v projections and from them the queries and key attention reads, shared by
// decode_attention and decode_attention_lanes: where each column of the projections comes from (projColumn), the
// biases and LoRA adapters added to it (withBiasAndAdapter), then Qwen3's RMSNorm of each q head and of k over the
// head dim (where p.qNormAt is not NONE) and RoPE of q and k at the row's position (pairs i, i + DH/2 of each head;
// normAndRotate). The includer declares, in workgroup memory, `proj` (the group's q heads, then k, then v, DH
// each), `headScale: array<f32, GROUP + 1u>` and `xa: array<f32, 3u * R>` (scale times the adapters' A products);
// the overrides WG, DH, GROUP and R; Params with eps, qNormAt, kNormAt, freqAt, len0, biasQ/K/V and loraQ/K/V; and
// includes lib/rope_turns.wgsl and lib/decode_rows.wgsl.

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

/** acc (row `row` of projection `which` times the normed row) plus its bias and adapter; K is the hidden size. */
fn withBiasAndAdapter(which: u32, row: u32, K: u32, acc: f32) -> f32 {
  var out = acc;
  let bias = biasOf(which);
  if (bias != NONE) { out += stateF(bias + row); }
  let at = loraOf(which);
  if (at != NONE) {
    let bRow = at + R * K + row * R;
    var low = 0.0;
    for (var k = 0u; k < R; k++) { low += xa[which * R + k] * stateF(bRow + k); }
    out += low;
  }
  return out;
}

// normAndRotate has barriers: call it in uniform control flow, once proj is complete and visible; it ends with a
// barrier.

/** Thread t (of WG) of the workgroup of row b. */
fn normAndRotate(t: u32, b: u32) {
  let nq = GROUP * DH;
  if (p.qNormAt != NONE) {
    for (var h = t; h <= GROUP; h += WG) {
      var s = 0.0;
      for (var d = 0u; d < DH; d++) { s += proj[h * DH + d] * proj[h * DH + d]; }
      headScale[h] = 1.0 / sqrt(s / f32(DH) + p.eps);
    }
    workgroupBarrier();
    for (var c = t; c < nq + DH; c += WG) {
      let h = c / DH;
      let w = select(p.qNormAt, p.kNormAt, h == GROUP);
      proj[c] = proj[c] * headScale[h] * stateF(w + c % DH);
    }
    workgroupBarrier();
  }
  let pos = basePosOf(b) + i32(stepNow());
  let half = DH / 2u;
  for (var i2 = t; i2 < (GROUP + 1u) * half; i2 += WG) {
    let i = i2 % half;
    let j0 = (i2 / half) * DH + i;
    let f = vec2f(stateF(p.freqAt + 2u * i), stateF(p.freqAt + 2u * i + 1u));
    let sc = sincosTurns(turns(pos, f));
    let x0 = proj[j0];
    let x1 = proj[j0 + half];
    proj[j0] = x0 * sc.y - x1 * sc.x;
    proj[j0 + half] = x1 * sc.y + x0 * sc.x;
  }
  workgroupBarrier();
}
