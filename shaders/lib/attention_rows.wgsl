// Helpers of the 'rows' attention kernels (attention_rows_fwd.wgsl, attention_rows_bwd.wgsl), where each
// invocation owns a register tile of 4 rows:
//   IOTA       the lane offsets 0..3 of a vec4 half of a block;
//   queryRows  an invocation's 4 query rows: their indices into stats ([B, Hq, Tq]) and key ends.
// The including shader declares: a uniform p with Hq, Tq, Tk, off.

const IOTA = vec4u(0u, 1u, 2u, 3u);

struct QueryRows {
  row: vec4u, // index into stats, [B, Hq, Tq]
  rowEnd: vec4u, // row u sees keys [firstKey(b), rowEnd[u])
}

// Rows r0..r0+3 of the nRows = G * Tq (query, group head) pairs of kv head kvh, query-major; rows past the
// end repeat the last one (the caller stores nothing for them).
fn queryRows(b: u32, kvh: u32, G: u32, r0: u32, nRows: u32) -> QueryRows {
  var t: QueryRows;
  for (var u = 0u; u < 4u; u++) {
    let r = min(r0 + u, nRows - 1u);
    let i = r / G;
    t.row[u] = (b * p.Hq + kvh * G + r % G) * p.Tq + i;
    t.rowEnd[u] = min(p.off + i + 1u, p.Tk);
  }
  return t;
}
