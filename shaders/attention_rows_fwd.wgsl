// Fused causal attention, forward, for CPU drivers (lavapipe): the 'rows' variant of attention_fwd.wgsl,
// with exactly its semantics, bindings and saved stats.
//
//   q [B, Hq, Tq, Dh]; k, v [B, Hkv, cap, Dh] of which the first Tk time steps are valid; o like q.
//   Query i sits at absolute position off + i and sees keys j with keyStart[b] <= j <= off + i, j < Tk, and,
//   with a prefix-tree mask, off + i < keyEnd[b, j] (lib/attention_key_mask.wgsl).
//   Query head h reads kv head h / G (G = Hq / Hkv). Scores are scale * q.k; a row with no visible key
//   gets o = 0.
//   stats [B, Hq, Tq, 2]: slot 0 receives the row's log-sum-exp (0 for an empty row); slot 1 is left for
//   the backward.
//
// Why this shape: lavapipe runs 8 invocations in SIMD lanes, but (Mesa 25) it loads every storage (and
// workgroup, and dynamically indexed private) element lane by lane, with a branch per lane, even when all lanes
// read the same address; arithmetic is cheap next to that. So each invocation works on a register tile, like
// matmul.wgsl's 'regs': TR = 16 query rows against blocks of 8 keys, every loaded q element feeding 8
// multiply-adds and every k or v element 16. No workgroup memory, no barriers. (Against 4-row tiles: 1.5x at
// head dims 24 and 64, 1.3x at 128, in two passes; 32-row tiles were slower.)
//
// Work layout: workgroup (x, y, z) = (block of WG * TR rows, kv head, batch). The rows of a kv head are its
// Tq * G (query, group head) pairs in query-major order, so an invocation's rows are a few consecutive queries
// of the group's heads: they see almost the same keys. Keys stream from storage in blocks of 8 with an online
// softmax (running max m and sum l per row, the accumulator rescaled once per block).
//
// A block's 8 keys are two vec4 halves a and b, Sa[u] holding row u's scores for the first 4. The output
// accumulator lives in a private array of MAXD floats per row; a wider head dimension goes in passes over
// MAXD-column chunks, each recomputing the scores (big private arrays make lavapipe's compile time explode).
// Loops over the head dimension go one column at a time: lavapipe's cost is per loaded element either way
// (vec4 loads of q, k and v measured no faster), and each load site in the code costs compile time. Loop bounds
// come from the uniform, so one pipeline serves every shape.
@group(0) @binding(5) var<storage, read_write> o: array<f32>;
@group(0) @binding(6) var<storage, read_write> stats: array<f32>;

const TR = 16u; // query rows per tile
const MAXD = 64u; // columns per pass
#include "lib/attention_rows.wgsl"
#include "lib/attention_rows_block.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  // This invocation's TR query rows (see queryTile); t.nOut, the rows to store, is a run-time bound, so the
  // store loops are not unrolled.
  let t = queryTile(wid, lid);
  if (t.nOut == 0u) { return; }

  var m: array<f32, TR>;
  var l: array<f32, TR>;
  var acc: array<f32, TR * MAXD>; // [row][column of this pass]
  for (var d0 = 0u; d0 < p.Dh; d0 += MAXD) {
    let d1 = min(d0 + MAXD, p.Dh);
    for (var u = 0u; u < TR; u++) {
      m[u] = NEG;
      l[u] = 0.0;
    }
    for (var x = 0u; x < TR * MAXD; x++) { acc[x] = 0.0; }

    // Blocks of 8 keys from the first visible one; subtrees no row of the tile sees are skipped whole.
    for (var j = nextKey(t.b, t.ks, t.pos0, t.end); j < t.end; j = nextKey(t.b, j + 8u, t.pos0, t.end)) {
      foldKeyBlock(t, j, d0, d1, &m, &l, &acc);
    }

    for (var u = 0u; u < t.nOut; u++) {
      let inv = select(0.0, 1.0 / l[u], l[u] > 0.0);
      for (var d = d0; d < d1; d++) { o[t.qBase[u] + d] = acc[u * MAXD + d - d0] * inv; }
    }
  }

  for (var u = 0u; u < t.nOut; u++) { stats[2u * t.row[u]] = select(0.0, m[u] + log(l[u]), l[u] > 0.0); }
}
