import 'reflect-metadata';
import './server/nest-common-preload';
import { runCli } from './cli/cli.runner';

// Exit explicitly: a store client that failed to close cleanly must not keep the CLI alive.
runCli(process.argv).then((code) => process.exit(code));
