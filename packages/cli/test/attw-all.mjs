// attw (@arethetypeswrong/cli) over several tarballs in one process, for registry.test.ts:
//   node attw-all.mjs <profile> <tarball>...
// prints a JSON array with, per tarball, what `attw --profile <profile> --format json <tarball>`
// prints (`{ analysis, problems }`) and the exit code it would give. The same analysis, the CLI's
// own profile and exit code: attw's core library (the package the CLI runs) checks each tarball,
// and the CLI's getExitCode and profiles decide the code. One process loads TypeScript once: attw
// as a process per tarball spent 40 s of CPU on 15 packages, most of it loading TypeScript 15 times.
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [profileName, ...tarballs] = process.argv.slice(2);
// The CLI's own dependencies: core resolves from the CLI's folder (pnpm does not hoist it).
const cliManifest = realpathSync(new URL('../../../node_modules/@arethetypeswrong/cli/package.json', import.meta.url));
const cliDist = join(dirname(cliManifest), 'dist');
const core = await import(pathToFileURL(createRequire(cliManifest).resolve('@arethetypeswrong/core')).href);
const { getExitCode } = await import(pathToFileURL(join(cliDist, 'getExitCode.js')).href);
const { profiles } = await import(pathToFileURL(join(cliDist, 'profiles.js')).href);
const { groupProblemsByKind } = await import(pathToFileURL(createRequire(cliManifest).resolve('@arethetypeswrong/core/utils')).href);
const profile = profiles[profileName];
if (profile === undefined) throw new Error(`attw has no profile '${profileName}'; its profiles are ${Object.keys(profiles).join(', ')}.`);

const results = [];
for (const tarball of tarballs) {
  try {
    const analysis = await core.checkPackage(core.createPackageFromTarballData(new Uint8Array(readFileSync(tarball))), {});
    const result = analysis.types ? { analysis, problems: groupProblemsByKind(analysis.problems) } : { analysis };
    results.push({ tarball, code: getExitCode(analysis, { ignoreResolutions: [...profile.ignoreResolutions] }), stdout: JSON.stringify(result) });
  } catch (error) {
    // The CLI's exit code for an error while checking a file.
    results.push({ tarball, code: 3, stdout: '', stderr: error instanceof Error ? error.message : String(error) });
  }
}
process.stdout.write(JSON.stringify(results));
