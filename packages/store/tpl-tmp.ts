import { openStore } from '@turnkit/store';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
const base = mkdtempSync(join(tmpdir(), 'tpl-'));
for (const name of ['a', 'b']) {
  const t = performance.now(); const c0 = process.cpuUsage().user;
  const store = await openStore(join(base, name));
  await store.submit({ agent: 'x', input: 'hi', id: `t-${name}` });
  console.log(name, 'open+submit ms', Math.round(performance.now() - t), 'cpu ms', Math.round((process.cpuUsage().user - c0) / 1000));
  await store.close();
}
const again = await openStore(join(base, 'b'));
console.log('reopened b:', (await again.get('t-b'))?.status);
await again.close();
