enable subgroups;
// decode_matvec's three products (residual, gated, head: the same bindings, params and numbers), shaped for a CPU
// driver, where a workgroup runs as SIMD lanes on one core and every barrier switches between its lanes' saved
// states. The layout of matmul_subgroup_k4.wgsl: a workgroup is one subgroup of 8 lanes (the host runs this kernel
// only where subgroups are exactly 8 wide) computing TR rows x 8 COLS columns; lane t < TR holds row t's input
// (the lanes past TR hold zeros), every lane the weights of columns c0 + t + 8j (j < COLS), read 8 at a time as
// vec4 words (lib/weights8.wgsl), and the rows' inputs reach every lane by subgroupBroadcast, so every load is one
// lane's own and nothing crosses lanes through memory: no barrier. Lane t RMS-norms its own row (gated, head). TR
// (8, or the call's rows rounded up to a power of two) keeps a call of few rows from paying for 8: with one row, a
// tile of 8 took 1.2-1.7x the time. LoRA's rank-wide products scale (h Aᵀ) are summed the same way (lane t holding
// ranks t + 8j) and broadcast for B. Rows past the call's n repeat the last one and are never stored; stopped rows
// (lib/decode_rows.wgsl) are not stored either. K (the row length) is a multiple of 8. Same numbers as the unfused
// ops up to the order of f32 sums. Accumulators are zeroed explicitly (`Tile()`): on lavapipe a bare `var acc: T;`
// inside a loop kept the previous iteration's values.
#include "lib/packed16.wgsl"
#include "lib/weights8.wgsl"
#include "lib/subgroup8.wgsl"
override WG: u32;          // lanes: 8, the subgroup
override R: u32 = 1u;      // LoRA rank (1 without adapters), at most 8 RG
override W_FORMAT: u32 = FORMAT_F32;
override TR: u32 = 8u;     // rows per workgroup: 1, 2, 4 or 8
const COLS = 4u;           // columns per lane
const RG = 8u;             // groups of 8 ranks a lane may hold

