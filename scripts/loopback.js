// Node preload (`node -r ./loopback.js SCRIPT ...`) that keeps every TCP server on 127.0.0.1.
//
// majiang-server calls `http.listen(port)` with no host, which binds every interface, and it has
// no host option. The tests and the demo must not open a port to the network, so this rewrites
// each `net.Server.prototype.listen` call (http.Server inherits it) to name 127.0.0.1 as the
// host. Unix sockets and inherited handles are left alone.
'use strict';

const net = require('net');

const LOOPBACK = '127.0.0.1';
const originalListen = net.Server.prototype.listen;

// A string that is not a number is a Unix socket path (Node's own rule).
function isPort(value) {
    if (value === undefined || value === null) return true;
    if (typeof value === 'number') return true;
    return typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value));
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
    const first = args[0];
    // listen({port, host?, backlog?, ...}, cb?): keep every option, replace the host.
    if (first !== null && typeof first === 'object') {
        const isHandle = first._handle !== undefined || first.fd !== undefined
            || first.handle !== undefined || first.path !== undefined;
        if (isHandle) return originalListen.apply(this, args);
        return originalListen.call(this, { ...first, host: LOOPBACK }, ...args.slice(1));
    }
    // listen(), listen(cb), listen(port), listen(port, cb), listen(port, host, backlog, cb) ...
    const callback = typeof args[args.length - 1] === 'function' ? args.pop() : undefined;
    if (!isPort(args[0])) return originalListen.apply(this, callback ? [...args, callback] : args);
    const options = { port: args[0] === undefined || args[0] === null ? 0 : Number(args[0]), host: LOOPBACK };
    // The backlog follows the port, or the host when one was given.
    const backlog = typeof args[1] === 'string' ? args[2] : args[1];
    if (backlog !== undefined && backlog !== null) options.backlog = Number(backlog);
    return callback ? originalListen.call(this, options, callback) : originalListen.call(this, options);
};
