package io.wheelbeat.loadtest;

/** What the connections speak: the load test's own bytes, or WebSocket frames. */
enum Protocol {
    /** Raw bytes: a 4-byte hello, then one byte per heartbeat; the idle handler is the keepalive. */
    FRAMES("frames"),
    /**
     * WebSocket (Netty's HTTP and WebSocket codecs on both ends): the hello and the heartbeats are
     * binary frames, the server pings, the clients answer; see {@link WebSocketPipelines}.
     */
    WEBSOCKET("websocket");

    private final String id;

    Protocol(String id) {
        this.id = id;
    }

    String id() {
        return id;
    }

    @Override
    public String toString() {
        return id;
    }
}
