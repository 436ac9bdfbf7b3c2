// Writes new keys or values into a KV cache: src [B, Tnew, H, Dh] (as projected) goes to
// cache [B, H, capacity, Dh] at time offset `start`, i.e. cache[b, h, start + t, d] = src[b, t, h, d].
#include "lib/map.wgsl"
struct Params { B: u32, Tnew: u32, H: u32, Dh: u32, capacity: u32, start: u32 }
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> cache: array<f32>;

fn size() -> u32 { return p.B * p.Tnew * p.H * p.Dh; }

fn element(i: u32) {
  let d = i % p.Dh;
  let h = (i / p.Dh) % p.H;
  let t = (i / (p.Dh * p.H)) % p.Tnew;
  let b = i / (p.Dh * p.H * p.Tnew);
  cache[((b * p.H + h) * p.capacity + p.start + t) * p.Dh + d] = src[i];
}
