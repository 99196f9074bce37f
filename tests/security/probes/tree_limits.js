// tree_limits — children started by the program must not escape its CPU and
// memory limits: both are those of the whole process tree, enforced while
// it runs (JavaScript: its process limit allows children).
//   GROUP cpu: two detached shells spin forever while node itself sleeps.
//     The tree's CPU time must reach the 1 s limit and end the run (TLE)
//     long before the children could finish ~3 s of CPU work each.
//   GROUP mem: two python3 children each touch 200 MiB and hold it. Each is
//     under the limit; together they are over it: MLE.
//   GROUP cpu_spread: six python3 children each do the same fixed work at
//     once (a 25-million-step loop: ~0.9 s of CPU on the 2-core
//     development machine), each under the 1 s limit, ~5.4 s together:
//     TLE. Work, not time: the children's own clock is gVisor's guest
//     clock, which runs ahead of the CPU they really get when throttled
//     (with six children spinning 0.4 s by that clock, they finished
//     after ~2 s of real CPU, under the host's kill at 2 x limit +
//     200 ms), so only finished work shows CPU really had.
//   GROUP cpu_churn: short-lived children one after another (each spins
//     30 ms and is reaped by node before the next starts), so that few are
//     ever alive when CPU is sampled: their CPU must still count: TLE
//     before they have used 3 s together.
//   GROUP mem_spread: eight python3 children touch 48 MiB each and hold it
//     (each far under the 256 MiB limit, 384 MiB together): MLE.
// A child that gets to the end of its work prints ESCAPED on the shared
// stdout, or the parent does once the group's children together got past
// the limit; the driver fails on it.
'use strict';
const cp = require('child_process');
const fs = require('fs');
const say = (s) => fs.writeSync(1, s + '\n');
const input = fs.readFileSync(0, 'utf8');
const group = (input.match(/^GROUP (\w+)/m) || [])[1] || 'cpu';
const kids = [];
if (group === 'cpu') {
  // ~3 s of CPU work each (an 80-million-step loop on the 2-core
  // development machine; work, not the guest clock, as cpu_spread below),
  // then it claims the escape.
  const spin = 'i = 0\nwhile i < 80000000: i += 1\n' +
               'print("ESCAPED child did ~3 s of CPU work outside the limit", flush=True)';
  for (let i = 0; i < 2; i++)
    kids.push(cp.spawn('/usr/bin/python3', ['-c', spin], { stdio: ['ignore', 'inherit', 'inherit'], detached: true }));
  say('INFO two spinning children started; parent sleeps');
} else if (group === 'cpu_spread') {
  const part = 'i = 0\nwhile i < 25000000: i += 1\n';
  for (let i = 0; i < 6; i++)
    kids.push(cp.spawn('/usr/bin/python3', ['-c', part], { stdio: ['ignore', 'inherit', 'inherit'] }));
  say('INFO six children working ~0.9 s each started');
  let ok = 0;
  for (const k of kids)
    k.on('exit', (code) => {
      if (code === 0 && ++ok === kids.length)
        say('ESCAPED six children did ~5.4 s of CPU work together under a 1 s limit');
    });
} else if (group === 'cpu_churn') {
  // Each child reports its own CPU time; the parent sums them.
  const part = 'import time\nt=time.process_time()\nwhile time.process_time()-t<0.03: pass\n' +
               'print(time.process_time(), flush=True)';
  let total = 0, n = 0;
  while (total < 3) {
    const r = cp.spawnSync('/usr/bin/python3', ['-c', part], { encoding: 'utf8' });
    if (r.error) {
      say('BLOCKED spawn: ' + r.error.message);
      break;
    }
    total += parseFloat(r.stdout) || 0;
    n++;
    if (n % 10 === 0)
      say('INFO ' + n + ' children reaped, ' + total.toFixed(2) + ' s of their CPU');
  }
  if (total >= 3)
    say('ESCAPED ' + n + ' short-lived children used ' + total.toFixed(2) + ' s of CPU under a 1 s limit');
} else if (group === 'mem_spread') {
  const hog = 'import time\nb=bytearray(48<<20)\nfor i in range(0,len(b),4096): b[i]=1\n' +
              'print("INFO child holds 48 MiB", flush=True)\ntime.sleep(4)\n';
  for (let i = 0; i < 8; i++)
    kids.push(cp.spawn('/usr/bin/python3', ['-c', hog], { stdio: ['ignore', 'inherit', 'inherit'] }));
  say('INFO eight 48 MiB children started');
  let ok = 0;
  for (const k of kids)
    k.on('exit', (code) => {
      if (code === 0 && ++ok === kids.length)
        say('ESCAPED eight children held 384 MiB together under a 256 MiB limit');
    });
} else {
  const hog = 'import time\nb=bytearray(200<<20)\nfor i in range(0,len(b),4096): b[i]=1\n' +
              'print("INFO child holds 200 MiB", flush=True)\ntime.sleep(4)\n' +
              'print("ESCAPED two children held 400 MiB under a 256 MiB limit", flush=True)';
  for (let i = 0; i < 2; i++)
    kids.push(cp.spawn('/usr/bin/python3', ['-c', hog], { stdio: ['ignore', 'inherit', 'inherit'] }));
  say('INFO two 200 MiB children started');
}
for (const k of kids)
  k.on('error', (e) => say('BLOCKED spawn: ' + e.message));
let left = kids.length;
for (const k of kids)
  k.on('exit', () => { if (--left === 0) say('DONE escaped=0'); });
