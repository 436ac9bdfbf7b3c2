// scanU32(lid, v): this thread's inclusive prefix sum of the threads' v in thread order (a Hillis-Steele
// scan). The including shader declares: WG (the workgroup size) and var<workgroup> scanU: array<u32, WG>.
// It has barriers: call it in uniform control flow.

fn scanU32(lid: u32, v: u32) -> u32 {
  scanU[lid] = v;
  workgroupBarrier();
  for (var off = 1u; off < WG; off *= 2u) {
    let x = select(0u, scanU[lid - off], lid >= off);
    workgroupBarrier();
    scanU[lid] += x;
    workgroupBarrier();
  }
  return scanU[lid];
}
