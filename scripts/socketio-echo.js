// A socket.io server on the pinned `socket.io` package, for tests/ws_socketio.rs:
//   node socketio-echo.js PORT [--stall-after N] [--disconnect-after N] [--ping-interval MS]
// Listens on 127.0.0.1:PORT (socket.io's default path /socket.io/) and acknowledges every
// "echo" event with its payload. With --stall-after N, the N-th event of each connection
// (1-based) starts a stall: that event and every one after it are acknowledged 300 ms after the
// N-th's arrival, in order, as a server that stops answering for 300 ms would. With
// --disconnect-after N, each connection's N-th event is not acknowledged: the server
// disconnects that socket. --ping-interval MS: Engine.IO's heartbeat (default 25000 ms), the
// ping timeout the same. Prints "listening PORT" once it listens.
//
// "chat" events: a chat room. Every connection joins the room "lobby"; each "chat" event's
// payload is emitted to the whole room as a "message" event {from, text} (pushes, the sender's
// own included), then the event is acknowledged with its payload.
'use strict';
const http = require('http');
const { Server } = require('socket.io');

const port = Number(process.argv[2]);
const option = (name) => {
    const at = process.argv.indexOf(name);
    return at > 0 ? process.argv[at + 1] : undefined;
};
const stallAfter = Number(option('--stall-after') || 0);
const disconnectAfter = Number(option('--disconnect-after') || 0);
const pingInterval = Number(option('--ping-interval') || 25000);
const STALL_MS = 300;

const httpServer = http.createServer();
const io = new Server(httpServer, { pingInterval, pingTimeout: pingInterval, serveClient: false });
let nextClient = 0;

io.on('connection', (socket) => {
    let count = 0;
    let stalledUntil = 0;
    nextClient += 1;
    const name = `user${nextClient}`;
    socket.join('lobby');
    // Counts the event; false when the socket is to be dropped instead of answered.
    const arrived = () => {
        count += 1;
        if (disconnectAfter > 0 && count === disconnectAfter) {
            socket.disconnect(true);
            return false;
        }
        if (stallAfter > 0 && count === stallAfter) {
            stalledUntil = Date.now() + STALL_MS;
        }
        return true;
    };
    const later = (answer) => {
        const wait = stalledUntil - Date.now();
        if (wait > 0) {
            setTimeout(answer, wait);
        } else {
            answer();
        }
    };
    socket.on('echo', (payload, ack) => {
        if (arrived() && typeof ack === 'function') {
            later(() => ack(payload));
        }
    });
    socket.on('chat', (payload, ack) => {
        if (!arrived()) {
            return;
        }
        later(() => {
            io.to('lobby').emit('message', { from: name, text: payload });
            if (typeof ack === 'function') {
                ack(payload);
            }
        });
    });
});
httpServer.listen(port, '127.0.0.1', () => console.log(`listening ${port}`));
