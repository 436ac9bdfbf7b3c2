// The three policies of π-Play (ALGORITHM.md section 1) and their optimizers. By default each is a full
// copy of the base model, fine-tuned as a whole (f32); with `policies: 'lora'` they are LoRA adapters on one
// frozen shared base (in the checkpoint's dtype). The teacher is never trained by gradient: it follows the
// student by EMA after every student optimizer step. A frozen reference copy exists only when a k3 KL is on
// (beta or examinerBeta > 0).
import type { Engine } from '../gpu/engine.ts';
import type { Tensor } from '../gpu/tensor.ts';
import { emaInto } from '../gpu/ops/ema.ts';
import { AdamW, type AdamWState } from '../gpu/optim/adamw.ts';
import { CausalLM } from '../model/decoder.ts';
import { LoraSet } from '../model/lora.ts';
import { entryRows, joinRows, joinShardEntries, parseShardName, shardGroups } from '../model/vocab.ts';
import { frozenDtypes } from '../model/weight-storage.ts';
import { parseSafetensors, toFloat32, writeSafetensors } from '../model/safetensors.ts';
import { nonFiniteValues, type TensorEntry } from '../model/safetensors.ts';
import type { BaseModel } from './base-model.ts';
import { needsReference, type SelfPlayConfig } from './config.ts';
import { recomputes } from './memory-plan.ts';

export type PolicyName = 'examiner' | 'student' | 'teacher';

export class Policies {
  private constructor(
    readonly engine: Engine,
    readonly examiner: CausalLM,
    readonly student: CausalLM,
    /** null when there is no privileged teacher (privileged 'none': Dr. Zero). */
    readonly teacher: CausalLM | null,
    /** The frozen base for the k3 KL (beta > 0), else null. */
    readonly reference: CausalLM | null,
    readonly examinerOpt: AdamW,
    readonly studentOpt: AdamW,
    private readonly shared: CausalLM | null,
  ) {}

  static create(e: Engine, base: BaseModel, c: SelfPlayConfig): Policies {
    const withTeacher = c.privileged !== 'none';
    let examiner: CausalLM;
    let student: CausalLM;
    let teacher: CausalLM | null = null;
    let reference: CausalLM | null = null;
    let shared: CausalLM | null = null;
    const copy = () => CausalLM.fromHost(e, base.cfg, (name) => base.weights.get(name));
    // What is never trained (the LoRA base, the reference) keeps the checkpoint's dtype (weight-storage.ts).
    const frozen = base.fileDtypes ? frozenDtypes(base.fileDtypes) : undefined;
    const frozenCopy = () => CausalLM.fromHost(e, base.cfg, (name) => base.weights.get(name), frozen);
    if (c.policies === 'separate') {
      examiner = copy();
      student = copy();
      if (withTeacher) teacher = copy();
      if (needsReference(c)) reference = frozenCopy();
    } else {
      shared = frozenCopy();
      const view = (seed: number | null) => {
        const m = new CausalLM(e, base.cfg);
        for (const [name, p] of shared!.params) m.params.set(name, p);
        if (seed !== null) m.lora = new LoraSet(e, base.cfg, { rank: c.loraRank, alpha: c.loraAlpha, seed });
        return m;
      };
      examiner = view(c.seed * 2 + 1);
      // Teacher and student start equal: the same adapter seed (and B = 0, so both equal the base).
      student = view(c.seed * 2 + 2);
      if (withTeacher) teacher = view(c.seed * 2 + 2);
      if (needsReference(c)) reference = view(null);
    }
    for (const m of [teacher, reference, shared]) m?.setTrainable(false);
    examiner.setTrainable(true);
    student.setTrainable(true);
    examiner.recompute = student.recompute = recomputes(base.cfg, c);
    const adam = (lr: number) => ({
      lr,
      beta1: c.adamBeta1,
      beta2: c.adamBeta2,
      weightDecay: c.weightDecay,
      maxGradNorm: c.gradClip > 0 ? c.gradClip : null,
    });
    const examinerOpt = new AdamW(examiner.trainable(), adam(c.examinerLr));
    const studentOpt = new AdamW(student.trainable(), adam(c.lr));
    return new Policies(e, examiner, student, teacher, reference, examinerOpt, studentOpt, shared);
  }

  get isLora(): boolean {
    return this.shared !== null;
  }

  policy(name: PolicyName): CausalLM | null {
    return name === 'examiner' ? this.examiner : name === 'student' ? this.student : this.teacher;
  }

  /**
   * teacher <- (1 - tau)·teacher + tau·student over the trained tensors (ALGORITHM.md section 1). Under LoRA
   * those are the adapters, so the teacher's update is EMA(B)·EMA(A), not the EMA of the student's BA (as
   * TRL's SDFT teacher adapter does): one step differs by tau·(1 - tau)·(B_T - B_S)(A_T - A_S). Kept on
   * purpose (the teacher stays a rank-r adapter); the gap is measured in test/unit/selfplay/policies-ema.gpu.test.ts.
   */
  emaTeacher(tau: number): void {
    if (!this.teacher) return;
    const t = this.teacher.trainable();
    const s = this.student.trainable();
    if (t.length !== s.length) throw new Error('piplay: teacher and student have different parameter lists');
    t.forEach((tp, i) => emaInto(tp, s[i]!, tau));
  }

