// `pnpm run docs`: rewrites the API reference (docs/reference/api/) and docs/llms.txt, then builds the
// docs site with VitePress into docs/.vitepress/dist/ (git-ignored), with each page's markdown,
// llms.txt and llms-full.txt beside the HTML. docs/README.md ("How these docs are built") says why
// CI checks the inputs and does not build the site.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { DOCS_DIR, docsPages, LLMS_TXT, llmsFullTxt, llmsTxt, readIndex } from './docs-index.js';
import { generateReference, REFERENCE_DIR } from './reference.js';

const root = resolve(import.meta.dirname, '../../..');
const reference = await generateReference(root, join(root, REFERENCE_DIR));
for (const problem of reference.problems) console.error(problem);
if (reference.problems.length > 0) {
  console.error(`${REFERENCE_DIR}: ${reference.problems.length} problems; fix the comments, then run pnpm run docs again.`);
  process.exit(1);
}
const index = readIndex(root);
writeFileSync(join(root, LLMS_TXT), llmsTxt(index));
const built = spawnSync('pnpm', ['exec', 'vitepress', 'build', DOCS_DIR], { cwd: root, stdio: 'inherit' });
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
