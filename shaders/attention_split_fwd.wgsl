enable subgroups;
// Fused causal attention, forward, for CPU drivers when a kv head has only a few query rows (KV-cache
// decoding: one query per head): the 'rows' kernel's semantics, bindings and saved stats, with the keys split
// across the 8 lanes of a subgroup instead of the rows.
//
// Why: attention_rows_fwd.wgsl gives each invocation a tile of 16 query rows and streams every key through
// it. In a decoding step a kv head has G (query heads per kv head) rows, so one lane of the workgroup does
// all the work while the other SIMD lanes sit idle, over a cache of hundreds of keys. Here a workgroup is one
// subgroup of 8 lanes owning one tile of 4 rows; lane s takes the key blocks s, s + 8, s + 16, ... (blocks of
// 8 keys, as in the rows kernel), keeps its own online softmax (m, l and the output accumulator), and the 8
// partial results are merged with subgroup reductions: M = max m, L = sum l * exp(m - M),
// o = sum acc * exp(m - M) / L. The host uses it only where subgroups are exactly 8 lanes wide.
//
// Work layout: workgroup (x, y, z) = (tile of TR rows, kv head, batch), rows as in queryTile.
@group(0) @binding(5) var<storage, read_write> o: array<f32>;
@group(0) @binding(6) var<storage, read_write> stats: array<f32>;

// A decoding step's kv head has few rows (its group's heads): a tile of 4 wastes little, and its accumulators
// leave room for head dims up to 128 in one pass.
const TR = 4u; // query rows per tile
const MAXD = 128u; // columns per pass
#include "lib/attention_rows.wgsl"
#include "lib/attention_rows_block.wgsl"

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) s: u32) {
  // Every lane takes the same tile: tile wid.x is what queryTile gives invocation wid.x of workgroup 0.
  let t = queryTile(vec3u(0u, wid.y, wid.z), wid.x);
  if (t.nOut == 0u) { return; }

  var m: array<f32, TR>;
  var l: array<f32, TR>;
  var acc: array<f32, TR * MAXD>; // [row][column of this pass], this lane's keys only
  for (var d0 = 0u; d0 < p.Dh; d0 += MAXD) {
    let d1 = min(d0 + MAXD, p.Dh);
    for (var u = 0u; u < TR; u++) {
      m[u] = NEG;
      l[u] = 0.0;
    }
    for (var x = 0u; x < TR * MAXD; x++) { acc[x] = 0.0; }

    for (var j = t.ks + 8u * s; j < t.end; j += 64u) {
      foldKeyBlock(t, j, d0, d1, &m, &l, &acc);
    }

    // Merge the 8 lanes' softmax states: a lane that saw no key has l = 0 and acc = 0, so its weight is moot.
    var w: array<f32, TR>;
    for (var u = 0u; u < TR; u++) {
      let M = subgroupMax(m[u]);
      w[u] = exp(m[u] - M);
      m[u] = M;
      l[u] = subgroupAdd(l[u] * w[u]);
    }
    // Lane s stores the columns d0 + s, d0 + s + 8, ... of each row.
    for (var u = 0u; u < t.nOut; u++) {
      let inv = select(0.0, 1.0 / l[u], l[u] > 0.0);
      for (var d = d0; d < d1; d++) {
        let sum = subgroupAdd(acc[u * MAXD + d - d0] * w[u]);
        if ((d - d0) % 8u == s) { o[t.qBase[u] + d] = sum * inv; }
      }
    }
  }

  if (s == 0u) {
    for (var u = 0u; u < t.nOut; u++) { stats[2u * t.row[u]] = select(0.0, m[u] + log(l[u]), l[u] > 0.0); }
  }
}