  /** The tensors a checkpoint holds for a policy: the whole model, or its adapters under LoRA. */
  private stateTensors(m: CausalLM): Tensor[] {
    return m.trainable();
  }

  /**
   * A policy's trained tensors as one safetensors file (f32, bit-exact). A vocabulary matrix kept as row shards
   * is joined on the host and saved whole under its HF name: the file loads under any binding limit (vocab.ts).
   */
  async saveWeights(name: PolicyName): Promise<Uint8Array | null> {
    const m = this.policy(name);
    if (!m) return null;
    const tensors = [];
    const joined = new Set<string>();
    for (const t of this.stateTensors(m)) {
      const shard = parseShardName(t.name ?? '');
      if (shard && joined.has(shard.base)) continue;
      if (shard) joined.add(shard.base);
      const { data, shape } = shard
        ? await m.joinShards(shard.base)
        : { data: (await t.readF32()).slice(), shape: [...t.shape] };
      tensors.push({
        name: shard?.base ?? t.name ?? '',
        dtype: 'F32' as const,
        shape,
        data: new Uint8Array(data.buffer),
      });
    }
    return writeSafetensors(tensors, { format: 'pt' });
  }

  /**
   * Restores a policy from saveWeights' bytes; every tensor must be there with its shape. A whole vocabulary
   * matrix (or, from an older checkpoint, its row shards of any binding limit) is cut into this model's shards.
   */
  loadWeights(name: PolicyName, bytes: Uint8Array): void {
    const m = this.policy(name);
    if (!m) return;
    const file = `${name}.safetensors`;
    const tensors = joinShardEntries(parseSafetensors(bytes, file).tensors, `the checkpoint's ${file}`);
    const checked = new Set<string>();
    for (const t of this.stateTensors(m)) {
      const shard = parseShardName(t.name ?? '');
      const key = shard?.base ?? t.name ?? '';
      const whole = tensors.get(key);
      if (!whole) throw new Error(`piplay: the checkpoint of the ${name} has no tensor '${key}'`);
      const shape = shard ? [vocabRows(m, shard.base), t.shape[1]!] : t.shape;
      if (whole.shape.length !== shape.length || whole.shape.some((d, k) => d !== shape[k])) {
        throw new Error(
          `piplay: the checkpoint's ${name} tensor '${key}' has shape [${whole.shape}], the model [${shape}]`,
        );
      }
      if (!checked.has(key)) refuseNonFinite(whole, `the checkpoint's ${file}: tensor '${key}'`);
      checked.add(key);
      this.engine.write(t, toFloat32(shard ? entryRows(whole, shard.first, shard.end) : whole));
    }
  }

  /** An optimizer's state on the host, a sharded vocabulary matrix's moments joined whole under its HF name. */
  async optimizerState(which: 'examiner' | 'student'): Promise<AdamWState> {
    const opt = which === 'examiner' ? this.examinerOpt : this.studentOpt;
    return joinShardMoments(await opt.state(), `the ${which}'s optimizer state`);
  }

  /** Restores optimizerState's state, its whole vocabulary moments (or older row shards) cut into this model's. */
  loadOptimizerState(which: 'examiner' | 'student', s: AdamWState): void {
    const opt = which === 'examiner' ? this.examinerOpt : this.studentOpt;
    opt.loadState(momentsFor(s, opt.params, `${which}.optim.safetensors`));
  }

  dispose(): void {
    this.examinerOpt.dispose();
    this.studentOpt.dispose();
    if (this.shared) {
      for (const m of [this.examiner, this.student, this.teacher, this.reference]) m?.lora?.dispose();
      this.shared.dispose();
    } else {
      for (const m of [this.examiner, this.student, this.teacher, this.reference]) m?.dispose();
    }
  }
}

/** Rows of a vocabulary matrix over all its shards. */
function vocabRows(m: CausalLM, name: string): number {
  return m.vocabShards(name).reduce((n, p) => n + p.shape[0]!, 0);
}

/**
 * An optimizer state with each vocabulary matrix's row-shard moments joined into one entry under its HF name, in
 * place of its first shard. Every shard of a matrix gets a gradient in the same backward passes, so they share
 * one step count.
 */
