// Fills a buffer with one 32-bit pattern (a float's bits, an int, or two packed halves).
#include "lib/map.wgsl"
struct Params { words: u32, bits: u32 }
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

fn size() -> u32 { return p.words; }

fn element(i: u32) { out[i] = p.bits; }
