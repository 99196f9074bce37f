// Two python3 children each touch 200 MiB and hold it: each is under the
// 256 MiB limit, together they are over it: MLE.
const cp = require('child_process');
const fs = require('fs');
const n = parseInt(fs.readFileSync(0, 'utf8'));
const hog = 'import time\nb=bytearray(200<<20)\nfor i in range(0,len(b),4096): b[i]=1\ntime.sleep(3)';
let left = 2;
for (let i = 0; i < 2; i++)
  cp.spawn('/usr/bin/python3', ['-c', hog]).on('exit', () => { if (--left === 0) console.log(n + 1); });
