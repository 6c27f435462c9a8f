// The bundle's entry (bench/gpu/prepare.sh): runs bench.ts's main with the command line, prints its JSON.
import { buildModelFile, main } from './bench.ts';

const argv = process.argv.slice(2);
// `--build ID PATH [--tiny]`: a child process of main() writing one model file (models are built in parallel).
const run = argv[0] === '--build' ? buildModelFile(argv[1], argv[2], argv.includes('--tiny')).then(() => ({})) : main(argv);
run.then(
  (report) => {
    if (argv[0] !== '--build') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    process.exit(0);
  },
  (error) => {
    process.stderr.write(`bench/gpu: ${(error as Error)?.stack ?? error}\n`);
    process.exit(1);
  },
);
