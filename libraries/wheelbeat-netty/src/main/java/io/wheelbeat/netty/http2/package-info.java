/**
 * HTTP/2 keepalive and connection management over Netty's {@code Http2FrameCodec} (with or
 * without {@code Http2MultiplexHandler}), on the event loop's shared wheel, with gRPC's rules.
 *
 * <p>Use {@link io.wheelbeat.netty.http2.Http2KeepAliveHandler} in an HTTP/2 server (gRPC or any
 * other RPC over HTTP/2) to refuse peers that ping too often (GOAWAY {@code ENHANCE_YOUR_CALM}
 * {@code "too_many_pings"}), and to end idle or old connections gracefully (GOAWAY, let the
 * streams in flight finish, close), so that load balancers see clients reconnect and spread.
 *
 * <p>It emits the events and meters of {@link io.wheelbeat.netty.heartbeat.HeartbeatHandler}
 * ({@code TooManyPingsEvent}, {@code wheelbeat.heartbeat.*}, {@code wheelbeat.connection.closed}
 * by reason), so one dashboard serves every protocol. The codec is an optional dependency of
 * netty-handler: add {@code io.netty:netty-codec-http2} to use this package. See
 * docs/keepalive.md.
 */
package io.wheelbeat.netty.http2;
