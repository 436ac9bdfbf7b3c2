// The params and moves of kv_move.wgsl and kv_move_vec4.wgsl (see there): moves[b] = (srcRow, srcStart,
// dstStart, count) of new row b.
struct Params { B: u32, H: u32, Dh: u32, capacity: u32, srcCapacity: u32 }
@group(0) @binding(1) var<storage, read> moves: array<vec4i>;

/** Where position `at` (b, h, t) of the new cache reads from in the old one, in elements; -1 if unmoved. */
fn source(at: u32) -> i32 {
  let t = at % p.capacity;
  let h = (at / p.capacity) % p.H;
  let m = moves[at / (p.capacity * p.H)];
  let k = i32(t) - m.z;
  if (k < 0 || k >= m.w) { return -1; }
  return i32(((u32(m.x) * p.H + h) * p.srcCapacity + u32(m.y + k)) * p.Dh);
}
