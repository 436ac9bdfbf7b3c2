// Prefix trees of token sequences, packed depth-first into one row, for the attention key mask (keyEnd): the
// sequences' shared prefixes become one path, each node a position of the row, and node j's subtree is the
// contiguous range [j, end[j]). Query i may see key j iff j is an ancestor of i or i itself: j <= i < end[j].
import { packTree } from '../../src/rl/tree.ts';
import { rng } from './random.ts';

export interface PackedTree {
  /** The token of each node, in depth-first (pre-)order: the packed row. */
  tokens: number[];
  /** end[j]: one past the last node of j's subtree. */
  end: number[];
  /** For each sequence, the node of each of its tokens (a root-to-node path). */
  paths: number[][];
}

/** The prefix tree of `seqs` (src/rl/tree.ts packTree), as plain arrays. */
export function packPrefixTree(seqs: readonly (readonly number[])[]): PackedTree {
  const t = packTree(seqs);
  return { tokens: Array.from(t.ids), end: Array.from(t.end), paths: t.nodes.map((p) => Array.from(p)) };
}

/**
 * Random rollouts of `questions` prompts: each a prompt of `prompt` tokens, then answers that branch off a random
 * point of an earlier sequence of the same question (or the prompt's end) and add 1..`answer` new tokens, until the
 * sequences hold at least `nodes` distinct tokens. New tokens are drawn from a large vocabulary, so branches rarely
 * merge by chance (when they do, the trie merges them, as a real packer would).
 */
export function randomRollouts(
  seed: number,
  opts: { nodes: number; prompt: number; answer: number; questions?: number },
): number[][] {
  const r = rng(seed);
  const tok = () => Math.floor(r() * 1e6);
  const questions = opts.questions ?? 1;
  const groups: number[][][] = Array.from({ length: questions }, () => [Array.from({ length: opts.prompt }, tok)]);
  let count = questions * opts.prompt;
  while (count < opts.nodes) {
    const g = groups[Math.floor(r() * questions)]!;
    const from = g[Math.floor(r() * g.length)]!;
    const cut = Math.max(opts.prompt, 1 + Math.floor(r() * from.length)); // branch after the prompt
    const add = 1 + Math.floor(r() * opts.answer);
    g.push([...from.slice(0, cut), ...Array.from({ length: add }, tok)]);
    count += add;
  }
  return groups.flat();
}

/**
 * keyEnd rows [B, T] for rows of `pad[b]` padding keys (their ends are 0: the kernels must not read them, keyStart
 * hides them) followed by the first T - pad[b] nodes of a random prefix tree (a prefix of a depth-first order is
 * itself a tree: every node's ancestors come before it).
 */
export function treeKeyEnds(seed: number, T: number, pad: readonly number[], questions = 1): Int32Array {
  const out = new Int32Array(pad.length * T);
  pad.forEach((p, b) => {
    const n = T - p;
    const tree = packPrefixTree(
      randomRollouts(seed + b, {
        nodes: n,
        prompt: Math.max(1, Math.floor(n / (6 * questions))),
        answer: Math.max(2, Math.floor(n / 4)),
        questions,
      }),
    );
    for (let j = 0; j < n; j++) out[b * T + p + j] = p + Math.min(tree.end[j]!, n);
  });
  return out;
}
