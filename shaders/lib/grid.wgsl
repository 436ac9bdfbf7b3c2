// The workgroup size and the folded 1-D grid of the kernels that run one thread per element. The host
// launches ceil(n / WG) workgroups, folded into (x, y) when x alone would pass the per-dimension cap of
// 65535, so thread (gid, nwg) has the flat index gid.x + gid.y * (threads per grid row).
override WG: u32; // the workgroup size, set by the host

fn gridIndex(gid: vec3u, nwg: vec3u) -> u32 { return gid.x + gid.y * nwg.x * WG; }
