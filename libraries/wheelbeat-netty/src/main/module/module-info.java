/**
 * wheelbeat's Netty handlers on the shared per-event-loop wheels. {@code io.wheelbeat.netty.internal}
 * is not exported: it is the handlers' shared machinery, not API. The protocol keepalives need
 * their Netty codec on the module path ({@code requires static}: only their users bring it), and
 * meters need Micrometer ({@code requires static}: bring it to give a handler a MeterRegistry).
 */
module io.wheelbeat.netty {
    requires transitive io.wheelbeat.core;
    requires transitive io.netty.common;
    requires transitive io.netty.buffer;
    requires transitive io.netty.transport;
    requires transitive io.netty.handler;
    requires static micrometer.core;
    requires io.netty.codec;
    requires static io.netty.codec.http;
    requires static io.netty.codec.http2;
    requires static io.netty.codec.mqtt;
    requires org.slf4j;

    exports io.wheelbeat.netty;
    exports io.wheelbeat.netty.deadline;
    exports io.wheelbeat.netty.guard;
    exports io.wheelbeat.netty.heartbeat;
    exports io.wheelbeat.netty.http2;
    exports io.wheelbeat.netty.idle;
    exports io.wheelbeat.netty.loop;
    exports io.wheelbeat.netty.mqtt;
    exports io.wheelbeat.netty.ratelimit;
    exports io.wheelbeat.netty.reconnect;
    exports io.wheelbeat.netty.websocket;
}
