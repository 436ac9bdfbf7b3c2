// The tiles of decoding's residual and gated products (lib/matvec_lanes.wgsl's layout), with LoRA: LoRA's rank-wide
// products scale (h Aᵀ) are summed as the columns are (lane t holding ranks t + 8j) and broadcast for B.
// decode_matvec_lanes.wgsl runs one a workgroup, decode_mlp_lanes.wgsl every tile of a layer's MLP in one.
//
// The includer declares what lib/matvec_lanes.wgsl asks, with `x` read_write, the override R (LoRA rank, at most
// 8 RG) and Params' loraScale; and two functions more: `inputOf(src, lane, b, g, K) -> Eight`, elements
// 8g .. 8g + 7 of row b of input `src` (rows of length K; zeros on a lane past TR); and `normedOf(lane, b, g, K) ->
// Eight`, the same of RMSNorm(x)[b], gate/up's input.
#include "lib/matvec_lanes.wgsl"
const RG = 8u; // groups of 8 ranks a lane may hold

/** la[i][j]: row r0 + i, rank 8j + lane. */
alias RankTile = array<array<f32, RG>, 8>;

/** Elements 8g .. 8g + 7 of row k of the adapter's A at `at` (k clamped to the rank; rows of length K). */
fn adapter8(at: u32, k: u32, g: u32, K: u32) -> Eight { return state8(at + min(k, R - 1u) * K + 8u * g); }

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
