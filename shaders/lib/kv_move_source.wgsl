// The moves of kv_move.wgsl and kv_move_vec4.wgsl (see there): the includer declares Params with H, Dh,
// capacity and srcCapacity, and the binding `moves` (vec4i: srcRow, srcStart, dstStart, count per new row).

/** Where position `at` (b, h, t) of the new cache reads from in the old one, in elements; -1 if unmoved. */
fn source(at: u32) -> i32 {
  let t = at % p.capacity;
  let h = (at / p.capacity) % p.H;
  let m = moves[at / (p.capacity * p.H)];
  let k = i32(t) - m.z;
  if (k < 0 || k >= m.w) { return -1; }
  return i32(((u32(m.x) * p.H + h) * p.srcCapacity + u32(m.y + k)) * p.Dh);
}
