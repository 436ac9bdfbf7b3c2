// Helpers of the 'lanes' attention kernels (attention_lanes_fwd.wgsl, attention_lanes_bwd.wgsl), which run as one
// subgroup of exactly 8 lanes (the host checks the size):
//   q4, k4, v4     a row's vec4 of q, k or v;
//   lanes*         each lane's value (a key's row, a query's row or stats) handed to every lane, lane c's in slot c
//                  (subgroupBroadcast takes a constant lane, hence the spelled-out lanes);
//   columns4, dots4  4 broadcast rows by head-dim columns, and a weight vector against them;
//   dotsLo/Hi, mix8  a row against the 8 broadcast rows, and a weighted sum of them;
//   groupKeys      the keys the query rows of a workgroup may see, the same in every lane;
//   keyBlock       a block of 8 of them: where this lane's key starts, the block's keys and their subtree ends.
// Needs `enable subgroups;`, lib/attention_rows.wgsl and the including shader's TR (query rows per lane).

// Elements 4 d4 .. 4 d4 + 3 of the row of q, k or v that starts at `at`.
fn q4(at: u32, d4: u32) -> vec4f {
  return vec4f(q[at + 4u * d4], q[at + 4u * d4 + 1u], q[at + 4u * d4 + 2u], q[at + 4u * d4 + 3u]);
}
fn k4(at: u32, d4: u32) -> vec4f {
  return vec4f(k[at + 4u * d4], k[at + 4u * d4 + 1u], k[at + 4u * d4 + 2u], k[at + 4u * d4 + 3u]);
}
fn v4(at: u32, d4: u32) -> vec4f {
  return vec4f(v[at + 4u * d4], v[at + 4u * d4 + 1u], v[at + 4u * d4 + 2u], v[at + 4u * d4 + 3u]);
}

// x of lanes 0..3 and of lanes 4..7.
fn lanesLo(x: f32) -> vec4f {
  return vec4f(subgroupBroadcast(x, 0u), subgroupBroadcast(x, 1u), subgroupBroadcast(x, 2u), subgroupBroadcast(x, 3u));
}
fn lanesHi(x: f32) -> vec4f {
  return vec4f(subgroupBroadcast(x, 4u), subgroupBroadcast(x, 5u), subgroupBroadcast(x, 6u), subgroupBroadcast(x, 7u));
}
fn lanesLoU(x: u32) -> vec4u {
  return vec4u(subgroupBroadcast(x, 0u), subgroupBroadcast(x, 1u), subgroupBroadcast(x, 2u), subgroupBroadcast(x, 3u));
}
fn lanesHiU(x: u32) -> vec4u {
  return vec4u(subgroupBroadcast(x, 4u), subgroupBroadcast(x, 5u), subgroupBroadcast(x, 6u), subgroupBroadcast(x, 7u));
}

// The 8 lanes' vec4s x.
fn lanes8v(x: vec4f) -> array<vec4f, 8> {
  return array<vec4f, 8>(subgroupBroadcast(x, 0u), subgroupBroadcast(x, 1u), subgroupBroadcast(x, 2u),
                         subgroupBroadcast(x, 3u), subgroupBroadcast(x, 4u), subgroupBroadcast(x, 5u),
                         subgroupBroadcast(x, 6u), subgroupBroadcast(x, 7u));
}

// Broadcast rows r0 .. r0 + 3 by columns: column c holds element c of the 4 rows (keys or queries).
fn columns4(r: array<vec4f, 8>, r0: u32) -> mat4x4f {
  return transpose(mat4x4f(r[r0], r[r0 + 1u], r[r0 + 2u], r[r0 + 3u]));
}

// The products of w with the 4 columns of m, as 4 dot products.
fn dots4(w: vec4f, m: mat4x4f) -> vec4f { return vec4f(dot(w, m[0]), dot(w, m[1]), dot(w, m[2]), dot(w, m[3])); }

// Products of x with the 8 broadcast rows: with those of lanes 0..3 and of lanes 4..7.
fn dotsLo(x: vec4f, r: array<vec4f, 8>) -> vec4f {
  return vec4f(dot(x, r[0]), dot(x, r[1]), dot(x, r[2]), dot(x, r[3]));
}
fn dotsHi(x: vec4f, r: array<vec4f, 8>) -> vec4f {
  return vec4f(dot(x, r[4]), dot(x, r[5]), dot(x, r[6]), dot(x, r[7]));
}

// The sum over c of w[c] r[c], w as its halves a (lanes 0..3) and b (4..7).
fn mix8(a: vec4f, b: vec4f, r: array<vec4f, 8>) -> vec4f {
  return a.x * r[0] + a.y * r[1] + a.z * r[2] + a.w * r[3] + b.x * r[4] + b.y * r[5] + b.z * r[6] + b.w * r[7];
}

struct GroupKeys {
  any: bool, // whether the workgroup has a row at all
  b: u32, // the batch row
  kvBase: u32, // the kv head's start in k and v (kvHead)
  first: u32, // the first key block's start
  pos: u32, // the first row's position: no row sees a subtree that ends at or before it
  end: u32, // the keys the rows see lie before it
}

// The keys the query rows of workgroup wid (blocks of WG * TR rows, as queryTile takes them) may see: key blocks
// step from first by nextKey(b, j + 8, pos, end). The same in every lane, as the broadcasts need.
fn groupKeys(wid: vec3u) -> GroupKeys {
  var g: GroupKeys; // any = false
  let G = p.Hq / p.Hkv;
  let nRows = G * p.Tq;
  let r0 = wid.x * WG * TR;
  if (r0 >= nRows) { return g; }
  g.any = true;
  g.b = wid.z;
  g.kvBase = kvHead(g.b, wid.y);
  g.pos = queryCol(g.b, r0 / G);
  g.end = min(queryCol(g.b, (min(r0 + WG * TR, nRows) - 1u) / G) + 1u, p.Tk);
  g.first = nextKey(g.b, firstKey(g.b), g.pos, g.end);
  return g;
}

struct KeyBlock {
  at: u32, // where this lane's key (j + lane, clamped to a valid one: seen masks it) starts in k and v
  ja: vec4u, // keys j..j+3
  jb: vec4u, // and j+4..j+7
  ea: vec4u, // their subtree ends (keyEnd), each loaded by the lane that loads the key
  eb: vec4u,
}

// Keys j..j+7 of workgroup keys w, lane c taking key j + c.
fn keyBlock(w: GroupKeys, j: u32, lane: u32) -> KeyBlock {
  let mine = min(j + lane, w.end - 1u);
  let e = keyEnd(w.b, mine);
  let ja = vec4u(j) + IOTA;
  return KeyBlock(w.kvBase + mine * p.kT, ja, ja + 4u, lanesLoU(e), lanesHiU(e));
}
