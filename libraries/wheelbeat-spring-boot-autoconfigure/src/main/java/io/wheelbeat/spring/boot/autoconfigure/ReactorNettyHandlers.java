package io.wheelbeat.spring.boot.autoconfigure;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.wheelbeat.netty.TcpKeepAlive;
import io.wheelbeat.netty.deadline.ConnectionDeadlineHandler;
import io.wheelbeat.netty.deadline.MaxConnectionAge;
import io.wheelbeat.netty.guard.SlowConsumerHandler;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.http2.Http2KeepAliveHandler;
import io.wheelbeat.netty.idle.TimeoutCloses;
import io.wheelbeat.netty.idle.WheelReadTimeoutHandler;
import io.wheelbeat.netty.idle.WheelWriteTimeoutHandler;
import java.time.Duration;
import java.util.function.UnaryOperator;
import reactor.netty.NettyPipeline;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/**
 * The wheelbeat handlers every connection of the Reactor Netty server and of {@code WebClient}
 * gets, as {@link WheelbeatProperties} says. They go in when the connection is set up
 * ({@code doOnChannelInit}), right after Reactor Netty's HTTP codec
 * ({@link NettyPipeline#HttpCodec}), so they watch the connection from its first byte, across
 * every request, until it closes: Reactor Netty removes what {@code doOnConnection} adds when each
 * request ends. The slow-consumer guard goes first in the pipeline, nearest the socket, so that
 * it sees every write. On an h2c server (HTTP/1.1 with the h2c upgrade) they go right after
 * Netty's {@code HttpServerUpgradeHandler}, which follows the codec there. A pipeline without
 * either at that moment (HTTP/2 over TLS before ALPN) gets them last, after Reactor Netty's
 * bridge, where they see no read. TCP keepalive, when set, goes on the socket ({@link TcpKeepAlive}). The
 * HTTP/2 and WebSocket keepalives go in once the connection becomes HTTP/2 or WebSocket
 * ({@link ProtocolKeepAlives}).
 *
 * <p>Under Reactor Netty nothing consumes {@code IdleStateEvent}: every handler here closes the
 * connection itself. Timeout closes are quiet unless {@code wheelbeat.quiet-timeout-close=false}.
 *
 * <p>Immutable and thread-safe: the handler factories are built once, each connection gets new
 * handlers from them.
 */
public final class ReactorNettyHandlers {

    private final Side server;
    private final Side client;

    /** The handlers the properties ask for, with the meters {@code meters} gives them. */
    ReactorNettyHandlers(WheelbeatProperties properties, HandlerMeters meters) {
        TimeoutCloses closes = meters.count(
                properties.isQuietTimeoutClose() ? TimeoutCloses.quiet() : TimeoutCloses.firingException());
        WheelbeatProperties.Server server = properties.getServer();
        this.server = side(
                server,
                server.getFirstRequestTimeout(),
                slowConsumer(server.getSlowConsumer(), meters),
                closes,
                meters,
                http2(server.getHttp2(), meters),
                webSocket(server.getWebsocket(), meters));
        this.client = side(
                properties.getClient(),
                null,
                null,
                closes,
                meters,
                http2(properties.getClient().getHttp2(), meters),
                null);
    }

    /**
     * Adds the server's handlers to each connection of {@code server}; {@code server} itself when
     * no server property is set.
     *
     * @param server the server to configure
     * @return the server whose connections get the handlers
     */
    public HttpServer customize(HttpServer server) {
        return this.server.isEmpty()
                ? server
                : server.doOnChannelInit((observer, channel, address) -> this.server.addTo(channel));
    }

    /**
     * Adds the client's handlers to each connection of {@code client}; {@code client} itself when
     * no client property is set.
     *
     * @param client the client to configure
     * @return the client whose connections get the handlers
     */
    public HttpClient customize(HttpClient client) {
        return this.client.isEmpty()
                ? client
                : client.doOnChannelInit((observer, channel, address) -> this.client.addTo(channel));
    }

    /**
     * {@link #customize(HttpServer)} as a function, for Boot's {@code NettyServerCustomizer}.
     *
     * @return the function
     */
    public UnaryOperator<HttpServer> serverCustomizer() {
        return this::customize;
    }

    /**
     * {@link #customize(HttpClient)} as a function, for Boot's connector builder customizers.
     *
     * @return the function
     */
    public UnaryOperator<HttpClient> clientCustomizer() {
        return this::customize;
    }

    private static Side side(
            WheelbeatProperties.Connections connections,
            Duration firstRequest,
            SlowConsumerHandler.Factory slowConsumer,
            TimeoutCloses closes,
            HandlerMeters meters,
            Http2KeepAliveHandler.Factory http2,
            HeartbeatHandler.Factory webSocket) {
        Duration maxAge = connections.getMaxConnectionAge();
        ConnectionDeadlineHandler.Factory deadlines = null;
        if (firstRequest != null || maxAge != null) {
            ConnectionDeadlineHandler.Builder builder = ConnectionDeadlineHandler.builder();
            if (firstRequest != null) {
                builder.firstMessageTimeout(firstRequest);
            }
            if (maxAge != null) {
                builder.maxConnectionAge(MaxConnectionAge.of(maxAge)
                        .withJitter(connections.getMaxConnectionAgeJitter())
                        .withGrace(connections.getMaxConnectionAgeGrace()));
            }
            deadlines = meters.count(builder).build();
        }
        return new Side(
                connections.getTcpKeepAlive().toTcpKeepAlive(),
                closes,
                connections.getReadTimeout(),
                connections.getWriteTimeout(),
                deadlines,
                slowConsumer,
                http2,
                webSocket);
    }

