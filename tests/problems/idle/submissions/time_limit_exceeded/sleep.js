// Waits 3 s on a timer under a 1 s time limit, then answers right: TLE.
const n = parseInt(require('fs').readFileSync(0, 'utf8'));
setTimeout(() => console.log(n + 1), 3000);
