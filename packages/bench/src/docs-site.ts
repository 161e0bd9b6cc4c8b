// `pnpm run docs`: rewrites the API reference (docs/reference/api/) and docs/llms.txt, then builds the
// docs site with VitePress into docs/.vitepress/dist/ (git-ignored), with each page's markdown,
// llms.txt and llms-full.txt beside the HTML. `pnpm docs:dev` serves the site with live reload.
// VitePress is installed on first use into docs/.vitepress/node_modules (git-ignored) with npm,
// never by `pnpm install`: CI and users of the packages do not download a site generator.
// docs/README.md ("How these docs are built") says why CI checks the inputs and does not build the site.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { DOCS_DIR, docsPages, LLMS_TXT, llmsFullTxt, llmsTxt, readIndex } from './docs-index.js';
import { generateReference, REFERENCE_DIR } from './reference.js';

const root = resolve(import.meta.dirname, '../../..');
const tools = join(root, DOCS_DIR, '.vitepress');

/** The site generator, pinned: VitePress 1 runs on Node 20 (it builds with Vite 5). */
export const VITEPRESS = 'vitepress@1.6.4';

/** Installs VitePress into docs/.vitepress/node_modules unless that version is there. */
function ensureVitepress(): string {
  const manifest = join(tools, 'node_modules/vitepress/package.json');
  const version = VITEPRESS.split('@')[1];
  const installed =
    existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version === version;
  if (!installed) {
    console.log(
      `Installing ${VITEPRESS} into ${relative(root, tools)}/node_modules with npm (first use only; pnpm install never installs it).`,
    );
    const args = ['install', '--prefix', tools, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', VITEPRESS];
    const done = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { cwd: root, stdio: 'inherit' });
    if (done.status !== 0) {
      console.error(`Installing ${VITEPRESS} failed (npm ${args.join(' ')}); check access to the npm registry and retry.`);
      process.exit(1);
    }
  }
  return join(tools, 'node_modules/vitepress/bin/vitepress.js');
}

if (process.argv[2] === 'dev') {
  const served = spawnSync(process.execPath, [ensureVitepress(), 'dev', DOCS_DIR], { cwd: root, stdio: 'inherit' });
  process.exit(served.status ?? 1);
}
const reference = await generateReference(root, join(root, REFERENCE_DIR));
for (const problem of reference.problems) console.error(problem);
if (reference.problems.length > 0) {
  console.error(`${REFERENCE_DIR}: ${reference.problems.length} problems; fix the comments, then run pnpm run docs again.`);
  process.exit(1);
}
const index = readIndex(root);
writeFileSync(join(root, LLMS_TXT), llmsTxt(index));
const built = spawnSync(process.execPath, [ensureVitepress(), 'build', DOCS_DIR], { cwd: root, stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
// Beside the HTML: each page's markdown (what llms.txt links to), llms.txt and llms-full.txt.
const dist = join(root, DOCS_DIR, '.vitepress/dist');
for (const page of docsPages(root)) {
  mkdirSync(dirname(join(dist, page)), { recursive: true });
  cpSync(join(root, DOCS_DIR, page), join(dist, page));
}
cpSync(join(root, LLMS_TXT), join(dist, 'llms.txt'));
writeFileSync(join(dist, 'llms-full.txt'), llmsFullTxt(root, index));
console.log(
  `The site is in ${relative(root, dist)}/ (${existsSync(join(dist, 'index.html')) ? 'index.html' : 'no index.html!'}).`,
);
