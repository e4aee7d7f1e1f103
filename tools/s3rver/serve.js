// Starts s3rver (the npm package @20minutes/s3rver, pinned in package.json and
// package-lock.json) for the object-storage tests: on 127.0.0.1, on a port
// the system picks, storing objects under DIR, checking SigV4 signatures
// with the key pair S3RVER/S3RVER. Prints "PORT <n>" on stdout once it
// listens, and exits when its stdin closes (so a test that dies never leaves
// a server behind).
//
//   node tools/s3rver/serve.js DIR [BUCKET...]
'use strict';
const S3rver = require('@20minutes/s3rver');

async function main() {
  const [dir, ...buckets] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: serve.js DIR [BUCKET...]');
    process.exit(2);
  }
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory: dir,
    silent: true,
    vhostBuckets: false,
    configureBuckets: buckets.map((name) => ({ name, configs: [] })),
  });
  const { port } = await server.run();
  process.stdout.write(`PORT ${port}\n`);
  process.stdin.on('end', () => server.close(() => process.exit(0)));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}

main().catch((e) => {
  console.error(`serve.js: ${e.stack || e}`);
  process.exit(1);
});
