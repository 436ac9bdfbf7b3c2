// Sequences that share prefixes (the n rollouts of one question: the same prompt, often the same first turns)
// as one prefix tree, packed in depth-first order: every shared prefix is a single run of nodes, computed once
// by a training pass. A node's subtree is the contiguous range [node, end[node]) of the packing, so "key j is
// an ancestor-or-self of query i" is "j <= i < end[j]": the attention's tree mask (src/gpu/ops/attention.ts).
// Each node sits at its depth, the position its token has in every sequence through it, so rotary positions
// and every hidden state are exactly those of the sequence alone.

/** A prefix tree packed in depth-first order. */
export interface PackedTree {
  /** Each node's token, in packing order. */
  ids: Int32Array;
  /** Each node's depth: its token's index in the sequences through it. */
  depth: Int32Array;
  /** The end (exclusive) of each node's subtree in packing order: its descendants are the nodes before it. */
  end: Int32Array;
  /** Per sequence, the packed node of each of its tokens. */
  nodes: Int32Array[];
}

/** A trie of token sequences, grown one sequence at a time, that knows its size (the packed length). */
export class Trie {
  /** Per node, its token and its children by token (node 0 is the root, which holds no token). */
  private readonly token: number[] = [-1];
  private readonly children: Map<number, number>[] = [new Map()];
  /** Per inserted sequence, the trie node of each token. */
  private readonly paths: number[][] = [];

  /** Nodes (the packed length). */
  get size(): number {
    return this.token.length - 1;
  }

  /** The nodes a sequence would add: its length minus its longest prefix already in the trie. */
  added(ids: readonly number[]): number {
    let cur = 0;
    let t = 0;
    for (; t < ids.length; t++) {
      const next = this.children[cur]!.get(ids[t]!);
      if (next === undefined) break;
      cur = next;
    }
    return ids.length - t;
  }

  insert(ids: readonly number[]): void {
    let cur = 0;
    const path: number[] = [];
    for (const id of ids) {
      let next = this.children[cur]!.get(id);
      if (next === undefined) {
        next = this.token.length;
        this.token.push(id);
        this.children.push(new Map());
        this.children[cur]!.set(id, next);
      }
      path.push(next);
      cur = next;
    }
    this.paths.push(path);
  }

  /** The trie packed depth first, children in the order they were first inserted. */
  pack(): PackedTree {
    const n = this.size;
    const at = new Int32Array(n + 1); // trie node -> packed index
    const ids = new Int32Array(n);
    const depth = new Int32Array(n);
    const end = new Int32Array(n);
    let next = 0;
    // An explicit stack (a sequence may be thousands of tokens deep): each entry a node, its depth and the
    // index of its next child.
    const stack: { node: number; depth: number; kids: number[]; k: number }[] = [
      { node: 0, depth: -1, kids: [...this.children[0]!.values()], k: 0 },
    ];
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      if (top.k < top.kids.length) {
        const child = top.kids[top.k++]!;
        at[child] = next;
        ids[next] = this.token[child]!;
        depth[next] = top.depth + 1;
        next++;
        stack.push({ node: child, depth: top.depth + 1, kids: [...this.children[child]!.values()], k: 0 });
      } else {
        if (top.node !== 0) end[at[top.node]!] = next;
        stack.pop();
      }
    }
    return { ids, depth, end, nodes: this.paths.map((p) => Int32Array.from(p, (node) => at[node]!)) };
  }
}

/** The prefix tree of `seqs`, packed depth first. */
export function packTree(seqs: readonly (readonly number[])[]): PackedTree {
  const trie = new Trie();
  for (const s of seqs) trie.insert(s);
  return trie.pack();
}
