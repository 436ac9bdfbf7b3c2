// The column tiles of decoding's matrix-vector products shaped for a CPU driver (decode_matvec_lanes.wgsl, one tile
// per workgroup; decode_mlp_lanes.wgsl, every tile of a layer's MLP in one workgroup), where a workgroup runs as
// SIMD lanes on one core and every barrier switches between its lanes' saved states. The layout of
// matmul_subgroup_k4.wgsl: a workgroup is one subgroup of 8 lanes (the host runs these kernels only where
// subgroups are exactly 8 wide) computing TR rows x 8 COLS columns from c0; lane t < TR holds row t's input (the
// lanes past TR hold zeros), every lane the weights of columns c0 + t + 8j (j < COLS), read 8 at a time as vec4
// words (lib/weights8.wgsl), and the rows' inputs reach every lane by subgroupBroadcast, so every load is one
// lane's own and nothing crosses lanes through memory: no barrier. Lane t RMS-norms its own row (gated, head). TR
// (8, or the call's rows rounded up to a power of two) keeps a call of few rows from paying for 8: with one row, a
// tile of 8 took 1.2-1.7x the time. LoRA's rank-wide products scale (h Aᵀ) are summed the same way (lane t holding
// ranks t + 8j) and broadcast for B. Rows past the call's n repeat the last one and are never stored; stopped rows
// (lib/decode_rows.wgsl) are not stored either. K (a row's length) is a multiple of 8. Same numbers as the
// unfused ops up to the order of f32 sums. Accumulators are zeroed explicitly (`Tile()`): on lavapipe a bare
// `var acc: T;` inside a loop kept the previous iteration's values.
//
// The includer declares the overrides WG, R (LoRA rank, at most 8 RG) and TR; Params with rows, n, eps and
// loraScale; `state` (lib/decode_rows.wgsl), `x: array<vec4f>` (read_write: the rows' hidden states) and
// `y: array<f32>` (read_write: gated and head outputs); and three functions: `weightsOf(m, c, g, K, N) -> Eight`,
// the g-th 8 weights of column c of matrix m of N columns of length K; `inputOf(src, lane, b, g, K) -> Eight`,
// elements 8g .. 8g + 7 of row b of input `src` (rows of length K; zeros on a lane past TR); and `normedOf(lane,
// b, g, K) -> Eight`, the same of RMSNorm(x)[b], gate/up's input.
const COLS = 4u; // columns per lane
const RG = 8u;   // groups of 8 ranks a lane may hold

/** acc[i][j]: row r0 + i (i < TR), column c0 + 8j + lane. */
alias Tile = array<array<f32, COLS>, 8>;
/** la[i][j]: row r0 + i, rank 8j + lane. */
alias RankTile = array<array<f32, RG>, 8>;

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

/** Elements 8g .. 8g + 7 of row k of the adapter's A at `at` (k clamped to the rank; rows of length K). */
fn adapter8(at: u32, k: u32, g: u32, K: u32) -> Eight { return state8(at + min(k, R - 1u) * K + 8u * g); }

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
 * The same for the ranks of the adapter at `at`: la[i][j] += h_i · A[8j + lane, g-th 8 elements], each lane
 * loading its own ranks' rows.
 */
fn foldRanks(la: ptr<function, RankTile>, h: Eight, at: u32, lane: u32, g: u32, K: u32) {
  var a: array<Eight, RG>;
  for (var j = 0u; j < rankGroups(); j++) { a[j] = adapter8(at, 8u * j + lane, g, K); }
  for (var kk = 0u; kk < 8u; kk++) {
    let v = lanes8(select(h.hi[kk % 4u], h.lo[kk % 4u], kk < 4u));
    for (var j = 0u; j < rankGroups(); j++) {
      let aj = select(a[j].hi[kk % 4u], a[j].lo[kk % 4u], kk < 4u);
      for (var i = 0u; i < TR; i++) { (*la)[i][j] += v[i] * aj; }
    }
  }
}

/** Groups of 8 ranks of the adapters. */
fn rankGroups() -> u32 { return (R + 7u) / 8u; }

