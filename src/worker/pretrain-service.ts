// Pretraining a base model in the worker (the recipe of `npm run pretrain`, src/worker/pretrain-job.ts) as the
// session's one job, and the trained model kept for download when storing it failed.
import type { Engine } from '../gpu/engine.ts';
import { zipFolder } from './checkpoint-service.ts';
import { RunControl, RunStopped } from './control.ts';
import { checkPretrainRequest, pretrainedName, runPretrainJob } from './pretrain-job.ts';
import type { PretrainRequest } from './protocol.ts';
import { classifyRun, isLost, type WorkerSession } from './session.ts';

export class PretrainService {
  /** A pretrained model that could not be stored, kept for download until the next pretraining. */
  private unsaved: { name: string; files: Map<string, Uint8Array> } | null = null;

  constructor(private readonly s: WorkerSession) {}

  /**
   * Starts pretraining a base model (the recipe of `npm run pretrain`); returns once it is under way, or
   * with the reason it cannot start. Progress and the loss arrive as run events (stage 'pretrain'), the
   * outcome as a 'pretrained' message; the model is stored as a model entry, never over another entry.
   */
  async pretrain(req: PretrainRequest): Promise<{ ok: boolean; error?: string; name?: string }> {
    const busy = await this.s.busy();
    if (busy) return { ok: false, error: busy };
    let name: string;
    try {
      checkPretrainRequest(req);
      name = await pretrainedName(this.s.store, req.name);
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
    if (this.s.active) return { ok: false, error: this.s.busyMessage() };
    const control = new RunControl();
    this.s.releaseKept();
    this.s.active = { job: 'pretrain', name: '', control, run: null, engine: null };
    this.s.job = 'pretrain';
    this.unsaved = null;
    this.s.setPhase('starting');
    try {
      const e = await this.s.ensureEngine();
      this.s.active.engine = e;
      this.s.driving = this.drivePretrain(req, name, e, control);
      return { ok: true, name };
    } catch (e) {
      this.s.active = null;
      const msg = (e as Error).message;
      this.s.setPhase('failed', msg, classifyRun(e));
      return { ok: false, error: msg };
    }
  }

  private async drivePretrain(req: PretrainRequest, name: string, e: Engine, control: RunControl): Promise<void> {
    this.s.setPhase('running');
    try {
      const out = await runPretrainJob(req, name, {
        engine: e,
        store: this.s.store,
        signal: control.signal,
        emit: this.s.emitRun,
      });
      this.s.post({ type: 'pretrained', summary: out.summary, saved: out.saved?.name ?? null });
      if (out.saved) {
        this.s.emitRun({
          type: 'log',
          level: 'info',
          message: `pretraining finished; the model is stored as '${out.saved.name}'`,
        });
        this.s.setPhase('finished');
      } else {
        this.unsaved = { name: out.summary.name, files: out.files };
        this.s.setPhase(
          'failed',
          `The model trained, but storing it failed: ${out.saveError ?? 'unknown error'} It can still be downloaded ` +
            'as a zip.',
          'other',
        );
      }
    } catch (err) {
      if (err instanceof RunStopped) {
        this.s.emitRun({ type: 'log', level: 'info', message: 'pretraining stopped; nothing was stored' });
        this.s.setPhase('stopped');
      } else {
        const lost = await isLost(e);
        this.s.setPhase('failed', (err as Error).message, lost ? 'device-lost' : classifyRun(err));
      }
    } finally {
      this.s.active = null;
      void this.s.postCheckpoints();
    }
  }

  /** The last pretrained model that could not be stored, as a zip (null when there is none). */
  exportUnsavedModel(): { fileName: string; blob: Blob } | null {
    return this.unsaved ? zipFolder(this.unsaved.name, this.unsaved.files) : null;
  }
}
