// Eight consecutive elements of a weight matrix stored f32, f16 or bf16 (W_FORMAT, lib/packed16.wgsl), bound as
// array<vec4<u32>>, widened to f32: one vec4 load for 16-bit storage, two for f32. On a CPU driver a storage load
// is done lane by lane with its bounds checks, and a vec4 shares one lane's checks over 4 words (bench/NOTES.md,
// matmul round 3). Group g is elements 8g .. 8g + 7: its words are m[g * WORDS8] and m[g * WORDS8 + WORDS8 - 1]
// (the same word for 16-bit storage), so a row length that is a multiple of 8 keeps rows aligned.
struct Eight { lo: vec4f, hi: vec4f }

/** vec4<u32> words per group of eight elements. */
override WORDS8: u32 = select(1u, 2u, W_FORMAT == FORMAT_F32);

/** bf16 halves (low element first) of two words, as 4 f32. */
fn bf16x4(a: u32, b: u32) -> vec4f {
  let m = 0xffff0000u;
  return bitcast<vec4f>(vec4<u32>(a << 16u, a & m, b << 16u, b & m));
}

/** The eight elements of the group whose words are a and b (b is a again for 16-bit storage). */
fn unpack8(a: vec4<u32>, b: vec4<u32>) -> Eight {
  if (W_FORMAT == FORMAT_F32) { return Eight(bitcast<vec4f>(a), bitcast<vec4f>(b)); }
  if (W_FORMAT == FORMAT_F16) {
    return Eight(vec4f(unpack2x16float(a.x), unpack2x16float(a.y)), vec4f(unpack2x16float(a.z), unpack2x16float(a.w)));
  }
  return Eight(bf16x4(a.x, a.y), bf16x4(a.z, a.w));
}

/** a · b over the eight elements. */
fn dot8(a: Eight, b: Eight) -> f32 { return dot(a.lo, b.lo) + dot(a.hi, b.hi); }