struct Params { rows: u32, n: u32, K: u32, N: u32, eps: f32, normAt: u32, lora: u32, lora2: u32, loraScale: f32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> inp: array<vec4f>;
@group(0) @binding(2) var<storage, read> w: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> w2: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> state: array<u32>;
@group(0) @binding(5) var<storage, read_write> x: array<vec4f>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;
#include "lib/decode_rows.wgsl"

/** acc[i][j]: row r0 + i (i < TR), column c0 + 8j + lane. */
alias Tile = array<array<f32, COLS>, 8>;
/** la[i][j]: row r0 + i, rank 8j + lane. */
alias RankTile = array<array<f32, RG>, 8>;

/** The tile's row r (rows past the end repeat the last one, never stored). */
fn rowOf(r0: u32, r: u32) -> u32 { return min(r0 + r, p.n - 1u); }

/** Whether row r0 + r is a live row of the call. */
fn live(r0: u32, r: u32) -> bool { return r0 + r < p.n && !stoppedRow(r0 + r); }

/** Whether any row of the tile is live (uniform per workgroup). */
fn anyLive(r0: u32) -> bool {
  for (var r = 0u; r < TR; r++) { if (live(r0, r)) { return true; } }
  return false;
}

fn weightsW(c: u32, g: u32) -> Eight {
  let i = (min(c, p.N - 1u) * (p.K / 8u) + g) * WORDS8;
  return unpack8(w[i], w[i + WORDS8 - 1u]);
}

fn weightsW2(c: u32, g: u32) -> Eight {
  let i = (min(c, p.N - 1u) * (p.K / 8u) + g) * WORDS8;
  return unpack8(w2[i], w2[i + WORDS8 - 1u]);
}

/** Eight f32 values of the state buffer from word i. */
fn state8(i: u32) -> Eight {
  return Eight(
    vec4f(stateF(i), stateF(i + 1u), stateF(i + 2u), stateF(i + 3u)),
    vec4f(stateF(i + 4u), stateF(i + 5u), stateF(i + 6u), stateF(i + 7u)),
  );
}

/** Elements 8g .. 8g + 7 of row k of the adapter's A at `at` (k clamped to the rank). */
fn adapter8(at: u32, k: u32, g: u32) -> Eight { return state8(at + min(k, R - 1u) * p.K + 8u * g); }

/** Elements 8g .. 8g + 7 of input row b (zeros on a lane past the tile's rows, as in normed8 and rowScale). */
fn input8(lane: u32, b: u32, g: u32) -> Eight {
  if (lane >= TR) { return Eight(vec4f(0.0), vec4f(0.0)); }
  let i = (b * p.K) / 4u + 2u * g;
  return Eight(inp[i], inp[i + 1u]);
}

/** Elements 8g .. 8g + 7 of RMSNorm(x)[b] (s: the row's 1 / rms). */
fn normed8(lane: u32, b: u32, s: f32, g: u32) -> Eight {
  if (lane >= TR) { return Eight(vec4f(0.0), vec4f(0.0)); }
  let i = (b * p.K) / 4u + 2u * g;
  let n = state8(p.normAt + 8u * g);
  return Eight(x[i] * s * n.lo, x[i + 1u] * s * n.hi);
}

/** 1 / rms of row b of x. */
fn rowScale(lane: u32, b: u32) -> f32 {
  if (lane >= TR) { return 0.0; }
  let i = (b * p.K) / 4u;
  var ss = 0.0;
  for (var k = 0u; k < p.K / 4u; k++) { ss += dot(x[i + k], x[i + k]); }
  return 1.0 / sqrt(ss / f32(p.K) + p.eps);
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
fn foldRanks(la: ptr<function, RankTile>, h: Eight, at: u32, lane: u32, g: u32) {
  var a: array<Eight, RG>;
  for (var j = 0u; j < rankGroups(); j++) { a[j] = adapter8(at, 8u * j + lane, g); }
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

/** acc[i][j] += scale (h_i Aᵀ) · B[c0 + 8j + lane, :], the adapter at `at`, from its products la (lane-held ranks). */
fn addLowRank(acc: ptr<function, Tile>, la: RankTile, at: u32, c0: u32, lane: u32) {
  for (var jr = 0u; jr < rankGroups(); jr++) {
    var xs: array<array<f32, 8>, 8>; // xs[i][t]: row i, rank 8 jr + t
    for (var i = 0u; i < TR; i++) { xs[i] = lanes8(la[i][jr] * p.loraScale); }
    for (var t = 0u; t < 8u; t++) {
      let k = 8u * jr + t;
      if (k < R) {
        for (var j = 0u; j < COLS; j++) {
          let bk = stateF(at + R * p.K + min(c0 + 8u * j + lane, p.N - 1u) * R + k);
          for (var i = 0u; i < TR; i++) { (*acc)[i][j] += xs[i][t] * bk; }
        }
      }
    }
  }
}

/** Stores v into x[b, c] += v (x viewed as vec4 words). */
fn addToX(b: u32, c: u32, v: f32) {
  let i = b * p.N + c;
  x[i / 4u][i % 4u] += v;
}

@compute @workgroup_size(WG)
fn residual(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let r0 = wid.y * TR;
  if (!anyLive(r0)) { return; }
  let c0 = wid.x * 8u * COLS;
  let b = rowOf(r0, lane);
  var acc = Tile();
  var la = RankTile();
  for (var g = 0u; g < p.K / 8u; g++) {
    let h = input8(lane, b, g);
    var e: array<Eight, COLS>;
    for (var j = 0u; j < COLS; j++) { e[j] = weightsW(c0 + 8u * j + lane, g); }
    fold(&acc, h, e);
    if (p.lora != NONE) { foldRanks(&la, h, p.lora, lane, g); }
  }
  if (p.lora != NONE) { addLowRank(&acc, la, p.lora, c0, lane); }
  for (var j = 0u; j < COLS; j++) {
    let c = c0 + 8u * j + lane;
    for (var i = 0u; i < TR; i++) {
      if (c < p.N && live(r0, i)) { addToX(r0 + i, c, acc[i][j]); }
    }
  }
}

@compute @workgroup_size(WG)
fn gated(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let r0 = wid.y * TR;
  if (!anyLive(r0)) { return; }
  let c0 = wid.x * 8u * COLS;
  let b = rowOf(r0, lane);
  let s = rowScale(lane, b);
  var accG = Tile();
  var accU = Tile();
  var laG = RankTile();
  var laU = RankTile();
  for (var g = 0u; g < p.K / 8u; g++) {
    let h = normed8(lane, b, s, g);
    var eg: array<Eight, COLS>;
    var eu: array<Eight, COLS>;
    for (var j = 0u; j < COLS; j++) {
      eg[j] = weightsW(c0 + 8u * j + lane, g);
      eu[j] = weightsW2(c0 + 8u * j + lane, g);
    }
    fold(&accG, h, eg);
    fold(&accU, h, eu);
    if (p.lora != NONE) { foldRanks(&laG, h, p.lora, lane, g); }
    if (p.lora2 != NONE) { foldRanks(&laU, h, p.lora2, lane, g); }
  }
  if (p.lora != NONE) { addLowRank(&accG, laG, p.lora, c0, lane); }
  if (p.lora2 != NONE) { addLowRank(&accU, laU, p.lora2, c0, lane); }
  for (var j = 0u; j < COLS; j++) {
    let c = c0 + 8u * j + lane;
    for (var i = 0u; i < TR; i++) {
      let gv = accG[i][j];
      if (c < p.N && live(r0, i)) { y[(r0 + i) * p.N + c] = gv * (1.0 / (1.0 + exp(-gv))) * accU[i][j]; }
    }
  }
}

@compute @workgroup_size(WG)
fn head(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  // Every row gets logits (the sampler reads them all): zeros for a tile of stopped rows.
  let r0 = wid.y * TR;
  let c0 = wid.x * 8u * COLS;
  var acc = Tile();
  if (anyLive(r0)) {
    let b = rowOf(r0, lane);
    let s = rowScale(lane, b);
    for (var g = 0u; g < p.K / 8u; g++) {
      var e: array<Eight, COLS>;
      for (var j = 0u; j < COLS; j++) { e[j] = weightsW(c0 + 8u * j + lane, g); }
      fold(&acc, normed8(lane, b, s, g), e);
    }
  }
  for (var j = 0u; j < COLS; j++) {
    let c = c0 + 8u * j + lane;
    for (var i = 0u; i < TR; i++) {
      if (c < p.N && r0 + i < p.n) { y[(r0 + i) * p.N + c] = acc[i][j]; }
    }
  }
}
