package io.wheelbeat.integration.reactor;

import io.wheelbeat.netty.idle.WheelReadTimeoutHandler;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;
import reactor.netty.tcp.TcpServer;

/**
 * The Reactor Netty recipes of docs/integrations.md, as the tests run them: a server that closes
 * connections whose client sent nothing for {@code readIdle}, with the wheel's read timeout in
 * every connection's pipeline from the moment it is accepted.
 */
final class ReactorNettyRecipes {

    private ReactorNettyRecipes() {}

    /** TCP: the handler first in the pipeline, so every byte read counts. */
    static TcpServer tcpServerClosingIdleConnections(Duration readIdle) {
        return TcpServer.create()
                .doOnChannelInit((observer, channel, remoteAddress) -> channel.pipeline()
                        .addFirst(
                                "wheelbeat.readTimeout",
                                new WheelReadTimeoutHandler(readIdle.toNanos(), TimeUnit.NANOSECONDS)));
    }

    /**
     * HTTP/1.1: the handler right after the HTTP codec, added when the connection is accepted
     * (doOnChannelInit), so it watches the connection before its first request and between requests.
     */
    static HttpServer httpServerClosingIdleConnections(Duration readIdle) {
        return HttpServer.create()
                .doOnChannelInit((observer, channel, remoteAddress) -> channel.pipeline()
                        .addAfter(
                                NettyPipeline.HttpCodec,
                                "wheelbeat.readTimeout",
                                new WheelReadTimeoutHandler(readIdle.toNanos(), TimeUnit.NANOSECONDS)));
    }
}
