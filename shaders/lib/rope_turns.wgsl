// Rotation angles of rotary position embeddings, shared by shaders/rope.wgsl and the decoding kernels.
// Angles are taken in turns (angle / 2π) and reduced exactly enough that large positions keep their
// accuracy: freq[i] = inv_freq[i] / 2π, computed on the host in float64 and split as hi + lo, where hi
// has 12 significant bits. With pos = a * 4096 + b (a, b of at most 12 bits), a*hi and b*hi are exact in
// f32, so their fractional parts are exact; only pos*lo (tiny) and the final sums round. Measured error:
// ~2e-7 for pos < 4096, ~1e-5 at 2^20, where a plain f32 pos * inv_freq is off by ~5e-4 rad at pos 4000.
// sin/cos come from short polynomials on [-π/4, π/4] after a quarter-turn reduction, so the accuracy
// does not depend on the driver's built-ins (WGSL only promises 2^-11 for those).

/** v minus its nearest integer, in [-0.5, 0.5] (exact in floating point). */
fn centered(v: f32) -> f32 {
  return v - round(v);
}

/** Fractional turns of pos * (f.x + f.y), in [-0.5, 0.5]. */
fn turns(q: i32, f: vec2f) -> f32 {
  let a = f32(q >> 12u);   // floor(q / 4096)
  let b = f32(q & 4095);   // q - 4096 * a, in [0, 4096)
  // Centred parts keep every partial sum below 1 in magnitude, where f32 spacing is finest.
  let s = centered(centered(a * f.x * 4096.0) + centered(b * f.x)) + centered(f32(q) * f.y);
  return centered(s);
}

/** (sin, cos) of 2π r for r in [-0.5, 0.5]. */
fn sincosTurns(r: f32) -> vec2f {
  let k = round(4.0 * r);                     // quarter turns, -2..2
  let u = (r - 0.25 * k) * 6.283185307179586; // [-π/4, π/4]; the subtraction is exact
  let u2 = u * u;
  // Taylor series; the first dropped terms are below 2e-9 on this interval.
  let s = u * (1.0 + u2 * (-1.0 / 6.0 + u2 * (1.0 / 120.0 + u2 * (-1.0 / 5040.0 + u2 * (1.0 / 362880.0)))));
  let c = 1.0 + u2 * (-0.5 + u2 * (1.0 / 24.0 + u2 * (-1.0 / 720.0 + u2 * (1.0 / 40320.0 + u2 * (-1.0 / 3628800.0)))));
  switch ((i32(k) + 4) & 3) {
    case 1: { return vec2f(c, -s); }  // +π/2
    case 2: { return vec2f(-s, -c); } // ±π
    case 3: { return vec2f(-c, s); }  // -π/2
    default: { return vec2f(s, c); }
  }
}
