// Group-relative advantages (ALGORITHM.md section 4), shared by GRPO and HRPO: each reward is standardised
// within its group. GRPO groups are the n rollouts of one question; HRPO groups are the questions of one
// hop count. Plain float64 on the CPU: a batch has at most a few hundred rewards.

/**
 * A_i = (r_i - mean_g) / (std_g + eps), with std_g the unbiased (n-1) standard deviation of the group g that
 * holds i. A group of one gets 0. `groups[i]` is any id (number or string); members need not be adjacent.
 */
export function groupAdvantages(
  rewards: readonly number[],
  groups: readonly (number | string)[],
  eps = 1e-6,
): number[] {
  if (rewards.length !== groups.length) {
    throw new Error(`piplay: groupAdvantages: ${rewards.length} rewards but ${groups.length} group ids`);
  }
  rewards.forEach((r, i) => {
    if (!Number.isFinite(r)) throw new Error(`piplay: groupAdvantages: reward ${i} is ${r}`);
  });
  const members = new Map<number | string, number[]>();
  groups.forEach((g, i) => {
    let list = members.get(g);
    if (!list) members.set(g, (list = []));
    list.push(i);
  });
  const out = new Array<number>(rewards.length).fill(0);
  for (const idx of members.values()) {
    const n = idx.length;
    if (n < 2) continue;
    let mean = 0;
    for (const i of idx) mean += rewards[i]!;
    mean /= n;
    let ss = 0;
    for (const i of idx) ss += (rewards[i]! - mean) ** 2;
    const std = Math.sqrt(ss / (n - 1));
    for (const i of idx) out[i] = (rewards[i]! - mean) / (std + eps);
  }
  return out;
}

/**
 * The share of groups whose rewards are not all equal: the groups (questions) GRPO's advantages are not
 * all 0 on, so the only ones the policy-gradient term learns from.
 */
export function learnableShare(rewards: readonly number[], groups: readonly (number | string)[]): number {
  const seen = new Map<number | string, Set<number>>();
  groups.forEach((g, i) => {
    const set = seen.get(g) ?? new Set<number>();
    set.add(rewards[i]!);
    seen.set(g, set);
  });
  if (seen.size === 0) return 0;
  return [...seen.values()].filter((s) => s.size > 1).length / seen.size;
}
