// The distillation weight λ per iteration (ALGORITHM.md section 1): a decaying list (the paper's
// 0.1 / 0.03 / 0.03) or one constant. Iterations past the end of a list keep its last value.

/** A constant, or one value per iteration. */
export type LambdaSchedule = number | readonly number[];

export function lambdaAt(schedule: LambdaSchedule, iteration: number): number {
  if (typeof schedule === 'number') return schedule;
  if (schedule.length === 0) return 0;
  return schedule[Math.min(Math.max(0, iteration), schedule.length - 1)]!;
}

/** Checks a schedule: finite, non-negative numbers. Throws a message naming the bad entry. */
export function validateLambda(schedule: LambdaSchedule, what = 'lambda'): void {
  const list = typeof schedule === 'number' ? [schedule] : schedule;
  if (list.length === 0) throw new Error(`${what}: give at least one value (e.g. 0.1,0.03,0.03 or 0.05)`);
  list.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      throw new Error(`${what}: entry ${i + 1} is ${String(v)}; every value must be a finite number >= 0`);
    }
  });
}

/** Parses "0.1,0.03,0.03" (a list) or "0.05" (a constant). */
export function parseLambda(text: string, what = 'lambda'): LambdaSchedule {
  const parts = text.split(',').map((s) => s.trim());
  const values = parts.map((s) => (s === '' ? NaN : Number(s)));
  const bad = values.findIndex((v) => !Number.isFinite(v) || v < 0);
  if (bad >= 0) throw new Error(`${what}: '${parts[bad]}' is not a number >= 0 (use e.g. 0.1,0.03,0.03 or 0.05)`);
  return values.length === 1 ? values[0]! : values;
}
