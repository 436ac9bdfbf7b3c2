// Builds the position lists of embedding.wgsl's scatter on the GPU, for when the host has no copy of
// the ids: for each position n, next[n] = the next position with the same id (-1 if none), and
// starts[n] = n if n is the id's first position, else -1. One thread per position scans the ids:
// O(N^2) compares, cheap next to the gradient itself for the token counts of a training batch.
#include "lib/map.wgsl"
struct Params { N: u32 }
@group(0) @binding(1) var<storage, read> ids: array<i32>;
@group(0) @binding(2) var<storage, read_write> next: array<i32>;
@group(0) @binding(3) var<storage, read_write> starts: array<i32>;

fn size() -> u32 { return p.N; }

fn element(n: u32) {
  let id = ids[n];
  var first = i32(n);
  for (var m = 0u; m < n; m++) {
    if (ids[m] == id) { first = -1; break; }
  }
  var after = -1;
  for (var m = n + 1u; m < p.N; m++) {
    if (ids[m] == id) { after = i32(m); break; }
  }
  next[n] = after;
  starts[n] = first;
}
