// `tsc -p tsconfig.json` for registry.test.ts, with the semantic check limited to the files whose
// errors the test reads: run in the consumer project as
//   node typecheck-ours.mjs
// it prints what tsc prints (its plain `file(line,col): error TS…: message` lines) for the project's
// own files, every installed @turnkit package's files and the files outside node_modules/ (the
// TypeScript and @types libraries the compiler options name), and emits out/*.js as tsc does, even
// when an error is found; the exit code is tsc's (0, or 2 when errors were found and files emitted).
// The other installed libraries' declarations are parsed and bound, and their types resolved
// wherever ours use them, as tsc does with skipLibCheck off; only their own files are not checked
// (zod's, the MCP SDK's, xstate's, hono's), whose errors the test leaves out anyway: 17.4 s of CPU
// for tsc in the consumer project of the test, 8.1 s for this.
import { relative } from 'node:path';
import ts from 'typescript';

const cwd = process.cwd();
const parsed = ts.getParsedCommandLineOfConfigFile('tsconfig.json', {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
if (parsed === undefined) throw new Error(`no tsconfig.json in ${cwd}`);
const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, projectReferences: parsed.projectReferences });
/** The test's filter: a file of the project, of an installed @turnkit package, or outside node_modules/. */
const ours = (fileName) => {
  const path = relative(cwd, fileName).split('\\').join('/');
  return !path.startsWith('node_modules/') || path.startsWith('node_modules/@turnkit/');
};
const diagnostics = [
  ...parsed.errors,
  ...program.getConfigFileParsingDiagnostics(),
  ...program.getOptionsDiagnostics(),
  ...program.getGlobalDiagnostics(),
  ...program.getSyntacticDiagnostics(),
  ...program.getSourceFiles().flatMap((file) => (ours(file.fileName) ? program.getSemanticDiagnostics(file) : [])),
];
// One emit per root file: an emit of the whole program first checks every file of it, the other
// libraries' declarations included (getEmitResolver without a file), which is most of tsc's time here.
const emitted = parsed.fileNames.flatMap((name) => {
  const file = program.getSourceFile(name);
  return file === undefined ? [] : program.emit(file).diagnostics;
});
const all = ts.sortAndDeduplicateDiagnostics([...diagnostics, ...emitted]);
process.stdout.write(
  ts.formatDiagnostics(all, { getCurrentDirectory: () => cwd, getCanonicalFileName: (name) => name, getNewLine: () => '\n' }),
);
process.exitCode = all.some((d) => d.category === ts.DiagnosticCategory.Error) ? 2 : 0;
