// The memory estimate on the command line: printed before anything is allocated on the GPU, and a run that
// cannot fit the adapter's limits refused with what to change.
import { totalmem } from 'node:os';
import type { Engine } from '../gpu/engine.ts';
import { memorySize as size, type AdapterLimits, type MemoryReport } from '../selfplay/memory-plan.ts';

/** The adapter's limits, with the device's memory where it is known: a CPU driver's is the host's RAM. */
export function deviceLimits(e: Engine): AdapterLimits {
  return { ...e.info.limits, ...(e.info.isCpu ? { deviceBytes: totalmem() } : {}) };
}

/** The estimate as lines: the total, each term, the prompt lengths it assumed (`prompts`), and any warnings. */
export function estimateLines(m: MemoryReport, prompts = true): string[] {
  const p = m.prompts;
  const out = [
    `memory estimate: about ${size(m.totalBytes)} of GPU memory (largest buffer ${size(m.largestTensorBytes)} of ` +
      `${size(m.maxBinding)} allowed)` +
      (prompts
        ? `; prompts up to ${p.student} tokens (student), ${p.teacher} (teacher), ` +
          `${p.examiner} (examiner)${p.guessed ? ', guessed' : ''}`
        : ''),
  ];
  for (const l of m.breakdown) out.push(`  ${size(l.bytes).padStart(10)}  ${l.label}`);
  for (const w of m.warnings) out.push(`  warning: ${w}`);
  return out;
}

/**
 * The run's measured GPU memory beside what was estimated before it: the buffer pool's high-water mark (what
 * it allocated at most), the most it had in use, and how far the estimate was from the high-water mark.
 */
export function peakLine(estimateBytes: number, peakAllocatedBytes: number, peakLiveBytes: number): string {
  const off = (100 * (estimateBytes - peakAllocatedBytes)) / peakAllocatedBytes;
  return (
    `GPU memory high-water mark ${size(peakAllocatedBytes)} allocated by the buffer pool (${size(peakLiveBytes)} ` +
    `in use at most); the estimate of ${size(estimateBytes)} is ${Math.abs(off).toFixed(1)}% ` +
    `${off < 0 ? 'under' : 'over'} it`
  );
}
