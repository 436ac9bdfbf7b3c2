// Where element i of the new keys [B, Tnew, H, Dh] goes in the cache [B, H, capacity, Dh] (kv_append.wgsl,
// kv_append_vec4.wgsl): both counted in units of `dh` per head row (Dh numbers, or Dh / 4 vec4s).
fn cacheIndex(i: u32, dh: u32) -> u32 {
  let d = i % dh;
  let h = (i / dh) % p.H;
  let t = (i / (dh * p.H)) % p.Tnew;
  let b = i / (dh * p.H * p.Tnew);
  return ((b * p.H + h) * p.capacity + p.start + t) * dh + d;
}
