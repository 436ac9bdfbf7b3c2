// For kernels that run as one subgroup of exactly 8 lanes (the host checks the size): the value of x in each of
// the 8 lanes, in every lane. subgroupBroadcast takes a constant lane, hence the 8 calls.
fn lanes8(x: f32) -> array<f32, 8> {
  return array<f32, 8>(subgroupBroadcast(x, 0u), subgroupBroadcast(x, 1u), subgroupBroadcast(x, 2u),
                       subgroupBroadcast(x, 3u), subgroupBroadcast(x, 4u), subgroupBroadcast(x, 5u),
                       subgroupBroadcast(x, 6u), subgroupBroadcast(x, 7u));
}
