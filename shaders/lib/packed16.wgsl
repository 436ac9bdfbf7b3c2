// Element access to a tensor whose values are stored as f32, f16 or bf16, bound as an array of 32-bit words
// (a 16-bit tensor packs two values per word, element 2k in the low half). Reading 16-bit values this way
// needs only core WGSL (unpack2x16float, shifts), not the `shader-f16` feature, and every value is widened
// to f32 exactly, so a kernel's arithmetic and accumulation stay f32 whatever the storage.
const FORMAT_F32: u32 = 0u;
const FORMAT_F16: u32 = 1u;
const FORMAT_BF16: u32 = 2u;

/** The index of the word that holds element i. */
fn packedWord(i: u32, format: u32) -> u32 {
  if (format == FORMAT_F32) { return i; }
  return i >> 1u;
}

/** Element i's value, from the word that holds it (packedWord). */
fn packedValue(word: u32, i: u32, format: u32) -> f32 {
  if (format == FORMAT_F16) { return unpack2x16float(word)[i & 1u]; }
  if (format == FORMAT_BF16) {
    // bf16 is the top half of an f32: move the element's half there and clear the rest.
    if ((i & 1u) == 0u) { return bitcast<f32>(word << 16u); }
    return bitcast<f32>(word & 0xffff0000u);
  }
  return bitcast<f32>(word);
}
