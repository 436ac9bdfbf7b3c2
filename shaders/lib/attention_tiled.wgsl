// Helpers of the tiled attention kernels (attention_fwd.wgsl, attention_bwd.wgsl):
//   nChunks, nVec4, blockLen  the thread layout (nc, cv, bk): compile-time when FIXED, else from the uniform;
//   ldq, ldk, ldv             four consecutive elements of a q, k or v row from column d, zero past Dh;
//   queryRange                the positions of a workgroup's query rows;
//   queryRow, workgroupKeys   the setup of the query-row entries (forward main, backward dq);
//   stageKV                   stages a block of K and V rows in workgroup memory.
// It declares the layout constants both kernels share, their uniform and their inputs (attention_inputs.wgsl).
// The including shader declares override BK and TILE, and var<workgroup> ta, tb: array<vec4f, TILE>.

#include "lib/attention_inputs.wgsl"

override FIXED: bool = false;
override NC: u32 = 1u; // nc when FIXED: threads per row (a power of two <= 16)
override CV: u32 = 8u; // cv when FIXED: vec4s of the head dimension per thread (<= MAXV); nc * cv * 4 >= Dh
override WG: u32; // the workgroup size, set by the host
const MAXV = 8u;

struct Params {
  Hq: u32, Hkv: u32, Tq: u32, Tk: u32, cap: u32, Dh: u32, off: u32, scale: f32,
  nc: u32, cv: u32, bk: u32, // the layout, used when !FIXED
  hasKeyStart: u32, keyEnds: u32, queryCols: u32, // the key mask (lib/attention_key_mask.wgsl)
  qH: u32, qT: u32, kH: u32, kT: u32, // the layout strides (lib/attention_inputs.wgsl)
}

fn nChunks() -> u32 { if (FIXED) { return NC; } return p.nc; }
fn nVec4() -> u32 { if (FIXED) { return CV; } return p.cv; }
fn blockLen() -> u32 { if (FIXED) { return BK; } return p.bk; }

fn ldq(base: u32, d: u32) -> vec4f {
  var r = vec4f(0.0);
  for (var x = 0u; x < 4u; x++) { if (d + x < p.Dh) { r[x] = q[base + d + x]; } }
  return r;
}
fn ldk(base: u32, d: u32) -> vec4f {
  var r = vec4f(0.0);
  for (var x = 0u; x < 4u; x++) { if (d + x < p.Dh) { r[x] = k[base + d + x]; } }
  return r;
}
fn ldv(base: u32, d: u32) -> vec4f {
  var r = vec4f(0.0);
  for (var x = 0u; x < 4u; x++) { if (d + x < p.Dh) { r[x] = v[base + d + x]; } }
  return r;
}

// The first and last query positions among rows [r0, r0 + rowsPerWg) of a kv head's nRows (group head, query)
// pairs. The rows are consecutive, so when they cross into another head they include its first and last query.
fn queryRange(r0: u32, rowsPerWg: u32, nRows: u32) -> vec2u {
  let r1 = min(r0 + rowsPerWg, nRows) - 1u;
  var i = vec2u(0u, p.Tq - 1u);
  if (r0 / p.Tq == r1 / p.Tq) { i = vec2u(r0 % p.Tq, r1 % p.Tq); }
  return vec2u(p.off) + i;
}

// The query row of thread lid of workgroup wid = (block of WG / nc rows, kv head, batch) in the query-row
// entries: a kv head's rows are its G * Tq (group head, query) pairs, and nc threads share a row, each
// owning one chunk of its head dimension.
struct QueryRow {
  live: bool, // the thread has a row (the last workgroup of a kv head may have fewer)
  rl: u32, // the row within the workgroup
  ch: u32, // the chunk of the head dimension this thread owns
  row: u32, // index into stats, [B, Hq, Tq]
  qBase: u32, // the row's start in q, o, dO and dq
  kvBase: u32, // the kv head's start in k and v (kvHead); key j at kvBase + j * p.kT
  mine: u32, // this thread's partial-sum slots start at mine * bk
  rowEnd: u32, // the row sees keys [firstKey, rowEnd) whose subtrees hold it (seesKey)
}

fn queryRow(wid: vec3u, lid: u32, nc: u32) -> QueryRow {
  var t: QueryRow;
  let rowsPerWg = WG / nc;
  let G = p.Hq / p.Hkv;
  let nRows = G * p.Tq;
  let b = wid.z;
  let kvh = wid.y;
  t.rl = lid / nc;
  t.ch = lid % nc;
  let r = wid.x * rowsPerWg + t.rl;
  t.live = r < nRows;
  let i = r % p.Tq;
  let h = kvh * G + r / p.Tq;
  t.row = (b * p.Hq + h) * p.Tq + i;
  t.qBase = qHead(b, h) + i * p.qT;
  t.kvBase = kvHead(b, kvh);
  t.mine = t.rl * nc + t.ch;
  t.rowEnd = min(p.off + i + 1u, p.Tk);
  return t;
}

// Whether query row qr sees key j < qr.rowEnd (the key is within the subtree ends, see keyEnd).
fn seesKey(b: u32, qr: QueryRow, j: u32) -> bool {
  return qr.rowEnd <= keyEnd(b, j);
}

// The keys that the rows of workgroup wid see: from first (the first key whose subtree holds the workgroup's
// first query, nextKey) to before end. Kept out of queryRow, whose result depends on the thread: the key loop
// holds barriers, so its bounds must be uniform across the workgroup; it steps with next.
struct WorkgroupKeys {
  first: u32,
  end: u32,
  pos0: u32, // the workgroup's first query position: subtrees ending at or before it are skipped
}

fn workgroupKeys(wid: vec3u, nc: u32) -> WorkgroupKeys {
  let rowsPerWg = WG / nc;
  let pos = queryRange(wid.x * rowsPerWg, rowsPerWg, (p.Hq / p.Hkv) * p.Tq);
  var w = WorkgroupKeys(0u, min(pos.y + 1u, p.Tk), pos.x);
  w.first = nextKey(wid.z, firstKey(wid.z), w.pos0, w.end);
  return w;
}

// The key block after the one at kb: kb + bk, past the subtrees that no row of the workgroup sees.
fn nextBlock(wid: vec3u, w: WorkgroupKeys, kb: u32, bk: u32) -> u32 {
  return nextKey(wid.z, kb + bk, w.pos0, w.end);
}

// Stages the K and V rows of keys kb .. kb + bk - 1 of the kv head at kvBase into ta and tb (vecsPerRow vec4s
// a key, zero past the valid keys), then waits for the whole workgroup. Call it in uniform control flow.
fn stageKV(lid: u32, kb: u32, kvBase: u32, vecsPerRow: u32, bk: u32) {
  for (var idx = lid; idx < bk * vecsPerRow; idx += WG) {
    let key = kb + idx / vecsPerRow;
    let d = (idx % vecsPerRow) * 4u;
    var kx = vec4f(0.0);
    var vx = vec4f(0.0);
    if (key < p.Tk) {
      kx = ldk(kvBase + key * p.kT, d);
      vx = ldv(kvBase + key * p.kT, d);
    }
    ta[idx] = kx;
    tb[idx] = vx;
  }
  workgroupBarrier();
}
