// elementwise.wgsl's maps (lib/elementwise_op.wgsl), four elements a thread as one vec4: for a whose length is a
// multiple of 4 and b that repeats in whole vec4s (p.nb a multiple of 4; with ROW_BCAST, each element of b along
// a row of p.nb columns, a multiple of 4). A CPU driver loads storage lane by lane, a vec4 for about twice what an
// f32 costs, so a map of four elements a thread takes about half the time (bench/NOTES.md, round 18); a GPU
// coalesces either way. The numbers are the scalar kernel's: the maps act on each component alone.
#include "lib/map.wgsl"
#include "lib/elementwise_op.wgsl"
@group(0) @binding(1) var<storage, read> a: array<vec4f>;
@group(0) @binding(2) var<storage, read> b: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>;

fn size() -> u32 { return p.n / 4u; }

fn element(i: u32) {
  var y: vec4f;
  if (ROW_BCAST) {
    let j = (4u * i) / p.nb; // the four elements lie in one row
    y = vec4f(b[j / 4u][j % 4u]);
  } else {
    y = b[i % (p.nb / 4u)];
  }
  out[i] = applyOp(a[i], y);
}
