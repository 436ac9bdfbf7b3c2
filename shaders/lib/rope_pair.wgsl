// The rotation of one pair of rope.wgsl and rope_vec4.wgsl: the includer declares Params with T and H, the
// overrides PER_ROW and INVERSE, and the bindings pos (i32 positions) and freq (lib/rope_turns.wgsl's turns).
#include "lib/rope_turns.wgsl"

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
