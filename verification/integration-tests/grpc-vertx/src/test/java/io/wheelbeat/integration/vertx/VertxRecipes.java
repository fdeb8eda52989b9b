package io.wheelbeat.integration.vertx;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetServer;
import io.wheelbeat.netty.idle.WheelReadTimeoutHandler;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The Vert.x 5 recipe of docs/integrations.md, as the tests run it. Vert.x shows a connection's
 * Netty pipeline only through {@link NetSocketInternal}, an internal API (package
 * {@code io.vertx.core.internal}) that may change in any release.
 */
final class VertxRecipes {

    private VertxRecipes() {}

    /** An echo server that closes connections whose client sent nothing for {@code readIdle}. */
    static Future<NetServer> echoServerClosingIdleConnections(Vertx vertx, Duration readIdle) {
        return vertx.createNetServer()
                .connectHandler(socket -> {
                    NetSocketInternal internal = (NetSocketInternal) socket;
                    internal.channelHandlerContext()
                            .pipeline()
                            .addFirst(
                                    "wheelbeat.readTimeout",
                                    new WheelReadTimeoutHandler(readIdle.toNanos(), TimeUnit.NANOSECONDS));
                    socket.handler(socket::write);
                })
                .listen(0, "127.0.0.1");
    }
}
