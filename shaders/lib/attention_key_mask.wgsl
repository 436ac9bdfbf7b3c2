// Which keys a query sees, for every attention kernel: the query at absolute position P (queryCol(b, i): off + i, or
// where the query columns say) of batch row b sees key j iff firstKey(b) <= j <= P, j < Tk, and P < keyEnd(b, j).
//   firstKey(b)        keyStart[b] clamped at 0 (left padding); 0 without one.
//   keyEnd(b, j)       the end of the positions that see key j (j < Tk): with a prefix-tree mask (p.keyEnds != 0) the
//                      end of j's subtree in the depth-first packed row, clamped to 0..Tk; else Tk (every later query).
//   nextKey(b, j, P, end)   the first key from j on, before end, that a query at position P or later may see:
//                      subtrees that end at or before P are skipped whole.
//   keysEnd(b, j0, j1) the largest keyEnd of keys [j0, j1): queries at that position or later see none of them.
// The skips rely on what depth-first packing guarantees: subtrees nest (j < j' < keyEnd(b, j) implies
// keyEnd(b, j') <= keyEnd(b, j)).
//   queryCol(b, i)     query i's position: off + i, or (p.queryCols != 0: some of a pass's queries, the lanes kernels
//                      only) its entry in the [B, Tq] query columns, which do not decrease along a row.
//   firstQueryAt(b, P) the first query at position P or later (Tq if none).
// The including shader declares a uniform p with off, Tq, Tk, hasKeyStart, keyEnds and queryCols, and the storage
// array keyStart (i32): [B] first keys (read when p.hasKeyStart is 1), then, from index p.keyEnds when that is not 0,
// the [B, Tk] subtree ends, and from index p.queryCols when that is not 0 the query columns. A placeholder, never
// read, when none is on.

fn firstKey(b: u32) -> u32 {
  if (p.hasKeyStart != 0u) { return u32(max(keyStart[b], 0)); }
  return 0u;
}

fn keyEnd(b: u32, j: u32) -> u32 {
  if (p.keyEnds == 0u) { return p.Tk; }
  return u32(clamp(keyStart[p.keyEnds + b * p.Tk + j], 0, i32(p.Tk)));
}

fn nextKey(b: u32, j: u32, pos: u32, end: u32) -> u32 {
  var x = j;
  if (p.keyEnds == 0u) { return x; }
  loop {
    if (x >= end) { break; }
    let e = keyEnd(b, x);
    if (e > pos) { break; }
    x = max(e, x + 1u); // a malformed end (<= its key) still moves on
  }
  return x;
}

fn keysEnd(b: u32, j0: u32, j1: u32) -> u32 {
  if (p.keyEnds == 0u) { return p.Tk; }
  var e = 0u;
  for (var j = j0; j < j1; j++) { e = max(e, keyEnd(b, j)); }
  return e;
}

fn queryCol(b: u32, i: u32) -> u32 {
  if (p.queryCols == 0u) { return p.off + i; }
  return u32(max(keyStart[p.queryCols + b * p.Tq + i], 0));
}

fn firstQueryAt(b: u32, P: u32) -> u32 {
  if (p.queryCols == 0u) { return min(max(P, p.off) - p.off, p.Tq); }
  var lo = 0u;
  var hi = p.Tq;
  loop {
    if (lo >= hi) { break; }
    let mid = (lo + hi) / 2u;
    if (queryCol(b, mid) < P) { lo = mid + 1u; } else { hi = mid; }
  }
  return lo;
}
