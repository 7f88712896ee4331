// Sums a V8 .cpuprofile (node --cpu-prof) by function: self time per callFrame (function name + script
// + line), and per code area (our src/ folders, each node_modules package, node internals), so that the
// profile of a benchmark run can be read in a table. Also a command:
//   npx tsx hack/bench/cpuprofile.ts <file.cpuprofile> [top]
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileRow {
  name: string;
  selfMs: number;
  percent: number;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Time not idle: total minus `(idle)`. */
  busyMs: number;
  functions: ProfileRow[];
  areas: ProfileRow[];
}

/** Where a script belongs: `src/hub`, `node_modules/pino`, `node:internal`, … */
function area(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return `node_modules/${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const m = /\/(src|dist|\.local\/[^/]+\/dist[^/]*)\/([^/]+)\//.exec(url);
  if (m) return `src/${m[2]}`;
  return url.replace(/^file:\/\//, '');
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules);
  const m = /\/(?:src|dist[^/]*)\/(.*)$/.exec(url);
  return m ? `src/${m[1]}` : url.replace(/^file:\/\//, '');
}

export function summariseProfile(file: string, top = 20): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const fnTime = new Map<string, number>();
  const areaTime = new Map<string, number>();
  let idle = 0;
  // timeDeltas[i] is the time before sample i; the time after it (timeDeltas[i + 1]) is what it stands for.
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]!);
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') idle += dt;
    const name = url === '' ? functionName || '(anonymous)' : `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}`;
    fnTime.set(name, (fnTime.get(name) ?? 0) + dt);
    const a = area(url, functionName);
    areaTime.set(a, (areaTime.get(a) ?? 0) + dt);
  }
  const totalMs = (profile.endTime - profile.startTime) / 1000;
  const busyMs = totalMs - idle;
  const rows = (m: Map<string, number>): ProfileRow[] =>
    [...m]
      .filter(([name]) => name !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, selfMs]) => ({ name, selfMs: Math.round(selfMs), percent: Math.round((1000 * selfMs) / Math.max(busyMs, 1)) / 10 }));
  return { file, totalMs: Math.round(totalMs), busyMs: Math.round(busyMs), functions: rows(fnTime), areas: rows(areaTime) };
}

export function formatProfile(s: ProfileSummary): string {
  const lines = [`${s.file}: ${s.totalMs} ms profiled, ${s.busyMs} ms busy (not idle); self time, % of busy:`];
  const table = (title: string, rows: ProfileRow[]): void => {
    lines.push(`  ${title}`);
    for (const r of rows) lines.push(`    ${String(r.selfMs).padStart(7)} ms ${r.percent.toFixed(1).padStart(5)} %  ${r.name}`);
  };
  table('by area', s.areas);
  table('by function', s.functions);
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    console.error('usage: tsx hack/bench/cpuprofile.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  console.log(formatProfile(summariseProfile(file, top ? Number(top) : 25)));
}
