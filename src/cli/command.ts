// How every `npm run` command ends: with its exit code, or with the error's message (for a settings error,
// where to find the options) and exit status `failure`.
import { ConfigError } from '../selfplay/config.ts';

export function runCommand(name: string, main: (argv: string[]) => Promise<number> | number, failure = 1): void {
  Promise.resolve()
    .then(() => main(process.argv.slice(2)))
    .then(
      (code) => process.exit(code),
      (err) => {
        const message = (err as Error).message ?? String(err);
        console.error(
          err instanceof ConfigError ? `${message}\n(npm run ${name} -- --help lists the options)` : message,
        );
        process.exit(failure);
      },
    );
}
