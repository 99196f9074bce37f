const data = require('fs').readFileSync(0, 'utf8').trim().split(/\s+/);
console.log((BigInt(data[0]) + BigInt(data[1])).toString());
