// Prefix-tree packing: each sequence's tokens are its path of nodes (ids and depths as the sequence has them),
// a node's subtree is the contiguous range up to its end, so the ancestors of a node are exactly the nodes j
// before it with end[j] beyond it; the tree batch lists the same policy tokens as the plain batch, each predicted
// from its predecessor's node.
import { describe, expect, it } from 'vitest';
import { policyBatch, treeBatch, type MaskedSequence } from '../../../src/rl/batch.ts';
import { packTree, Trie } from '../../../src/rl/tree.ts';
import { Rng } from '../../../src/env/random.ts';

/** Sequences sharing a prompt and branching at random points (as a question's rollouts do). */
function rollouts(seed: number, n: number): MaskedSequence[] {
  const rng = new Rng(seed);
  const prompt = Array.from({ length: 6 }, () => rng.int(50));
  const out: MaskedSequence[] = [];
  for (let k = 0; k < n; k++) {
    const base = k > 0 && rng.next() < 0.7 ? out[rng.int(k)]!.ids : prompt;
    const keep = prompt.length + rng.int(Math.max(1, base.length - prompt.length + 1));
    const ids = [...base.slice(0, keep), ...Array.from({ length: 1 + rng.int(8) }, () => rng.int(50))];
    const mask = ids.map((_, t) => (t >= prompt.length && rng.next() < 0.8 ? 1 : 0));
    out.push({ ids, mask });
  }
  return out;
}

describe('prefix tree', () => {
  it("packs shared prefixes once, depth first; each sequence's path has its ids and positions", () => {
    const seqs = [[1, 2, 3, 4], [1, 2, 5], [1, 2, 3, 6, 7], [8], [1, 2, 3, 4]];
    const t = packTree(seqs);
    expect(Array.from(t.ids)).toEqual([1, 2, 3, 4, 6, 7, 5, 8]);
    expect(Array.from(t.depth)).toEqual([0, 1, 2, 3, 3, 4, 2, 0]);
    expect(Array.from(t.end)).toEqual([7, 7, 6, 4, 6, 6, 7, 8]);
    expect(t.nodes.map((p) => Array.from(p))).toEqual([[0, 1, 2, 3], [0, 1, 6], [0, 1, 2, 4, 5], [7], [0, 1, 2, 3]]);
    const trie = new Trie();
    for (const s of seqs.slice(0, 2)) trie.insert(s);
    expect(trie.size).toBe(5);
    expect(trie.added([1, 2, 3, 6, 7])).toBe(2);
    expect(trie.added([9, 9])).toBe(2);
  });

  it('makes the ancestors of every node exactly the earlier nodes whose subtree reaches it', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const seqs = rollouts(seed, 6).map((s) => s.ids);
      const t = packTree(seqs);
      seqs.forEach((s, k) => {
        const path = t.nodes[k]!;
        s.forEach((id, i) => {
          expect(t.ids[path[i]!]).toBe(id);
          expect(t.depth[path[i]!]).toBe(i);
        });
        // For the node of token i: j is visible (j <= node < end[j]) exactly when j is on the path.
        const last = path[path.length - 1]!;
        const onPath = new Set(path);
        for (let j = 0; j <= last; j++)
          expect(j <= last && last < t.end[j]!, `seed ${seed} k ${k} j ${j}`).toBe(onPath.has(j));
      });
    }
  });
});

describe('treeBatch', () => {
  it("lists the plain batch's policy tokens, each predicted from its predecessor's node, left-padded rows", () => {
    const groups = [rollouts(3, 5), rollouts(4, 3), rollouts(5, 1)];
    const flat = groups.flat();
    const plain = policyBatch(flat, 0);
    const tree = treeBatch(groups, 0);
    for (const k of ['targets', 'owner', 'index'] as const) expect(Array.from(tree[k])).toEqual(Array.from(plain[k]));
    expect(tree.batch).toBe(3);
    const nodes = groups.map((g) => packTree(g.map((s) => s.ids)).ids.length);
    expect(tree.time).toBe(Math.max(...nodes));
    expect(nodes.reduce((a, b) => a + b, 0)).toBeLessThan(flat.reduce((a, s) => a + s.ids.length, 0));
    for (let m = 0; m < tree.rows.length; m++) {
      const s = flat[tree.owner[m]!]!;
      const t = tree.index[m]!;
      const row = tree.rows[m]!;
      const b = Math.floor(row / tree.time);
      // The predecessor's node: its token and position, and the target's node under it.
      expect(tree.ids[row]).toBe(s.ids[t - 1]);
      expect(tree.positions[row]).toBe(t - 1);
      expect(row - b * tree.time).toBeGreaterThanOrEqual(tree.keyStart[b]!);
    }
    // Padding: before keyStart, at position 0.
    for (let b = 0; b < tree.batch; b++)
      for (let c = 0; c < tree.keyStart[b]!; c++) expect(tree.positions[b * tree.time + c]).toBe(0);
    expect(() => treeBatch([[{ ids: [1, 2], mask: [1, 1] }]])).toThrow(/first token as sampled/);
    expect(() => treeBatch([[]])).toThrow(/at least one sequence/);
  });
});
