// Number, size and time formatting for the views.

export function fmtBytes(n: number): string {
  if (!Number.isFinite(n)) return '?';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  let v = n;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v.toFixed(0) : v.toFixed(v >= 100 ? 0 : 1)} ${units[u]}`;
}

/** 1234567 -> "1.23M" */
export function fmtCount(n: number): string {
  if (!Number.isFinite(n)) return '?';
  const a = Math.abs(n);
  if (a >= 1e9) return (n / 1e9).toFixed(2) + 'B';
  if (a >= 1e6) return (n / 1e6).toFixed(2) + 'M';
  if (a >= 1e3) return (n / 1e3).toFixed(1) + 'k';
  return String(Math.round(n));
}

/** Seconds as "1h 02m", "3m 05s", "12s". */
export function fmtDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '–';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  return `${h}h ${String(m % 60).padStart(2, '0')}m`;
}

/** `v` to `digits` significant digits (a token's KL: 0.00133, not 0.001), minus as '−'. */
export function fmtSig(v: number | undefined | null, digits = 3): string {
  if (v === undefined || v === null || Number.isNaN(v)) return '–';
  if (!Number.isFinite(v) || v === 0 || Math.abs(v) >= 1e4 || Math.abs(v) < 1e-6) return fmtNum(v, digits);
  return String(Number(v.toPrecision(digits))).replace(/^-/, '−');
}

/** A metric value with sensible precision. */
export function fmtNum(v: number | undefined | null, digits = 3): string {
  if (v === undefined || v === null || Number.isNaN(v)) return '–';
  if (!Number.isFinite(v)) return v > 0 ? '∞' : '−∞';
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-3) return v.toExponential(2).replace('-', '−');
  const s = v.toFixed(a >= 100 ? 1 : digits);
  return s.replace(/^-/, '−');
}

/** A signed value ("+0.41", "−1.20"). */
export function fmtSigned(v: number, digits = 2): string {
  if (!Number.isFinite(v)) return fmtNum(v);
  const s = Math.abs(v).toFixed(digits);
  return (v > 0 ? '+' : v < 0 ? '−' : '±') + s;
}

export function fmtPct(v: number, digits = 0): string {
  if (!Number.isFinite(v)) return '–';
  return (v * 100).toFixed(digits) + '%';
}

export function fmtTime(ms: number): string {
  const d = new Date(ms);
  const pad = (x: number) => String(x).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A run's 0-based iteration index for people: "iteration 2" (or "before training" for the first evaluation's -1). */
export function fmtIteration(i: number, of?: number | null): string {
  if (i < 0) return 'before training';
  return `iteration ${i + 1}${of ? ` of ${of}` : ''}`;
}

/** A 0-based step index for people ("step 3"); negative steps (data generation) read "data generation". */
export function fmtStep(s: number): string {
  return s < 0 ? 'data generation' : `step ${s + 1}`;
}
