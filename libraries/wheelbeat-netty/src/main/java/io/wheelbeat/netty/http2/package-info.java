/**
 * HTTP/2 keepalive and connection management with gRPC's rules over Netty's {@code Http2FrameCodec}
 * ({@link io.wheelbeat.netty.http2.Http2KeepAliveHandler}); needs {@code io.netty:netty-codec-http2}.
 */
package io.wheelbeat.netty.http2;
