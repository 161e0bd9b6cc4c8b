// require() of every package named on the command line (`node require-all.cjs core dispatch …`)
// from CommonJS: none has top-level await, so each loads (Node >= 20.19 can require ES modules).
const outcome = {};
for (const name of process.argv.slice(2)) {
  try {
    outcome[name] = { loaded: Object.keys(require(`@turnkit/${name}`)).length > 0 };
  } catch (error) {
    outcome[name] = { error: error instanceof Error ? error.message : String(error) };
  }
}
console.log(JSON.stringify(outcome));
