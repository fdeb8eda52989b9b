package io.wheelbeat.integration.grpc;

import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.wheelbeat.netty.idle.WheelReadTimeoutHandler;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The gRPC-java recipes of docs/integrations.md, as the tests run them. gRPC-java has no public
 * hook into a connection's pipeline and runs its own HTTP/2 handler, so wheelbeat's HTTP/2
 * keepalive does not apply: its own keepalive and idle settings do that job, and a wheel handler
 * reaches its connections only through the server channel type.
 */
final class GrpcRecipes {

    private GrpcRecipes() {}

    /**
     * gRPC's own settings: the server pings a connection silent for {@code keepAliveTime} and
     * closes it when the ping is not answered within {@code keepAliveTimeout}; it sends GOAWAY to
     * a connection with no call for {@code maxConnectionIdle}; it tolerates client pings at most
     * every {@code permitKeepAliveTime}.
     */
    static Server serverWithGrpcKeepalive(
            InetSocketAddress address,
            ServerServiceDefinition service,
            Duration keepAliveTime,
            Duration keepAliveTimeout,
            Duration maxConnectionIdle,
            Duration permitKeepAliveTime) {
        return NettyServerBuilder.forAddress(address)
                .addService(service)
                .keepAliveTime(keepAliveTime.toNanos(), TimeUnit.NANOSECONDS)
                .keepAliveTimeout(keepAliveTimeout.toNanos(), TimeUnit.NANOSECONDS)
                .maxConnectionIdle(maxConnectionIdle.toNanos(), TimeUnit.NANOSECONDS)
                .permitKeepAliveTime(permitKeepAliveTime.toNanos(), TimeUnit.NANOSECONDS)
                .build();
    }

    /**
     * A NIO server channel whose accepted connections get the wheel's read timeout first in their
     * pipeline, before gRPC adds its own handlers: gRPC's way in is the channel type.
     */
    static final class ReadTimeoutServerChannel extends NioServerSocketChannel {
        private final long readIdleNanos;

        ReadTimeoutServerChannel(Duration readIdle) {
            this.readIdleNanos = readIdle.toNanos();
        }

        @Override
        protected int doReadMessages(List<Object> accepted) throws Exception {
            int count = super.doReadMessages(accepted);
            for (int i = accepted.size() - count; i < accepted.size(); i++) {
                ((Channel) accepted.get(i))
                        .pipeline()
                        .addFirst(
                                "wheelbeat.readTimeout",
                                new WheelReadTimeoutHandler(readIdleNanos, TimeUnit.NANOSECONDS));
            }
            return count;
        }
    }

    /**
     * A server whose connections are closed when the client sent nothing (no call, no ping) for
     * {@code readIdle}. A custom channel type needs event loop groups of its transport (NIO here).
     */
    static Server serverClosingSilentConnections(
            InetSocketAddress address,
            ServerServiceDefinition service,
            Duration readIdle,
            EventLoopGroup boss,
            EventLoopGroup workers) {
        return NettyServerBuilder.forAddress(address)
                .addService(service)
                .channelFactory(() -> new ReadTimeoutServerChannel(readIdle))
                .bossEventLoopGroup(boss)
                .workerEventLoopGroup(workers)
                .build();
    }
}
