// Piston's own npm client (piston-client 1.0.2, unchanged) against a
// Gavel server, used as its README shows: runtimes(), execute(language,
// code) and execute(language, code, {stdin}). Prints one JSON line per call
// for the shell test to check (tests/integration/test_playground.sh).
// Usage: node piston_client_run.mjs SERVER   (e.g. http://127.0.0.1:8080/playground/demo)
import piston from "piston-client";

const server = process.argv[2];
if (!server) {
	console.error("usage: node piston_client_run.mjs SERVER");
	process.exit(2);
}
const client = piston({ server });

const runtimes = await client.runtimes();
console.log(JSON.stringify({ call: "runtimes", result: runtimes }));

const hello = await client.execute("python", 'print("Hello World!")');
console.log(JSON.stringify({ call: "python", result: hello }));

const cpp = `#include <iostream>
int main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; return 0; }
`;
const sum = await client.execute("c++", cpp, { stdin: "20 22\n" });
console.log(JSON.stringify({ call: "c++", result: sum }));
