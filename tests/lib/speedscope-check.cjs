// speedscope-check.cjs - check a file written by `stepscope symbolize
// --format speedscope` against speedscope's own file-format-schema.json
// (from the npm package `speedscope`, validated with ajv), then the rules
// speedscope's evented importer enforces: events in time order, each close
// naming the frame on top of the stack, nothing left open, frames in range.
// Prints one line per profile: "NAME: TOP-LEVEL FRAMES" (consecutive
// repeats merged), or "error: ..." and exits 1.
//   NODE_PATH=DIR/node_modules node speedscope-check.cjs FILE
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const schemaPath = path.join(path.dirname(require.resolve('speedscope/package.json')),
  'dist', 'release', 'file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const file = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const ajv = new Ajv({ strict: false, allErrors: true });
const validate = ajv.compile(schema);
if (!validate(file)) {
  console.log('error: schema: ' + ajv.errorsText(validate.errors));
  process.exit(1);
}
const frames = file.shared.frames;
for (const p of file.profiles) {
  if (p.type !== 'evented') {
    console.log('error: profile ' + p.name + ' is ' + p.type);
    process.exit(1);
  }
  const stack = [];
  const top = [];
  let last = -Infinity;
  for (const e of p.events) {
    if (e.at < last || e.at < p.startValue || e.at > p.endValue) {
      console.log(`error: ${p.name}: event at ${e.at} out of order or range`);
      process.exit(1);
    }
    last = e.at;
    if (!(e.frame >= 0 && e.frame < frames.length)) {
      console.log(`error: ${p.name}: frame ${e.frame} out of range`);
      process.exit(1);
    }
    if (e.type === 'O') {
      if (!stack.length && top[top.length - 1] !== frames[e.frame].name)
        top.push(frames[e.frame].name);
      stack.push(e.frame);
    } else if (stack.pop() !== e.frame) {
      console.log(`error: ${p.name}: close of ${frames[e.frame].name} at ${e.at} ` +
        'is not the frame on top');
      process.exit(1);
    }
  }
  if (stack.length) {
    console.log(`error: ${p.name}: ${stack.length} frames left open`);
    process.exit(1);
  }
  console.log(`${p.name} [${p.unit}]: ${top.join(' ')}`);
}