/**
 * acc[i][j] += scale (h_i Aᵀ) · B[c0 + 8j + lane, :], the adapter at `at` of a K x N product, from its products
 * la (lane-held ranks).
 */
fn addLowRank(acc: ptr<function, Tile>, la: RankTile, at: u32, c0: u32, lane: u32, K: u32, N: u32) {
  for (var jr = 0u; jr < rankGroups(); jr++) {
    var xs: array<array<f32, 8>, 8>; // xs[i][t]: row i, rank 8 jr + t
    for (var i = 0u; i < TR; i++) { xs[i] = lanes8(la[i][jr] * p.loraScale); }
    for (var t = 0u; t < 8u; t++) {
      let k = 8u * jr + t;
      if (k < R) {
        for (var j = 0u; j < COLS; j++) {
          let bk = stateF(at + R * K + min(c0 + 8u * j + lane, N - 1u) * R + k);
          for (var i = 0u; i < TR; i++) { (*acc)[i][j] += xs[i][t] * bk; }
        }
      }
    }
  }
}

/** Stores v into x[b, c] += v (x viewed as vec4 words, rows of length N). */
fn addToX(b: u32, c: u32, v: f32, N: u32) {
  let i = b * N + c;
  x[i / 4u][i % 4u] += v;
}

/** x[r, c0 ..] += (input src)[r] Wᵀ (+ LoRA at `lora`) for the tile's rows: matrix m, K x N. */
fn residualTile(m: u32, src: u32, lora: u32, K: u32, N: u32, r0: u32, c0: u32, lane: u32) {
  let b = rowOf(r0, lane);
  var acc = Tile();
  var la = RankTile();
  for (var g = 0u; g < K / 8u; g++) {
    let h = inputOf(src, lane, b, g, K);
    var e: array<Eight, COLS>;
    for (var j = 0u; j < COLS; j++) { e[j] = weightsOf(m, c0 + 8u * j + lane, g, K, N); }
    fold(&acc, h, e);
    if (lora != NONE) { foldRanks(&la, h, lora, lane, g, K); }
  }
  if (lora != NONE) { addLowRank(&acc, la, lora, c0, lane, K, N); }
  for (var j = 0u; j < COLS; j++) {
    let c = c0 + 8u * j + lane;
    for (var i = 0u; i < TR; i++) {
      if (c < N && live(r0, i)) { addToX(r0 + i, c, acc[i][j], N); }
    }
  }
}

/**
 * y[r, c0 ..] = silu(h W_mᵀ) * (h W_m2ᵀ) for the tile's rows, h their normed hidden states (normedOf): the
 * matrices m (gate) and m2 (up), K x N, with LoRA at lora and lora2.
 */
fn gatedTile(m: u32, m2: u32, lora: u32, lora2: u32, K: u32, N: u32, r0: u32, c0: u32, lane: u32) {
  let b = rowOf(r0, lane);
  var accG = Tile();
  var accU = Tile();
  var laG = RankTile();
  var laU = RankTile();
  for (var g = 0u; g < K / 8u; g++) {
    let h = normedOf(lane, b, g, K);
    var eg: array<Eight, COLS>;
    var eu: array<Eight, COLS>;
    for (var j = 0u; j < COLS; j++) {
      eg[j] = weightsOf(m, c0 + 8u * j + lane, g, K, N);
      eu[j] = weightsOf(m2, c0 + 8u * j + lane, g, K, N);
    }
    fold(&accG, h, eg);
    fold(&accU, h, eu);
    if (lora != NONE) { foldRanks(&laG, h, lora, lane, g, K); }
    if (lora2 != NONE) { foldRanks(&laU, h, lora2, lane, g, K); }
  }
  if (lora != NONE) { addLowRank(&accG, laG, lora, c0, lane, K, N); }
  if (lora2 != NONE) { addLowRank(&accU, laU, lora2, c0, lane, K, N); }
  for (var j = 0u; j < COLS; j++) {
    let c = c0 + 8u * j + lane;
    for (var i = 0u; i < TR; i++) {
      let gv = accG[i][j];
      if (c < N && live(r0, i)) { y[(r0 + i) * N + c] = gv * (1.0 / (1.0 + exp(-gv))) * accU[i][j]; }
    }
  }
}
