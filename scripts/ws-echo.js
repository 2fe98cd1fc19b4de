// A WebSocket echo server on the pinned `ws` package, for tests/ws_echo.rs:
//   node ws-echo.js PORT [--stall-after N] [--close-after N]
// Echoes every message on 127.0.0.1:PORT. With --close-after N, each connection's N-th message
// is not answered: the server closes that connection with 1001 (going away). With --stall-after N, the N-th message of each
// connection (1-based) starts a stall: that message and every one after it are held for
// 300 ms from the N-th's arrival, then echoed in order, as a server that stops answering for
// 300 ms would. Prints "listening PORT" once it listens.
'use strict';
const { WebSocketServer } = require('ws');

const port = Number(process.argv[2]);
const at = process.argv.indexOf('--stall-after');
const stallAfter = at > 0 ? Number(process.argv[at + 1]) : 0;
const closeAt = process.argv.indexOf('--close-after');
const closeAfter = closeAt > 0 ? Number(process.argv[closeAt + 1]) : 0;
const STALL_MS = 300;

const server = new WebSocketServer({ host: '127.0.0.1', port });
server.on('connection', (socket) => {
    let count = 0;
    let stalledUntil = 0;
    socket.on('message', (data, isBinary) => {
        count += 1;
        if (closeAfter > 0 && count === closeAfter) {
            socket.close(1001, 'going away');
            return;
        }
        if (stallAfter > 0 && count === stallAfter) {
            stalledUntil = Date.now() + STALL_MS;
        }
        const wait = stalledUntil - Date.now();
        if (wait > 0) {
            setTimeout(() => socket.send(data, { binary: isBinary }), wait);
        } else {
            socket.send(data, { binary: isBinary });
        }
    });
});
server.on('listening', () => console.log(`listening ${port}`));
