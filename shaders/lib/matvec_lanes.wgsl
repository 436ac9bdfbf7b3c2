// The column tiles of decoding's matrix-vector products shaped for a CPU driver (decode_matvec_lanes.wgsl, one tile
// per workgroup; decode_mlp_lanes.wgsl, every tile of a layer's MLP in one workgroup, through
// lib/matvec_lanes_tiles.wgsl; decode_head_lanes.wgsl, the LM head's), where a workgroup runs as SIMD lanes on one
// core and every barrier switches between its lanes' saved states. The layout of matmul_subgroup_k4.wgsl: a
// workgroup is one subgroup of 8 lanes (the host runs these kernels only where subgroups are exactly 8 wide)
// computing TR rows x 8 COLS columns from c0; lane t < TR holds row t's input (the lanes past TR hold zeros), every
// lane the weights of columns c0 + t + 8j (j < COLS), read 8 at a time as vec4 words (lib/weights8.wgsl), and the
// rows' inputs reach every lane by subgroupBroadcast, so every load is one lane's own and nothing crosses lanes
// through memory: no barrier. Lane t RMS-norms its own row (gated, head). TR (8, or the call's rows rounded up to a
// power of two) keeps a call of few rows from paying for 8: with one row, a tile of 8 took 1.2-1.7x the time. Rows
// past the call's n repeat the last one and are never stored; stopped rows (lib/decode_rows.wgsl) are not stored
// either. K (a row's length) is a multiple of 8. Same numbers as the unfused ops up to the order of f32 sums.
// Accumulators are zeroed explicitly (`Tile()`): on lavapipe a bare `var acc: T;` inside a loop kept the previous
// iteration's values.
//
// The includer declares the overrides WG and TR; Params with rows, n and eps; `state`
// (lib/decode_rows.wgsl), `x: array<vec4f>` (the rows' hidden states) and `y: array<f32>` (read_write: the head's
// logits); and `weightsOf(m, c, g, K, N) -> Eight`, the g-th 8 weights of column c of matrix m of N columns of
// length K (m a constant of the call, or uniform in the workgroup).
const COLS = 4u; // columns per lane

/** acc[i][j]: row r0 + i (i < TR), column c0 + 8j + lane. */
alias Tile = array<array<f32, COLS>, 8>;

/** Columns of a workgroup's tile. */
const TILE_COLS = 8u * COLS;

/** The tile's row r (rows past the end repeat the last one, never stored). */
fn rowOf(r0: u32, r: u32) -> u32 { return min(r0 + r, p.n - 1u); }

/** Whether row r0 + r is a live row of the call. */
fn live(r0: u32, r: u32) -> bool { return r0 + r < p.n && !stoppedRow(r0 + r); }

/** Whether any row of the tile is live (uniform per workgroup). */
fn anyLive(r0: u32) -> bool {
  for (var r = 0u; r < TR; r++) { if (live(r0, r)) { return true; } }
  return false;
}

/** Eight f32 values of the state buffer from word i. */
fn state8(i: u32) -> Eight {
  return Eight(
    vec4f(stateF(i), stateF(i + 1u), stateF(i + 2u), stateF(i + 3u)),
    vec4f(stateF(i + 4u), stateF(i + 5u), stateF(i + 6u), stateF(i + 7u)),
  );
}

/** Elements 8g .. 8g + 7 of RMSNorm(x)[b] (s: the row's 1 / rms; zeros on a lane past the tile's rows). */
fn normed8(lane: u32, b: u32, s: f32, g: u32, K: u32, normAt: u32) -> Eight {
  if (lane >= TR) { return Eight(vec4f(0.0), vec4f(0.0)); }
  let i = (b * K) / 4u + 2u * g;
  let n = state8(normAt + 8u * g);
  return Eight(x[i] * s * n.lo, x[i + 1u] * s * n.hi);
}

/** 1 / rms of row b of x (rows of length K). */
fn rowScale(lane: u32, b: u32, K: u32) -> f32 {
  if (lane >= TR) { return 0.0; }
  let i = (b * K) / 4u;
  var ss = 0.0;
  for (var k = 0u; k < K / 4u; k++) { ss += dot(x[i + k], x[i + k]); }
  return 1.0 / sqrt(ss / f32(K) + p.eps);
}

/** acc[i][j] += h_i · e_j over one group of 8 elements, h_i being lane i's `h` (broadcast to every lane). */
fn fold(acc: ptr<function, Tile>, h: Eight, e: array<Eight, COLS>) {
  for (var kk = 0u; kk < 4u; kk++) {
    let a = lanes8(h.lo[kk]);
    for (var i = 0u; i < TR; i++) {
      for (var j = 0u; j < COLS; j++) { (*acc)[i][j] += a[i] * e[j].lo[kk]; }
    }
  }
  for (var kk = 0u; kk < 4u; kk++) {
    let a = lanes8(h.hi[kk]);
    for (var i = 0u; i < TR; i++) {
      for (var j = 0u; j < COLS; j++) { (*acc)[i][j] += a[i] * e[j].hi[kk]; }
    }
  }
}

/**
 * The LM head's tile: y[r, c0 ..] = RMSNorm(x)[r] Wᵀ (the norm's weights at normAt in the state) for rows
 * r0 .. r0 + TR - 1, W matrix m (K x N). Every row gets logits (the sampler reads them all): zeros for a tile of
 * stopped rows.
 */
fn headTile(m: u32, r0: u32, c0: u32, lane: u32, K: u32, N: u32, normAt: u32) {
  var acc = Tile();
  if (anyLive(r0)) {
    let b = rowOf(r0, lane);
    let s = rowScale(lane, b, K);
    for (var g = 0u; g < K / 8u; g++) {
      var e: array<Eight, COLS>;
      for (var j = 0u; j < COLS; j++) { e[j] = weightsOf(m, c0 + 8u * j + lane, g, K, N); }
      fold(&acc, normed8(lane, b, s, g, K, normAt), e);
    }
  }
  for (var j = 0u; j < COLS; j++) {
    let c = c0 + 8u * j + lane;
    for (var i = 0u; i < TR; i++) {
      if (c < N && r0 + i < p.n) { y[(r0 + i) * N + c] = acc[i][j]; }
    }
  }
}
