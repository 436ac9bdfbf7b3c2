// The radix select of topk_kl.wgsl and sample.wgsl over the composite key (descKey(x), id): largest x first,
// ties by lower id, 8 bits a pass from the top. Passes are numbered by `level` (WGSL reserves `pass`): 0..3
// read the key's bytes, then 8 - idBytes(V) .. 7 the id's low bytes (nextLevel steps over the others). Each
// pass histograms the digits of the elements inPrefix, and one thread extends the prefix by the chosen bin.
// Declares the select's state below (the kernel resets it before the first pass); needs nothing declared.

var<workgroup> prefKey: u32; // the composite-key prefix found so far
var<workgroup> prefId: u32;
var<workgroup> done: u32; // 1 once the threshold below is known
var<workgroup> thrKey: u32; // the inclusive threshold: selected iff (key, id) <= (thrKey, thrId)
var<workgroup> thrId: u32;

#include "lib/desc_key.wgsl"

// The byte of (key, id) that pass `level` histograms.
fn digit(level: u32, key: u32, id: u32) -> u32 {
  if (level < 4u) { return (key >> (24u - 8u * level)) & 0xFFu; }
  return (id >> (56u - 8u * level)) & 0xFFu;
}

// Whether (key, id) agrees with the prefix (pk, pi) on every byte that the passes before `level` fixed.
fn inPrefix(level: u32, key: u32, id: u32, pk: u32, pi: u32) -> bool {
  if (level < 4u) {
    if (level == 0u) { return true; }
    let shift = 32u - 8u * level;
    return (key >> shift) == (pk >> shift);
  }
  if (key != pk) { return false; }
  if (level == 4u) { return true; }
  let shift = 64u - 8u * level;
  return (id >> shift) == (pi >> shift);
}

// How many low bytes the ids 0..V-1 use: the id passes skip the bytes that are 0 for every id.
fn idBytes(V: u32) -> u32 {
  if (V - 1u > 0xFFFFFFu) { return 4u; }
  if (V - 1u > 0xFFFFu) { return 3u; }
  if (V - 1u > 0xFFu) { return 2u; }
  return 1u;
}

// The pass after `level` over ids 0..V-1.
fn nextLevel(level: u32, V: u32) -> u32 {
  return select(level + 1u, 8u - idBytes(V), level == 3u);
}

// Called by the one thread whose `bin` of pass `level` holds the element sought: extends the prefix by that
// byte. With `whole` (the kernel's test that the rest of the bin is all selected), or at the last id byte
// (composite keys are unique, so the bin then holds one element), the select is done: the inclusive
// threshold (thrKey, thrId) is the prefix with all lower bits set.
fn extendPrefix(bin: u32, level: u32, whole: bool) {
  var pk = prefKey;
  var pi = prefId;
  var lowOnes: u32; // the bits below this pass's byte, all ones in an inclusive threshold
  if (level < 4u) {
    pk |= bin << (24u - 8u * level);
    lowOnes = (1u << (24u - 8u * level)) - 1u;
  } else {
    pi |= bin << (56u - 8u * level);
    lowOnes = (1u << (56u - 8u * level)) - 1u;
  }
  prefKey = pk;
  prefId = pi;
  if (whole || level == 7u) {
    done = 1u;
    if (level < 4u) {
      thrKey = pk | lowOnes;
      thrId = 0xFFFFFFFFu;
    } else {
      thrKey = pk;
      thrId = pi | lowOnes;
    }
  }
}
