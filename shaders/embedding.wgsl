// Embedding lookup and its gradient, for a table [V, D] and N ids (i32).
//   gather:  out[n, c] = src[ids[n], c]           (src = table; out-of-range ids give a zero row)
//            The table may be stored as f32, f16 or bf16 (SRC_FORMAT, lib/packed16.wgsl: a frozen table in
//            its checkpoint's dtype); out is f32.
//   scatter: out[v, c] = sum of src[n, c] over the positions n with ids[n] = v   (src = upstream grad, f32)
// The scatter is deterministic without float atomics: the positions of each distinct id form a linked
// list in ascending order (`next`, -1 ends it), whose head is listed in `starts` (-1 entries are skipped).
// One workgroup sums one list for WG adjacent columns; the caller zero-fills `out` first, so rows of
// unused ids stay zero. The lists come from the host (ids are host data) or from embedding_links.wgsl.
#include "lib/packed16.wgsl"
override GATHER_WG: u32; // gather's workgroup size, set by the host
override WG: u32; // scatter's workgroup size (columns per workgroup), set by the host
override SRC_FORMAT: u32 = FORMAT_F32;

struct Params { N: u32, D: u32, V: u32, S: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ids: array<i32>;
@group(0) @binding(2) var<storage, read> src: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read> next: array<i32>;
@group(0) @binding(5) var<storage, read> starts: array<i32>;

@compute @workgroup_size(GATHER_WG)
fn gather(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let idx = gid.x + gid.y * nwg.x * GATHER_WG;
  if (idx >= p.N * p.D) { return; }
  let id = ids[idx / p.D];
  var v = 0.0;
  if (id >= 0 && u32(id) < p.V) {
    let i = u32(id) * p.D + idx % p.D;
    v = packedValue(src[packedWord(i, SRC_FORMAT)], i, SRC_FORMAT);
  }
  out[idx] = v;
}

@compute @workgroup_size(WG)
fn scatter(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  // Workgroup w covers list s = w / blocks, columns (w % blocks) * WG + [0, WG).
  let blocks = (p.D + WG - 1u) / WG;
  let w = wid.x + wid.y * nwg.x;
  let s = w / blocks;
  let c = (w % blocks) * WG + lid;
  if (s >= p.S || c >= p.D) { return; }
  let head = starts[s];
  if (head < 0) { return; }
  let id = ids[head];
  if (id < 0 || u32(id) >= p.V) { return; }
  var sum = 0.0;
  var n = head;
  loop {
    sum += bitcast<f32>(src[u32(n) * p.D + c]);
    n = next[n];
    if (n < 0) { break; }
  }
  out[u32(id) * p.D + c] = sum;
}
