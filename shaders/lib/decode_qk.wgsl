// From a decoding row's q/k/v projections to the queries and key attention reads, shared by decode_attention and
// decode_attention_lanes: Qwen3's RMSNorm of each q head and of k over the head dim (where p.qNormAt is not NONE),
// then RoPE of q and k at the row's position (pairs i, i + DH/2 of each head). The includer declares, in
// workgroup memory, `proj` (the group's q heads, then k, then v, DH each) and `headScale: array<f32, GROUP + 1u>`;
// the overrides WG, DH and GROUP; Params with eps, qNormAt, kNormAt, freqAt and step; and includes
// lib/rope_turns.wgsl and lib/decode_rows.wgsl. It has barriers: call it in uniform control flow, once proj is
// complete and visible; it ends with a barrier.

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
  let pos = basePosOf(b) + i32(p.step);
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
