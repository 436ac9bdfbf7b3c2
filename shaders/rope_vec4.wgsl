// rope.wgsl's rotation four pairs a thread: pairs i .. i + 3 of a head (Dh/2 a multiple of 4) as vec4s, so a CPU
// driver, which loads storage lane by lane, loads each half once as a vec4 and the position once (the reason of
// elementwise_vec4.wgsl). Each pair's angle is rope.wgsl's, so are the numbers.
#include "lib/map.wgsl"
#include "lib/rope_pair.wgsl"
@group(0) @binding(1) var<storage, read> x: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4f>;

fn size() -> u32 { return p.n / 4u; }

fn element(idx: u32) { // one thread per four rotated pairs
  let h4 = p.half / 4u;
  let i4 = idx % h4;
  let row = idx / h4; // (b, t, h)
  let q = rowPosition(row);
  var s: vec4f;
  var c: vec4f;
  for (var k = 0u; k < 4u; k++) {
    let sc = pairSinCos(q, 4u * i4 + k);
    s[k] = sc.x;
    c[k] = sc.y;
  }
  let j0 = row * 2u * h4 + i4;
  let j1 = j0 + h4;
  let x0 = x[j0];
  let x1 = x[j1];
  out[j0] = x0 * c - x1 * s;
  out[j1] = x1 * c + x0 * s;
}
