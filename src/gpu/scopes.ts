// Memory scopes: `tidy(fn)` frees every tensor `fn` made but what it returns or `keep`s. New tensors register
// with the innermost open scope (Tensor's constructor calls `track`).
import { Tensor } from './tensor.ts';

export class Scopes {
  private scopes: Set<Tensor>[] = [];
  private kept = new WeakSet<Tensor>();

  /** Registers a new tensor with the innermost open scope. */
  track(t: Tensor): void {
    this.scopes[this.scopes.length - 1]?.add(t);
  }

  untrack(t: Tensor): void {
    for (const s of this.scopes) s.delete(t);
  }

  /** Runs `fn`; disposes every tensor it created except those it returns (found in arrays/objects) or `keep`s. */
  tidy<T>(fn: () => T): T {
    const scope = new Set<Tensor>();
    this.scopes.push(scope);
    let result: T;
    try {
      result = fn();
    } finally {
      this.scopes.pop();
    }
    const out = new Set<Tensor>();
    collectTensors(result, out);
    for (const t of scope) {
      if (out.has(t)) this.track(t);
      else if (!this.kept.has(t)) t.dispose();
    }
    return result;
  }

  /** Exempts a tensor from the enclosing `tidy` scopes. */
  keep<T extends Tensor>(t: T): T {
    this.kept.add(t);
    this.untrack(t);
    return t;
  }

  /** Undoes `keep`: the tensor belongs to the innermost open scope again. */
  unkeep<T extends Tensor>(t: T): T {
    this.kept.delete(t);
    this.track(t);
    return t;
  }
}

function collectTensors(x: unknown, out: Set<Tensor>, depth = 0): void {
  if (x instanceof Tensor) out.add(x);
  else if (depth < 4 && Array.isArray(x)) for (const v of x) collectTensors(v, out, depth + 1);
  else if (depth < 4 && x && typeof x === 'object' && !ArrayBuffer.isView(x)) {
    for (const v of Object.values(x)) collectTensors(v, out, depth + 1);
  }
}
