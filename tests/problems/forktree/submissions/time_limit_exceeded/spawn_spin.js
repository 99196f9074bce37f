// JavaScript may start processes (its process limit is above 1): a python3
// child does a fixed amount of work (a 150-million-step loop: ~5 s of CPU
// on the 2-core development machine, well over the 2 s limit on a machine
// twice as fast); the parent waits for it. The child's time is the test's:
// TLE. Work, not time by the child's own clock: that is gVisor's guest
// clock, which runs ahead of the CPU a throttled sandbox really gets.
const cp = require('child_process');
const fs = require('fs');
const n = parseInt(fs.readFileSync(0, 'utf8'));
cp.spawnSync('/usr/bin/python3', ['-c', 'i = 0\nwhile i < 150000000: i += 1']);
console.log(n + 1);
