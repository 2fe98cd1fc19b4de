// A server with a known capacity whose work is CPU, for scripts/bench-noise: one request at a
// time (Node's one thread), each answered after SERVICE_MS milliseconds of this process's own CPU
// time spent spinning. On a quiet core it carries about 1000 / SERVICE_MS requests a second; when
// other work shares its core it carries less, as a real CPU-bound server would, and a closed loop
// measures what it carries then.
//
//   node scripts/serial-server.js PORT [SERVICE_MS]     (listens on 127.0.0.1; default 2 ms)
'use strict';

const http = require('http');

const port = Number(process.argv[2]);
const serviceMs = Number(process.argv[3] || 2);
if (!Number.isInteger(port) || port <= 0 || !(serviceMs > 0)) {
    console.error('usage: node scripts/serial-server.js PORT [SERVICE_MS]');
    process.exit(2);
}

// Microseconds of CPU (user and system) this process has used.
function cpuMicros() {
    const used = process.cpuUsage();
    return used.user + used.system;
}

const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
        const until = cpuMicros() + serviceMs * 1000;
        while (cpuMicros() < until) {
            // spin: the service is CPU
        }
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '3' });
        res.end('ok\n');
    });
});
server.keepAliveTimeout = 75000;
server.listen(port, '127.0.0.1', () => {
    console.log(`serial-server on http://127.0.0.1:${port}/ (${serviceMs} ms of CPU a request)`);
});
