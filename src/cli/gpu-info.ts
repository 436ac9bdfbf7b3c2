// npm run gpu-info: which adapter Dawn finds, and the limits and features piplay got from it.
import { Engine } from '../gpu/engine.ts';
import { nodeHost } from '../gpu/host/node.ts';

Engine.create(nodeHost()).then(
  (e) => {
    console.log(JSON.stringify(e.info, null, 2));
    e.destroy();
    process.exit(0);
  },
  (err: Error) => {
    console.error(err.message);
    process.exit(1);
  },
);
