// tree_limits — children started by the program must not escape its CPU and
// memory limits: both are those of the whole process tree, enforced while
// it runs (JavaScript: its process limit allows children).
//   GROUP cpu: two detached shells spin forever while node itself sleeps.
//     The tree's CPU time must reach the 1 s limit and end the run (TLE)
//     long before the children could report 3 s of their own.
//   GROUP mem: two python3 children each touch 200 MiB and hold it. Each is
//     under the limit; together they are over it: MLE.
// A child that gets to the end of its work prints ESCAPED on the shared
// stdout; the driver fails on it.
'use strict';
const cp = require('child_process');
const fs = require('fs');
const say = (s) => fs.writeSync(1, s + '\n');
const input = fs.readFileSync(0, 'utf8');
const group = (input.match(/^GROUP (\w+)/m) || [])[1] || 'cpu';
const kids = [];
if (group === 'cpu') {
  // 3 s of the child's own CPU, then it claims the escape.
  const spin = 'import time\nt=time.process_time()\nwhile time.process_time()-t<3: pass\n' +
               'print("ESCAPED child used 3 s of CPU outside the limit", flush=True)';
  for (let i = 0; i < 2; i++)
    kids.push(cp.spawn('/usr/bin/python3', ['-c', spin], { stdio: ['ignore', 'inherit', 'inherit'], detached: true }));
  say('INFO two spinning children started; parent sleeps');
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
