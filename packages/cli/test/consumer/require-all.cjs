// require() of every package from CommonJS: none has top-level await, so each loads (Node >= 20.19
// can require ES modules).
const names = ['core', 'dispatch', 'inline', 'stream', 'testing', 'check', 'ai-sdk', 'store', 'cli'];
const outcome = {};
for (const name of names) {
  try {
    outcome[name] = { loaded: Object.keys(require(`@turnkit/${name}`)).length > 0 };
  } catch (error) {
    outcome[name] = { error: error instanceof Error ? error.message : String(error) };
  }
}
console.log(JSON.stringify(outcome));
