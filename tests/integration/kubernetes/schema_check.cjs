// Schema check of Kubernetes objects against the upstream OpenAPI schemas,
// as the npm package kubernetes-models ships them (pinned in tests/js; its
// schemas are Kubernetes' own definitions, generated from the release's
// OpenAPI document). Each object is checked twice:
//   shipped  the package's own validation (ajv): types, formats, enums,
//            required fields, as Kubernetes' schema states them;
//   strict   the same schemas compiled again with every object schema closed
//            (additionalProperties: false where the schema lists its
//            properties and allows nothing else), so that an unknown or
//            misspelt field fails too, as the API server's strict field
//            validation and kubectl's --validate refuse it.
// Nothing about any kind is written here: the schemas are the package's.
//
//   node schema_check.cjs OBJECTS.json
//
// OBJECTS.json: a JSON array of objects (the test converts kubectl
// kustomize's YAML). Prints one line per object and check, "ok KIND/NAME
// (MODE)" or "invalid KIND/NAME (MODE): errors", and exits 1 if any object
// failed either check, 2 if one could not be checked at all.
"use strict";
const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");

const jsRequire = createRequire(path.join(__dirname, "..", "..", "js", "package.json"));
// The validate module the models themselves load (resolved from theirs).
const modelsRequire = createRequire(jsRequire.resolve("kubernetes-models/v1"));
const shipped = modelsRequire("@kubernetes-models/validate");
const validateRequire = createRequire(modelsRequire.resolve("@kubernetes-models/validate"));
const Ajv = validateRequire("ajv").default;
const addFormats = validateRequire("ajv-formats").default;
const addFormatsDraft2019 = validateRequire("ajv-formats-draft2019");

// Every schema the models register, and the id each validation starts from.
const schemas = new Map();
let lastId = null;
const register = shipped.register;
const validate = shipped.validate;
shipped.register = (id, schema) => {
	if (!schemas.has(id)) schemas.set(id, schema);
	return register(id, schema);
};
shipped.validate = (id, data) => {
	lastId = id;
	return validate(id, data);
};

// The formats the package's own ajv knows (its src/ajv.ts), so that both
// checks read the schemas alike.
function newAjv() {
	const ajv = new Ajv({ strictTypes: false, allErrors: true, verbose: true });
	addFormats(ajv);
	(addFormatsDraft2019.default || addFormatsDraft2019)(ajv);
	const rSigned = /[+-]?(?:\d+|\d+\.\d+|\d+\.|\.\d+)/.source;
	const rQuantity = new RegExp(`^${rSigned}(?:[KMGTPE]i|(?:[YZEPTGMkhdcmunpfazy]|da)|[eE]${rSigned})?$`);
	ajv.addFormat("byte", { type: "string", validate: (v) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v) });
	ajv.addFormat("quantity", { type: "string", validate: rQuantity });
	ajv.addFormat("string", { type: "string", validate: (v) => typeof v === "string" });
	return ajv;
}

// A copy of a schema with every object schema that lists its properties
// closed to any other. Schemas that keep unknown fields on purpose
// (x-kubernetes-preserve-unknown-fields, or an additionalProperties of
// their own such as labels' map) are left as they are.
function closed(schema) {
	if (Array.isArray(schema)) return schema.map(closed);
	if (!schema || typeof schema !== "object") return schema;
	const out = {};
	for (const [k, v] of Object.entries(schema)) out[k] = closed(v);
	if (out.properties && !("additionalProperties" in out) && !out["x-kubernetes-preserve-unknown-fields"]) {
		out.additionalProperties = false;
	}
	return out;
}

// The package's own filter (excludeNullableRefErrors): a nullable
// reference is written oneOf [{$ref}, {type: null}], and an error inside
// the reference also fails the null branch and the oneOf; only the first
// says anything.
function withoutNullBranches(errors) {
	const skip = new Set();
	const kept = [];
	for (const e of errors) {
		if (e.keyword === "oneOf" && Array.isArray(e.schema)) {
			const i = e.schema.findIndex((x) => x && x.type === "null");
			if (i > -1) {
				skip.add(`${e.schemaPath}/${i}/type`);
				continue;
			}
		}
		kept.push(e);
	}
	return kept.filter((e) => !skip.has(e.schemaPath));
}

function describe(errors) {
	return withoutNullBranches(errors)
		.map((e) => {
			let where = e.instancePath || "/";
			if (e.params && e.params.additionalProperty) return `${where}: unknown field "${e.params.additionalProperty}"`;
			if (e.params && e.params.missingProperty) return `${where}: missing required field "${e.params.missingProperty}"`;
			return `${where}: ${e.message}`;
		})
		.filter((x, i, all) => all.indexOf(x) === i)
		.join("; ");
}

function main() {
	if (process.argv.length !== 3) {
		console.error("usage: node schema_check.cjs OBJECTS.json");
		process.exit(2);
	}
	const objects = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
	if (!Array.isArray(objects) || objects.length === 0) {
		console.error("schema_check: expected a non-empty JSON array of objects");
		process.exit(2);
	}
	let invalid = 0;
	let unchecked = 0;
	const strictAjv = newAjv();
	const added = new Set();
	for (const obj of objects) {
		const name = `${obj && obj.kind}/${obj && obj.metadata && obj.metadata.name}`;
		let Model;
		try {
			const group = obj.apiVersion.includes("/") ? obj.apiVersion : `v1`;
			const mod = jsRequire(obj.apiVersion.includes("/") ? `kubernetes-models/${group}` : "kubernetes-models/v1");
			Model = mod[obj.kind];
		} catch (e) {
			Model = undefined;
		}
		if (typeof Model !== "function") {
			console.log(`unchecked ${name}: no model for apiVersion ${obj && obj.apiVersion}`);
			unchecked++;
			continue;
		}
		// shipped
		lastId = null;
		try {
			new Model(obj).validate();
			console.log(`ok ${name} (shipped)`);
		} catch (e) {
			console.log(`invalid ${name} (shipped): ${e.errors ? describe(e.errors) : e.message}`);
			invalid++;
		}
		if (!lastId || !schemas.has(lastId)) {
			console.log(`unchecked ${name}: the model registered no schema`);
			unchecked++;
			continue;
		}
		// strict
		for (const [id, schema] of schemas) {
			if (!added.has(id)) {
				strictAjv.addSchema(closed(schema), id);
				added.add(id);
			}
		}
		const check = strictAjv.getSchema(lastId);
		if (check(JSON.parse(JSON.stringify(obj)))) {
			console.log(`ok ${name} (strict)`);
		} else {
			console.log(`invalid ${name} (strict): ${describe(check.errors)}`);
			invalid++;
		}
	}
	process.exit(unchecked ? 2 : invalid ? 1 : 0);
}

main();
