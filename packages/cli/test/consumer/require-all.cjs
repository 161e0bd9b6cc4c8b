// require() of every package from CommonJS: the packages without top-level await load (Node >=
// 20.19 can require ES modules), the others throw a sentence that says to use import.
const names = ['core', 'dispatch', 'inline', 'stream', 'testing', 'check', 'ai-sdk', 'cli'];
const outcome = {};
for (const name of names) {
  try {
    outcome[name] = { loaded: Object.keys(require(`@turnkit/${name}`)).length > 0 };
  } catch (error) {
    outcome[name] = { error: error instanceof Error ? error.message : String(error) };
  }
}
console.log(JSON.stringify(outcome));
