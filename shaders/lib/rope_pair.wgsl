// The params, positions and frequencies of rope.wgsl and rope_vec4.wgsl (see there), and a pair's rotation.
#include "lib/rope_turns.wgsl"
override PER_ROW: bool = false;
override INVERSE: bool = false;
struct Params { n: u32, T: u32, H: u32, half: u32 }
@group(0) @binding(2) var<storage, read> pos: array<i32>;
@group(0) @binding(3) var<storage, read> freq: array<vec2f>; // (hi, lo) turns per position, [Dh/2]

/** The position of row `row` ((b, t, h) of x [B, T, H, Dh]). */
fn rowPosition(row: u32) -> i32 {
  let bt = row / p.H; // (b, t)
  if (PER_ROW) { return pos[bt]; }
  return pos[bt % p.T];
}

/** (sin, cos) of pair i's angle at position q; sin negated when INVERSE. */
fn pairSinCos(q: i32, i: u32) -> vec2f {
  var sc = sincosTurns(turns(q, freq[i]));
  if (INVERSE) { sc.x = -sc.x; }
  return sc;
}