function joinShardMoments(s: AdamWState, what: string): AdamWState {
  const groups = shardGroups(
    s.params.flatMap((p) => (p.name ? [p.name] : [])),
    what,
  );
  if (groups.size === 0) return s;
  const byName = new Map(s.params.map((p) => [p.name, p]));
  const params: AdamWState['params'] = [];
  const joined = new Set<string>();
  for (const p of s.params) {
    const shard = p.name ? parseShardName(p.name) : null;
    if (!shard) {
      params.push(p);
      continue;
    }
    if (joined.has(shard.base)) continue;
    joined.add(shard.base);
    const group = groups.get(shard.base)!;
    const parts = group.map((g) => byName.get(g.name)!);
    group.forEach((g, k) => {
      if (parts[k]!.shape[0] !== g.end - g.first || parts[k]!.shape[1] !== p.shape[1]) {
        throw new Error(
          `piplay: ${what}: the moments of '${g.name}' have shape [${parts[k]!.shape}]; the file is damaged`,
        );
      }
    });
    if (parts.some((q) => q.step !== p.step)) {
      throw new Error(
        `piplay: ${what}: the row shards of '${shard.base}' took different numbers of steps ` +
          `(${parts.map((q) => q.step).join(', ')}), so their moments cannot be joined`,
      );
    }
    params.push({
      name: shard.base,
      shape: [group[group.length - 1]!.end, p.shape[1]!],
      step: p.step,
      m: joinRows(parts.map((q) => q.m)),
      v: joinRows(parts.map((q) => q.v)),
    });
  }
  return { step: s.step, params };
}

/**
 * A saved optimizer state laid out for an optimizer over `params`: entries matched by name, whole vocabulary
 * moments (or row shards of any binding limit, joined first) cut into the parameters' row shards. A state or
 * parameter list without names is left to AdamW.loadState's match by position. `what` names the file.
 */
function momentsFor(s: AdamWState, params: readonly Tensor[], what: string): AdamWState {
  if (params.some((p) => p.name === undefined) || s.params.some((p) => p.name === undefined)) return s;
  const saved = new Map(joinShardMoments(s, what).params.map((p) => [p.name!, p]));
  const rows = new Map<string, number>();
  for (const p of params) {
    const shard = parseShardName(p.name!);
    if (shard) rows.set(shard.base, Math.max(rows.get(shard.base) ?? 0, shard.end));
  }
  const used = new Set<string>();
  const out = params.map((p) => {
    const shard = parseShardName(p.name!);
    const key = shard?.base ?? p.name!;
    const ps = saved.get(key);
    if (!ps) throw new Error(`piplay: ${what} has no moments of parameter '${key}'; it is from another model`);
    used.add(key);
    if (!shard) return ps;
    const D = p.shape[1]!;
    if (ps.shape[0] !== rows.get(key) || ps.shape[1] !== D) {
      throw new Error(
        `piplay: ${what}: the moments of '${key}' have shape [${ps.shape}], the model [${rows.get(key)}, ${D}]`,
      );
    }
    const cut = (a: Float32Array) => a.subarray(shard.first * D, shard.end * D);
    return { name: p.name!, shape: [...p.shape], step: ps.step, m: cut(ps.m), v: cut(ps.v) };
  });
  const extra = [...saved.keys()].filter((n) => !used.has(n));
  if (extra.length) {
    throw new Error(`piplay: ${what} holds moments of parameters the model does not have (${extra.join(', ')})`);
  }
  return { step: s.step, params: out };
}

/** Optimizer state as bytes: moments in a safetensors file, step counters in its metadata. */
export function optimizerStateToBytes(s: AdamWState): Uint8Array {
  const tensors = s.params.flatMap((p, k) => [
    { name: `${k}.m`, dtype: 'F32' as const, shape: p.shape, data: new Uint8Array(p.m.slice().buffer) },
    { name: `${k}.v`, dtype: 'F32' as const, shape: p.shape, data: new Uint8Array(p.v.slice().buffer) },
  ]);
  const meta = {
    step: String(s.step),
    steps: JSON.stringify(s.params.map((p) => p.step)),
    names: JSON.stringify(s.params.map((p) => p.name ?? '')),
  };
  return writeSafetensors(tensors, meta);
}

/**
 * Refuses a checkpoint tensor with NaN or infinite values (a run that diverged before it was saved): it
 * would restore and then train or evaluate on garbage.
 */
function refuseNonFinite(entry: TensorEntry, what: string): void {
  const { count, first } = nonFiniteValues(entry);
  if (count === 0) return;
  const n = entry.shape.reduce((a, b) => a * b, 1);
  throw new Error(
    `piplay: ${what} holds ${count} NaN or infinite values of ${n} (the first at index ${first}): the run diverged ` +
      'before this checkpoint was saved. Resume from an earlier copy of the run, or start it again with a lower ' +
      'learning rate (--lr, --examiner-lr) or gradient clipping (--grad-clip).',
  );
}

export function optimizerStateFromBytes(bytes: Uint8Array, what: string): AdamWState {
  const f = parseSafetensors(bytes, what);
  const steps = JSON.parse(f.metadata['steps'] ?? '[]') as number[];
  const names = JSON.parse(f.metadata['names'] ?? '[]') as string[];
  const params: AdamWState['params'] = steps.map((step, k) => {
    const m = f.tensors.get(`${k}.m`);
    const v = f.tensors.get(`${k}.v`);
    if (!m || !v) throw new Error(`piplay: ${what} lacks the moments of parameter ${k}`);
    refuseNonFinite(m, `${what}: the first moment of parameter ${k}`);
    refuseNonFinite(v, `${what}: the second moment of parameter ${k}`);
    return { ...(names[k] ? { name: names[k] } : {}), shape: m.shape, step, m: toFloat32(m), v: toFloat32(v) };
  });
  return { step: Number(f.metadata['step'] ?? 0), params };
}
