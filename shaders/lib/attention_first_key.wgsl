// firstKey(b): the first key that batch row b's queries may see (keyStart[b], clamped at 0; 0 without one).
// Shared by the attention kernels. The including shader declares: a uniform p with hasKeyStart, and the
// storage array keyStart (i32, [B]; bound to a placeholder and never read when hasKeyStart is 0).

fn firstKey(b: u32) -> u32 {
  if (p.hasKeyStart != 0u) { return u32(max(keyStart[b], 0)); }
  return 0u;
}
