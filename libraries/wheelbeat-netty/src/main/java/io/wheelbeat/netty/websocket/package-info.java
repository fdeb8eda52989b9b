/**
 * WebSocket keepalive over Netty's WebSocket codec ({@code netty-codec-http}), on the event
 * loop's shared wheel.
 *
 * <p>Use {@link io.wheelbeat.netty.websocket.WebSocketKeepAliveHandler} on any WebSocket
 * connection served by Netty's {@code WebSocketServerProtocolHandler} or opened by its
 * {@code WebSocketClientProtocolHandler}: it pings when the connection has been quiet, closes
 * the peers whose pongs stop coming (and, optionally, peers that send nothing at all) with a
 * proper close frame, and reports round-trip times. Servers of browsers need it most: a browser
 * answers pings but cannot send them from JavaScript, so only the server can tell a live client
 * from one that vanished behind a NAT or a mobile network.
 *
 * <p>It emits the events and meters of {@link io.wheelbeat.netty.heartbeat.HeartbeatHandler}
 * (round-trip times, missed pongs, {@code wheelbeat.connection.closed} by reason), so one
 * dashboard serves every protocol. The codec is an optional dependency of netty-handler: add
 * {@code io.netty:netty-codec-http} to use this package. See docs/keepalive.md.
 */
package io.wheelbeat.netty.websocket;