    private static Http2KeepAliveHandler.Factory http2(WheelbeatProperties.Http2 properties, HandlerMeters meters) {
        if (!properties.configured()) {
            return null;
        }
        Http2KeepAliveHandler.Builder builder = Http2KeepAliveHandler.builder();
        if (properties.getKeepAliveTime() != null) {
            builder.keepAliveTime(properties.getKeepAliveTime())
                    .keepAliveTimeout(properties.getKeepAliveTimeout())
                    .keepAliveWithoutCalls(properties.isKeepAliveWithoutCalls());
        }
        if (properties instanceof WheelbeatProperties.ServerHttp2 server && server.getPermitKeepAliveTime() != null) {
            builder.pingLimits(PingLimits.of(server.getPermitKeepAliveTime(), server.getMaxPingStrikes()))
                    .permitKeepAliveWithoutCalls(server.isPermitKeepAliveWithoutCalls());
        }
        return meters.count(builder).build();
    }

    private static HeartbeatHandler.Factory webSocket(WheelbeatProperties.WebSocket properties, HandlerMeters meters) {
        if (properties.getPingInterval() == null) {
            return null;
        }
        return meters.count(ProtocolKeepAlives.webSocket(
                        properties.getPingInterval(),
                        properties.getPongTimeout(),
                        properties.getMaxMissedPongs(),
                        properties.pingLimits()))
                .build();
    }

    private static SlowConsumerHandler.Factory slowConsumer(
            WheelbeatProperties.SlowConsumer properties, HandlerMeters meters) {
        if (!properties.isEnabled()) {
            return null;
        }
        SlowConsumerHandler.Builder builder = SlowConsumerHandler.builder()
                .maxPendingBytes(properties.getMaxPending().toBytes())
                .unwritableTimeout(properties.getUnwritableTimeout());
        return meters.count(builder).build();
    }

    /** The handlers of one side (server or client); null factories and durations are off. */
    private record Side(
            TcpKeepAlive tcpKeepAlive,
            TimeoutCloses closes,
            Duration readTimeout,
            Duration writeTimeout,
            ConnectionDeadlineHandler.Factory deadlines,
            SlowConsumerHandler.Factory slowConsumer,
            Http2KeepAliveHandler.Factory http2,
            HeartbeatHandler.Factory webSocket) {

        boolean isEmpty() {
            return tcpKeepAlive == null
                    && readTimeout == null
                    && writeTimeout == null
                    && deadlines == null
                    && slowConsumer == null
                    && http2 == null
                    && webSocket == null;
        }

        void addTo(Channel channel) {
            if (tcpKeepAlive != null) {
                tcpKeepAlive.applyTo(channel);
            }
            ChannelPipeline pipeline = channel.pipeline();
            if (slowConsumer != null) {
                pipeline.addFirst("wheelbeat.slowConsumer", slowConsumer.newHandler());
            }
            String after =
                    pipeline.get(NettyPipeline.HttpCodec) != null ? NettyPipeline.HttpCodec : h2cUpgrade(pipeline);
            if (deadlines != null) {
                after = add(pipeline, after, "wheelbeat.deadlines", deadlines.newHandler());
            }
            if (readTimeout != null) {
                after = add(pipeline, after, "wheelbeat.readTimeout", new WheelReadTimeoutHandler(readTimeout, closes));
            }
            if (writeTimeout != null) {
                after = add(
                        pipeline, after, "wheelbeat.writeTimeout", new WheelWriteTimeoutHandler(writeTimeout, closes));
            }
            if (webSocket != null) {
                add(pipeline, after, "wheelbeat.webSocketWatcher", new ProtocolKeepAlives.WebSocketWatcher(webSocket));
            }
            if (http2 != null) {
                pipeline.addFirst("wheelbeat.http2Watcher", new ProtocolKeepAlives.Http2Watcher(http2));
            }
        }

        /**
         * On an h2c server the codec has no name yet and Netty's upgrade handler follows it: the
         * handlers go after that one, before Reactor Netty's bridge, which passes no read on.
         */
        private static String h2cUpgrade(ChannelPipeline pipeline) {
            ChannelHandlerContext upgrade = pipeline.context(HttpServerUpgradeHandler.class);
            return upgrade == null ? null : upgrade.name();
        }

        /** Adds {@code handler} after the handler named {@code after} (last if null); returns its name. */
        private static String add(ChannelPipeline pipeline, String after, String name, ChannelHandler handler) {
            if (after == null) {
                pipeline.addLast(name, handler);
            } else {
                pipeline.addAfter(after, name, handler);
            }
            return name;
        }
    }
}
