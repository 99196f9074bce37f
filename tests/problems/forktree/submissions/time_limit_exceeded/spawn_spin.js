// JavaScript may start processes (its process limit is above 1): a python3
// child burns 2.6 s of CPU; the parent waits for it. The child's time is
// the test's: TLE.
const cp = require('child_process');
const fs = require('fs');
const n = parseInt(fs.readFileSync(0, 'utf8'));
cp.spawnSync('/usr/bin/python3', ['-c', 'import time\nt=time.process_time()\nwhile time.process_time()-t<2.6: pass']);
console.log(n + 1);
